"""Secrets stay out of memories: the one check every writer goes through.

Memories are committed to git: a key saved once is published. `scrub` is applied by the
write path's save and update (memindex.write.ops) to what is about to be written, so every
writer that goes through them (the CLI, session capture, importers) gets it:

- `<private>...</private>` spans are always removed (an unclosed one runs to the end);
- token-shaped strings and credential-shaped arguments (data/secret_patterns.json:
  well-known key formats, private key blocks, JWTs, AWS secret keys, credentials in HTTP
  headers, passwords passed to commands (`--password X`, `mysql -pX`, `sshpass -p X`,
  `docker login -p X`, `curl -u user:X`), password assignments whatever their entropy
  (`password = "hunter2hunter2"`), and other credential assignments whose value looks
  random) make the write fail with SecretFound, naming each field by its JSON path and
  the kind, or, with `redact=True`, are replaced by `[REDACTED:kind]`.

`redact_text` is what sync applies to a hand-written memory file's title, tags and body
(memindex.store.files): the index and the hook's line never carry what a file should not hold.

The write path's check is a compiled set of regular expressions: detect-secrets' import
costs more than the rest of a `save`, and its high-entropy plugins flag ordinary sentences
(scripts/bench_secrets.py, docs/reliability.md). Session capture, in the background, adds
its format and keyword plugins (`detector_redact`) when the package is installed. Never
imported by the prompt hook.
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
# values of a password argument or assignment that are prose, a type or a placeholder, not a password
_NOT_PASSWORDS = frozenset("""
a an and any are as at be by for from here if in is it its none not null of on or see set the then this to true false
use used via when where which with without yes no nil empty blank string str text required optional unset hidden
prompt prompted stdin env environment file vault secret secrets password passwords passwd token tokens key keys value
values argument option flag flags variable var same your their our my user users default given below above there
""".split())
_Pattern = tuple[str, str, str, tuple[str, ...], re.Pattern[str]]
_PATTERNS: list[_Pattern] | None = None


def _patterns() -> list[_Pattern]:
    """(kind, label, check, hints, compiled pattern) from the data file, once."""
    global _PATTERNS
    if _PATTERNS is None:
        with open(_DATA, encoding="utf-8") as fh:
            rows = json.load(fh)["patterns"]
        _PATTERNS = [(r["kind"], r["label"], r.get("check", ""), tuple(r["hints"]), re.compile(r["pattern"])) for r in rows]
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


def _placeholder(value: str) -> bool:
    low = value.lower().strip(".,:;!?)")
    return (not low or low in _NOT_PASSWORDS or bool(_PLACEHOLDER.search(value)) or low.startswith(("$", "%", "-", "/", "~", "."))
            or bool(_NOTATION.match(value)) or set(low) <= set("*x.?#_-"))


def plausible_flag_value(value: str) -> bool:
    """The value of a password argument (`--password X`, `-pX`, `sshpass -p X`): a
    password by where it stands, whatever its entropy, unless it is a placeholder, a
    variable, another option, a path or a word of prose ("--password from the vault")."""
    return len(value) >= 3 and not _placeholder(value)


def plausible_password(value: str, quoted: bool, quote: str = "") -> bool:
    """A value assigned to a password (`password = "hunter2hunter2"`, `pwd: s3cret!`): a
    low-entropy one is still a password. Quoted: anything of 4 characters or more but a
    placeholder, and but a code span of several words (prose naming a command: "username/
    password: `poetry config http-basic.repo user pass`"); unquoted (prose: "password:
    required"), letters with a digit or a symbol."""
    if len(value) < 4 or _placeholder(value):
        return False
    if quoted:
        return not (quote == "`" and len(value.split()) > 1)
    return len(value) >= 6 and any(c.isalpha() for c in value) and any(not c.isalpha() for c in value)


def _value_span(m: re.Match[str]) -> tuple[int, int, bool]:
    """The span of a match's value group (the first of value, value2, ... that matched),
    quotes around it left out, and whether it was quoted; the whole match without one."""
    for name, group in m.groupdict().items():
        if name.startswith("value") and group is not None:
            start, end = m.span(name)
            if end - start >= 2 and group[0] == group[-1] and group[0] in "'\"`":
                return start + 1, end - 1, True
            return start, end, False
    return m.start(), m.end(), False


def find(text: str) -> list[tuple[str, str, int, int]]:
    """(kind, label, start, end) of each secret in `text`, in order, not overlapping."""
    low = text.lower()
    found: list[tuple[str, str, int, int]] = []
    for kind, label, check, hints, rx in _patterns():
        for hint in hints:  # the cheap first pass: most text holds no hint (a loop: no generator per pattern)
            if hint in low:
                break
        else:
            continue
        for m in rx.finditer(text):
            start, end, quoted = _value_span(m)
            value = text[start:end]
            if check == "random" and not looks_random(value):
                continue
            if check == "flag" and not plausible_flag_value(value):
                continue
            if check == "assignment" and not plausible_password(value, quoted, text[start - 1] if quoted and start else ""):
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


def _detector_plugins() -> list[str]:
    with open(_DATA, encoding="utf-8") as fh:
        return list(json.load(fh)["detector"]["plugins"])


def detector_find(text: str) -> list[tuple[str, str, int, int]] | None:
    """(kind, label, start, end) of what the maintained rule set (detect-secrets' format and
    keyword plugins, data/secret_patterns.json "detector") finds in `text`; None when the
    package is not installed. For the background (session capture): its import costs
    more than the rest of a `memindex save`."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import transient_settings
    except ImportError:
        return None
    found: list[tuple[str, str, int, int]] = []
    offset = 0
    with transient_settings({"plugins_used": [{"name": n} for n in _detector_plugins()]}):
        for line in text.split("\n"):
            for hit in scan_line(line):
                value = hit.secret_value or ""
                at = line.find(value) if value else -1
                if at >= 0:
                    kind = re.sub(r"[^a-z0-9]+", "-", hit.type.lower()).strip("-")
                    found.append((kind, f"a {hit.type} (detect-secrets)", offset + at, offset + at + len(value)))
            offset += len(line) + 1
    return found


def detector_redact(record: object) -> tuple[object, list[str]]:
    """`record` with what detector_find finds in its strings replaced by `[REDACTED:kind]`
    (after redact_text's own patterns, which name their kinds first), and the kinds;
    unchanged when the package is missing."""
    kinds: list[str] = []

    def fix(text: str) -> str:
        text = redact_text(text)[0]
        found = detector_find(text) if text.strip() else []
        for kind, _, start, end in sorted(found or (), key=lambda f: -f[2]):
            if "[REDACTED:" in text[max(0, start - 11):end]:
                continue
            kinds.append(kind)
            text = f"{text[:start]}[REDACTED:{kind}]{text[end:]}"
        return text

    return _rebuild(record, fix), kinds


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
