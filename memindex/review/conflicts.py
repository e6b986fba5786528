"""`duplicate` and `conflict`: active memories of one topic that say the same thing, or
that disagree (a newer decision against an older one, a preference and its reverse, a
constraint a later memory breaks, a number that changed).

Same topic is decided by the one test the save path uses (memindex/write/candidate.py,
`Topic.measure`: containment plus title overlap against UPDATE_THRESHOLD), in either
direction, across categories. Measuring every pair would cost a search per memory, so a
first pass over the memories' words in memory (the engine's query terms, their document
frequencies in this store) keeps for each memory the few others it could be about; only
those are measured.

Of a same-topic pair, a **conflict** needs a sign of disagreement, without a language
model (the words are data: data/review.json):

* a quantity of one kind (a duration, a size, a share, a count of the same thing, a
  setting `name = value`) for which the two give no value in common: 30 s against 5 s,
  20 players against 30 players, `traces_sample_rate = 1.0` against `0.1`;
* the newer one says it replaces, lowers, raises, no longer uses... what the older one's
  title names ("EventBridge Scheduler replaces Celery beat", "..., not Redux");
* opposite words, one in each title (can / cannot, manual / automatic, always / never).

The newer memory (`updated_at`) is taken to hold; the item is the older one's, suggesting
`retire` with the newer as replacement. Without a sign, a pair that is the same topic both
ways is a **duplicate** (suggesting `merge`); one way only (one memory holds the other's
topic among others) is neither, and so is a pair of which one holds less than a quarter of
the other's words (DUPLICATE_CONTAINMENT: two memories of one area stating different facts
share its title words, not each other's content). What this cannot see: a disagreement in words only
(a reversed rule phrased without a cue word, a number spelled out), and a number that
changed on purpose in a memory that says both.
"""

from __future__ import annotations

import math
import re

from ..index import reads
from ..retrieval.hits import Hit
from ..retrieval.query import Params
from ..defaults import UPDATE_THRESHOLD
from ..text.words import STOP_WORDS
from ..write.candidate import StoreWide, Topic
from .items import Entry, Item
from .names import DATA

DUPLICATE_CONTAINMENT = 0.25  # a duplicate holds at least this share of the other's words, both ways
BLOCK_SHARE = 0.25  # a pair is measured when one holds this share of the other's rarest words (IDF mass)...
BLOCK_PER_MEMORY = 5  # ... for at most this many others per memory
PROBES = 24  # a memory's rarest words (in 2 or more memories) that look for partners...
MAX_DF_RATIO = 0.01  # ... each in at most this share of the memories (and at least DF_FLOOR)
DF_FLOOR = 25

_UNITS = {u: (dim, factor) for dim, table in DATA["units"].items() for u, factor in table.items()}
_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(%|[A-Za-z]+)?")
_SETTING = re.compile(r"([A-Za-z_][\w.]*)\s*(?:=|:)\s*(\d+(?:\.\d+)?)\b")
_SENTENCE = re.compile(r"(?<=[.!?;:\n])\s+|\n")
_WORD = re.compile(r"[a-z0-9][a-z0-9'+-]*")
_CUES = sorted(DATA["change_cues"], key=len, reverse=True)
_ANTONYMS = [tuple(pair) for pair in DATA["antonyms"]]


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s", "ed", "ing"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def quantities(text: str) -> dict[str, set[float]]:
    """Each kind of quantity the text gives -> its values: durations in seconds, sizes in
    bytes, shares, counts of a noun (`players`), settings (`name = value`)."""
    out: dict[str, set[float]] = {}
    for m in _SETTING.finditer(text):
        out.setdefault("=" + m.group(1).lower(), set()).add(float(m.group(2)))
    for m in _NUMBER.finditer(text):
        value, unit = float(m.group(1)), (m.group(2) or "").lower()
        if unit in _UNITS:
            dim, factor = _UNITS[unit]
            out.setdefault(dim, set()).add(round(value * factor, 6))
        elif unit.isalpha() and len(unit) >= 3 and unit not in STOP_WORDS:
            out.setdefault("#" + _stem(unit), set()).add(value)
    return out


def _numbers_differ(a: str, b: str) -> str | None:
    qa, qb = quantities(a), quantities(b)
    for kind in sorted(set(qa) & set(qb)):
        if not qa[kind] & qb[kind]:
            shown = kind.lstrip("=#")
            return f"{shown}: {_values(qa[kind])} against {_values(qb[kind])}"
    return None


def _values(values: set[float]) -> str:
    return "/".join(f"{v:g}" for v in sorted(values))


def disagreement(older: Entry, newer: Entry) -> list[str]:
    """The signs that `newer` says otherwise than `older` (empty: none seen)."""
    signals = []
    numbers = _numbers_differ(older.title, newer.title) or _numbers_differ(older.text, newer.text)
    if numbers:
        signals.append(f"different values ({numbers})")
    subject = {_stem(w) for w in _words(older.title) if w not in STOP_WORDS and len(w) >= 3}
    for sentence in _SENTENCE.split(newer.text):
        low = " " + " ".join(_words(sentence)) + " "
        for cue in _CUES:
            i = low.find(f" {cue} ")
            if i < 0:
                continue
            after = low[i + len(cue) + 2:].split()[:4]
            hit = next((w for w in after if _stem(w) in subject), None)
            if hit:
                signals.append(f"the newer says \"{cue} {hit}\"")
                break
        if len(signals) > 1:
            break
    ta, tb = f" {' '.join(_words(older.title))} ", f" {' '.join(_words(newer.title))} "
    for x, y in _ANTONYMS:
        for one, two in ((x, y), (y, x)):
            if f" {one} " in ta and f" {two} " in tb and f" {two} " not in ta and f" {one} " not in tb:
                signals.append(f"\"{one}\" against \"{two}\"")
                break
    return signals


_TOKEN = re.compile(r"[a-z0-9][a-z0-9_]+")


def _partners(entries: list[Entry]) -> list[tuple[float, int, int]]:
    """The pairs worth measuring, likeliest first: (share, i, j). For each memory, the
    BLOCK_PER_MEMORY others that hold most of its PROBES rarest words (IDF-weighted; a word
    in more than MAX_DF_RATIO of the memories looks for no one), when they hold at least
    BLOCK_SHARE of them. A cheap filter: the save path's test decides (`detect`)."""
    from collections import Counter
    from itertools import chain

    terms = [set(_TOKEN.findall(e.text.lower())) - STOP_WORDS for e in entries]
    n = len(entries)
    df = Counter(chain.from_iterable(terms))
    cap = max(DF_FLOOR, int(n * MAX_DF_RATIO))
    rare = {t for t, d in df.items() if 2 <= d <= cap}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in rare}
    posting: dict[str, list[int]] = {t: [] for t in rare}
    probes: list[list[str]] = []
    for i, ts in enumerate(terms):
        mine = ts & rare
        for t in mine:
            posting[t].append(i)
        probes.append(sorted(mine, key=df.__getitem__)[:PROBES])
    best: dict[tuple[int, int], float] = {}
    for i, mine in enumerate(probes):
        if not mine:
            continue
        mass = sum(idf[t] for t in mine)
        shared: dict[int, float] = {}
        for t in mine:
            w = idf[t]
            for j in posting[t]:
                shared[j] = shared.get(j, 0.0) + w
        shared.pop(i, None)
        for j in sorted(shared, key=shared.__getitem__, reverse=True)[:BLOCK_PER_MEMORY]:
            share = shared[j] / mass
            if share >= BLOCK_SHARE:
                key = (min(i, j), max(i, j))
                best[key] = max(best.get(key, 0.0), share)
    return sorted(((score, i, j) for (i, j), score in best.items()), reverse=True)


def detect(ctx) -> list[Item]:
    import time

    from ..index.reader import open_fresh_reader
    from . import cache

    entries = [e for e in ctx.entries if not e.document and e.category != "session_summary"]
    if len(entries) < 2:
        return []
    pairs = _partners(entries)
    if not pairs:
        return []
    deadline = time.monotonic() + float(ctx.cfg["review.conflict_budget_s"])
    cached = {k: v for k, v in cache.load(ctx.root, "pairs").items() if isinstance(v, list) and len(v) == 4}
    fresh: dict[str, list[float]] = {}
    params = Params.from_config(ctx.cfg)
    conn = open_fresh_reader(ctx.root, ctx.cfg, allow_sync=False)
    items, measured, pending = [], 0, 0
    try:
        hits: dict[int, Hit | None] = {}
        topics: dict[int, Topic] = {}
        store = StoreWide(conn)

        def measure(i: int, j: int) -> tuple[float, float]:
            """(score, containment) of memory j against memory i's text (the save path's test)."""
            doc = entries[j].doc
            if doc not in hits:
                rows = reads.documents(conn, [doc])
                hits[doc] = Hit.from_row(rows[0], 0.0) if rows else None
            hit = hits[doc]
            if hit is None:
                return 0.0, 0.0
            if i not in topics:
                topics[i] = Topic(conn, entries[i].text, params, store, entries[i].doc)
            m = topics[i].measure(conn, hit, exact=False)  # no NOOP here: exact containment is not needed
            return m.score, m.containment

        for _, i, j in pairs:
            key = "\0".join((entries[i].rel, entries[i].sha, entries[j].rel, entries[j].sha))
            got = cached.get(key)
            if got is None:
                if time.monotonic() > deadline:
                    pending += 1
                    continue
                (ij, cij), (ji, cji) = measure(i, j), measure(j, i)
                got = [round(ij, 4), round(cij, 4), round(ji, 4), round(cji, 4)]
                measured += 1
            fresh[key] = got
            item = _judge(ctx, entries[i], entries[j], *got)
            if item is not None:
                items.append(item)
    finally:
        conn.close()
        if "store" in locals():
            store.close()
    cache.save(ctx.root, "pairs", fresh)
    ctx.notes["conflicts"] = {"pairs": len(pairs), "measured": measured, "known": len(fresh) - measured,
                              "pending": pending, "topics": len(topics)}
    return items


def _judge(ctx, a: Entry, b: Entry, ab: float, cab: float, ba: float, cba: float) -> Item | None:
    """The item of one measured pair: a conflict, a duplicate, or None."""
    if max(ab, ba) < UPDATE_THRESHOLD:
        return None
    older, newer = sorted((a, b), key=lambda e: (e.updated_at or e.created_at, e.rel))
    signals = disagreement(older, newer)
    match = round(max(ab, ba), 3)
    if signals:
        return ctx.item("conflict", older, f"{ctx.shown(newer)} (newer) says otherwise: {signals[0]}",
                        {"match": match, "signals": signals, "newer": ctx.shown(newer)}, "retire", other=newer,
                        stable={"signals": signals})
    if min(ab, ba) >= UPDATE_THRESHOLD and min(cab, cba) >= DUPLICATE_CONTAINMENT:
        return ctx.item("duplicate", older, f"says the same as {ctx.shown(newer)} (match {min(ab, ba):.2f} both ways)",
                        {"match": match, "both_ways": round(min(ab, ba), 3), "signals": [], "newer": ctx.shown(newer)},
                        "merge", other=newer, stable={})
    return None
