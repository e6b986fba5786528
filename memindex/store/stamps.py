"""When a memory's own timestamps may be believed: at most STAMP_FUTURE_SLACK_S ahead of this
machine's clock (issue 36, finding 4).

A memory file is untrusted input: a committed session summary dated 2099 stayed "the latest
session" for good, above every session the user captured since. The write path stamps what
it writes with the clock; what it did not write (a hand-written or committed file) is held
to the same bound when it is validated, indexed and ordered. Timestamps are compared as
text: schema 1.0 stores UTC as `YYYY-MM-DDTHH:MM:SS...`, whose first 19 characters sort as
the times do. Standard library only (the prompt hook orders "the latest session").
"""

from __future__ import annotations

import time

from ..defaults import STAMP_FUTURE_SLACK_S

_STAMP_CHARS = 19  # YYYY-MM-DDTHH:MM:SS


def latest_credible(now: float | None = None) -> str:
    """The latest timestamp believed now (the clock plus the slack), as comparable text."""
    when = (time.time() if now is None else now) + STAMP_FUTURE_SLACK_S
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when))


def is_future(value: str, cutoff: str) -> bool:
    """Is a stored timestamp beyond `cutoff` (`latest_credible`)? Text that is no timestamp
    and sorts above one ("yesterday", "9999-...") counts as beyond: it would sort first too."""
    return value[:_STAMP_CHARS] > cutoff


def indexed_stamp(data: dict, key: str, problems: list[str]) -> str:
    """A memory's timestamp as the index keeps it: "" (no date: never the latest, the oldest
    in every order) when it is missing or beyond the clock's slack, which `problems` then says."""
    value = data.get(key)
    if not isinstance(value, str):
        return ""
    if is_future(value, latest_credible()):
        problems.append(f"'{key}' is in the future ({value[:40]!r}): not taken as the memory's date")
        return ""
    return value
