"""The triage's view of a turn's text (capture/triage.py): its prose sentences without code,
quotations and pasted logs; the names a rephrasing keeps (identifiers); a topic as a save
prompt quotes it. Standard library only, regular expressions loaded on first use: the Stop
hook imports it.
"""

from __future__ import annotations

from ..defaults import TOPIC_KEY_IDS, TOPIC_KEY_WORD_CHARS, TOPIC_MAX_CHARS


def identifiers(texts: list[str]) -> frozenset[str]:
    """The names a turn's prose and inline code use that a rephrasing keeps: code spans,
    paths and dotted names, snake_case and camelCase, words with digits ("bf16", "29s",
    "kotlin-stdlib-jdk8"), lowercased, a path or a setting by its last part; the first
    TOPIC_KEY_IDS, each cut to TOPIC_KEY_WORD_CHARS. Fenced code is left out (its names are
    the code's, not the topic's)."""
    import re

    out: dict[str, None] = {}
    for text in texts:
        text = re.sub(r"(?s)(```|~~~).*?(?:\1|\Z)", " ", text)
        for span in re.findall(r"`([^`\n]{2,80})`|([A-Za-z0-9_][\w.+/:-]*[A-Za-z0-9_])", text):
            word = span[0] or span[1]
            if span[1] and not (re.search(r"[\d_./]", word) and re.search(r"[A-Za-z]", word) or re.search(r"[a-z][A-Z]", word)):
                continue  # a plain word: the topic's words hold it
            word = " ".join(word.lower().split())
            name = re.split(r"[/=]", word)[-1] or word  # a path's or a setting's last part: where it lives varies
            out.setdefault(name[:TOPIC_KEY_WORD_CHARS].strip(".:/-~"))
            if len(out) >= TOPIC_KEY_IDS:
                return frozenset(w for w in out if w)
    return frozenset(w for w in out if w)


_CODE_LINE = (  # a quoted, logged or pasted line (code keywords only with code syntax: "class names ..." is prose)
    r"^\s*(?:>|\$ |>>> |#!|//|/\*|\*/|--\s|at\s+[\w$.<>]+\(|File\s+\"|Traceback\b|[\w.]*(?:Error|Exception):|"
    r"(?:def|func|function)\s+\w+\s*\(|class\s+\w+\s*[:({(<]|from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*;?\s*$|"
    r"import\s+.*\s+from\s+['\"]|(?:const|let|var|val)\s+\w+\s*[:=]|(?:public|private|protected)\s+[\w<>\[\],]+\s+\w+\s*[(;=]|"
    r"return\b.*;\s*$|#include\b|(?:if|for|while)\s*\()"
)


def sentences(text: str) -> list[str]:
    """The text's prose sentences: fenced code, inline code, quoted and code-like lines,
    and long quotations (in double or single quotes) are taken out, then it is cut at
    sentence ends and line breaks."""
    import re

    text = re.sub(r"(?s)(```|~~~).*?(?:\1|\Z)", "\n", text)
    text = re.sub(r"`[^`\n]*`", " code ", text)
    quote = lambda m: m.group(0) if len(m.group(0).split()) < 5 else " quote "  # noqa: E731
    text = re.sub(r"[\"“][^\"”\n]{0,400}[\"”]", quote, text)
    text = re.sub(r"(?<![\w'‘])['‘][^'’\n]{3,400}['’](?![\w'’])", quote, text)  # 'a commit message', not it's
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
