"""The triage's learned scorer: P(worth a save prompt | the latest turn), and the kind.

The hand-written patterns (triage.json, capture/triage.py) catch the forms they name and
little further: on a set written blind by someone else they found fewer than half of the
endings worth saving. This scorer draws one boundary over generic signals of the turn
instead: cue-word families per kind, counted in the user's words and in the assistant's
own prose separately (never in code, tool output or the hook's own feedback), the turn's
shape (questions, hypotheticals, a short answer to options, imperative and "we" forms,
negation, quoted-code share, lengths), the commands' verdicts, the words before the
prompt, the pattern rules' own hits, and the signs of software work (tool calls, code,
code-like names, words of the trade: `work_signs`; a turn without any is never asked
about, `at_work`). A logistic regression, trained by
`scripts/train_triage.py` (fixed folds, threshold chosen by cross-validation on the
training sets only), its weights a data file (memindex/data/triage_model.json). Inference
is substring counting and a dot product: standard library only and no regular
expressions, the Stop hook imports it.
"""

from __future__ import annotations

import math
import os

from ..defaults import DATA_DIR
from ..lean import loads

MODEL_FILE = os.path.join(DATA_DIR, "triage_model.json")
_MODEL: dict | None = None

KINDS = ("decision", "runbook", "constraint", "tech_debt", "preference")

# Cue-word families: phrases matched on the normalised text (lowercase, words separated by
# single spaces, padded with a space at each end); a leading/trailing space is a word edge.
FAMILIES: dict[str, tuple[str, ...]] = {
    "decision": (" let's ", " lets ", " let us ", " go with ", " going with ", " went with ", " stick with ", " sticking with ",
                 " decided ", " decide ", " decision ", " chose ", " choose ", " chosen ", " pick ", " picked ", " switch",
                 " move to ", " moving to ", " migrate", " instead of ", " instead ", " over ", " rather than ", " we'll use ",
                 " we will use ", " use ", " using ", " adopt", " standardi", " replace", " drop ", " dropping ", " ditch",
                 " keep ", " keeping ", " settled ", " final ", " then ", " it is ", " it's ", " do it ", " ship ", " approve",
                 " agreed ", " yes ", " ok ", " okay ", " sounds good ", " option ", " approach ", " from here on ",
                 " is out ", " after all ", " not do ", " do that ", " do it ", " sounds right ", " go ahead "),
    "runbook": (" works ", " worked ", " working ", " fixed ", " fix ", " fixes ", " solved ", " resolved ", " green ",
                " passes ", " passing ", " passed ", " did the trick ", " that did it ", " good now ", " all good ",
                " perfect ", " nice ", " thanks ", " root cause ", " the problem was ", " caused by ", " turned out ",
                " was the issue ", " the issue was ", " gone ", " no longer ", " finally ", " succeed", " builds ",
                " workaround ", " restart", " reinstall", " clear", " cache ", " flag ", " set ", " export ", " env ",
                " sorted ", " stays ", " now ", " that was it ", " was missing "),
    "constraint": (" can't ", " cannot ", " can not ", " must ", " must not ", " has to ", " have to ", " need to ", " only ",
                   " max ", " maximum ", " limit", " at most ", " at least ", " no more than ", " quota", " capped ",
                   " not supported ", " doesn't support ", " does not support ", " unsupported ", " require", " required ",
                   " never ", " not allowed ", " forbidden ", " compliance", " legal ", " contract", " sla ", " policy ",
                   " kb ", " mb ", " gb ", " ms ", " seconds ", " per ", " rate ", " timeout", " version", " older ",
                   " breaks ", " incompatible", " firewall", " blocked ", " won't ", " doesn't work ", " ever ",
                   " rejects ", " rejected ", " too large ", " too many ", " may ", " rule ", " validation", " turns out "),
    "tech_debt": (" later ", " for now ", " todo", " to do ", " ticket", " issue ", " follow-up", " follow up ", " followup",
                  " next sprint ", " not now ", " out of scope ", " skip ", " skipping ", " leave it ", " leave the ",
                  " park", " defer", " postpone", " punt", " revisit", " come back ", " hack", " temporary ", " temporarily ",
                  " quick fix ", " workaround ", " tech debt ", " technical debt ", " cleanup ", " clean up ", " someday ",
                  " backlog", " after the release ", " after launch ", " not worth ", " good enough ", " ugly ", " xfail",
                  " disable", " comment out ", " commented out ", " until ", " next week ", " deadline", " demo ",
                  " not yet "),
    "preference": (" i prefer ", " prefer ", " i like ", " i'd rather ", " i want ", " i don't want ", " i hate ", " please ",
                   " always ", " never ", " don't ", " do not ", " stop ", " from now on ", " going forward ", " in future ",
                   " in the future ", " every time ", " each time ", " our style ", " convention", " style ", " naming ",
                   " format", " tabs ", " spaces ", " verbose", " shorter ", " concise ", " no more ", " annoying ",
                   " i'm not a fan ", " not a fan ", " keep it ", " make sure ", " default ", " don't like ", " avoid ",
                   " for all ", " here ", " start with "),
    "remember": (" remember ", " note ", " note that ", " keep in mind ", " for future ", " for the record ", " next time ",
                 " write this down ", " write that down ", " jot ", " don't forget ", " do not forget ", " save this ",
                 " save that ", " memor", " fyi ", " heads up ", " worth knowing ", " good to know ", " lesson "),
    "lookup": (" what did we ", " remind me ", " did we decide ", " what was ", " what's our ", " what is our ", " where did ",
               " do you remember ", " why did we ", " what's the ", " how do i ", " how do we ", " explain ", " what does ",
               " show me ", " can you check ", " look at ", " review "),
    "hypothetical": (" should we ", " what if ", " maybe ", " perhaps ", " might ", " could we ", " would it ", " thinking about ",
                     " considering ", " not sure ", " wondering ", " if we ", " suppose ", " would you ", " pros and cons ",
                     " compare ", " versus ", " vs ", " or should ", " thoughts ", " wdyt ", " any idea ", " is it worth "),
    "recurs": (" again ", " same ", " like we said ", " as agreed ", " as discussed ", " like before ", " as before ",
               " like last time ", " already ", " as usual ", " per our ", " like the other ", " the thing where "),
    "negation": (" not ", " no ", " never ", " n't ", "n't ", " don't ", " without "),
    "error": (" error", " fail", " broken ", " crash", " exception", " hang", " stuck ", " timeout", " timed out ",
              " doesn't work ", " not working ", " 500 ", " segfault", " oom ", " leak", " flaky ", " wrong "),
    "done": (" done ", " added ", " updated ", " changed ", " wrote ", " created ", " removed ", " renamed ", " committed ",
             " merged ", " deployed ", " implemented ", " refactored "),
    "we": (" we ", " our ", " us ", " let's ", " we're ", " we'll ", " team "),
    # the assistant says why something failed: a cause found is what a runbook or a limit keeps
    "cause": (" because ", " caused ", " comes from ", " come from ", " was missing ", " wasn't ", " weren't ", " isn't ",
              " doesn't ", " needs ", " wants ", " expects ", " requires ", " rejects ", " only accepts ", " the reason ",
              " root cause ", " turned out ", " due to "),
    # the user says it went well: what confirms a fix or a change that was just made
    "ack": (" thx ", " thanks ", " thank you ", " running ", " back ", " live ", " looks right ", " looks good ", " zero ",
            " all good ", " great ", " nice ", " perfect ", " works ", " worked ", " fixed ", " green ", " stable ",
            " good ", " solved ", " no more ", " gone ", " clean ", " happy "),
}
# Words of software work: a turn that has none of them, no code, no tool call and no code-like
# name (work_signs) is not coding work, and a project memory is never its answer (LoCoMo's
# chats between friends, docs/evaluation.md).
TECH = frozenset("""
api apis backend cache ci cli codebase commit commits compile compiler config configs cron css database databases db
debug deploy deployed deployment dependency dependencies docker endpoint endpoints env fixture frontend function
functions git helm http https json kubernetes lambda lint linter merge migration migrations mock module modules null
pipeline pipelines pod pods postgres prod query queries queue refactor regex repo repos runtime schema sdk server
servers sql ssh ssl staging timeout token ui url variable webhook workflow yaml
redis kafka rabbitmq mysql sqlite mongodb mongo postgresql terraform kubectl k8s npm pnpm yarn pip cargo gradle maven
webpack vite nginx graphql grpc oauth jwt tls aws gcp azure s3 ec2 github gitlab jenkins pytest jest typescript
javascript golang python python3 java node nodejs django flask linux ubuntu macos xcode android ios kotlin dockerfile
makefile cmake gcc clang llvm cuda gpu cpu vm vms bash numpy pandas pytorch tensorflow jupyter csv parquet airflow dbt
snowflake bigquery rollback hotfix auth login dataset
""".split())
_EXTENSIONS = frozenset("py js ts tsx jsx json yml yaml toml md go rs java kt gd sh sql tf c h cpp hpp rb php cs swift lock "
                        "txt cfg ini env html css vue gradle xml proto ipynb csv conf lua dart ex exs scala zig".split())


def _code_like(token: str) -> bool:
    """A name as code writes it, not as chat does ("LeBron", "4th", "5k", "J.K." are not):
    snake_case, a path or a file name with an extension, lower camelCase, letters then
    digits ("bf16"), a command-line flag, a call or an assignment."""
    word = token.strip(".,;:!?()[]{}'\"<>*")
    if len(word) < 3 or not any(ch.isalpha() for ch in word):
        return False
    if "_" in word.strip("_") or word.startswith("--") and word[2:3].isalpha() or "()" in word or "::" in word:
        return True
    if "=" in word.strip("=") or "->" in word or "=>" in word:
        return True
    stem, dot, ext = word.rpartition(".")
    if dot and stem and ext.lower() in _EXTENSIONS and any(ch.isalnum() for ch in stem):
        return True
    if word.count("/") >= 2 or word.startswith(("./", "~/")):
        return True
    if word[:2].isalpha() and word[-1:].isdigit() and word.isalnum():  # "adc2", "bf16", "utf8", "ec2"
        return True
    return word[0].islower() and any(a.islower() and b.isupper() for a, b in zip(word, word[1:]))


def _code_spans(text: str) -> int:
    """The spans of inline or fenced code, counted when a backtick opens one after a space or
    at a line's start (a backtick used as an apostrophe, "it`s, you`re", opens none)."""
    n = 0
    for part in text.split("`")[1:-1:2]:
        n += bool(part.strip())
    return n if ("```" in text or " `" in text or text.startswith("`") or "\n`" in text) else 0


def work_signs(user: list[str], assistant: list[str], before: str, earlier: str, calls: int = 0,
               calls_before: int = 0) -> dict[str, float]:
    """What shows the turn is software work: tool calls (in the turn and the turns before
    the prompt), code spans, code-like names, words of software work (TECH)."""
    texts = [*user, *assistant, before, earlier]
    tokens = " ".join(texts).split()
    code_names = sum(1 for t in tokens if _code_like(t))
    tech = len({w for w in prose(" ".join(texts)).split() if w in TECH})
    spans = sum(_code_spans(t) for t in texts)
    return {"calls": min(calls, 3) / 3, "calls_before": min(calls_before, 3) / 3, "code_names": min(code_names, 3) / 3,
            "code_spans": min(spans, 3) / 3, "tech": min(tech, 3) / 3}


_IMPERATIVE = frozenset("use go keep switch drop add remove make put stick always never don't do stop let's lets pick move "
                        "replace rename set ship skip leave write save remember note revert rollback pin bump please "
                        "ok okay yes yep sure fine".split())
_QUESTION_START = frozenset("what why how when where which who should could would can is are do does did will whats".split())


def model() -> dict:
    """triage_model.json, read once: {"enabled", "features", "weights", "bias", "threshold", "kinds": {kind: {...}}}."""
    global _MODEL
    if _MODEL is None:
        with open(MODEL_FILE, "rb") as fh:
            _MODEL = loads(fh.read())
    return _MODEL


def prose(text: str) -> str:
    """Lowercase words of the text outside fenced code, inline code and quoted log lines,
    padded with spaces; punctuation other than ' - ? becomes a space."""
    parts = text.split("```")
    text = " ".join(parts[::2])  # odd parts are fenced code
    bits = text.split("`")
    text = " ".join(bits[::2])
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith((">", "$ ", ">>> ", "Traceback", "at ", "File \""))]
    out = []
    for ch in "\n".join(lines).lower():
        out.append(ch if ch.isalnum() or ch in "'-?" else " ")
    text = "".join(out).replace("’", "'").replace("?", " ? ")
    return " " + " ".join(text.split()) + " "


def _code_share(text: str) -> float:
    if not text:
        return 0.0
    parts = text.split("```")
    code = sum(len(p) for p in parts[1::2])
    code += sum(len(b) for b in " ".join(parts[::2]).split("`")[1::2])
    return min(1.0, code / len(text))


def _hits(prose: str, family: str) -> int:
    return sum(1 for p in FAMILIES[family] if p in prose)


def cue_hits(text: str, family: str) -> int:
    """How many of a family's cue phrases the text's prose holds (as `features` counts them)."""
    return _hits(prose(text), family)


def at_work(signs: dict[str, float]) -> bool:
    """Whether the turn shows software work at all (work_signs): the scorer asks nothing of
    a turn that does not (a chat between friends: "Thanks, Melanie!" is no fix that worked)."""
    return any(v > 0 for v in signs.values())


def features(user: list[str], assistant: list[str], tools: list[str], before: str, earlier: str,
             rules: list[str], calls: int = 0, calls_before: int = 0,
             signs: dict[str, float] | None = None) -> dict[str, float]:
    """The turn's features by name (each about 0..1). `rules`: the names of the pattern
    categories that matched (triage.findings); `calls`, `calls_before`: the tool calls of the
    turn and of the answers before its prompt (Turn.calls); `signs`: its `work_signs`, when
    the caller has them already."""
    u_raw = "\n".join(user)
    a_raw = "\n".join(assistant)
    u, a, b, e = prose(u_raw), prose(a_raw), prose(before), prose(earlier)
    f: dict[str, float] = {}
    hits: dict[tuple[str, str], int] = {}
    for fam in FAMILIES:
        hits["u", fam], hits["a", fam] = _hits(u, fam), _hits(a, fam)
        f["u_" + fam] = min(hits["u", fam], 3) / 3
        f["a_" + fam] = min(hits["a", fam], 3) / 3
    for side in ("u", "a"):  # cue strength of any kind: a new writer's phrasing spreads over families
        f[side + "_cues"] = min(sum(hits[side, k] for k in (*KINDS, "remember")), 6) / 6
    for fam in ("error", "hypothetical", "decision"):
        f["b_" + fam] = min(_hits(b, fam), 3) / 3
    f["e_error"] = min(_hits(e, "error"), 3) / 3
    words = u.split()
    n = len(words)
    f["u_len"] = math.log1p(n) / 6
    f["a_len"] = math.log1p(len(a.split())) / 7
    f["u_short"] = 1.0 if n <= 8 else 0.0
    f["u_questions"] = min(words.count("?"), 3) / 3
    f["u_ends_question"] = 1.0 if u_raw.rstrip().endswith("?") else 0.0
    f["u_question_start"] = 1.0 if words and words[0] in _QUESTION_START else 0.0
    f["u_imperative"] = 1.0 if words and words[0] in _IMPERATIVE else 0.0
    f["u_code"] = _code_share(u_raw)
    f["a_code"] = _code_share(a_raw)
    f["before"] = 1.0 if before.strip() else 0.0
    f["answer_short"] = f["before"] * f["u_short"]
    f["fix_confirmed"] = f["u_runbook"] * max(f["b_error"], f["e_error"], f["u_error"])
    f["error_fixed"] = f["u_error"] * f["a_runbook"]  # the user brings an error, the assistant's words fix it
    f["error_limit"] = f["u_error"] * f["a_constraint"]  # an error that turns out to be a limit
    f["pick"] = f["answer_short"] * max(f["b_decision"], f["b_hypothetical"])  # "try 2", "containers": a pick among options
    f["b_done"] = min(_hits(b, "done"), 3) / 3
    quiet = f["u_short"] and not (f["u_questions"] or f["u_error"] or f["u_negation"])  # short, no question, no complaint
    # "jobs are running, thx" after a change the assistant made: a fix confirmed
    f["confirm"] = 1.0 if quiet and f["u_ack"] and (f["b_done"] or calls_before) else 0.0
    f["cause_fixed"] = 1.0 if f["a_cause"] and (f["a_done"] or calls) else 0.0  # why it failed, and what was changed
    f["tools"] = min(len(tools), 3) / 3
    t = prose("\n".join(tools))
    f["tools_pass"] = 1.0 if any(w in t for w in (" passed ", " ok ", " success", " built ", " 0 failed ", " green ")) else 0.0
    f["tools_fail"] = 1.0 if any(w in t for w in (" failed ", " error", " fail ")) else 0.0
    f["rule_any"] = 1.0 if rules else 0.0
    for kind in (*KINDS, "remember"):
        f["rule_" + kind] = 1.0 if kind in rules else 0.0
    if signs is None:
        signs = work_signs(user, assistant, before, earlier, calls, calls_before)
    for name, value in signs.items():
        f["w_" + name] = value
    return f


def _dot(weights: dict[str, float], bias: float, feats: dict[str, float]) -> float:
    z = bias + sum(w * feats.get(k, 0.0) for k, w in weights.items())
    return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))


def probability(feats: dict[str, float], m: dict | None = None) -> float:
    """P(worth a save prompt) for the features."""
    m = m or model()
    return _dot(m["weights"], m["bias"], feats)


def kind(feats: dict[str, float], m: dict | None = None) -> str:
    """The memory kind the turn most reads as (one-vs-rest scores, the highest)."""
    m = m or model()
    return max(KINDS, key=lambda k: (_dot(m["kinds"][k]["weights"], m["kinds"][k]["bias"], feats), -KINDS.index(k)))
