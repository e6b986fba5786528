"""Identifiers in every form they are written: `KubeQuotaExceeded`, `kube_quota_exceeded`,
`kube-quota-exceeded` and "Kube Quota Exceeded" name the same thing.

FTS5's tokenizer keeps `KubeQuotaExceeded` as one token and splits `kube_quota_exceeded`
into three, so each spelling finds only itself. The index therefore also holds, for every
identifier of several parts in a text, its other form: the parts of a CamelCase word as a
phrase, the joined word of a snake, kebab or dotted one. A query then matches whichever way
it is written, with no change on the query side (the prompt hook's path stays as it was).
Writers only (sync, the write path): this module uses `re`.
"""

from __future__ import annotations

import re

# a word of letters and digits whose case changes inside it (two humps at least)
_CAMEL = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+|[A-Z]+(?![a-z]))+[A-Za-z0-9]*\b")
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# parts joined by `_`, `-` or `.` (user_id, kube-quota-exceeded, virt.handler.memory)
_JOINED = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[_\-.][A-Za-z0-9]+)+\b")
MAX_FORMS = 2000  # forms added to one text at most (a generated file of identifiers stays bounded)


def camel_parts(word: str) -> list[str]:
    """`KubeVirtVMIExcessiveMigrations` -> kube, virt, vmi, excessive, migrations."""
    return [p.lower() for p in _HUMPS.findall(word)]


def other_forms(text: str) -> str:
    """The identifiers of `text` in their other form, one per line (empty when it has none):
    `KubeQuotaExceeded` -> "kube quota exceeded", `kube_quota_exceeded` -> "kubequotaexceeded"."""
    seen: set[str] = set()
    out: list[str] = []
    for match in _CAMEL.finditer(text):
        word = match.group(0)
        parts = camel_parts(word)
        if len(parts) >= 2:
            form = " ".join(parts)
            if form not in seen:
                seen.add(form)
                out.append(form)
                if len(out) >= MAX_FORMS:
                    break
    for match in _JOINED.finditer(text):
        parts = re.split(r"[_\-.]", match.group(0))
        if len(parts) >= 2 and all(parts) and sum(not p.isdigit() for p in parts) >= 2:
            form = "".join(parts).lower()
            if form not in seen:
                seen.add(form)
                out.append(form)
                if len(out) >= MAX_FORMS:
                    break
    return "\n".join(out)
