"""What a memory names in the code: the files (its `related_files`, and paths in its text)
and the names (identifiers, flags, environment variables, code spans, quoted messages).

Extraction is generous: a name only counts against a memory when the code once had it
(at the commit of the memory's date) and no longer does (stale.py), so a word that was
never code costs a lookup, not a false alarm. The file suffixes a bare file name may
have are data (data/review.json).
"""

from __future__ import annotations

import json
import os
import re

from ..defaults import DATA_DIR

VERSION = 1  # of the extraction: what a cache of it (review/cache.py) was made by
MAX_NAMES = 48  # names of one memory looked up, at most (the longest kept)
MAX_FILES = 24  # files of one memory looked up


def _data() -> dict:
    with open(os.path.join(DATA_DIR, "review.json"), "rb") as fh:
        return json.loads(fh.read())


DATA = _data()
SUFFIXES = frozenset(DATA["file_suffixes"])
_SUFFIX_ALT = "|".join(sorted((re.escape(s) for s in SUFFIXES), key=len, reverse=True))

CODE_SPAN = re.compile(r"`([^`\n]{2,120})`")
QUOTED = re.compile(r"(?<![\w])'((?:[^'\n]|(?<=\w)'(?=\w)){10,120})'(?![\w])|\"([^\"\n]{10,120})\"")
IDENT = re.compile(r"(?<![\w$%@/\\-])[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::|->|#)[A-Za-z_][A-Za-z0-9_-]*)*")
FLAG = re.compile(r"(?<![\w-])--?[a-z][a-z0-9]*(?:-[a-z0-9]+)+\b|(?<![\w-])--[a-z][a-z0-9]{3,}\b")
# a relative path with at least one folder, or a bare file name with a known suffix
PATH = re.compile(
    r"(?<![\w.~$/:@-])((?:\.?[\w@+-][\w.@+-]*/)+[\w.@+-]+)(?![\w/])"
    rf"|(?<![\w.~$/:@-])([\w+-][\w.+-]*\.(?:{_SUFFIX_ALT}))(?![\w/.])"
)
_HUMP = re.compile(r"[a-z0-9][A-Z]")
_PARTS = re.compile(r"\.|::|->|#")
_CODE = re.compile(r"[A-Z]{2,}[0-9]{2,}")  # a lint rule or error code: RUF012, E501 has one letter


def code_shaped(word: str) -> bool:
    """An identifier no prose has: dotted (`cmdutil.CheckAuth`), with an underscore
    (`retry_count`, `GH_TOKEN`), or with an inner capital (`NewCmdRoot`, `isEnterprise`)."""
    if len(word) < 4:
        return False
    if word.isalpha():  # the common case, prose: only an inner capital makes it code
        return not (word.islower() or word.isupper() or word.istitle())
    parts = _PARTS.split(word)
    if len(parts) > 1:
        return all(parts) and max(map(len, parts)) >= 3 and parts[-1].lower() not in SUFFIXES
    core = word.strip("_")
    return "_" in core or bool(_HUMP.search(word)) or bool(_CODE.fullmatch(word))


def _is_path_like(text: str) -> bool:
    return "/" in text or os.path.splitext(text)[1].lstrip(".").lower() in SUFFIXES


def files(related: list[str], text: str) -> list[str]:
    """The files a memory names, as written (relative paths; no URLs, home or absolute paths)."""
    out: list[str] = []
    for f in related:
        if isinstance(f, str) and f.strip():
            out.append(f.strip().lstrip("./") if f.startswith("./") else f.strip())
    for m in PATH.finditer(text):
        path = (m.group(1) or m.group(2)).rstrip(".,;:)")
        if "://" in path or path.startswith(("/", "~", "$")) or ".." in path.split("/"):
            continue
        if m.group(1) and not os.path.splitext(path)[1] and not path.endswith("/"):
            continue  # `owner/repo`, `read/write`: a folder-looking pair without a file is no file
        if path not in out:
            out.append(path)
    return out[:MAX_FILES]


def names(text: str, own_files: list[str] = ()) -> list[str]:
    """The names a memory's text gives, longest first (at most MAX_NAMES)."""
    found: set[str] = set()
    skip = set(own_files)
    for m in CODE_SPAN.finditer(text):
        span = " ".join(m.group(1).split())
        if span in skip or _is_path_like(span) and " " not in span:
            continue
        if " " in span and len(span) <= 60:
            found.add(span)  # a command or snippet, as written: `poetry lock --no-update`, `go 1.16`
        elif " " not in span and len(span) >= 4:
            found.add(span.rstrip("()"))
    for m in QUOTED.finditer(text):
        quote = " ".join((m.group(1) or m.group(2)).split())
        if quote.count(" ") >= 2 and "://" not in quote:
            found.add(quote)
    for m in IDENT.finditer(text):
        word = m.group(0).rstrip(".")
        if code_shaped(word) and word not in skip:
            found.add(word)
            last = _PARTS.split(word)[-1]
            if last != word and len(last) >= 4 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", last):
                found.add(last)  # a qualified name names its member: `authflow.authFlow` -> `authFlow`
    for m in FLAG.finditer(text):
        flag = m.group(0)
        found.add(flag)
        if flag.strip("-").count("-"):
            found.add(flag.lstrip("-"))  # how option parsers name it: "no-update"
    found = {n for n in found if 4 <= len(n) <= 120 and not any(n in f for f in skip)}
    return sorted(found, key=lambda n: (-len(n), n))[:MAX_NAMES]
