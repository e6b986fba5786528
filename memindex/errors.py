"""Every exception memindex raises on purpose, in one place.

Exceptions carry data (paths, pids, problems), never exit codes: the command line maps
them to exit codes in one table (`memindex.cli.main.EXIT_CODES`), the hook turns them into
silence and one stderr line, and a library caller gets the facts.
"""

from __future__ import annotations

import os


def short(value: object, limit: int = 60) -> str:
    """A value as a message may show it: its repr, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class MemindexError(Exception):
    """Base class: an expected failure with a message fit for one line."""


class RootNotFound(MemindexError):
    """No `.claude/memory` folder where one was expected."""


class IndexUnavailable(MemindexError):
    """The index is missing, corrupt, of another version, or cannot be opened."""


class IndexTooNew(IndexUnavailable):
    """The index was built by a newer memindex: never rebuilt by an older one (two
    versions would rebuild each other's index in a loop); the message says what to upgrade."""


class LockTimeout(MemindexError):
    """Another writer holds the lock for longer than the timeout."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        super().__init__(f"another memindex writer holds {path} (waited {timeout:g} s); try again")


class MemoryFileError(MemindexError):
    """A file that cannot be indexed, with the precise reason."""


class WatcherRunning(MemindexError):
    """Another watcher owns this root."""

    def __init__(self, pid: int | None, path: "os.PathLike[str]") -> None:
        self.pid = pid
        self.path = path
        who = f"pid {pid}" if pid else "another process"
        super().__init__(f"another memindex watcher ({who}) is already watching {os.path.dirname(path)}")


class WriteError(MemindexError):
    """A write refused, with the reason and every problem found."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems or [])

    def __str__(self) -> str:
        text = super().__str__()
        if self.problems:
            text += "".join(f"\n  - {p}" for p in self.problems)
        return text

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"status": "error", "error": self.args[0]}
        if self.problems:
            out["problems"] = self.problems
        return out


class InvalidMemory(WriteError):
    """The input does not make a valid memory (every problem is listed)."""


class SecretFound(InvalidMemory):
    """The input holds token-shaped strings (memindex.store.secrets): each field's JSON
    path and the kind of secret, never the secret itself."""

    def __init__(self, message: str, problems: list[str], secrets: list[dict[str, str]]) -> None:
        super().__init__(message, problems)
        self.secrets = secrets

    def to_json(self) -> dict[str, object]:
        return {**super().to_json(), "secrets": self.secrets}


class MemoryExists(WriteError):
    """save would overwrite an existing memory."""


class MemoryNotFound(WriteError):
    """The path names no memory file."""


class HashConflict(WriteError):
    """The file changed since the caller read it (--expect-hash)."""


class UsageError(WriteError):
    """The arguments of a write do not fit together."""


class UnsafeFile(MemindexError):
    """A file memindex would open in the memory root is a link, a FIFO, a device, a folder,
    another user's file or too large: refused, never followed or waited on."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} {reason}: memindex does not use it (remove it)")


class UntrustedRoot(MemindexError):
    """The memory root, or a folder on the way to it in the project, could be changed by
    another user (or leads outside the project), so its files cannot be trusted."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"untrusted memory root: {path} {reason}")


class ModelNotFound(MemindexError, FileNotFoundError):
    """No local copy of the requested embedding model; the message says how to get one."""


class ModelError(MemindexError):
    """A model this runtime cannot run faithfully, or whose weights are not the expected ones."""
