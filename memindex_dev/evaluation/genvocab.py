"""The vocabulary of the store generator (memindex_dev.evaluation.genstore) and its template
engine.

The words themselves live in `data/vocabulary.json`; this module turns them into Zipf pools
and fills sentence templates with them. Every slot in a template ({tech}, {comp}, {ident},
{err}, {cmd}, {file}, ...) draws from a pool listed from common to rare and sampled with Zipf
weights (weight of rank r = 1 / r**s). Identifiers, paths, commands and service names are
composed from independent draws; a fixed project lexicon of ~21k composed identifiers (built
once from fixed seeds) is Zipf-ranked as well; prose words listed as synonyms vary between
variants. Each memory has a topic (`make_topic`) its templates keep referring to.
"""

from __future__ import annotations

import json
import random
import re
import time
from bisect import bisect
from itertools import accumulate
from pathlib import Path

VOCABULARY = Path(__file__).resolve().parent / "data" / "vocabulary.json"

# timestamps: two years, denser towards the end (a growing project)
T_START = 1730419200  # 2024-11-01T00:00:00Z
T_END = 1793491200    # 2026-11-01T00:00:00Z
T_SPAN = T_END - T_START


class Pool:
    """Items sampled with Zipf weights by list position (rank 1 = first)."""

    __slots__ = ("items", "cum", "total")

    def __init__(self, items, s: float = 1.0):
        self.items = list(items)
        self.cum = list(accumulate(1.0 / (r ** s) for r in range(1, len(self.items) + 1)))
        self.total = self.cum[-1]

    def draw(self, rng: random.Random):
        return self.items[bisect(self.cum, rng.random() * self.total)]


_DATA = json.loads(VOCABULARY.read_text(encoding="utf-8"))


def _pool(name: str) -> Pool:
    spec = _DATA["pools"][name]
    return Pool(spec["items"], s=spec["s"])


TECH, COMP, ENTITY = _pool("tech"), _pool("comp"), _pool("entity")
ID_SUFFIX, CAMEL_FORM = _pool("id_suffix"), _pool("camel_form")
IDENT_DATA, IDENT_CODE, ERR = _pool("ident_data"), _pool("ident_code"), _pool("err")
ENVFILE, ENVNAME, NS, ROLE = _pool("envfile"), _pool("envname"), _pool("ns"), _pool("role")
CIJOB, CISTEP, METRIC = _pool("cijob"), _pool("cistep"), _pool("metric")
TEAM, PERSON, FEATURE, THING, LIB = _pool("team"), _pool("person"), _pool("feature"), _pool("thing"), _pool("lib")
VERB, NOUN, TEST_COND, SETTING = _pool("verb"), _pool("noun"), _pool("test_cond"), _pool("setting")
TICKET_PROJ, MIG_VERB, DUR_UNIT = _pool("ticket_proj"), _pool("mig_verb"), _pool("dur_unit")
TAGS_GENERAL = Pool(_DATA["tags"]["general"]["items"], s=_DATA["tags"]["general"]["s"])
CAT_TAGS: dict[str, list[str]] = _DATA["tags"]["by_category"]

# another technology of the same kind as the topic's (Kafka vs NATS)
_TECH_RANK = {t: i for i, t in enumerate(TECH.items)}
TECH_GROUP = {}
GROUP_POOL = {}
for _g, _names in _DATA["tech_groups"].items():
    _members = sorted(_names, key=_TECH_RANK.__getitem__)
    GROUP_POOL[_g] = Pool(_members, s=1.0)
    for _n in _members:
        TECH_GROUP[_n] = _g
assert set(TECH_GROUP) == set(TECH.items), set(TECH.items) ^ set(TECH_GROUP)


def slug(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")


def _camel(entity: str) -> str:
    return "".join(p[:1].upper() + p[1:] for p in entity.split("_"))


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


# --------------------------------------------------------------------------
# Template engine
# --------------------------------------------------------------------------

_SLOT_RE = re.compile(r"\{(\w+|=[^{}]*)\}")

# Prose synonyms: outside `code`, each listed word of a sentence template
# becomes a choice among its variants (first one most likely), which widens
# the mid-frequency English vocabulary.
_SYN = {}
for _alts in _DATA["synonyms"]:
    _SYN[_alts[0]] = _alts
    _SYN[_alts[0].capitalize()] = [a.capitalize() for a in _alts]
_SYN_RE = re.compile(r"(?<![{\w=|])(" + "|".join(sorted(_SYN, key=len, reverse=True)) + r")(?![\w}|])")


def _add_synonyms(t: str) -> str:
    segs = t.split("`")  # odd segments are inline code: leave them alone
    for i in range(0, len(segs), 2):
        segs[i] = _SYN_RE.sub(lambda m: "{=" + "|".join(_SYN[m.group(1)]) + "}", segs[i])
    return "`".join(segs)


def _compile(t: str, synonyms: bool = False) -> list:
    """Split a template: even positions are literals, odd positions slot names
    or (for "{=a|b|c}") a Pool of alternatives."""
    if synonyms:
        t = _add_synonyms(t)
    parts = _SLOT_RE.split(t)
    for i in range(1, len(parts), 2):
        if parts[i].startswith("="):
            parts[i] = Pool(parts[i][1:].split("|"), s=1.2)
    return parts


def render(parts: list, topic: dict, rng: random.Random) -> str:
    if len(parts) == 1:
        return parts[0]
    buf = []
    for i, p in enumerate(parts):
        if i & 1:
            if type(p) is Pool:
                buf.append(p.draw(rng))
                continue
            v = topic.get(p)
            if v is None:
                v = SLOTS[p](rng, topic)
            buf.append(v)
        elif p:
            buf.append(p)
    return "".join(buf)


def _compiled_pool(name: str) -> Pool:
    spec = _DATA["pools"][name]
    return Pool([_compile(t) for t in spec["items"]], s=spec["s"])


CMD_T = _compiled_pool("cmd_t")
FILE_T = _compiled_pool("file_t")


def _fresh(pool: Pool, avoid_key: str):
    def f(rng, topic):
        v = pool.draw(rng)
        if v == topic.get(avoid_key):
            v = pool.draw(rng)
        return v
    return f


def _tech2(rng: random.Random, topic: dict) -> str:
    """Another technology, usually of the same kind as the topic's (Kafka vs NATS)."""
    tech = topic.get("tech")
    pool = GROUP_POOL[TECH_GROUP[tech]] if tech and rng.random() < 0.85 else TECH
    for _ in range(4):
        v = pool.draw(rng)
        if v != tech:
            return v
    return TECH.draw(rng) if tech != "PostgreSQL" else "Redis"


def _bt(s: str) -> str:
    return "`" + s + "`"


def _ident(rng: random.Random) -> str:
    """A data identifier: hand-listed, or composed as entity x suffix / CamelCase form."""
    r = rng.random()
    if r < 0.45:
        return IDENT_DATA.draw(rng)
    e = ENTITY.draw(rng)
    if r < 0.8:
        return e + ID_SUFFIX.draw(rng)
    return CAMEL_FORM.draw(rng).replace("{E}", _camel(e))


def _svc(rng: random.Random, entity: str | None = None) -> str:
    return (entity or ENTITY.draw(rng)).replace("_", "-") + "-" + ROLE.draw(rng)


def _hex(rng: random.Random, n: int) -> str:
    return format(rng.getrandbits(4 * n), "0%dx" % n)


_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def _pod(rng: random.Random, svc: str) -> str:
    return "%s-%s-%s" % (svc, _hex(rng, 9), "".join(rng.choice(_ALNUM) for _ in range(5)))


def _ver(rng: random.Random) -> str:
    return "v%d.%d.%d" % (min(int(rng.expovariate(0.6)), 9), rng.randint(0, 40), rng.randint(0, 19))


def _date(rng: random.Random) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(T_START + rng.randrange(T_SPAN)))


def _count(rng: random.Random) -> str:
    return str(rng.choice((1, 2, 5)) * 10 ** rng.randint(1, 4))


def _ms(rng: random.Random) -> str:
    if rng.random() < 0.7:
        return "%dms" % rng.randint(20, 4000)
    return "%.1fs" % rng.uniform(1, 60)


def _dur(rng: random.Random) -> str:
    u = DUR_UNIT.draw(rng)
    n = {"minutes": rng.randint(2, 90), "seconds": rng.randint(5, 120),
         "hours": rng.randint(1, 12), "days": rng.randint(1, 14)}[u]
    return "%d %s" % (n, u if n != 1 else u[:-1])


def _mig(rng: random.Random, topic: dict) -> str:
    return "%04d_%s_%s_%s.sql" % (rng.randint(1, 480), MIG_VERB.draw(rng), topic["entity"],
                                  ID_SUFFIX.draw(rng).strip("_"))


def file_path(rng: random.Random, topic: dict) -> str:
    return render(FILE_T.draw(rng), topic, rng)


def _envvar(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.6:
        for _ in range(6):
            v = IDENT_DATA.draw(rng)
            if v.upper() == v and "-" not in v:
                return v
        return "DATABASE_URL"
    e = ENTITY.draw(rng).upper()
    return e + rng.choice(("_SERVICE_URL", "_API_KEY", "_TIMEOUT_MS", "_ENABLED", "_BATCH_SIZE"))


SLOTS = {
    "tech2": lambda rng, t: _tech2(rng, t),
    "comp2": _fresh(COMP, "comp"),
    "ident2": lambda rng, t: _bt(_ident(rng) if rng.random() < 0.5 else IDENT_CODE.draw(rng)),
    "code": lambda rng, t: _bt(IDENT_CODE.draw(rng)),
    "err2": lambda rng, t: _bt(ERR.draw(rng)),
    # commands and paths need the bare service name: use the topic's "_inner" view
    "file2": lambda rng, t: _bt(file_path(rng, t.get("_inner", t))),
    "thing2": _fresh(THING, "thing"),
    "metric2": _fresh(METRIC, "metric"),
    "feature2": _fresh(FEATURE, "feature"),
    "team": lambda rng, t: TEAM.draw(rng),
    "person": lambda rng, t: PERSON.draw(rng),
    "cmd": lambda rng, t: _bt(render(CMD_T.draw(rng), t.get("_inner", t), rng)),
    "envvar": lambda rng, t: _bt(_envvar(rng)),
    "cistep": lambda rng, t: CISTEP.draw(rng),
    "lib2": lambda rng, t: _bt(LIB.draw(rng)),
    "svc2": lambda rng, t: _bt(_svc(rng)),
    "ticket": lambda rng, t: "%s-%d" % (TICKET_PROJ.draw(rng), rng.randint(10, 6000)),
    "pr": lambda rng, t: "#%d" % rng.randint(100, 12000),
    "prnum": lambda rng, t: str(rng.randint(100, 12000)),
    "sha": lambda rng, t: _hex(rng, 7),
    "ver": lambda rng, t: _ver(rng),
    "host": lambda rng, t: "ip-10-%d-%d-%d" % (rng.randint(0, 63), rng.randint(0, 255), rng.randint(1, 254)),
    "pod": lambda rng, t: _pod(rng, t["svc_raw"]),
    "reqid": lambda rng, t: "req_" + _hex(rng, 16),
    "runid": lambda rng, t: str(rng.randint(4_000_000_000, 9_999_999_999)),
    "mig": _mig,
    "date": lambda rng, t: _date(rng),
    "dur": lambda rng, t: _dur(rng),
    "ms": lambda rng, t: _ms(rng),
    "pct": lambda rng, t: "%d%%" % rng.randint(2, 98),
    "count": lambda rng, t: _count(rng),
    "num": lambda rng, t: str(rng.randint(2, 12)),
    # composed identifiers: mostly from the fixed project lexicon, else new
    # ones built around the memory's entity
    "fn2": lambda rng, t: _bt(LEX_FN.draw(rng) if rng.random() < 0.7 else _fn(rng)),
    "test": lambda rng, t: _bt(LEX_TEST.draw(rng) if rng.random() < 0.6 else _test(rng, t["entity"])),
    "flag": lambda rng, t: _bt(LEX_FLAG.draw(rng) if rng.random() < 0.6 else _flag(rng, t["entity"])),
    "metricname": lambda rng, t: _bt(LEX_METRIC.draw(rng) if rng.random() < 0.6
                                     else _metric_name(rng, t["entity"])),
    "cfgkey": lambda rng, t: _bt(LEX_CFG.draw(rng) if rng.random() < 0.6 else _cfgkey(rng, t["entity"])),
}


def _fn(rng: random.Random, entity: str | None = None) -> str:
    """A function / method name: `RecalculateShipmentEta`, `sync_order_totals`, ..."""
    v, n = VERB.draw(rng), NOUN.draw(rng)
    e = entity or ENTITY.draw(rng)
    r = rng.random()
    if r < 0.45:
        return v.capitalize() + _camel(e) + n.capitalize()
    if r < 0.75:
        return v + _camel(e) + n.capitalize()
    if r < 0.9:
        return "%s_%s_%s" % (v, e, n)
    return _camel(e) + n.capitalize() + "Handler"


def _test(rng: random.Random, entity: str) -> str:
    if rng.random() < 0.75:
        return "Test%s%s_%s" % (_camel(entity), VERB.draw(rng).capitalize(), TEST_COND.draw(rng))
    return "test_%s_%s_%s" % (VERB.draw(rng), entity, TEST_COND.draw(rng).lower())


def _flag(rng: random.Random, entity: str) -> str:
    n = NOUN.draw(rng)
    return rng.choice(("%s_%s_v2", "enable_%s_%s", "%s-%s-rollout", "new-%s-%s")) % (entity, n)


def _metric_name(rng: random.Random, entity: str) -> str:
    r = rng.random()
    if r < 0.4:
        return "%s_%s_total" % (entity, NOUN.draw(rng))
    if r < 0.75:
        return "%s_%s_duration_seconds" % (entity, VERB.draw(rng))
    return "%s_%s_errors_total" % (entity, VERB.draw(rng))


def _cfgkey(rng: random.Random, entity: str) -> str:
    return "%s.%s.%s" % (entity, NOUN.draw(rng), SETTING.draw(rng))


def _lexicon(make, n: int, seed: int) -> Pool:
    """A fixed project lexicon of n distinct composed identifiers.  Items drawn
    early (common parts) get the top Zipf ranks, so a few functions / flags /
    metrics are mentioned everywhere and most are rare."""
    r = random.Random(seed)
    seen, out = set(), []
    while len(out) < n:
        v = make(r)
        if v not in seen:
            seen.add(v)
            out.append(v)
    return Pool(out, s=1.0)


LEX_FN = _lexicon(_fn, 12000, 101)
LEX_TEST = _lexicon(lambda r: _test(r, ENTITY.draw(r)), 4000, 102)
LEX_FLAG = _lexicon(lambda r: _flag(r, ENTITY.draw(r)), 1500, 103)
LEX_METRIC = _lexicon(lambda r: _metric_name(r, ENTITY.draw(r)), 2000, 104)
LEX_CFG = _lexicon(lambda r: _cfgkey(r, ENTITY.draw(r)), 2000, 105)


def make_topic(rng: random.Random) -> dict:
    entity = ENTITY.draw(rng)
    svc = _svc(rng, entity if rng.random() < 0.7 else None)
    envname = ENVNAME.draw(rng)
    topic = {
        "tech": TECH.draw(rng),
        "comp": COMP.draw(rng),
        "entity": entity,
        "entities": _plural(entity),
        "E": _camel(entity),
        "stream": _plural(entity).upper(),
        "ident": _bt(_ident(rng)),
        "err": _bt(ERR.draw(rng)),
        "svc_raw": svc,
        "svc": _bt(svc),
        "ns": NS.draw(rng),
        "envname": envname,
        "envslug": {"local dev": "dev", "CI": "ci"}.get(envname, envname.lower()),
        "envfile": _bt(ENVFILE.draw(rng)),
        "feature": FEATURE.draw(rng),
        "thing": THING.draw(rng),
        "ci": CIJOB.draw(rng),
        "metric": METRIC.draw(rng),
        "lib_raw": LIB.draw(rng),
    }
    topic["lib"] = _bt(topic["lib_raw"])
    topic["fn"] = _bt(_fn(rng, entity) if rng.random() < 0.5 else LEX_FN.draw(rng))
    # commands and paths refer to the topic entity/service, so render them last
    # (inside commands, {svc} must be the bare name, not backticked)
    inner = dict(topic, svc=svc)
    topic["file_raw"] = render(FILE_T.draw(rng), inner, rng)
    topic["file"] = _bt(topic["file_raw"])
    topic["_inner"] = inner
    return topic


# --------------------------------------------------------------------------
# Sentence templates
# --------------------------------------------------------------------------

T: dict[str, list[str]] = dict(_DATA["templates"])
# Preferences come in coherent themes: title, topic, value, reasons and examples all talk
# about the same thing. Generic reasons (p_reason) are shared by every theme.
PREF_THEMES: list[dict[str, list[str]]] = _DATA["preference_themes"]
for _i, _th in enumerate(PREF_THEMES):
    T["pt%d" % _i] = _th["title"]
    T["pc%d" % _i] = _th["topic"]
    T["pv%d" % _i] = _th["value"]
    T["pr%d" % _i] = _th["reason"] + T["p_reason"]
    T["pp%d" % _i] = _th["prefer"]
    T["pa%d" % _i] = _th["avoid"]
# unions of all themes (generic keys in SPECS, used by modify_one)
for _k, _f in (("p_value", "value"), ("p_prefer", "prefer"), ("p_avoid", "avoid")):
    T[_k] = [line for th in PREF_THEMES for line in th[_f]]
PREF_THEME = Pool(range(len(PREF_THEMES)), s=0.8)

TPL = {k: Pool([_compile(t, synonyms=True) for t in v], s=0.8) for k, v in T.items()}

# per category: (field, kind, template key, min items, max items) of its content
CONTENT_SPECS: dict[str, list[tuple]] = {
    cat: [tuple(row) for row in rows] for cat, rows in _DATA["content_specs"].items()
}
