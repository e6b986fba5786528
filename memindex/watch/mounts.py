"""Where native file events do not arrive, read from /proc/self/mountinfo.

inotify (or the platform's native API) misses changes made elsewhere: on the Windows side
of WSL (its /mnt/* drives, 9p/drvfs), on another machine (CIFS/SMB, NFS, ...), on the host
of a VM or container (shared folders). Under such a mount the watcher polls instead
(`memindex.watch.poll`); `defaults.POLLING_FS` names those file systems.
"""

from __future__ import annotations

import os
import re

from ..defaults import POLLING_FS


def _unescape(text: str) -> str:
    """Mount points in /proc escape space, tab, newline and backslash as octal."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def read_mounts(text: str | None = None) -> list[tuple[str, str, str]]:
    """(mount point, file system type, source) of every mount, from /proc/self/mountinfo
    (or /proc/mounts, or `text` in either format); empty where /proc does not exist."""
    if text is None:
        for path in ("/proc/self/mountinfo", "/proc/mounts"):
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                break
            except OSError:
                continue
        else:
            return []
    mounts = []
    for line in text.splitlines():
        parts = line.split()
        try:
            sep = parts.index("-", 6)  # mountinfo: ... mount-point options [optional] - type source
        except ValueError:
            if len(parts) >= 3:  # /proc/mounts: source mount-point type options ...
                mounts.append((_unescape(parts[1]), parts[2], _unescape(parts[0])))
            continue
        if len(parts) > sep + 1 and len(parts) > 4:
            source = _unescape(parts[sep + 2]) if len(parts) > sep + 2 else ""
            mounts.append((_unescape(parts[4]), parts[sep + 1], source))
    return mounts


def mount_of(path: str | os.PathLike[str], mounts: list[tuple[str, str, str]] | None = None) -> tuple[str, str, str] | None:
    """The mount holding `path`: the longest mount point above it (the last one listed when
    a mount point was mounted over)."""
    real = os.path.realpath(path)
    best = None
    for mount in read_mounts() if mounts is None else mounts:
        point = mount[0]
        if real == point or real.startswith(point.rstrip("/") + "/"):
            if best is None or len(point) >= len(best[0]):
                best = mount
    return best


def needs_polling(root: str | os.PathLike[str], mounts: list[tuple[str, str, str]] | None = None) -> tuple[bool, str]:
    """(poll?, why): whether native file events can be trusted under `root`."""
    mount = mount_of(root, mounts)
    if mount is None:
        return False, "native file events"
    point, fstype, source = mount
    kind = POLLING_FS.get(fstype)
    if kind is None and "drvfs" in source.lower():
        kind = "WSL drvfs drive"
    if kind is None:
        return False, f"native file events ({fstype} file system at {point})"
    return True, f"{point} is a {fstype} file system ({kind}): native file events do not arrive there"
