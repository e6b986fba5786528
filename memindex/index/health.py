"""What is wrong with the memory files, said where users look (issue 26, finding 7).

A sync stores a summary in the index's meta (`summarize`, under the writer lock): files
that are not indexed (invalid JSON or schema, a `.md` or a folder dropped into a category
folder) and files indexed in a way that will bite later (a memory in the wrong category
folder, one id in two folders, an id that is not its file name, a date in the future).
`search` and `explain` print one stderr line from it (`line`), `status` counts it, the
SessionStart hook tells the user once per session (never the model: hook/clients.py),
`doctor` lists it. Reading it costs one meta row: the prompt hook may use it. Standard
library only.
"""

from __future__ import annotations

from ..defaults import HEALTH_KEPT, HEALTH_SHOWN
from ..lean import loads

KINDS = {  # kind -> how the line says it
    "invalid": "invalid (not searched)",
    "ignored": "ignored (not a .json memory)",
    "misplaced": "in the wrong category folder",
    "duplicated": "sharing an id with another file",
    "renamed": "with an id that is not the file name",
    "future": "dated in the future (never taken as the latest)",
}
def summarize(conn, ignored: list[str] | None) -> dict[str, list]:
    """{kind: [count, [first paths]]} from the index as it is now (`ignored` from the last
    full walk; None keeps what the index holds). Writers only."""
    def rows(sql: str) -> list[str]:
        return [r[0] for r in conn.execute(sql)]

    found = {
        "invalid": rows("SELECT path FROM invalid ORDER BY path"),
        "misplaced": rows("SELECT path FROM documents WHERE problems LIKE '%belongs in %' ORDER BY path"),
        "duplicated": rows(
            "SELECT path FROM documents WHERE path NOT LIKE '@%' AND id IN"
            " (SELECT id FROM documents WHERE path NOT LIKE '@%' GROUP BY id HAVING count(*) > 1) ORDER BY id, path"
        ),
        "renamed": rows("SELECT path FROM documents WHERE problems LIKE '%does not match the file name%' ORDER BY path"),
        "future": rows("SELECT path FROM documents WHERE problems LIKE '%is in the future%' ORDER BY path"),
    }
    if ignored is None:
        found_before = read(conn).get("ignored", [0, []])
        summary = {k: [len(v), v[:HEALTH_KEPT]] for k, v in found.items()}
        summary["ignored"] = found_before
        return summary
    found["ignored"] = sorted(ignored)
    return {k: [len(v), v[:HEALTH_KEPT]] for k, v in found.items()}


def read(conn) -> dict[str, list]:
    """The summary the last sync stored ({} when none or unreadable)."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'health'").fetchone()
        value = loads(row[0]) if row else {}
    except Exception:
        return {}
    return value if isinstance(value, dict) else {}


def counts(summary: dict[str, list]) -> dict[str, int]:
    out = {}
    for kind in KINDS:
        try:
            out[kind] = int(summary.get(kind, [0])[0])
        except (TypeError, ValueError, IndexError):
            out[kind] = 0
    return out


def line(summary: dict[str, list], prefix: str = "", hint: str = "run `memindex doctor` (or `memindex validate`)") -> str | None:
    """One line naming what is wrong ("2 memory files invalid (not searched): a.json,
    b.json; 1 ignored ...; run `memindex doctor`"), or None when nothing is."""
    from ..text.render import shown_path

    parts = []
    for kind, label in KINDS.items():
        entry = summary.get(kind)
        try:
            n, paths = int(entry[0]), [str(p) for p in entry[1]]
        except (TypeError, ValueError, IndexError):
            continue
        if n <= 0:
            continue
        named = ", ".join(shown_path(prefix + p) for p in paths[:HEALTH_SHOWN]) + (", ..." if n > HEALTH_SHOWN else "")
        parts.append(f"{n} {label}: {named}")
    if not parts:
        return None
    return "memory files need attention: " + "; ".join(parts) + f"; {hint}"


def attention(root) -> str | None:
    """The one stderr line `search` and `explain` print after answering (one meta row of
    the index; None when nothing needs attention or the index cannot be read)."""
    from .. import index
    from ..store.paths import display_prefix

    try:
        conn = index.open_reader(root)
    except Exception:
        return None
    try:
        return line(read(conn), display_prefix(root))
    finally:
        conn.close()


def session_message(conn, root) -> str | None:
    """The SessionStart hook's message for the user: the line `search` prints on stderr."""
    from ..store.paths import display_prefix

    text = line(read(conn), display_prefix(root), hint="run `memindex doctor` to see how to fix them")
    return None if text is None else "memindex: " + text
