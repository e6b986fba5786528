#!/usr/bin/env python3
"""The reference documents' design, for comparison only: on every prompt, read every memory
JSON file, build an in-memory FTS5 index, query it (title 5, tags 3, body 1), print the
block. Not part of memindex."""

import json
import os
import re
import sqlite3
import sys

FOLDERS = ["sessions", "decisions", "runbooks", "constraints", "tech-debt", "preferences"]
STOP = {"the", "a", "an", "is", "to", "of", "in", "and", "or", "for", "on", "we", "how", "what", "do", "it", "this", "that"}


def body(content):
    parts = []

    def walk(v):
        if isinstance(v, str):
            parts.append(v)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(content)
    return " ".join(parts)[:2000]


def main():
    if {"-h", "--help"} & set(sys.argv[1:]):
        print(__doc__ + "\nUsage: python scripts/reference_hook.py < hook-input.json (the prompt hook's JSON; its cwd names the project)")
        return
    data = json.loads(sys.stdin.read())
    root = os.path.join(data["cwd"], ".claude", "memory")
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE m USING fts5(title, tags, body, path UNINDEXED, category UNINDEXED, tokenize='porter unicode61')")
    rows = []
    for folder in FOLDERS:
        d = os.path.join(root, folder)
        if not os.path.isdir(d):
            continue
        for name in os.listdir(d):
            if not name.endswith(".json"):
                continue
            try:
                with open(os.path.join(d, name), encoding="utf-8") as fh:
                    mem = json.load(fh)
            except (OSError, ValueError):
                continue
            if mem.get("record_status", "active") != "active":
                continue
            rows.append((mem.get("title", ""), " ".join(mem.get("tags", [])), body(mem.get("content")), f"{folder}/{name}", mem.get("category", "")))
    conn.executemany("INSERT INTO m VALUES (?,?,?,?,?)", rows)
    words = [w for w in re.findall(r"[a-z0-9]+", data["prompt"].lower()) if w not in STOP and len(w) > 1][:15]
    if not words:
        return
    q = " OR ".join(f'"{w}"' for w in words)
    hits = conn.execute("SELECT title, path, category, bm25(m, 5.0, 3.0, 1.0) s FROM m WHERE m MATCH ? ORDER BY s LIMIT 3", (q,)).fetchall()
    if hits:
        print('<memory-context source=".claude/memory/">')
        for title, path, cat, _ in hits:
            print(f"- [{cat.upper()}] {title} -> .claude/memory/{path}")
        print("</memory-context>")


if __name__ == "__main__":
    main()
