"""Memory content for the store generator (memindex_dev.evaluation.genstore): which fields each
category fills with how many template sentences, the enum fields, and titles."""

from __future__ import annotations

import random
import time

from .genvocab import CONTENT_SPECS, T_END, TECH, TPL, render

MIN_WORDS, MAX_WORDS = 60, 250

# (field, kind, template key, min items, max items): see "content_specs" in the vocabulary
SPECS = CONTENT_SPECS
# where extra sentences go when every field is full
OVERFLOW = {"decision": "rationale", "runbook": "steps", "session_summary": "completed",
            "constraint": "impact", "tech_debt": "suggested_fix", "preference": "reason"}
# where the sentence with unique tokens (ticket, PR, sha, ...) goes
REF_FIELD = {"decision": "context", "runbook": "root_cause", "session_summary": "goal",
             "constraint": "rule", "tech_debt": "description", "preference": "reason"}


def word_count(s: str) -> int:
    return s.count(" ") + 1


# lowercase proper names that must not be capitalized at the start of a sentence
_KEEP_LOWER = {t for t in TECH.items if t[:1].islower()}


def _cap(s: str) -> str:
    if s[:1].islower() and s.split(" ", 1)[0] not in _KEEP_LOWER:
        return s[0].upper() + s[1:]
    return s


def sentence(key: str, topic: dict, rng: random.Random, used: set | None = None) -> str | None:
    """Render one template of pool `key`.  With `used`, never reuse a template
    within the same memory; return None when the pool is exhausted."""
    pool = TPL[key]
    parts = pool.draw(rng)
    if used is not None:
        tries = 0
        while id(parts) in used:
            tries += 1
            if tries > 3:
                left = [p for p in pool.items if id(p) not in used]
                if not left:
                    return None
                parts = rng.choice(left)
                break
            parts = pool.draw(rng)
        used.add(id(parts))
    return _cap(render(parts, topic, rng))


def _item(kind: str, key: str, topic: dict, rng: random.Random, used: set):
    if kind == "alt":
        opt = sentence("alt_option", topic, rng, used)
        why = sentence("alt_reason", topic, rng, used)
        if opt is None or why is None:
            return None, 0
        return {"option": opt, "rejected_reason": why}, word_count(opt) + word_count(why)
    s = sentence(key, topic, rng, used)
    return (s, word_count(s)) if s is not None else (None, 0)


def _pref_spec(theme: int) -> list:
    return [("value", "s", "pv%d" % theme, 1, 1),
            ("reason", "s", "pr%d" % theme, 1, 5),
            ("prefer", "ex", "pp%d" % theme, 1, 3),
            ("avoid", "ex", "pa%d" % theme, 1, 3)]


def build_content(cat: str, topic: dict, rng: random.Random, target: int) -> tuple[dict, int]:
    spec = _pref_spec(topic["theme"]) if cat == "preference" else SPECS[cat]
    items = {f: [] for f, *_ in spec}
    seen: set = set()  # templates already used in this memory
    words = 0
    for field, kind, key, lo, hi in spec:
        n = lo
        if lo == 0 and rng.random() < 0.5:
            n = 1
        for _ in range(n):
            v, w = _item(kind, key, topic, rng, seen)
            if v is not None:
                items[field].append(v)
                words += w
    # one sentence with unique tokens (ticket / PR / sha / request id)
    ref = sentence("ref", topic, rng) if rng.random() < 0.85 else None
    if ref:
        words += word_count(ref)
    open_fields = [s for s in spec if len(items[s[0]]) < s[4]]
    ov = next(s for s in spec if s[0] == OVERFLOW[cat])
    misses = 0
    while words < target and misses < 4:
        s = rng.choice(open_fields) if open_fields else ov
        v, w = _item(s[1], s[2], topic, rng, seen)
        if v is None:
            if s in open_fields:
                open_fields.remove(s)
            else:
                misses += 1
            continue
        if words + w > MAX_WORDS:
            break
        items[s[0]].append(v)
        words += w
        if s in open_fields and len(items[s[0]]) >= s[4]:
            open_fields.remove(s)
    extra = []
    while words < MIN_WORDS:  # rare: top up with reference sentences
        e = sentence("ref", topic, rng)
        extra.append(e)
        words += word_count(e)
    if ref:
        extra.insert(0, ref)
    items[REF_FIELD[cat]].extend(extra)

    content = {}
    for field, kind, key, lo, hi in spec:
        if kind == "s":
            content[field] = " ".join(items[field])
        elif kind == "ex":
            content.setdefault("examples", {})[field] = items[field]
        else:
            content[field] = items[field]
    return content, words


def _pick(rng: random.Random, options: tuple, weights: tuple):
    return rng.choices(options, weights=weights)[0]


def with_enums(cat: str, content: dict, status: str, rng: random.Random, topic: dict) -> dict:
    """Return the full content dict with enum fields in schema order."""
    c = content
    if cat == "decision":
        if status == "retired":
            st = _pick(rng, ("superseded", "deprecated"), (3, 1))
        else:
            st = _pick(rng, ("accepted", "proposed", "deprecated", "superseded"), (80, 12, 5, 3))
        return {"status": st, "context": c["context"], "decision": c["decision"],
                "alternatives": c["alternatives"], "rationale": c["rationale"],
                "consequences": c["consequences"]}
    if cat == "runbook":
        return c
    if cat == "session_summary":
        if c["blockers"]:
            out = _pick(rng, ("blocked", "partial", "abandoned"), (5, 4, 1))
        else:
            out = _pick(rng, ("success", "partial", "abandoned"), (7, 3, 0.3))
        return {"goal": c["goal"], "outcome": out, "completed": c["completed"],
                "in_progress": c["in_progress"], "blockers": c["blockers"],
                "next_actions": c["next_actions"], "key_changes": c["key_changes"]}
    if cat == "constraint":
        kind = _pick(rng, ("technical", "policy", "limitation", "gap"), (4, 3, 3, 1))
        sev = _pick(rng, ("high", "medium", "low"), (3, 5, 2))
        expires = None
        if rng.random() < 0.12:
            expires = time.strftime("%Y-%m-%d", time.gmtime(T_END + rng.randrange(365 * 86400)))
        return {"kind": kind, "rule": c["rule"], "impact": c["impact"],
                "workarounds": c["workarounds"], "severity": sev,
                "active": status == "active" and rng.random() > 0.03, "expires": expires}
    if cat == "tech_debt":
        if status == "retired":
            st = _pick(rng, ("resolved", "wont_fix"), (3, 1))
        else:
            st = _pick(rng, ("open", "in_progress", "resolved", "wont_fix"), (60, 20, 15, 5))
        pr = _pick(rng, ("critical", "high", "medium", "low"), (5, 25, 45, 25))
        return {"status": st, "priority": pr, "description": c["description"],
                "reason_deferred": c["reason_deferred"], "impact": c["impact"],
                "suggested_fix": c["suggested_fix"],
                "acceptance_criteria": c["acceptance_criteria"]}
    # preference
    return {"topic": sentence("pc%d" % topic["theme"], topic, rng), "value": c["value"], "reason": c["reason"],
            "strength": _pick(rng, ("strong", "default", "soft"), (3, 5, 2)),
            "examples": c["examples"]}


TITLE_KEY = {"decision": "d_title", "runbook": "rb_title", "session_summary": "s_title",
             "constraint": "c_title", "tech_debt": "td_title"}


def make_title(cat: str, topic: dict, rng: random.Random) -> str:
    t = ""
    for _ in range(6):
        key = "pt%d" % topic["theme"] if cat == "preference" else TITLE_KEY[cat]
        t = render(TPL[key].draw(rng), topic, rng)
        n = t.count(" ") + 1
        if n < 4:
            t += " in the " + topic["comp"]
            n = t.count(" ") + 1
        if 4 <= n <= 10 and len(t) <= 120:
            break
    words = t.split()
    if len(words) > 10:
        t = " ".join(words[:10])
    return _cap(t[:120].rstrip())
