"""LoCoMo (Maharana et al., ACL 2024) as judged memindex stores, built at run time.

The data (`locomo10.json`, CC BY-NC 4.0) is never copied into this repository: this module
reads it from wherever it lies and writes the stores into a directory the caller chooses,
normally a temporary one.

The reading follows the data's README ("A memory-retrieval reading of it"):

- each conversation is one store, `<dest>/.claude/memory/`;
- each observation fact (`observation.session_N_observation.<speaker>: [[fact, dia_id], ...]`)
  is one memory file; its dia_id(s) link it to the dialogue;
- a question's relevant memories are the facts whose dia_id is in its `evidence`, all of
  grade 2; questions of categories 1-4 without any such fact are skipped;
- category 5 (adversarial) questions are injection traps: they become kind `negative`
  with no judgments, whatever their evidence (the fact they point at belongs to the other
  speaker, or the event did not happen).

**Category: every fact is a `preference` memory (`preferences/<id>.json`).** A fact is a
statement about a person ("Caroline is planning to continue her education ..."), not a
decision, a procedure or a session's outcome. `preference` is the category whose required
content (`topic`, `value`) can be filled from the data alone: `topic` is the speaker the
fact was recorded for, `value` the fact text. Every other category requires an enum that
would have to be invented (`decision.status`, `session_summary.outcome`,
`constraint.kind`/`severity`, `tech_debt.status`/`priority`) or fields with no source
(`runbook.steps`). One category for all facts, rather than a spread by some rule, also
keeps the evaluation about text ranking: category words (a column of their own in the
index) and category priority (tie-breaks) are then the same for every memory of the store
and cannot favour one fact over another for reasons the data does not contain.

Other fields: title = the first words of the fact (at most `TITLE_WORDS` words and
`TITLE_CHARS` characters, cut at a word, trailing punctuation dropped; nothing added); tags =
the speaker's name lowercased and `session-N`; `created_at` = `updated_at` = the session's
`session_N_date_time` read as UTC (LoCoMo gives no time zone); `confidence` 1.0 (the facts
are the data set's own annotations); ids `d<session>-<turn>-f<k>` from the fact's first
dia_id, `k` counting facts with the same first dia_id (1-based), so ids are unique per
store. Conversations are numbered by their position in the file (`conv-0` ... `conv-9`);
the query ids are `c<conv>-q<n>`, `n` the question's position in that conversation's `qa`
list (0-based, like `conv`), and each query's `note` names the original `sample_id`.

Edge formats found in the public file and handled here: dia_ids given as one string holding
several ("D26:14, D26:34, D26:42", "D8:6; D9:17", "D9:1 D4:4 D4:6"), "D:11:26" for D11:26,
a lone "D" (dropped), `session_N_date_time` keys without a session (conv-26 has dates up to
session 35 and 19 sessions), "12:xx am" (just after midnight).

Usage: `python -m memindex_dev.evaluation.locomo LOCOMO_JSON DEST` writes `DEST/conv-N/` (a
project with `.claude/memory/`) and `DEST/conv-N/queries.json` for every conversation.
Standard library and memindex only.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from memindex.write.records import fill_defaults

CATEGORY = "preference"
FOLDER = "preferences"
CATEGORY_FOLDERS = ("sessions", "decisions", "runbooks", "constraints", "tech-debt", "preferences")
TITLE_WORDS = 8
TITLE_CHARS = 60

# LoCoMo's `category` numbers (README of the data).
QA_CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
ADVERSARIAL = 5
NEGATIVE_KIND = "negative"

_MONTHS = {
    name: i
    for i, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
         ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
         ("october", "oct"), ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}
# "1:56 pm on 8 May, 2023"; tolerant of case, spacing, "p.m.", a missing comma.
_DATE_RE = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?\s*m\.?\s+on\s+(\d{1,2})\s+([a-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
_DIA_RE = re.compile(r"^D:?(\d+):(\d+)$", re.IGNORECASE)
_SESSION_OBS_RE = re.compile(r"^session_(\d+)_observation$")
_SLUG_BAD = re.compile(r"[^a-z0-9]+")


def load(path: str | Path) -> list[dict[str, Any]]:
    """The conversations of a `locomo10.json` file."""
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of conversations, got {type(data).__name__}")
    return data


def parse_date_time(value: str) -> str:
    """LoCoMo's "1:56 pm on 8 May, 2023" as ISO 8601 UTC "2023-05-08T13:56:00Z".
    Raises ValueError on anything else."""
    m = _DATE_RE.match(value) if isinstance(value, str) else None
    if not m:
        raise ValueError(f"not a LoCoMo date_time: {value!r}")
    hour, minute, half, day, month_name, year = m.groups()
    h, mi = int(hour), int(minute)
    month = _MONTHS.get(month_name.lower())
    if month is None or not 1 <= h <= 12 or mi > 59:
        raise ValueError(f"not a LoCoMo date_time: {value!r}")
    h = h % 12 + (12 if half.lower() == "p" else 0)  # 12 am -> 00, 12 pm -> 12
    try:
        dt = datetime(int(year), month, int(day), h, mi)
    except ValueError as exc:
        raise ValueError(f"not a LoCoMo date_time: {value!r} ({exc})") from None
    return dt.strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_dia_ids(value: Any) -> list[str]:
    """Normalized dia_ids ("D3:14") from a dia_id, a list of them, or one string holding
    several; unreadable pieces (a lone "D") are dropped."""
    items: Iterable[Any] = value if isinstance(value, list) else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        for piece in re.split(r"[\s,;]+", item.strip()):
            m = _DIA_RE.match(piece)
            if m:
                dia = f"D{int(m.group(1))}:{int(m.group(2))}"
                if dia not in out:
                    out.append(dia)
    return out


def make_title(text: str) -> str:
    """The first words of `text`: at most TITLE_WORDS words and TITLE_CHARS characters,
    cut at a word, without trailing punctuation."""
    words = text.split()
    title = ""
    for word in words[:TITLE_WORDS]:
        candidate = f"{title} {word}" if title else word
        if len(candidate) > TITLE_CHARS:
            break
        title = candidate
    if not title:  # one very long first word
        title = words[0][:TITLE_CHARS] if words else "fact"
    return title.rstrip(".,;:!?-— ") or title


def _tag(text: str) -> str:
    return _SLUG_BAD.sub("-", text.lower()).strip("-") or "unknown"


def facts(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """Every observation fact of one conversation, in session order, as
    {"id", "path", "session", "speaker", "text", "dia_ids", "date"}; `path` is relative
    to `.claude/memory/`."""
    conv = conversation.get("conversation", {})
    sessions: list[tuple[int, dict[str, Any]]] = []
    for key, value in conversation.get("observation", {}).items():
        m = _SESSION_OBS_RE.match(key)
        if m and isinstance(value, dict):
            sessions.append((int(m.group(1)), value))
    sessions.sort(key=lambda s: s[0])
    out: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for n, by_speaker in sessions:
        raw_date = conv.get(f"session_{n}_date_time")
        if raw_date is None:
            raise ValueError(f"{conversation.get('sample_id')}: session {n} has facts but no session_{n}_date_time")
        date = parse_date_time(raw_date)
        for speaker, items in by_speaker.items():
            for item in items:
                if not (isinstance(item, (list, tuple)) and len(item) == 2 and isinstance(item[0], str)):
                    raise ValueError(f"{conversation.get('sample_id')}: session {n}: not a [fact, dia_id] pair: {item!r}")
                text = " ".join(item[0].split())
                dia_ids = parse_dia_ids(item[1])
                if dia_ids:
                    s, t = _DIA_RE.match(dia_ids[0]).groups()  # type: ignore[union-attr]
                    base = f"d{s}-{t}"
                else:  # no usable dia_id: still a memory (a distractor), never judged
                    base = f"s{n}"
                seen[base] = seen.get(base, 0) + 1
                mem_id = f"{base}-f{seen[base]}"
                out.append({
                    "id": mem_id, "path": f"{FOLDER}/{mem_id}.json", "session": n, "speaker": speaker,
                    "text": text, "dia_ids": dia_ids, "date": date,
                })
    return out


def memory_record(fact: dict[str, Any]) -> dict[str, Any]:
    """The schema-1.0 `preference` memory of one fact."""
    record = {
        "id": fact["id"],
        "title": make_title(fact["text"]),
        "created_at": fact["date"],
        "updated_at": fact["date"],
        "tags": [_tag(fact["speaker"]), f"session-{fact['session']}"],
        "content": {"topic": fact["speaker"], "value": fact["text"]},
        "confidence": 1.0,
    }
    fill_defaults(record, CATEGORY)  # the managed fields, as the write path fills them
    return record


def dia_index(fact_list: list[dict[str, Any]]) -> dict[str, list[str]]:
    """dia_id -> the memory paths (relative to `.claude/memory/`) of the facts citing it."""
    index: dict[str, list[str]] = {}
    for fact in fact_list:
        for dia in fact["dia_ids"]:
            index.setdefault(dia, []).append(fact["path"])
    return index


def queries(conversation: dict[str, Any], fact_list: list[dict[str, Any]], conv: int = 0) -> list[dict[str, Any]]:
    """The judged queries of one conversation (see the module docstring)."""
    index = dia_index(fact_list)
    sample = conversation.get("sample_id", f"conv #{conv}")
    out: list[dict[str, Any]] = []
    for n, qa in enumerate(conversation.get("qa", [])):
        category = qa.get("category")
        if category not in QA_CATEGORIES:
            raise ValueError(f"{sample}: qa[{n}] has an unknown category {category!r}")
        judgments: dict[str, int] = {}
        for dia in parse_dia_ids(qa.get("evidence", [])):
            for path in index.get(dia, []):
                judgments.setdefault(path, 2)
        name = QA_CATEGORIES[category]
        if category == ADVERSARIAL:
            answer = qa.get("adversarial_answer", qa.get("answer"))
            trap = ", ".join(judgments) or "none"
            note = f"{sample} qa[{n}], {name} (injection trap); adversarial_answer: {answer}; evidence facts: {trap}"
            kind, judgments = NEGATIVE_KIND, {}
        elif not judgments:
            continue
        else:
            kind, note = f"locomo-{name}", f"{sample} qa[{n}], {name}; answer: {qa.get('answer')}"
        out.append({
            "id": f"c{conv}-q{n}", "kind": kind, "query": str(qa.get("question", "")),
            "transcript": [], "judgments": judgments, "note": note,
        })
    return out


def build_store(conversation: dict[str, Any], dest: Path, *, conv: int = 0) -> list[dict[str, Any]]:
    """Write one memory store for one conversation under `dest/.claude/memory/` and return
    its judged queries (ids `c<conv>-q<n>`). Refuses a memory folder that already holds
    JSON files, so a store is never a mix of two builds."""
    fact_list = facts(conversation)
    folder = Path(dest) / ".claude" / "memory" / FOLDER
    if folder.is_dir() and any(folder.glob("*.json")):
        raise FileExistsError(f"{folder} already holds memory files; build into an empty directory")
    for name in CATEGORY_FOLDERS:  # a store has all six category folders (docs/memory-format.md)
        (folder.parent / name).mkdir(parents=True, exist_ok=True)
    for fact in fact_list:
        data = json.dumps(memory_record(fact), indent=2, ensure_ascii=False) + "\n"
        with open(folder / f"{fact['id']}.json", "x", encoding="utf-8") as fh:
            fh.write(data)
    return queries(conversation, fact_list, conv)


def build_all(path: str | Path, dest_dir: str | Path) -> dict[str, list[dict[str, Any]]]:
    """One store per conversation of `path`, at `dest_dir/conv-<i>/`; returns
    {"conv-<i>": queries}."""
    out: dict[str, list[dict[str, Any]]] = {}
    for i, conversation in enumerate(load(path)):
        out[f"conv-{i}"] = build_store(conversation, Path(dest_dir) / f"conv-{i}", conv=i)
    return out


def main(argv: list[str] | None = None) -> int:
    """`python -m memindex_dev.evaluation.locomo LOCOMO_JSON DEST`: build every store, write
    `DEST/conv-N/queries.json`, print counts."""
    parser = argparse.ArgumentParser(prog="python -m memindex_dev.evaluation.locomo", description=__doc__.splitlines()[0])
    parser.add_argument("locomo_json", type=Path, help="path to locomo10.json")
    parser.add_argument("dest", type=Path, help="output directory (one project per conversation)")
    args = parser.parse_args(argv)
    try:
        stores = build_all(args.locomo_json, args.dest)
    except (OSError, ValueError) as exc:
        print(f"locomo: {exc}", file=sys.stderr)
        return 1
    kinds = [f"locomo-{QA_CATEGORIES[c]}" for c in sorted(QA_CATEGORIES) if c != ADVERSARIAL] + [NEGATIVE_KIND]
    print("store\tmemories\tqueries\t" + "\t".join(kinds))
    totals = [0, 0] + [0] * len(kinds)
    for name, qs in stores.items():
        (args.dest / name / "queries.json").write_text(json.dumps(qs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        n_mem = sum(1 for _ in (args.dest / name / ".claude" / "memory" / FOLDER).glob("*.json"))
        row = [n_mem, len(qs)] + [sum(1 for q in qs if q["kind"] == k) for k in kinds]
        totals = [a + b for a, b in zip(totals, row)]
        print(name + "\t" + "\t".join(map(str, row)))
    print("total\t" + "\t".join(map(str, totals)))
    return 0


# --- conversations as sessions (capture and triage measured on them) ---------------------


def sessions_of(conversation: dict) -> list[tuple[int, list[dict], str]]:
    """(session number, its turns, its date) of a conversation, in order: each session is
    one Claude Code-like session for capture and triage (the first speaker as the user)."""
    conv = conversation["conversation"]
    out = []
    for key, turns in conv.items():
        if key.startswith("session_") and isinstance(turns, list) and key[len("session_"):].isdigit():
            n = int(key[len("session_"):])
            out.append((n, turns, parse_date_time(conv[f"session_{n}_date_time"])))
    return sorted(out)


def turn_text(turn: dict) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares a photo: {turn['blip_caption']}]"
    return text


def replay(path: str | Path, folder: Path) -> Iterable[tuple[int, str, Path, Any]]:
    """Each conversation's sessions as Claude Code sessions, a stop after each reply (the
    first speaker as the user): yields (conversation number, session id, its transcript
    written so far under `folder`, its TranscriptWriter, to which the caller may add what
    follows a stop) at each stop."""
    for c, conversation in enumerate(load(path)):
        for n, turns, date in sessions_of(conversation):
            sid, w = _writer(c, n, date)
            first = turns[0]["speaker"]
            target = folder / f"{sid}.jsonl"
            for turn in turns:
                if turn["speaker"] == first:
                    w.prompt(turn_text(turn))
                    continue
                w.text(turn_text(turn))
                w.write(target)
                yield c, sid, target, w


def transcript(conv_no: int, n: int, turns: list[dict], first: str, date: str) -> tuple[str, list[str]]:
    sid, w = _writer(conv_no, n, date)
    for turn in turns:
        (w.prompt if turn["speaker"] == first else w.text)(turn_text(turn))
    return sid, w.lines()


def _writer(conv_no: int, n: int, date: str) -> tuple[str, Any]:
    """A session's id and its TranscriptWriter, dated as the session (`sessions_of`'s UTC date)."""
    from memindex.write.validate import parse_utc
    from .transcripts import TranscriptWriter

    sid = f"locomo-c{conv_no}-s{n}"
    return sid, TranscriptWriter(sid, "/locomo", parse_utc(date))


if __name__ == "__main__":
    sys.exit(main())
