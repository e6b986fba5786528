"""Save prompts at the right moment: the Stop hook's deterministic triage of the latest turn.

When the turn holds something a later session would want (a decision made or reversed, a
fix that worked, a limit found, work deferred, a preference stated, an explicit "remember
this"), the hook blocks the stop once and asks the model to save it through the
memory-save skill, naming the category and the topic in the user's words. Ordinary turns
stay quiet. The patterns are data (memindex/data/triage.json): sentence by sentence, after
code, quotations, pasted logs, questions and hypotheticals are taken out.

Never a loop, never twice for a topic (lessons of idnotbe/claude-memory's Stop hook, whose
re-fires came from guards that were deleted or expired, from cumulative session metrics
that always re-triggered, and from the skill's own instructions matching its keywords):
- a stop that follows a blocked stop (`stop_hook_active`) is never blocked;
- only the latest turn is read (since the user's last prompt), never the whole session,
  and the hook's own feedback, skill texts and tool output are not the user's words;
- the topics already asked about live in a per-session file outside the repository
  (capture/asked.py) and are written before the block is printed; a new finding that
  overlaps one of them is the same topic;
- a turn in which the model already ran the memory-save skill or `memindex save` is quiet;
- at most SAVE_PROMPTS_PER_SESSION asks in a session.
"""

from __future__ import annotations

import os

from ..defaults import (
    DATA_DIR,
    SAVE_PROMPT_TOPICS,
    SAVE_PROMPTS_PER_SESSION,
    TOPIC_KEY_WORD_CHARS,
    TOPIC_KEY_WORDS,
    TOPIC_MAX_CHARS,
)
from ..lean import dumps, loads

_DATA: dict | None = None


class Category:
    """One kind of finding, as triage.json describes it."""

    __slots__ = ("name", "label", "save_as", "words", "user", "assistant", "unless", "turn")

    def __init__(self, name: str, spec: dict) -> None:
        self.name = name
        self.label: str = spec["label"]
        self.save_as: str | None = spec.get("save_as")
        self.words: tuple[str, ...] = tuple(spec["words"])
        self.user: list[str] = spec.get("user", [])
        self.assistant: list[str] = spec.get("assistant", [])
        self.unless: str | None = spec.get("unless")
        self.turn: list[dict] = spec.get("turn", [])  # rules over the whole turn (see triage.json)


def data() -> dict:
    """triage.json, read once: {"categories": [Category], "skip", "same_topic", "stopwords"}."""
    global _DATA
    if _DATA is None:
        with open(os.path.join(DATA_DIR, "triage.json"), "rb") as fh:
            raw = loads(fh.read())
        _DATA = {
            "categories": [Category(k, v) for k, v in raw.items() if not k.startswith("_")],
            "skip": raw["_skip"],
            "restated": raw["_restated"],
            "same_topic": float(raw["_same_topic"]),
            "stopwords": frozenset(raw["_stopwords"]),
        }
    return _DATA


class Finding:
    """Something in the turn worth a memory: its category, the sentence that says it
    (the topic, in the speaker's words), the topic's key words, and the memory category
    to propose (an explicit "remember this" takes the kind its sentence also reads as)."""

    __slots__ = ("category", "topic", "key", "speaker", "save_as")

    def __init__(self, category: Category, topic: str, key: frozenset[str], speaker: str, save_as: str | None = None) -> None:
        self.category, self.topic, self.key, self.speaker = category, topic, key, speaker
        self.save_as = category.save_as or save_as

    def __repr__(self) -> str:
        return f"Finding({self.category.name!r}, {self.topic!r}, {self.speaker!r})"


def findings(user: list[str], assistant: list[str], tools: list[str] | None = None, before: str = "") -> list[Finding]:
    """Every category the turn matches, at most one finding per category (the user's
    sentences, then the assistant's, then the category's whole-turn rules), in
    triage.json's order. `tools`: the turn's tool results; `before`: the assistant's words
    the user's prompt answers. Deterministic."""
    cats = data()["categories"]
    tools = tools or []
    texts = [("user", t) for t in user] + [("assistant", t) for t in assistant]
    low = "\n".join([*(t for _, t in texts), *tools, before]).lower()
    if not any(w in low for c in cats for w in c.words):
        return []  # the common case: the regular-expression engine is not even loaded
    import re

    found: dict[str, Finding] = {}
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
               "before": " ".join(_sentences(before)) if before else ""}
    for cat in cats:
        if cat.name not in found and cat.turn:
            hit = _turn_rule(cat, prose["user"], context)
            if hit is not None:
                found[cat.name] = _finding(cat, hit[0], hit[1], "user", cats)
    out = [found[c.name] for c in cats if c.name in found]
    for f in out:  # "remember this" with nothing that says what kind: the turn's other finding
        if f.save_as is None:
            f.save_as = next((g.save_as for g in out if g.save_as), None)
    return out


def _skipped(sentence: str) -> bool:
    """A question or a hypothetical: never a finding."""
    import re

    return sentence.rstrip().endswith("?") or re.search(data()["skip"], sentence, re.I) is not None


def _turn_rule(cat: Category, user: list[list[str]], context: dict[str, str]) -> tuple[list[str], int] | None:
    """The first user sentence (of the text and its index) for which one of the category's
    whole-turn rules holds: its `user` pattern matches the sentence, and each other source
    it names (`assistant`, `tools`, `before`) matches that source's text."""
    import re

    for rule in cat.turn:
        if not all(re.search(rule[k], context[k], re.I) for k in ("assistant", "tools", "before") if k in rule):
            continue
        if rule.get("not_user") and any(re.search(rule["not_user"], " ".join(s), re.I) for s in user):
            continue
        for sentences in user:
            for i, sentence in enumerate(sentences):
                if _skipped(sentence) or not re.search(rule["user"], sentence, re.I):
                    continue
                if rule.get("unless") and re.search(rule["unless"], sentence, re.I):
                    continue
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


def same_topic(key: frozenset[str], seen: list[list[str]]) -> bool:
    """Whether `key` is a topic already asked about: it overlaps one by `_same_topic` of
    the smaller key (two empty keys are the same topic: nothing tells them apart)."""
    need = data()["same_topic"]
    for words in seen:
        other = frozenset(words)
        if not key or not other:
            if not key and not other:
                return True
            continue
        if len(key & other) / min(len(key), len(other)) >= need:
            return True
    return False


_CODE_LINE = (  # a quoted, logged or pasted line (code keywords only with code syntax: "class names ..." is prose)
    r"^\s*(?:>|\$ |>>> |#!|//|/\*|\*/|--\s|at\s+[\w$.<>]+\(|File\s+\"|Traceback\b|[\w.]*(?:Error|Exception):|"
    r"(?:def|func|function)\s+\w+\s*\(|class\s+\w+\s*[:({(<]|from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*;?\s*$|"
    r"import\s+.*\s+from\s+['\"]|(?:const|let|var|val)\s+\w+\s*[:=]|(?:public|private|protected)\s+[\w<>\[\],]+\s+\w+\s*[(;=]|"
    r"return\b.*;\s*$|#include\b|(?:if|for|while)\s*\()"
)


def _sentences(text: str) -> list[str]:
    """The text's prose sentences: fenced code, inline code, quoted and code-like lines,
    and long quotations are taken out, then it is cut at sentence ends and line breaks."""
    import re

    text = re.sub(r"(?s)(```|~~~).*?(?:\1|\Z)", "\n", text)
    text = re.sub(r"`[^`\n]*`", " code ", text)
    text = re.sub(r"[\"“][^\"”\n]{0,400}[\"”]", lambda m: m.group(0) if len(m.group(0).split()) < 5 else " quote ", text)
    lines = []
    for ln in text.splitlines():
        body = ln.lstrip()  # runs of whitespace as one space (the indent kept short): the patterns stay linear
        ln = ln[: min(len(ln) - len(body), 8)] + " ".join(body.split())
        if not re.match(_CODE_LINE, ln) and not re.match(r"^(?: {4,}|\t)(?![-*+] |\d+[.)] )", ln):
            lines.append(ln)
    out = []
    for line in lines:
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", line)  # list markers
        for part in re.split(r"(?<=[.!?;])\s+(?=\S)|\s+[—–]\s+", line):
            part = " ".join(part.split())
            if len(part) > 2:
                out.append(part)
    return out


def clean_topic(text: str) -> str:
    """The topic as the reason quotes it: printable characters only (no control, format
    or bidi characters), no backticks or double quotes, one line, at most TOPIC_MAX_CHARS."""
    text = "".join(ch if ch.isprintable() else " " for ch in text).replace("`", "'").replace('"', "'")
    text = " ".join(text.split())
    if len(text) > TOPIC_MAX_CHARS:
        cut = text[: TOPIC_MAX_CHARS - 1]
        text = (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
    return text


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
        if len(chosen) < SAVE_PROMPT_TOPICS and not same_topic(f.key, state["topics"]):
            chosen.append(f)
            state["topics"].append(sorted(f.key))
    if chosen:
        state["asks"] += 1
    return chosen


def stop_decision(payload: dict) -> str:
    """The Stop hook's output for this payload: `{"decision": "block", "reason": ...}` when
    the latest turn holds a new topic worth saving, else "" (the stop goes on)."""
    if payload.get("stop_hook_active") is True:
        return ""  # this stop follows our own block (or another hook's): never a loop
    from .turn import latest_turn

    turn = latest_turn(payload.get("transcript_path"), payload.get("last_assistant_message"))
    if not turn.user:  # Claude Code writes the transcript lazily: the prompt hook's memo has the prompt
        from ..policy.memo import recall

        left = recall(payload.get("session_id"))
        if left and left.get("prompt"):
            turn.user = [left["prompt"]]
    if not turn.user:
        return ""
    found = findings(turn.user, turn.assistant, turn.tools, turn.before)
    if not found:
        return ""
    from . import asked

    session = payload.get("session_id")
    if not isinstance(session, str) or not session:
        session = payload.get("transcript_path")
    if not isinstance(session, str) or not session:
        return ""  # no way to remember what was asked: asking could repeat
    state = asked.load(session)
    if turn.saved:  # the model saved during the turn: nothing to ask, but the topics are handled
        for f in found:
            if not same_topic(f.key, state["topics"]):
                state["topics"].append(sorted(f.key))
        asked.save(session, state)
        return ""
    chosen = choose(found, state)
    if not chosen:
        return ""
    asked.save(session, state)  # before the block is printed: a crash after it cannot re-ask
    return dumps({"decision": "block", "reason": reason(chosen)}) + "\n"
