#!/usr/bin/env python3
"""Validate the evaluation set: memory files (schema 1.0) and judged queries.

Usage: python3 scripts/eval/check_set.py [--root DIR] [--queries FILE]
Prints a summary; exits 1 if any problem is found. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent

from memindex.defaults import FOLDERS  # noqa: E402  (one list of folders, the product's)
TOP_KEYS = {
    "schema_version", "category", "id", "title", "created_at", "updated_at", "tags", "content",
    "related_files", "confidence", "record_status", "changes", "times_updated",
    "retired_at", "retired_reason", "archived_at", "archived_reason",
}
STR, STRLIST, BOOL = "str", "strlist", "bool"
CONTENT = {
    "session_summary": {
        "goal": STR, "outcome": ("success", "partial", "blocked", "abandoned"), "completed": STRLIST,
        "in_progress": STRLIST, "blockers": STRLIST, "next_actions": STRLIST, "key_changes": STRLIST,
    },
    "decision": {
        "status": ("proposed", "accepted", "deprecated", "superseded"), "context": STR, "decision": STR,
        "alternatives": "alternatives", "rationale": STRLIST, "consequences": STRLIST,
    },
    "runbook": {
        "trigger": STR, "symptoms": STRLIST, "steps": STRLIST, "verification": STR, "root_cause": STR,
        "environment": STR,
    },
    "constraint": {
        "kind": ("limitation", "gap", "policy", "technical"), "rule": STR, "impact": STRLIST,
        "workarounds": STRLIST, "severity": ("high", "medium", "low"), "active": BOOL, "expires": "date_or_null",
    },
    "tech_debt": {
        "status": ("open", "in_progress", "resolved", "wont_fix"),
        "priority": ("critical", "high", "medium", "low"), "description": STR, "reason_deferred": STR,
        "impact": STRLIST, "suggested_fix": STRLIST, "acceptance_criteria": STRLIST,
    },
    "preference": {
        "topic": STR, "value": STR, "reason": STR, "strength": ("strong", "default", "soft"),
        "examples": "examples",
    },
}
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
ISO_UTC = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# Set-level conventions (stricter than the format): see README.md.
MIN_WORDS, MAX_WORDS = 40, 250
MIN_TAGS, MAX_TAGS = 2, 6
DATE_RANGE = ("2025-06-01T00:00:00Z", "2026-11-30T23:59:59Z")

KIND_MINIMUMS = {
    "category-specific": 8, "cross-category": 6, "specific": 6, "vague": 6, "follow-up": 7,
    "negative": 10, "paraphrase": 6, "body-only": 6, "code-identifier": 6, "two-letter": 5,
    "retired-trap": 5,
}
MIN_QUERIES = 75
QUERY_KEYS = {"id", "kind", "query", "transcript", "judgments", "note"}
TWO_LETTER_TERMS = {"CI", "DB", "UI", "QA", "S3", "PR"}
STOPWORDS = set("""
a about above after again against all am an and any are as at be because been before being below between
both but by can could did do does doing done down during each even ever few for from further get got had has
have having he her here hers him his how i if in into is it its just let me more most my no nor not now of
off on once one only or other our ours out over own same she should so some still such than that the their
them then there these they this those through to too under until up us very was we were what when where
which while who whom why will with would you your yours ok okay again right now there's what's it's i'm
don't can't isn't
""".split())


def parse_ts(value: str) -> datetime | None:
    if not isinstance(value, str) or not ISO_UTC.match(value):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def texts(value, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for item in value:
            texts(item, out)
    elif isinstance(value, dict):
        for item in value.values():
            texts(item, out)


def words(text: str) -> set[str]:
    """Lowercased content words, crudely stemmed (shared prefix of 5 chars for longer words)."""
    found = set()
    for token in re.findall(r"[0-9a-zà-ÿß]+", text.lower()):
        if token in STOPWORDS or len(token) < 2:
            continue
        found.add(token[:5] if len(token) > 5 else token.rstrip("s") or token)
    return found


def is_str_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def check_content(category: str, content, problems: list[str]) -> None:
    spec = CONTENT[category]
    if not isinstance(content, dict):
        problems.append("content is not an object")
        return
    missing, extra = set(spec) - set(content), set(content) - set(spec)
    if missing:
        problems.append(f"content misses {sorted(missing)}")
    if extra:
        problems.append(f"content has unknown keys {sorted(extra)}")
    for key, kind in spec.items():
        if key not in content:
            continue
        value = content[key]
        if isinstance(kind, tuple):
            if value not in kind:
                problems.append(f"content.{key}={value!r} not in {kind}")
        elif kind == STR:
            if not isinstance(value, str):
                problems.append(f"content.{key} is not a string")
        elif kind == STRLIST:
            if not is_str_list(value):
                problems.append(f"content.{key} is not a list of strings")
        elif kind == BOOL:
            if not isinstance(value, bool):
                problems.append(f"content.{key} is not a boolean")
        elif kind == "date_or_null":
            if value is not None and not (isinstance(value, str) and (ISO_DATE.match(value) or parse_ts(value))):
                problems.append(f"content.{key} is neither null nor an ISO date")
        elif kind == "alternatives":
            ok = isinstance(value, list) and all(
                isinstance(a, dict) and set(a) == {"option", "rejected_reason"}
                and isinstance(a["option"], str) and isinstance(a["rejected_reason"], str) for a in value)
            if not ok:
                problems.append("content.alternatives must be [{option, rejected_reason}]")
        elif kind == "examples":
            ok = isinstance(value, dict) and set(value) == {"prefer", "avoid"} and \
                is_str_list(value["prefer"]) and is_str_list(value["avoid"])
            if not ok:
                problems.append("content.examples must be {prefer: [str], avoid: [str]}")


def check_memory(rel: str, data, problems: list[str]) -> None:
    folder, name = rel.split("/", 1)
    if not isinstance(data, dict):
        problems.append("top level is not an object")
        return
    missing, extra = TOP_KEYS - set(data), set(data) - TOP_KEYS
    if missing:
        problems.append(f"missing keys {sorted(missing)}")
    if extra:
        problems.append(f"unknown keys {sorted(extra)}")
    if data.get("schema_version") != "1.0":
        problems.append("schema_version is not '1.0'")
    category = data.get("category")
    if category not in CONTENT:
        problems.append(f"unknown category {category!r}")
    elif FOLDERS[folder] != category:
        problems.append(f"category {category} does not belong in {folder}/")
    mid = data.get("id")
    if not isinstance(mid, str) or not SLUG.match(mid) or len(mid) > 80:
        problems.append(f"id {mid!r} is not a slug of <= 80 chars")
    if mid != name[:-len(".json")]:
        problems.append(f"id {mid!r} does not equal the file name")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip() or len(title) > 120:
        problems.append("title must be a non-empty string of <= 120 chars")
    created, updated = parse_ts(data.get("created_at")), parse_ts(data.get("updated_at"))
    if created is None or updated is None:
        problems.append("created_at/updated_at must be ISO 8601 UTC (…Z)")
    elif updated < created:
        problems.append("updated_at is before created_at")
    else:
        lo, hi = parse_ts(DATE_RANGE[0]), parse_ts(DATE_RANGE[1])
        if not (lo <= created <= hi and lo <= updated <= hi):
            problems.append("timestamps outside the set's range 2025-06..2026-11")
    tags = data.get("tags")
    if not is_str_list(tags) or not 1 <= len(tags) <= 12:
        problems.append("tags must be a list of 1..12 strings")
    else:
        if any(t != t.lower() or not t for t in tags):
            problems.append("tags must be lowercase")
        if len(set(tags)) != len(tags):
            problems.append("duplicate tags")
        if not MIN_TAGS <= len(tags) <= MAX_TAGS:
            problems.append(f"set convention: {MIN_TAGS}-{MAX_TAGS} tags, found {len(tags)}")
    if category in CONTENT:
        check_content(category, data.get("content"), problems)
        body: list[str] = []
        texts(data.get("content"), body)
        n = len(" ".join(body).split())
        if not MIN_WORDS <= n <= MAX_WORDS:
            problems.append(f"set convention: content has {n} words, expected {MIN_WORDS}-{MAX_WORDS}")
    files = data.get("related_files")
    if not is_str_list(files) or any(f.startswith("/") or ".." in f.split("/") for f in files):
        problems.append("related_files must be repo-relative paths")
    conf = data.get("confidence")
    if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0 <= conf <= 1:
        problems.append("confidence must be a number in 0..1")
    status = data.get("record_status")
    if status not in ("active", "retired", "archived"):
        problems.append(f"record_status {status!r} invalid")
    changes = data.get("changes")
    if not isinstance(changes, list) or not all(
            isinstance(c, dict) and set(c) == {"date", "summary"} and parse_ts(c["date"])
            and isinstance(c["summary"], str) for c in changes):
        problems.append("changes must be [{date: ISO, summary: str}]")
    tu = data.get("times_updated")
    if isinstance(tu, bool) or not isinstance(tu, int) or tu < 0:
        problems.append("times_updated must be an integer >= 0")
    for prefix, wanted in (("retired", "retired"), ("archived", "archived")):
        at, reason = data.get(f"{prefix}_at"), data.get(f"{prefix}_reason")
        if status == wanted:
            if parse_ts(at) is None or not isinstance(reason, str) or not reason.strip():
                problems.append(f"status {wanted} needs {prefix}_at (ISO) and {prefix}_reason")
            elif updated is not None and parse_ts(at) > updated:
                problems.append(f"{prefix}_at is after updated_at")
        elif at is not None or reason is not None:
            problems.append(f"{prefix}_at/{prefix}_reason must be null when status is {status}")


def load_memories(root: Path, problems: dict[str, list[str]]) -> dict[str, dict]:
    memories: dict[str, dict] = {}
    for folder in FOLDERS:
        path = root / folder
        if not path.is_dir():
            problems.setdefault(folder + "/", []).append("category folder missing")
            continue
        for file in sorted(path.iterdir()):
            if file.suffix != ".json":
                continue
            rel = f"{folder}/{file.name}"
            errs: list[str] = []
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                errs.append(f"invalid JSON: {exc}")
                data = None
            if data is not None:
                check_memory(rel, data, errs)
                if isinstance(data, dict):
                    memories[rel] = data
            if errs:
                problems[rel] = errs
    for path in root.iterdir():
        if path.is_dir() and path.name not in FOLDERS and not path.name.startswith("."):
            problems.setdefault(path.name + "/", []).append("unexpected folder in the memory root")
    return memories


def primary(judgments: dict) -> str | None:
    """The first grade-2 path: the query's main target (used for paraphrase/body-only checks)."""
    return next((p for p, g in judgments.items() if g == 2), None)


def check_queries(queries, memories: dict[str, dict], problems: dict[str, list[str]]) -> Counter:
    kinds: Counter = Counter()
    if not isinstance(queries, list):
        problems["queries.json"] = ["top level must be a list"]
        return kinds
    seen = set()
    for index, item in enumerate(queries):
        errs: list[str] = []
        qid = item.get("id") if isinstance(item, dict) else None
        label = f"query {qid or index}"
        if not isinstance(item, dict):
            problems[label] = ["not an object"]
            continue
        if set(item) != QUERY_KEYS:
            errs.append(f"keys must be exactly {sorted(QUERY_KEYS)}")
        if not isinstance(qid, str) or not re.match(r"^q\d{3}$", qid) or qid in seen:
            errs.append("id must be a unique 'qNNN'")
        seen.add(qid)
        kind = item.get("kind")
        if kind not in KIND_MINIMUMS:
            errs.append(f"unknown kind {kind!r}")
        else:
            kinds[kind] += 1
        text = item.get("query")
        if not isinstance(text, str) or not text.strip():
            errs.append("query must be a non-empty string")
            text = ""
        transcript = item.get("transcript")
        if not is_str_list(transcript):
            errs.append("transcript must be a list of strings")
            transcript = []
        if kind == "follow-up":
            if not 1 <= len(transcript) <= 3:
                errs.append("follow-up needs 1-3 earlier turns in transcript")
            if len(text) < 10:
                errs.append("follow-up query must be >= 10 characters")
        elif transcript:
            errs.append("transcript must be [] for non-follow-up kinds")
        if not isinstance(item.get("note"), str):
            errs.append("note must be a string")
        judgments = item.get("judgments")
        if not isinstance(judgments, dict):
            errs.append("judgments must be an object")
            judgments = {}
        for path, grade in judgments.items():
            if path not in memories:
                errs.append(f"judged path does not exist: {path}")
                continue
            if grade not in (1, 2) or isinstance(grade, bool):
                errs.append(f"grade for {path} must be 1 or 2")
            status = memories[path].get("record_status")
            if status != "active":
                errs.append(f"{status} memory {path} must not be judged (retired/archived are grade 0)")
        if kind == "negative":
            if judgments:
                errs.append("negative queries must have empty judgments")
        elif kind in KIND_MINIMUMS and primary(judgments) is None:
            errs.append("needs at least one grade-2 memory")
        target = primary(judgments)
        if target in memories and kind in ("paraphrase", "body-only"):
            mem = memories[target]
            qwords = words(text)
            label_words = words(mem.get("title", "") + " " + " ".join(mem.get("tags", [])))
            shared = qwords & label_words
            if shared:
                errs.append(f"{kind}: shares {sorted(shared)} with title/tags of {target}")
            if kind == "body-only":
                body: list[str] = []
                texts(mem.get("content"), body)
                if not qwords & words(" ".join(body)):
                    errs.append(f"body-only: no query word found in the body of {target}")
        if kind == "two-letter" and not TWO_LETTER_TERMS & set(re.findall(r"\b[A-Z0-9]{2}\b", text)):
            errs.append(f"two-letter: query must contain one of {sorted(TWO_LETTER_TERMS)}")
        if kind == "code-identifier" and not re.search(r"[A-Za-z0-9]_[A-Za-z0-9]|\w\.\w|`|[a-z][A-Z]|\bk8s\b|[A-Z]+-[A-Z]", text):
            errs.append("code-identifier: no identifier-like token in the query")
        if kind == "retired-trap":
            note = item.get("note") or ""
            named = [p for p in re.findall(r"[a-z-]+/[a-z0-9-]+\.json", note) if p in memories]
            if not any(memories[p].get("record_status") in ("retired", "archived") for p in named):
                errs.append("retired-trap: note must name the retired/archived memory (folder/id.json)")
        if errs:
            problems[label] = errs
    for kind, minimum in KIND_MINIMUMS.items():
        if kinds[kind] < minimum:
            problems.setdefault("queries.json", []).append(f"kind {kind}: {kinds[kind]} < {minimum}")
    if len(queries) < MIN_QUERIES:
        problems.setdefault("queries.json", []).append(f"{len(queries)} queries < {MIN_QUERIES}")
    return kinds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE / "memory_set" / ".claude" / "memory")
    parser.add_argument("--queries", type=Path, default=HERE / "queries.json")
    args = parser.parse_args()

    problems: dict[str, list[str]] = {}
    memories = load_memories(args.root, problems)
    try:
        queries = json.loads(args.queries.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        problems["queries.json"] = [f"cannot read: {exc}"]
        queries = []
    kinds = check_queries(queries, memories, problems)

    by_cat = Counter(m.get("category") for m in memories.values())
    by_status = Counter(m.get("record_status") for m in memories.values())
    print(f"memories: {len(memories)} in {args.root}")
    for folder, category in FOLDERS.items():
        statuses = Counter(m.get("record_status") for m in memories.values() if m.get("category") == category)
        detail = ", ".join(f"{s} {n}" for s, n in sorted(statuses.items()))
        print(f"  {folder:<12} {by_cat[category]:>3}  ({detail})")
    print("  status: " + ", ".join(f"{s} {n}" for s, n in sorted(by_status.items())))
    graded = [g for q in queries if isinstance(q, dict) and isinstance(q.get("judgments"), dict)
              for g in q["judgments"].values()]
    print(f"queries: {len(queries)} (grade-2 judgments {graded.count(2)}, grade-1 {graded.count(1)})")
    for kind, minimum in KIND_MINIMUMS.items():
        print(f"  {kind:<18} {kinds[kind]:>3}  (min {minimum})")
    if problems:
        print(f"\n{sum(len(v) for v in problems.values())} problem(s):")
        for where, errs in problems.items():
            for err in errs:
                print(f"  {where}: {err}")
        return 1
    print("\nOK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
