"""Save prompts at the right moment: the Stop hook's deterministic triage of the latest turn.

When the turn holds something a later session would want (a decision made or reversed, a
fix that worked, a limit found, work deferred, a preference stated, an explicit "remember
this"), the hook blocks the stop once and asks the model to save it through the
memory-save skill, naming the category and the topic in the user's words. Ordinary turns
stay quiet. A learned scorer decides (capture/score.py, `scored`: the patterns are among its
features and name the kind), and only in a turn that shows software work (score.at_work);
`scorer=False` (capture.save_prompt_scorer: false) leaves the patterns alone. The patterns are data (triage.json): sentence by sentence, after
code, quotations, pasted logs, questions and hypotheticals are taken out.

Never a loop, never twice for a topic (lessons of idnotbe/claude-memory's Stop hook, whose
re-fires came from guards that were deleted or expired, from cumulative session metrics
that always re-triggered, and from the skill's own instructions matching its keywords):
- a stop that follows a blocked stop (`stop_hook_active`) is never blocked;
- only the latest turn is read (since the user's last prompt), never the whole session,
  and the hook's own feedback, skill texts and tool output are not the user's words;
- the topics already asked about live in a per-session file outside the repository
  (capture/asked.py) and are written before the block is printed; a new finding is the
  same topic as one of them when their words overlap, when they are of one category and
  share the turn's identifiers (code spans, paths, names with digits: what survives a
  rephrasing), or when the turn says it recurs ("same error", "again", "as agreed",
  "per our convention") and the session already asked about that category; or when its
  words lie within what the user said in a turn asked about, or within what the model saved
  on its own; a turn the user says restates ("like we said", "same error") is no new topic
  once the session asked or saved anything;
- a turn in which the model already ran the memory-save skill or `memindex save` is quiet;
- at most SAVE_PROMPTS_PER_SESSION asks in a session.
"""

from __future__ import annotations

import os

from ..defaults import DATA_DIR, SAVE_PROMPT_TOPICS, SAVE_PROMPTS_PER_SESSION, TOPIC_KEY_WORD_CHARS, TOPIC_KEY_WORDS
from ..lean import dumps, loads
from .sentences import clean_topic, identifiers
from .sentences import sentences as _sentences

_DATA: dict | None = None
_SOURCES = ("user", "assistant", "tools", "before", "earlier")  # what a whole-turn rule's patterns are matched against


class Category:
    """One kind of finding, as triage.json describes it."""

    __slots__ = ("name", "label", "save_as", "words", "user", "assistant", "unless", "turn")

    def __init__(self, name: str, spec: dict, shared: dict[str, str]) -> None:
        self.name = name
        self.label: str = spec["label"]
        self.save_as: str | None = spec.get("save_as")
        self.words: tuple[str, ...] = tuple(spec["words"])
        self.user: list[str] = spec.get("user", [])
        self.assistant: list[str] = spec.get("assistant", [])
        self.unless: str | None = spec.get("unless")
        # rules over the whole turn (see triage.json): each source's patterns as a list, all of
        # which must match; "@name" is the shared pattern `_shared.name` (compiled once for all)
        self.turn: list[dict] = [{k: [shared[p[1:]] if p.startswith("@") else p for p in ([v] if isinstance(v, str) else v)]
                                  if k in _SOURCES else v for k, v in rule.items()} for rule in spec.get("turn", [])]


def data() -> dict:
    """triage.json, read once: {"categories": [Category], "skip", "same_topic", "stopwords"}."""
    global _DATA
    if _DATA is None:
        with open(os.path.join(DATA_DIR, "triage.json"), "rb") as fh:
            raw = loads(fh.read())
        _DATA = {
            "categories": [Category(k, v, raw["_shared"]) for k, v in raw.items() if not k.startswith("_")],
            "skip": raw["_skip"],
            "restated": raw["_restated"],
            "recurs": raw["_recurs"],
            "request": raw["_request"],
            "same_topic": float(raw["_same_topic"]),
            "same_topic_other_kind": float(raw["_same_topic_other_kind"]),
            "same_ids": float(raw["_same_ids"]),
            "same_context": float(raw["_same_context"]),
            "stopwords": frozenset(raw["_stopwords"]),
        }
    return _DATA


class Finding:
    """Something in the turn worth a memory: its category, the sentence that says it
    (the topic, in the speaker's words), the topic's key words, and the memory category
    to propose (an explicit "remember this" takes the kind its sentence also reads as)."""

    __slots__ = ("category", "topic", "key", "speaker", "save_as", "ids", "recurs", "loose", "context", "said_again")

    def __init__(self, category: Category, topic: str, key: frozenset[str], speaker: str, save_as: str | None = None) -> None:
        self.category, self.topic, self.key, self.speaker = category, topic, key, speaker
        self.save_as = category.save_as or save_as
        self.ids: frozenset[str] = frozenset()  # the turn's identifiers (see identifiers())
        self.recurs = False  # the turn says its subject came up before ("same error", "as agreed")
        self.loose = False  # the scorer's, not a rule's: its kind is a guess, so any kind asked about may be its topic
        self.context: frozenset[str] = frozenset()  # the words of all the user's prose in the turn (see restatement())
        self.said_again = False  # the user's words say so: "same error", "like we said", "..., again."

    def record(self) -> list[str]:
        """The finding as the session's state keeps it: its words, "@" and its category,
        "`" and each identifier, "~" and each other word of the user's turn."""
        return [*sorted(self.key), "@" + self.category.name, *sorted("`" + i for i in self.ids),
                *sorted("~" + w for w in self.context - self.key)]

    def __repr__(self) -> str:
        return f"Finding({self.category.name!r}, {self.topic!r}, {self.speaker!r})"


def findings(user: list[str], assistant: list[str], tools: list[str] | None = None, before: str = "",
             earlier: str = "") -> list[Finding]:
    """Every category the turn matches, at most one finding per category (the user's
    sentences, then the assistant's, then the category's whole-turn rules), in
    triage.json's order. `tools`: the verdicts of the commands the turn ran; `before`: the
    assistant's words the user's prompt answers; `earlier`: the user's prompt before them.
    Deterministic."""
    cats = data()["categories"]
    tools = tools or []
    texts = [("user", t) for t in user] + [("assistant", t) for t in assistant]
    low = "\n".join([*(t for _, t in texts), *tools, before, earlier]).lower()
    if not any(w in low for c in cats for w in c.words):
        return []  # the common case: the regular-expression engine is not even loaded
    import re

    found: dict[str, Finding] = {}
    answered: set[str] = set()  # findings of a rule that reads the words the prompt answers: those words' names count
    prose: dict[str, list[list[str]]] = {"user": [], "assistant": []}
    for speaker, text in texts:
        if speaker == "user" and re.search(data()["restated"], text, re.I | re.M):
            continue  # "pnpm!! not npm. again": a topic raised before, not a new one
        sentences = _sentences(text)
        prose[speaker].append(sentences)
        for i, sentence in enumerate(sentences):
            if _skipped(sentence):
                continue
            lower = sentence.lower()
            for cat in cats:
                if cat.name in found or not any(w in lower for w in cat.words):
                    continue
                patterns = cat.user if speaker == "user" else cat.assistant
                if not any(re.search(p, sentence, re.I) for p in patterns):
                    continue
                if cat.unless and re.search(cat.unless, sentence, re.I):
                    continue
                found[cat.name] = _finding(cat, sentences, i, speaker, cats)
    context = {"assistant": "\n".join(" ".join(s) for s in prose["assistant"]), "tools": "\n".join(tools),
               "before": " ".join(_sentences(before)) if before else "",
               "earlier": " ".join(_sentences(earlier)) if earlier else ""}
    for cat in cats:
        if cat.name not in found and cat.turn:
            hit = _turn_rule(cat, prose["user"], context)
            if hit is not None:
                found[cat.name] = _finding(cat, hit[0], hit[1], "user", cats)
                answered.add(cat.name)
    out = [found[c.name] for c in cats if c.name in found]
    if out:
        own = identifiers([*user, *assistant])
        if not own:  # "green now": a turn that names nothing is about what it answers
            answered.update(f.category.name for f in out)
        ids = identifiers([*user, *assistant, earlier, before]) if answered else own
        recurs = any(re.search(data()["recurs"], " ".join(s), re.I) for s in [*prose["user"], *prose["assistant"]])
        # a finding about the words it answers: whether those say it recurs too
        recurs_answered = bool(answered) and (recurs or any(re.search(data()["recurs"], context[k], re.I) for k in ("before", "earlier")))
    for f in out:  # "remember this" with nothing that says what kind: the turn's other finding
        if f.save_as is None:
            f.save_as = next((g.save_as for g in out if g.save_as), None)
        if f.category.name in answered:  # its subject is the words it answers: their names, and whether they say it recurs
            f.ids, f.recurs = ids, recurs_answered
        else:
            f.ids, f.recurs = own, recurs
    return out


def scored(found: list[Finding], user: list[str], assistant: list[str], tools: list[str], before: str = "",
           earlier: str = "", calls: int = 0, calls_before: int = 0, worked: bool = False) -> list[Finding]:
    """The learned scorer's verdict on the turn (capture/score.py), the rules' findings
    among its features: none when the turn shows no software work (score.at_work: no tool
    call, code, code-like name or word of software work in it or the answers before, and
    `worked`, Turn.worked, false: no tool call in the transcript's tail either) or when
    P(worth saving) is under the model's threshold; the rules' findings when they have
    any; else one finding of the kind the scorer reads, its topic the user's sentence with
    the most cue words of that kind. The rules alone when the model is off (`"enabled":
    false` in triage_model.json)."""
    from . import score
    m = score.model()
    if not m.get("enabled"):
        return found
    signs = score.work_signs(user, assistant, before, earlier, calls, calls_before)
    if not worked and not score.at_work(signs):
        return []  # a project memory is never the answer to a chat that shows no work (nothing else computed)
    feats = score.features(user, assistant, tools, before, earlier, [f.category.name for f in found], calls, calls_before, signs)
    if score.probability(feats, m) < m["threshold"]:
        return []
    for f in found:  # "the same way", "like the other one": what the session asked about already
        f.recurs = f.recurs or feats["u_recurs"] > 0
    if found:
        return found
    import re

    name = score.kind(feats, m)
    cat = next(c for c in data()["categories"] if c.name == name)
    best: tuple[int, list[str], int, str] | None = None  # (cue words, sentences, index, speaker): the user's first
    for speaker, texts in (("user", user), ("assistant", assistant)):
        for sentences in (_sentences(t) for t in texts):
            for i, sentence in enumerate(sentences):
                hits = 0 if _skipped(sentence) else 1 + score.cue_hits(sentence, name)
                if hits and (best is None or hits > best[0]):
                    best = (hits, sentences, i, speaker)
        if best is not None:
            break
    if best is None:
        return []  # nothing but questions and code: no topic to name
    f = _finding(cat, best[1], best[2], best[3], [])
    own = identifiers([*user, *assistant])
    f.ids = own or identifiers([*user, *assistant, earlier, before])
    f.recurs = feats["u_recurs"] > 0 or any(re.search(data()["recurs"], t, re.I) for t in [*user, *assistant])
    f.loose = True
    return [f]


def _skipped(sentence: str) -> bool:
    """A question or a hypothetical: never a finding; but a request put as a question
    ("can you remember that ...?", "could you always ...?") is a request."""
    import re

    if re.search(data()["request"], sentence, re.I):
        return False
    return sentence.rstrip().endswith("?") or re.search(data()["skip"], sentence, re.I) is not None


def _turn_rule(cat: Category, user: list[list[str]], context: dict[str, str]) -> tuple[list[str], int] | None:
    """The first user sentence (of the text and its index) for which one of the category's
    whole-turn rules holds: its `user` patterns match the sentence (not `unless`; with
    `echo`, it shares a word with the words before), and each other source it names
    (`assistant`, `tools`, `before`, `earlier`) matches that source's text."""
    import re

    for rule in cat.turn:
        sources = [k for k in ("tools", "assistant", "before", "earlier") if k in rule]
        if not all(context[k] for k in sources):
            continue  # a source the rule needs is empty: no pattern is compiled for nothing
        if not all(re.search(p, context[k], re.I) for k in sources for p in rule[k]):
            continue
        if rule.get("not_user") and any(re.search(rule["not_user"], " ".join(s), re.I) for s in user):
            continue
        for sentences in user:
            for i, sentence in enumerate(sentences):
                if _skipped(sentence) or not all(re.search(p, sentence, re.I) for p in rule["user"]):
                    continue
                if rule.get("unless") and re.search(rule["unless"], sentence, re.I):
                    continue
                if rule.get("echo") and not topic_key(sentence) & topic_key(context["before"] + " " + context["earlier"]):
                    continue  # a bare phrase picks an option only by naming one
                if rule.get("topic") == "earlier" and context["earlier"]:  # "works now": the problem is the topic
                    return [context["earlier"]], 0
                return sentences, i
    return None


def _finding(cat: Category, sentences: list[str], i: int, speaker: str, cats: list[Category]) -> Finding:
    """The topic is the matching sentence; one that says little by itself ("Remember
    that.") takes the sentence before it along."""
    import re

    topic = sentences[i]
    key = topic_key(topic)
    if len(key) < 2 and i > 0:
        topic = f"{sentences[i - 1]} {topic}"
        key = topic_key(topic)
    kind = None
    if cat.save_as is None:  # "remember this": the kind of memory its words read as, if any
        kind = next((c.save_as for c in cats if c.save_as and any(re.search(p, topic, re.I) for p in c.user)), None)
    return Finding(cat, clean_topic(topic), key, speaker, kind)


def topic_key(text: str) -> frozenset[str]:
    """The words that name a topic: lowercase, without stopwords and the triggers' own words;
    bounded (the first TOPIC_KEY_WORDS, each cut to TOPIC_KEY_WORD_CHARS), so that a pasted
    list in one sentence cannot crowd the session's earlier topics out of its state."""
    import re

    stop = data()["stopwords"]
    words = dict.fromkeys(w[:TOPIC_KEY_WORD_CHARS] for w in re.findall(r"[a-z0-9][a-z0-9+#._'-]*[a-z0-9+#]|[a-z0-9]", text.lower())
                          if w not in stop and (len(w) >= 3 or any(ch.isdigit() for ch in w)))
    return frozenset(list(words)[:TOPIC_KEY_WORDS])


def same_topic(f: Finding, seen: list[list[str]]) -> bool:
    """Whether the finding is a topic already asked about (each as Finding.record keeps
    it): its words overlap one's by `_same_topic` of the smaller key, or by
    `_same_topic_other_kind` when that one is of another category (the NaN fixed under a
    bf16 decision is a new finding about the same things, not the decision again; two
    empty keys are the same topic: nothing tells them apart); or it is of the same
    category and shares `_same_ids` of the smaller set of identifiers (a rephrasing keeps
    the names it is about); or the turn says its subject recurs and the category was
    asked about; or its words lie within (`_same_context`) what the user said in a turn
    asked about ("yes apply" after "always show me the plan before any apply"); or the
    user says it is said again ("like we said", "same error") in a session that asked
    already: the subject was asked about, or came up without an ask (then it was judged not
    worth one), either way it is not new."""
    if f.said_again and seen:
        return True
    cat = "@" + f.category.name
    for record in seen:
        other = frozenset(w for w in record if w[:1] not in ("@", "`", "~"))
        same_kind = f.loose or cat in record or not any(w[:1] == "@" for w in record)  # a record of an older version: any kind
        if same_kind:
            if f.recurs:
                return True
            ids = frozenset(w[1:] for w in record if w[:1] == "`")
            if ids and f.ids and len(ids & f.ids) / min(len(ids), len(f.ids)) >= data()["same_ids"]:
                return True
        if f.key and len(f.key & (other | frozenset(w[1:] for w in record if w[:1] == "~"))) / len(f.key) >= data()["same_context"]:
            return True
        if not f.key or not other:
            if not f.key and not other:
                return True
            continue
        need = data()["same_topic"] if same_kind else data()["same_topic_other_kind"]
        if len(f.key & other) / min(len(f.key), len(other)) >= need:
            return True
    return False


def restatement(user: list[str]) -> tuple[frozenset[str], bool]:
    """The words of the user's prose in the turn (a topic's context: what a later terse
    turn may restate), and whether the user says it is said again (`_recurs`, `_restated`)."""
    import re

    text = " ".join(" ".join(_sentences(t)) for t in user)
    again = any(re.search(data()[k], text, re.I) for k in ("recurs", "restated"))
    return topic_key(text), again


def reason(chosen: list[Finding]) -> str:
    """What the model reads as its next instruction: short, the category and the topic,
    the skill's two commands, and leave to decline."""
    if len(chosen) == 1:
        f = chosen[0]
        what = f"{f.category.label} (\"{f.topic}\")"
        cat = f" --category {f.save_as}" if f.save_as else ""
        head = f"memindex: in this turn {what}."
        how = f"use the memory-save skill (`memindex candidate{cat} ...`, then `memindex save` or `memindex update`)"
        return f"{head} If it should outlast this session, {how}. If nothing durable happened, say so in one line and stop."
    lines = ["memindex: in this turn"]
    for f in chosen:
        cat = f" [{f.save_as}]" if f.save_as else ""
        lines.append(f"- {f.category.label}{cat}: \"{f.topic}\"")
    lines.append(
        "If any should outlast this session, use the memory-save skill for each (`memindex candidate`, then "
        "`memindex save` or `memindex update`). If nothing durable happened, say so in one line and stop."
    )
    return "\n".join(lines)


def choose(found: list[Finding], state: dict) -> list[Finding]:
    """The findings to ask about now: new topics only, at most SAVE_PROMPT_TOPICS, none
    once the session had SAVE_PROMPTS_PER_SESSION asks. Adds them to `state`."""
    if state["asks"] >= SAVE_PROMPTS_PER_SESSION:
        return []
    chosen: list[Finding] = []
    for f in found:
        if len(chosen) < SAVE_PROMPT_TOPICS and not same_topic(f, state["topics"]):
            chosen.append(f)
            state["topics"].append(f.record())
    if chosen:
        state["asks"] += 1
    return chosen


def stop_decision(payload: dict, scorer: bool = True) -> str:
    """The Stop hook's output: `{"decision": "block", "reason": ...}` when the latest turn holds
    a new topic worth saving, else ""; `scorer`: capture.save_prompt_scorer (`scored`; false: the patterns alone)."""
    if payload.get("stop_hook_active") is True:
        return ""  # this stop follows our own block (or another hook's): never a loop
    from .turn import latest_turn

    turn = latest_turn(payload.get("transcript_path"), payload.get("last_assistant_message"))
    if not turn.user:  # Claude Code writes the transcript lazily: the prompt hook's memo has the prompt
        from ..runtime import recall

        left = recall(payload.get("session_id"))
        if left and left.get("prompt"):
            turn.user = [left["prompt"]]
    if not turn.user:
        return ""
    found = findings(turn.user, turn.assistant, turn.tools, turn.before, turn.earlier)
    if scorer:
        found = scored(found, turn.user, turn.assistant, turn.tools, turn.before, turn.earlier, turn.calls, turn.calls_before,
                       turn.worked)
    if not found and not turn.saved:
        return ""
    context, again = restatement(turn.user)
    for f in found:
        f.context, f.said_again = context, again
    from . import asked

    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        session = payload.get("transcript_path")
    if not isinstance(session, str) or not session:
        return ""  # no way to remember what was asked: asking could repeat
    state = asked.load(session)
    if turn.saved:  # the model saved during the turn: nothing to ask, but the topics are handled
        for f in found:
            if not same_topic(f, state["topics"]):
                state["topics"].append(f.record())
        what = topic_key(" ".join(_sentences(turn.saved_text))) | context  # what it saved, in its words and the user's
        if what:
            state["topics"].append([*sorted(what)[:TOPIC_KEY_WORDS], "@saved"])
        asked.save(session, state)
        return ""
    chosen = choose(found, state)
    if not chosen:
        return ""
    asked.save(session, state)  # before the block is printed: a crash after it cannot re-ask
    return dumps({"decision": "block", "reason": reason(chosen)}) + "\n"
