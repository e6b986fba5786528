"""Secrets stay out of memories: the one check every writer goes through.

Memories are committed to git: a key saved once is published. `scrub` is applied by the
write path's save and update (memindex.write.ops) to what is about to be written, so every
writer that goes through them (the CLI, session capture, importers) gets it:

- `<private>...</private>` spans are always removed (an unclosed one runs to the end);
- token-shaped strings (data/secret_patterns.json: well-known key formats, private key
  blocks, JWTs, and credential assignments whose value looks random) make the write fail
  with SecretFound, naming each field by its JSON path and the kind, or, with
  `redact=True`, are replaced by `[REDACTED:kind]`.

`redact_text` is what sync applies to a hand-written memory file's title, tags and body
(memindex.store.files): the index and the hook's line never carry what a file should not hold.

A compiled set of regular expressions, not a detector library: detect-secrets 1.5 costs
112 ms to import and flags most ordinary sentences as high-entropy strings
(scripts/bench_secrets.py, docs/reliability.md). Never imported by the prompt hook.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator

from ..defaults import DATA_DIR
from ..errors import SecretFound

_DATA = os.path.join(DATA_DIR, "secret_patterns.json")
_PRIVATE = re.compile(r"<private>.*?(?:</private>|\Z)", re.IGNORECASE | re.DOTALL)
_PLACEHOLDER = re.compile(r"^(?:\$\{?|%|\{\{|<|\[|\*{3}|x{4}|\.{3})|(?:changeme|example|placeholder|your[_-]|redacted|dummy)", re.IGNORECASE)
# a lowercase name and a bracketed small number or name, `version(1)`, `get(key)`, `items[0]`:
# code or notation in prose ("token: version(1) | account_id(8) ..."), not a generated
# credential; "Summer(2024)" or "pass(Xy9kL2q)" still are
_NOTATION = re.compile(r"^[a-z_][a-z0-9_.]*[(\[](?:\d{1,3}|[a-z_][a-z0-9_]*)[)\]]$")
_PATTERNS: list[tuple[str, str, bool, tuple[str, ...], re.Pattern[str]]] | None = None


def _patterns() -> list[tuple[str, str, bool, tuple[str, ...], re.Pattern[str]]]:
    """(kind, label, needs entropy, hints, compiled pattern) from the data file, once."""
    global _PATTERNS
    if _PATTERNS is None:
        with open(_DATA, encoding="utf-8") as fh:
            rows = json.load(fh)["patterns"]
        _PATTERNS = [(r["kind"], r["label"], bool(r.get("entropy")), tuple(r["hints"]), re.compile(r["pattern"])) for r in rows]
    return _PATTERNS


def looks_random(value: str) -> bool:
    """A credential's value rather than a word, a placeholder or a variable: at least 8
    characters, 3 bits of entropy per character, letters and a digit (or 20 characters of
    three classes: lower, upper, digit, symbol); never a name followed by a bracketed part."""
    if len(value) < 8 or _PLACEHOLDER.search(value) or _NOTATION.match(value):
        return False
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    if entropy < 3.0:
        return False
    classes = sum((any(c.islower() for c in value), any(c.isupper() for c in value),
                   any(c.isdigit() for c in value), any(not c.isalnum() for c in value)))
    has_letter = any(c.isalpha() for c in value)
    return has_letter and (any(c.isdigit() for c in value) or (len(value) >= 20 and classes >= 3))


def find(text: str) -> list[tuple[str, str, int, int]]:
    """(kind, label, start, end) of each secret in `text`, in order, not overlapping."""
    low = text.lower()
    found: list[tuple[str, str, int, int]] = []
    for kind, label, entropy, hints, rx in _patterns():
        if not any(h in low for h in hints):  # the cheap first pass: most text holds no hint
            continue
        for m in rx.finditer(text):
            start, end = (m.start("value"), m.end("value")) if "value" in rx.groupindex else m.span()
            if entropy and not looks_random(text[start:end]):
                continue
            if any(s < end and start < e for _, _, s, e in found):
                continue
            found.append((kind, label, start, end))
    return sorted(found, key=lambda f: f[2])


def strip_private(text: str) -> str:
    """`text` without its `<private>...</private>` spans."""
    if "<" not in text or "private" not in text.lower():
        return text
    return _PRIVATE.sub("", text)


def redact_text(text: str) -> tuple[str, list[str]]:
    """`text` with private spans removed and each secret replaced by `[REDACTED:kind]`,
    and the kinds found."""
    text = strip_private(text)
    found = find(text)
    for kind, _, start, end in reversed(found):
        text = f"{text[:start]}[REDACTED:{kind}]{text[end:]}"
    return text, [f[0] for f in found]


def _walk(value: object, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if isinstance(key, str):
                yield f"{where} (key)", key
            yield from _walk(item, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def _rebuild(value: object, fix) -> object:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {fix(k) if isinstance(k, str) else k: _rebuild(v, fix) for k, v in value.items()}
    if isinstance(value, list):
        return [_rebuild(v, fix) for v in value]
    return value


def scrub(record: object, redact: bool = False) -> tuple[object, dict[str, list[dict[str, str]]]]:
    """What a writer may store of `record` (any JSON value): private spans removed; each
    secret refused (SecretFound, naming its field's JSON path and kind) or, with
    `redact`, replaced by `[REDACTED:kind]`. Returns (record, {"redacted": [{field, kind}]}
    for the writer's answer, or {} when nothing was redacted). A retire/archive reason has
    no --redact: it is always redacted."""
    record = _rebuild(record, strip_private)
    findings = [{"field": where, "kind": kind, "label": label}
                for where, text in _walk(record, "") for kind, label, _, _ in find(text)]
    if not findings:
        return record, {}
    if not redact:
        raise SecretFound(
            "refusing to store what looks like a secret (memories are committed to git); remove it, "
            "keep it in a secret store and name it instead, or pass --redact",
            [f"{f['field']}: {f['label']} ({f['kind']})" for f in findings],
            [{"field": f["field"], "kind": f["kind"]} for f in findings],
        )
    return _rebuild(record, lambda s: redact_text(s)[0]), {"redacted": [{"field": f["field"], "kind": f["kind"]} for f in findings]}


def without_secrets(title: str, tags: list[str], body: str, problems: list[str]) -> tuple[str, list[str], str]:
    """A hand-written file may hold what `memindex save` refuses: the index, index.md and
    the hook's line get `[REDACTED:kind]` (and no `<private>` span), the row a problem."""
    kinds: dict[str, list[str]] = {}
    title, found = redact_text(title)
    for kind in found:
        kinds.setdefault(kind, []).append("title")
    clean_tags = []
    for tag in tags:
        tag, found = redact_text(tag)
        clean_tags.append(tag)
        for kind in found:
            kinds.setdefault(kind, []).append("tags")
    body, found = redact_text(body)
    for kind in found:
        kinds.setdefault(kind, []).append("content")
    if kinds:
        where = "; ".join(f"{kind} in {', '.join(sorted(set(fields)))}" for kind, fields in kinds.items())
        problems.append(f"holds what looks like a secret ({where}): redacted in the index; remove it from the file")
    return title, clean_tags, body
