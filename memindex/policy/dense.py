"""The semantic worker's view of a prompt, as the injection policy uses it (rules 6 and 7),
with the vectors version its row numbers belong to. Standard library only: the prompt
hook builds it from the worker's reply."""

from __future__ import annotations


class Dense:
    """What the semantic worker says about a prompt: `cos`, rowid -> cosine of the lexical
    candidates that have a vector, and `top`, its own nearest memories [(rowid, cosine)],
    best first (over the active memories). Rule 6 (`by_meaning`) uses both."""

    __slots__ = ("cos", "top", "version")

    def __init__(
        self, cos: dict[int, float] | None = None, top: list[tuple[int, float]] | tuple = (), version: int | None = None
    ) -> None:
        self.cos: dict[int, float] = dict(cos or {})
        self.top: list[tuple[int, float]] = list(top)
        self.version = version  # the worker's `vectors_version`: its rowids are of that index

    @classmethod
    def from_reply(cls, reply: object) -> Dense | None:
        """From a worker's answer ({"cos": {"rowid": c}, "top": [[rowid, c]], "vectors_version": v});
        None if garbled."""
        try:
            cos = {int(k): float(v) for k, v in reply["cos"].items()}  # type: ignore[index]
            top = [(int(r), float(c)) for r, c in reply["top"]]  # type: ignore[index]
            version = reply.get("vectors_version")  # type: ignore[union-attr]
            version = int(version) if version is not None else None
        except (TypeError, ValueError, KeyError, AttributeError):
            return None
        return cls(cos, top, version)
