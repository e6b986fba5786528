"""Check a judged evaluation set: its memory files and its queries.

    python -m memindex_dev.evaluation.checkset evalsets/harbor

A set is a folder with `.claude/memory/<folder>/<id>.json` and `queries.json` (format:
evalsets/harbor/README.md). Each memory must pass memindex.store.schema.validate_memory, the
product's own validation, and the set's conventions on top of it: complete records (every
field the schema defines, no other), 40-250 words of content, 2-6 distinct tags, timestamps
inside the set's date range, lifecycle fields that agree with record_status. The queries
must follow the rules of their kind. Prints a summary; exits 1 if any problem is found.

The conventions default to Harbor's (evalsets/harbor/conventions.json); a set may change any of them in an optional
`<set>/conventions.json` (keys: see `Conventions`).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from datetime import datetime
from pathlib import Path

from memindex.defaults import CAPTURE_FOLDER, CATEGORY_FOLDER, FOLDERS
from memindex.store.schema import memory_schema, validate_memory

KINDS = (
    "category-specific", "cross-category", "specific", "vague", "follow-up", "negative", "paraphrase",
    "body-only", "code-identifier", "two-letter", "retired-trap",
)
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


class Conventions:
    """What a set promises beyond the format: the keys of `<set>/conventions.json`
    (evalsets/harbor/conventions.json is the reference; a set without one is held to it)."""

    KEYS = ("min_words", "max_words", "min_tags", "max_tags", "date_range", "min_queries", "kind_minimums")
    REFERENCE = Path(__file__).resolve().parent.parent.parent / "evalsets" / "harbor" / "conventions.json"

    def __init__(self, values: dict) -> None:
        unknown = set(values) - set(self.KEYS)
        missing = set(self.KEYS) - set(values)
        if unknown or missing:
            raise ValueError(f"conventions: unknown {sorted(unknown)}, missing {sorted(missing)}")
        self.min_words: int = values["min_words"]
        self.max_words: int = values["max_words"]
        self.min_tags: int = values["min_tags"]
        self.max_tags: int = values["max_tags"]
        self.date_range: tuple[str, str] = tuple(values["date_range"])  # type: ignore[assignment]
        self.min_queries: int = values["min_queries"]
        self.kind_minimums: dict[str, int] = dict(values["kind_minimums"])

    @classmethod
    def of(cls, set_dir: Path) -> Conventions:
        values = json.loads(cls.REFERENCE.read_text(encoding="utf-8"))
        path = set_dir / "conventions.json"
        if path.exists():
            values.update(json.loads(path.read_text(encoding="utf-8")))
        return cls(values)


def parse_ts(value: object) -> datetime | None:
    if not isinstance(value, str) or not re.match(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$", value):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def texts(value: object, out: list[str]) -> None:
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


def is_str_list(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


# fields only some memories have: provenance, of imported or captured ones; `questions`
# (a set keeps them apart, in questions.json)
ONLY_SOME = {"source", "questions"}


def check_conventions(data: dict, conv: Conventions) -> list[str]:
    """The set's rules for a memory that is valid schema 1.0."""
    problems: list[str] = []
    schema = memory_schema(data["category"])
    for where, value, props in (("top level", data, schema["properties"]),
                                ("content", data["content"], schema["properties"]["content"]["properties"])):
        missing, extra = set(props) - set(value) - ONLY_SOME, set(value) - set(props)
        if missing:
            problems.append(f"set convention: complete records, {where} misses {sorted(missing)}")
        if extra:
            problems.append(f"set convention: {where} has keys the schema does not define {sorted(extra)}")
    body: list[str] = []
    texts(data["content"], body)
    n = len(" ".join(body).split())
    if not conv.min_words <= n <= conv.max_words:
        problems.append(f"set convention: content has {n} words, expected {conv.min_words}-{conv.max_words}")
    tags = data["tags"]
    if len(set(tags)) != len(tags):
        problems.append("set convention: duplicate tags")
    if not conv.min_tags <= len(tags) <= conv.max_tags:
        problems.append(f"set convention: {conv.min_tags}-{conv.max_tags} tags, found {len(tags)}")
    lo, hi = parse_ts(conv.date_range[0]), parse_ts(conv.date_range[1])
    stamps = [data["created_at"], data["updated_at"], *(data.get(k) for k in ("retired_at", "archived_at"))]
    stamps += [c.get("date") for c in data.get("changes", []) if isinstance(c, dict)]
    for stamp in filter(None, stamps):
        when = parse_ts(stamp)
        if when is None:
            problems.append(f"set convention: timestamps are UTC with a Z suffix, found {stamp!r}")
        elif not lo <= when <= hi:
            problems.append(f"set convention: timestamp {stamp} outside {conv.date_range[0][:10]}..{conv.date_range[1][:10]}")
    if not all(isinstance(c, dict) and set(c) == {"date", "summary"} and isinstance(c["summary"], str)
               for c in data.get("changes", [])):
        problems.append("set convention: changes are [{date, summary}]")
    if any(f.startswith("/") or ".." in f.split("/") for f in data.get("related_files", [])):
        problems.append("set convention: related_files are repo-relative paths")
    status, updated = data["record_status"], parse_ts(data["updated_at"])
    for prefix in ("retired", "archived"):
        at, reason = data.get(f"{prefix}_at"), data.get(f"{prefix}_reason")
        if status == prefix:
            if not isinstance(reason, str) or not reason.strip():
                problems.append(f"set convention: status {prefix} needs {prefix}_reason")
            if parse_ts(at) and updated and parse_ts(at) > updated:
                problems.append(f"set convention: {prefix}_at is after updated_at")
        elif at is not None or reason is not None:
            problems.append(f"set convention: {prefix}_at/{prefix}_reason must be null when status is {status}")
    return problems


def load_memories(root: Path, conv: Conventions, problems: dict[str, list[str]]) -> dict[str, dict]:
    memories: dict[str, dict] = {}
    for folder in FOLDERS:
        path = root / folder
        if not path.is_dir():
            if folder != CAPTURE_FOLDER:  # made by the first session capture
                problems.setdefault(folder + "/", []).append("category folder missing")
            continue
        for file in sorted(path.iterdir()):
            if file.suffix != ".json":
                continue
            rel = f"{folder}/{file.name}"
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as exc:
                problems[rel] = [f"invalid JSON: {exc}"]
                continue
            errs = validate_memory(data, rel)
            if not errs:
                errs = check_conventions(data, conv)
            if isinstance(data, dict):
                memories[rel] = data
            if errs:
                problems[rel] = errs
    if root.is_dir():
        for path in root.iterdir():
            if path.is_dir() and path.name not in FOLDERS and not path.name.startswith("."):
                problems.setdefault(path.name + "/", []).append("unexpected folder in the memory root")
    return memories


def primary(judgments: dict) -> str | None:
    """The first grade-2 path: the query's main target (used for paraphrase/body-only checks)."""
    return next((p for p, g in judgments.items() if g == 2), None)


def check_queries(queries: object, memories: dict[str, dict], conv: Conventions, problems: dict[str, list[str]]) -> Counter:
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
        if kind not in KINDS:
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
        elif kind in KINDS and primary(judgments) is None:
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
    for kind, minimum in conv.kind_minimums.items():
        if kinds[kind] < minimum:
            problems.setdefault("queries.json", []).append(f"kind {kind}: {kinds[kind]} < {minimum}")
    if len(queries) < conv.min_queries:
        problems.setdefault("queries.json", []).append(f"{len(queries)} queries < {conv.min_queries}")
    return kinds


def check_set(set_dir: Path, out=print) -> int:
    """Check one set, print a summary and every problem; the number of problems."""
    root = set_dir / ".claude" / "memory"
    problems: dict[str, list[str]] = {}
    conv = Conventions.of(set_dir)
    memories = load_memories(root, conv, problems)
    try:
        queries = json.loads((set_dir / "queries.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        problems["queries.json"] = [f"cannot read: {exc}"]
        queries = []
    kinds = check_queries(queries, memories, conv, problems)

    by_cat = Counter(m.get("category") for m in memories.values())
    by_status = Counter(m.get("record_status") for m in memories.values())
    out(f"memories: {len(memories)} in {root}")
    for category, folder in CATEGORY_FOLDER.items():
        statuses = Counter(m.get("record_status") for m in memories.values() if m.get("category") == category)
        detail = ", ".join(f"{s} {n}" for s, n in sorted(statuses.items()))
        out(f"  {folder:<12} {by_cat[category]:>3}  ({detail})")
    out("  status: " + ", ".join(f"{s} {n}" for s, n in sorted(by_status.items())))
    graded = [g for q in queries if isinstance(q, dict) and isinstance(q.get("judgments"), dict)
              for g in q["judgments"].values()]
    out(f"queries: {len(queries)} (grade-2 judgments {graded.count(2)}, grade-1 {graded.count(1)})")
    for kind in KINDS:
        out(f"  {kind:<18} {kinds[kind]:>3}  (min {conv.kind_minimums.get(kind, 0)})")
    n_problems = sum(len(v) for v in problems.values())
    if problems:
        out(f"\n{n_problems} problem(s):")
        for where, errs in problems.items():
            for err in errs:
                out(f"  {where}: {err}")
    else:
        out("\nOK")
    return n_problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memindex_dev.evaluation.checkset", description=__doc__.splitlines()[0])
    parser.add_argument("set", type=Path, help="the set's folder (with .claude/memory/ and queries.json)")
    args = parser.parse_args(argv)
    return 1 if check_set(args.set) else 0


if __name__ == "__main__":
    sys.exit(main())
