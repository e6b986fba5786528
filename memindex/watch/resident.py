"""A long-running reader's own watch on its memory root (the MCP server's): whether the
index still holds every memory file as it was at the reader's last exact check, in O(1),
so that a search need not stat every file (what `index.is_current` does).

It never syncs: it only says when the reader may skip its check. `index.reader.
open_fresh_reader(watch=...)` asks `vouches` first; when the answer is no, the reader makes
the CLI's own check (the stat pass, and a sync when a file changed) and records it here
(`confirm`). It vouches only when all of these hold:

* the observer reads inotify, is alive, and the root is the folder it started on (on a
  file system where native events do not arrive, `watch.mounts`, it never vouches);
* its sentinel (a file created and removed in the root, `answer.Sentinels`) came through
  the observer within WATCH_ASK_BUDGET_S: every event the kernel queued before the
  question has then been counted;
* no memory file or category folder changed since the last exact check (`seq`, counted by
  `events.EventIntake`: an event lost to a queue overflow counts as a change), the index is
  the generation that check read (nobody wrote it since), and that check found no link,
  no file with another hard link and no other file system under the category folders
  (`answer.linked`: changes made through them raise no event here);
* the last exact check is younger than RESIDENT_RECHECK_S (a hard link made from outside
  the root later, then edited there, is the one change no event reports: this bounds it).

watchdog is imported in `start` only.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from typing import Any

from ..defaults import RESIDENT_RECHECK_S, WATCH_ASK_BUDGET_S
from .events import EventIntake


class ResidentWatch(EventIntake):
    """The watch of one memory root: `start()`, then `vouches(conn)` / `checkpoint()` and
    `confirm(token, conn)` around the reader's own check, `stop()` at the end. Thread-safe
    (the MCP SDK runs each tool call on a worker thread)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        super().__init__()
        self._root_s = os.path.abspath(os.fspath(root))
        self.log = lambda *args, **fields: None  # (EventIntake's watchdog bridge reports here)
        self.observer: Any = None
        self.why = "not started"  # why it does not vouch, when it cannot at all
        self.checks = {"vouched": 0, "checked": 0}
        self._ident: tuple[int, int] | None = None
        self._sentinels: Any = None
        self._verified: tuple[int, list[object], float] | None = None  # (seq, generation, when) of the last exact check
        self._linked: set[str] = set()
        self._state = threading.Lock()

    # -- the observer ---------------------------------------------------------------------------

    def start(self) -> bool:
        """Watch the root (recursively, like `memindex watch`). False, with `why`, where
        native events cannot be trusted or the observer cannot start (inotify limits)."""
        from .answer import Sentinels
        from .events import schedule
        from .mounts import needs_polling

        polling, why = needs_polling(self._root_s)
        if polling:
            self.why = why
            return False
        observer = None
        try:
            from watchdog.observers import Observer

            self._ident = _identity(self._root_s)
            self._sentinels = Sentinels(self._root_s, f"{os.getpid()}.reader")
            observer = Observer()
            if "inotify" not in type(observer).__name__.lower():
                self.why = f"no inotify here ({type(observer).__name__})"
                return False
            schedule(observer, self, self._root_s)
            observer.start()
        except Exception as exc:  # ENOSPC / EMFILE (inotify limits), a vanished root, no watchdog
            self.why = f"the observer did not start ({type(exc).__name__}: {exc})"
            try:
                if observer is not None:
                    observer.stop()
            except Exception:
                pass
            return False
        self._bridge_watchdog_log()
        self.observer, self.why = observer, ""
        return True

    def stop(self) -> None:
        observer, self.observer = self.observer, None
        if observer is not None:
            try:
                observer.stop()
                observer.join(timeout=5)
            except Exception:
                pass
        self._unbridge_watchdog_log()  # (after: watchdog's lines while stopping go to ours, not stderr)

    # -- what the observer hands over (its thread) -------------------------------------------------

    def on_event(self, event: Any) -> None:
        if self._sentinels is not None and self._sentinels.arrived(os.fsdecode(event.src_path)):
            return
        super().on_event(event)

    def add_change(self, rel: str | None, full: bool = False, trigger: str = "changes") -> None:
        """A memory file or category folder changed (or events were lost): count it."""
        with self._lock:
            self.seq += 1

    def _flag_check(self) -> None:
        """The root's own files (index, config, markers): read afresh on each call anyway."""

    # -- the reader's side --------------------------------------------------------------------------

    def checkpoint(self) -> int | None:
        """The count of changes seen once every event queued before now has come through,
        or None when the watch cannot tell (then it does not vouch, nor record a check)."""
        if self.observer is None or not self._alive() or _identity(self._root_s) != self._ident:
            return None
        if not self._sentinels.drain(WATCH_ASK_BUDGET_S):
            return None
        with self._lock:
            return self.seq

    def vouches(self, token: int | None, conn: Any) -> bool:
        """Does the index this connection reads still hold every memory file as the last
        exact check found it? (`token`: this call's `checkpoint()`.)"""
        if token is None:
            return False
        from ..index.watched import generation

        with self._state:
            verified, linked = self._verified, self._linked
        try:
            ok = (verified is not None and not linked and verified[0] == token
                  and time.monotonic() - verified[2] < RESIDENT_RECHECK_S and generation(conn) == verified[1])
        except (ValueError, TypeError, RecursionError, sqlite3.Error):  # a meta value that is not JSON
            ok = False
        with self._state:
            self.checks["vouched" if ok else "checked"] += 1
        return ok

    def confirm(self, token: int | None, conn: Any) -> None:
        """The reader's own check (or its sync) found this connection's index current, as of
        `token`: record it, with the links it could not see through."""
        if token is None:
            return
        from ..index.watched import generation
        from .answer import linked

        try:
            gen, found = generation(conn), linked(self._root_s)
        except (ValueError, TypeError, RecursionError, sqlite3.Error):
            return
        with self._state:
            if self._verified is None or token >= self._verified[0]:
                self._verified, self._linked = (token, gen, time.monotonic()), found

    def _alive(self) -> bool:
        observer = self.observer
        if observer is None or not observer.is_alive():
            return False
        emitters = getattr(observer, "emitters", None)
        return all(e.is_alive() for e in emitters) if emitters else True


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino
