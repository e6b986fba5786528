"""Where captured summaries live, and how they are written: through the write path's own
`save_memory` / `update_memory` (validation, and whatever it refuses or redacts), one file
per session, found again by its id in either session folder.

`capture.location`: `local` (default) writes new summaries to `sessions-local/`, which is
indexed like every memory folder but holds its own `.gitignore` (`*`), so git never sees
it; `shared` writes them to `sessions/`, committed with the project's other memories. A
summary already written stays where it is (the setting applies to new sessions).
"""

from __future__ import annotations

import os
from typing import Any

from ..store import rootfs
from ..config import Config
from ..defaults import CAPTURE_FOLDER, CATEGORY_FOLDER, FOLDERS
from ..errors import UnsafeFile, WriteError
from ..store.paths import inside

CATEGORY = "session_summary"
FOLDERS_OF_CATEGORY = tuple(f for f, c in FOLDERS.items() if c == CATEGORY)
GITIGNORE = b"# memindex: captured session summaries stay on this machine (capture.location)\n*\n"


def target_folder(cfg: Config) -> str:
    """The folder new captured summaries go to."""
    return CAPTURE_FOLDER if cfg["capture.location"] == "local" else CATEGORY_FOLDER[CATEGORY]


def existing(root: str | os.PathLike[str], mem_id: str) -> str | None:
    """The relative path of a session's summary, in whichever session folder it is."""
    for folder in FOLDERS_OF_CATEGORY:
        rel = f"{folder}/{mem_id}.json"
        if os.path.lexists(os.path.join(root, rel)):
            return rel
    return None


def ignore_folder(root: str | os.PathLike[str]) -> None:
    """Make `sessions-local/` with its own `.gitignore`: ignored by git wherever the
    memory folder is, whatever the project's own .gitignore says."""
    folder = os.path.join(root, CAPTURE_FOLDER)
    rootfs.make_folders(folder)  # 0755 whatever the umask (0777 under umask 000: refused by sync)
    if os.path.islink(folder) or not inside(os.path.realpath(folder), os.path.realpath(root)):
        raise UnsafeFile(folder, "is a link or leaves the memory root")
    path = os.path.join(folder, ".gitignore")
    if not os.path.lexists(path):
        rootfs.write(path, GITIGNORE)


def plan_write(root: str | os.PathLike[str], cfg: Config, memory: dict[str, Any]) -> tuple | dict[str, Any]:
    """What writing one session's summary takes: ("save", category, memory, folder) for a
    new session, ("update", path, patch) for one already written (its content keys that
    the new summary lacks are removed), or the final answer {status: skipped, reason} for
    a summary the user retired or archived (capture never brings it back)."""
    from ..write.records import read_current, replacing

    rel = existing(root, memory["id"])
    current = read_current(root, rel, cfg) if rel is not None else None
    if current is None:
        return ("save", CATEGORY, memory, target_folder(cfg))
    if current.get("record_status", "active") != "active":
        return {"status": "skipped", "path": rel, "reason": f"the summary is {current.get('record_status')}"}
    return ("update", rel, replacing(current, memory, "Captured again from the session transcript"), current)


def _plan(root: str | os.PathLike[str], cfg: Config, memory: dict[str, Any]):
    """`plan_write`, or a failed answer: one unreadable summary fails only itself."""
    try:
        return plan_write(root, cfg, memory)
    except WriteError as exc:
        return {"status": "failed", "error": str(exc)}


def _thorough(memory: dict[str, Any]) -> dict[str, Any]:
    """The summary with the maintained rule set's finds redacted too (store.secrets.
    detector_redact: affordable here, in the background, where `save` could not pay for
    it); the write path then applies its own patterns, as for every writer."""
    from ..store.secrets import detector_redact

    shown = {k: memory[k] for k in ("title", "tags", "content") if k in memory}
    redacted, _ = detector_redact(shown)
    return {**memory, **redacted}  # type: ignore[dict-item]


def write_summaries(
    root: str | os.PathLike[str], cfg: Config, memories: list[dict[str, Any]], *, dry_run: bool = False,
    lock_timeout: float | None = None,
) -> list[dict[str, Any]]:
    """Create or update sessions' summaries: the new ones in one write transaction, the
    others in another (the write path's `save_memories` and `update_memories`: the checks
    of `save` and `update`). One answer per memory: the write path's ({status: created|
    updated|unchanged|failed, path, ...}) or {status: skipped}."""

    plans = [_plan(root, cfg, _thorough(m)) for m in memories]
    answers: list[dict[str, Any]] = [p if isinstance(p, dict) else {} for p in plans]
    todo = [i for i, p in enumerate(plans) if isinstance(p, tuple)]
    if dry_run:
        from ..write import merge_update
        from ..write.validate import utc_now

        for i in todo:
            kind, where, body = plans[i][:3]
            if kind == "save":
                answers[i] = {"status": "created", "path": f"{plans[i][3]}/{body['id']}.json", "dry_run": True}
            else:
                _, changed, _ = merge_update(plans[i][3], body, CATEGORY, utc_now())
                answers[i] = {"status": "updated" if changed else "unchanged", "path": where, "changed": changed, "dry_run": True}
        return answers
    if not todo:
        return answers
    if any(plans[i][0] == "save" and plans[i][3] == CAPTURE_FOLDER for i in todo):
        try:
            ignore_folder(root)
        except (OSError, UnsafeFile) as exc:
            raise WriteError(f"cannot prepare {CAPTURE_FOLDER}/: {exc}") from None
    from ..write import save_memories, update_memories

    saves = [i for i in todo if plans[i][0] == "save"]
    updates = [i for i in todo if plans[i][0] == "update"]
    # a token in a transcript is replaced by its marker: one secret must not cost the session its summary
    done = save_memories(root, cfg, [plans[i][1:4] for i in saves], lock_timeout=lock_timeout, redact=True) if saves else []
    done += update_memories(root, cfg, [plans[i][1:3] for i in updates], lock_timeout=lock_timeout, redact=True) if updates else []
    for i, answer in zip(saves + updates, done):
        if isinstance(answer, WriteError):
            answer = {**answer.to_json(), "status": "failed"}
        elif isinstance(answer, Exception):
            answer = {"status": "failed", "error": str(answer)}
        answers[i] = answer
    return answers


def write_summary(
    root: str | os.PathLike[str], cfg: Config, memory: dict[str, Any], *, dry_run: bool = False,
    lock_timeout: float | None = None,
) -> dict[str, Any]:
    """Create or update one session's summary (see write_summaries)."""
    return write_summaries(root, cfg, [memory], dry_run=dry_run, lock_timeout=lock_timeout)[0]
