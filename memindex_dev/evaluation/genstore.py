"""A realistic synthetic memindex memory store (schema 1.0), for benchmarks and stress runs.

    generate(out_dir, count, seed) -> paths    # OUT_DIR/.claude/memory/<folder>/<id>.json
    modify_one(path, seed)                     # one realistic edit of one memory

Deterministic for a given (count, seed). The vocabulary (data/vocabulary.json, see
memindex_dev.evaluation.genvocab) is Zipf-distributed: a few terms (PostgreSQL, React, `user_id`,
CI) are everywhere and most are rare; identifiers, paths, commands and service names are
composed from independent draws, which gives a long tail of compound terms; each memory
keeps referring to its topic, so terms are bursty; unique tokens (ticket keys, PR numbers,
commit SHAs, versions, pod names, request ids, hosts, migration names) are sprinkled into
every memory, so the vocabulary keeps growing with N as in a real store.

Mix: decision 25%, runbook 20%, session_summary 20%, constraint 12%, tech_debt 13%,
preference 10%; ~5% retired, ~2% archived; bodies 60-250 words; timestamps over
2024-11-01 .. 2026-11-01, denser towards the end.
"""

from __future__ import annotations

import calendar
import json
import math
import os
import random
import time
import zlib
from bisect import bisect
from itertools import accumulate
from pathlib import Path

from memindex.defaults import CATEGORY_FOLDER, SCHEMA_VERSION

from .gencontent import MAX_WORDS, MIN_WORDS, SPECS, build_content, make_title, sentence, with_enums, word_count
from .genvocab import CAT_TAGS, PREF_THEME, T_END, T_SPAN, T_START, TAGS_GENERAL, file_path, make_topic, slug

# category mix (percent)
CATEGORY_MIX = [
    ("decision", 25),
    ("runbook", 20),
    ("session_summary", 20),
    ("constraint", 12),
    ("tech_debt", 13),
    ("preference", 10),
]
_CAT_NAMES = [c for c, _ in CATEGORY_MIX]
_CAT_CUM = list(accumulate(w for _, w in CATEGORY_MIX))

RETIRED_RATE = 0.05
ARCHIVED_RATE = 0.02

# median body length per category (words); clipped to [MIN_WORDS, MAX_WORDS]
MEDIAN_WORDS = {
    "decision": 130,
    "runbook": 140,
    "session_summary": 135,
    "constraint": 95,
    "tech_debt": 115,
    "preference": 80,
}


_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _b36(n: int, width: int) -> str:
    out = []
    for _ in range(width):
        n, r = divmod(n, 36)
        out.append(_B36[r])
    return "".join(reversed(out))


def make_id(title: str, index: int, seed: int) -> str:
    # bijective in index (odd multiplier mod 2**30) => unique suffix per store
    suffix = _b36((index * 0x2545F491 + seed * 0x9E3779B1) & 0x3FFFFFFF, 6)
    base = slug(title.replace("`", ""))[:60].rstrip("-")
    if len(base) > 48:
        cut = base.rfind("-", 0, 60)
        if cut > 30:
            base = base[:cut]
    return (base + "-" + suffix) if base else suffix


def _tags(cat: str, topic: dict, rng: random.Random) -> list[str]:
    n = rng.choice((2, 3, 3, 4, 4, 5, 6))
    cand = []
    if rng.random() < 0.7:
        cand.append(slug(topic["tech"]))
    if rng.random() < 0.5:
        cand.append(topic["entity"].replace("_", "-"))
    if rng.random() < 0.4:
        cand.append(rng.choice(CAT_TAGS[cat]))
    out = []
    for t in cand:
        if t not in out:
            out.append(t)
    while len(out) < n:
        t = TAGS_GENERAL.draw(rng)
        if t not in out:
            out.append(t)
    return out[:n]


def _ts(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:00Z", time.gmtime(t))


def _parse_ts(s: str) -> int:
    return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))


def _timeline(rng: random.Random) -> tuple[int, int, int]:
    created = T_START + int(T_SPAN * math.sqrt(rng.random()))
    created -= created % 60
    if rng.random() < 0.45:
        return created, created, 0
    delta = int(rng.expovariate(1 / (12 * 86400))) + 600
    updated = min(created + delta, T_END)
    updated -= updated % 60
    updated = max(updated, created)
    times = 1 + min(int(rng.expovariate(0.7)), 20)
    return created, updated, times


def make_memory(index: int, seed: int, rng: random.Random, history: dict) -> dict:
    cat = _CAT_NAMES[bisect(_CAT_CUM, rng.random() * _CAT_CUM[-1])]
    topic = make_topic(rng)
    if cat == "preference":
        topic["theme"] = PREF_THEME.draw(rng)
    r = rng.random()
    status = "retired" if r < RETIRED_RATE else "archived" if r < RETIRED_RATE + ARCHIVED_RATE else "active"

    title = make_title(cat, topic, rng)
    mid = make_id(title, index, seed)
    target = int(min(MAX_WORDS, max(MIN_WORDS, rng.lognormvariate(math.log(MEDIAN_WORDS[cat]), 0.35))))
    content, _ = build_content(cat, topic, rng, target)
    content = with_enums(cat, content, status, rng, topic)

    created, updated, times = _timeline(rng)
    retired_at = retired_reason = archived_at = archived_reason = None
    if status == "retired":
        prev = history.get(cat)
        if prev and rng.random() < 0.7:
            rid, rcreated = prev[rng.randrange(len(prev))]
            end = max(created, rcreated) + rng.randint(3600, 20 * 86400)
            retired_reason = "Superseded by %s." % rid
        else:
            end = created + rng.randint(86400, 120 * 86400)
            retired_reason = sentence("retire_reason", topic, rng)
        end = min(end, T_END)
        end -= end % 60
        updated = max(updated, end, created)
        retired_at = _ts(updated)
        times = max(times, 1)
    elif status == "archived":
        end = min(created + rng.randint(30 * 86400, 300 * 86400), T_END)
        end -= end % 60
        updated = max(updated, end, created)
        archived_at = _ts(updated)
        archived_reason = sentence("archive_reason", topic, rng)
        times = max(times, 1)
    else:  # active memories can be named as the replacement of a retired one
        h = history.setdefault(cat, [])
        if len(h) < 512:
            h.append((mid, created))
        elif rng.random() < 0.05:
            h[rng.randrange(512)] = (mid, created)

    changes = []
    if times and updated > created:
        k = min(times, 4)
        pts = sorted(rng.randint(created + 60, updated) for _ in range(k - 1)) + [updated]
        for p in pts:
            changes.append({"date": _ts(p - p % 60), "summary": sentence("change", topic, rng)})

    files = []
    if rng.random() < 0.8:
        files.append(topic["file_raw"])
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            f = file_path(rng, topic["_inner"])
            if f not in files:
                files.append(f)

    return {
        "schema_version": SCHEMA_VERSION,
        "category": cat,
        "id": mid,
        "title": title,
        "created_at": _ts(created),
        "updated_at": _ts(updated),
        "tags": _tags(cat, topic, rng),
        "content": content,
        "related_files": files,
        "confidence": round(rng.uniform(0.55, 1.0) if status == "active" else rng.uniform(0.3, 0.8), 2),
        "record_status": status,
        "changes": changes,
        "times_updated": times,
        "retired_at": retired_at,
        "retired_reason": retired_reason,
        "archived_at": archived_at,
        "archived_reason": archived_reason,
    }


_enc = json.encoder.encode_basestring  # C accelerated when available


def _emit(v, ind: int) -> str:
    """Same output as json.dumps(v, indent=2, ensure_ascii=False), without the
    (slow, pure Python) generic indenting encoder."""
    t = type(v)
    if t is str:
        return _enc(v)
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if t is int or t is float:
        return repr(v)
    if not v:
        return "[]" if t is list else "{}"
    pad = "\n" + "  " * (ind + 1)
    if t is list:
        body = ("," + pad).join([_emit(x, ind + 1) for x in v])
        return "[" + pad + body + "\n" + "  " * ind + "]"
    body = ("," + pad).join([_enc(k) + ": " + _emit(x, ind + 1) for k, x in v.items()])
    return "{" + pad + body + "\n" + "  " * ind + "}"


def _dump(mem: dict) -> str:
    return _emit(mem, 0) + "\n"


def generate(out_dir: Path, count: int, seed: int = 0) -> list[Path]:
    """Write `count` memories under out_dir/.claude/memory; return their paths."""
    root = Path(out_dir) / ".claude" / "memory"
    dirs = {}
    for cat, folder in CATEGORY_FOLDER.items():
        d = os.path.join(root, folder)
        os.makedirs(d, exist_ok=True)
        dirs[cat] = d
    rng = random.Random(seed)
    history: dict = {}
    paths = []
    for i in range(count):
        mem = make_memory(i, seed, rng, history)
        p = os.path.join(dirs[mem["category"]], mem["id"] + ".json")
        with open(p, "w", encoding="utf-8") as f:
            f.write(_dump(mem))
        paths.append(Path(p))
    return paths


_MOD_FIELDS = {  # (string field, list field) that modify_one rewrites
    "decision": ("context", "rationale"),
    "runbook": ("root_cause", "steps"),
    "session_summary": ("goal", "completed"),
    "constraint": ("rule", "workarounds"),
    "tech_debt": ("description", "suggested_fix"),
    "preference": ("reason", None),
}


def modify_one(path: Path, seed: int) -> None:
    """Rewrite one memory in place: new body text, updated_at, changes, times_updated."""
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        mem = json.load(f)
    cat = mem["category"]
    rng = random.Random((zlib.crc32(path.name.encode()) << 20) ^ (seed * 0x9E3779B1))
    topic = make_topic(rng)
    spec = {s[0]: s for s in SPECS[cat]}
    content = mem["content"]
    sfield, lfield = _MOD_FIELDS[cat]

    # replace the string field with new sentences of roughly the same length
    old_words = word_count(content[sfield])
    new, words = [], 0
    ref = sentence("ref", topic, rng)
    while words + word_count(ref) < old_words - 8 or not new:
        s = sentence(spec[sfield][2], topic, rng)
        if new and words + word_count(s) + word_count(ref) > old_words + 15:
            break
        new.append(s)
        words += word_count(s)
    new.append(ref)
    content[sfield] = " ".join(new)

    # replace one item of the list field
    if lfield and content.get(lfield):
        lst = content[lfield]
        lst[rng.randrange(len(lst))] = sentence(spec[lfield][2], topic, rng)
    elif cat == "preference":
        ex = content["examples"]["prefer"]
        if ex:
            ex[rng.randrange(len(ex))] = sentence("p_prefer", topic, rng)

    upd = _parse_ts(mem["updated_at"]) + rng.randint(1, 72) * 3600
    mem["updated_at"] = _ts(upd)
    mem["times_updated"] = int(mem.get("times_updated", 0)) + 1
    mem.setdefault("changes", []).append({"date": mem["updated_at"],
                                          "summary": sentence("change", topic, rng)})
    with open(path, "w", encoding="utf-8") as f:
        f.write(_dump(mem))
