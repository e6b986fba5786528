#!/usr/bin/env python3
"""Regenerate memory_set/.claude/memory/ from the data in _mem_*.py.

Run: python3 scripts/eval/_build_set.py
Writes one JSON file per memory (2-space indent, UTF-8, trailing newline) and removes
*.json files in the category folders that are no longer defined. Other files (index.md,
index databases written by the engine) are left alone.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import _mem_common  # noqa: E402
import _mem_decisions  # noqa: E402,F401
import _mem_runbooks  # noqa: E402,F401
import _mem_constraints  # noqa: E402,F401
import _mem_techdebt  # noqa: E402,F401
import _mem_preferences  # noqa: E402,F401
import _mem_sessions  # noqa: E402,F401

ROOT = HERE / "memory_set" / ".claude" / "memory"


def main() -> int:
    seen: set[str] = set()
    for record in _mem_common.REGISTRY:
        rel = f"{_mem_common.FOLDER_OF[record['category']]}/{record['id']}.json"
        if rel in seen:
            raise SystemExit(f"duplicate memory {rel}")
        seen.add(rel)
        path = ROOT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for folder in _mem_common.FOLDER_OF.values():
        folder_path = ROOT / folder
        folder_path.mkdir(parents=True, exist_ok=True)
        for path in folder_path.glob("*.json"):
            if f"{folder}/{path.name}" not in seen:
                path.unlink()
    print(f"wrote {len(seen)} memories under {ROOT.relative_to(HERE)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
