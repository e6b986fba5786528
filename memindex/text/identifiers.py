"""Identifiers in every form they are written: `KubeQuotaExceeded`, `kube_quota_exceeded`,
`kube-quota-exceeded` and "Kube Quota Exceeded" name the same thing.

FTS5's tokenizer keeps `KubeQuotaExceeded` as one token and splits `kube_quota_exceeded`
into three (`_`, `-` and `.` separate tokens), so each spelling finds only itself. The index
also holds every CamelCase word's parts as a phrase (the `forms` column), and a query's
CamelCase word also asks for the phrase of its parts (`text.words.camel_alternatives`): a
snake, kebab, dotted or spaced spelling then meets a CamelCase one either way. Only CamelCase
words are expanded: what the tokenizer already splits needs no second form, and every token
added to a row weighs on its BM25 length. Writers only (sync, the write path): `re`.
"""

from __future__ import annotations

import re

from ..defaults import MAX_FORMS

# a word of letters and digits whose case changes inside it (two humps at least)
_CAMEL = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+|[A-Z]+(?![a-z]))+[A-Za-z0-9]*\b")
_HUMPS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")


def camel_parts(word: str) -> list[str]:
    """`KubeVirtVMIExcessiveMigrations` -> kube, virt, vmi, excessive, migrations."""
    return [p.lower() for p in _HUMPS.findall(word)]


def other_forms(text: str) -> str:
    """The CamelCase words of `text` as the phrases of their parts, one per line (empty when
    it has none): `KubeQuotaExceeded` -> "kube quota exceeded"."""
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
    return "\n".join(out)
