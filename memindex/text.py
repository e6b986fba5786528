"""Text handling shared by every path: title sanitizing, query terms, stop words."""

from __future__ import annotations

import re
import unicodedata
from collections import namedtuple

from .defaults import TITLE_MAX

# The old matcher's 64 stop words plus common words of prompts to an assistant. Two-letter
# technical terms (ci, db, ui, qa, pr, s3) are deliberately absent.
STOP_WORDS = frozenset(
    """
    a an the is was are were be been being do does did done doing have has had having will
    would could can should may might shall must i you we they he she it me my your our us
    them their its this that these those what which who whom whose how when where why if
    then else so and or but not no yes to of in on at for with from by about up out into
    over just also very too let please help need needs want wants know think make like use
    using used get got go going see as am vs than there here some any all each every more
    most other such only own same few both again further once again now ok okay hey hi
    thanks thank sure still yet really actually maybe something anything thing things
    way able tell show give look find try lets let's i'm im don't dont can't cant isn't
    it's that's what's there's we're you're should've via etc e.g i.e
    """.split()
)

# A word: letters/digits, optionally joined by . _ - / into an identifier (user_id,
# React.FC, .env.production, next.config.js). A leading dot is kept for dotfiles.
_WORD_RE = re.compile(r"\.?[^\W_]+(?:[._\-/][^\W_]+)*|[^\W_]+", re.UNICODE)
_PART_RE = re.compile(r"[^\W_]+", re.UNICODE)


class Term(namedtuple("Term", "parts")):
    """A query term: a single word, or an identifier searched as the phrase of its parts."""

    __slots__ = ()

    @property
    def is_phrase(self) -> bool:
        return len(self.parts) > 1

    @property
    def text(self) -> str:
        return " ".join(self.parts)


def query_terms(text: str, max_chars: int = 20_000) -> list[Term]:
    """Meaningful terms of free text, in order, without duplicates.

    Plain words drop stop words and single characters; identifiers keep all their parts
    (`user_id` -> "user id") so FTS5 matches them as an adjacent phrase.
    """
    seen: set[tuple[str, ...]] = set()
    terms: list[Term] = []
    for match in _WORD_RE.finditer(text[:max_chars].lower()):
        parts = tuple(_PART_RE.findall(match.group()))
        if not parts:
            continue
        if len(parts) == 1:
            word = parts[0]
            if word in STOP_WORDS or len(word) < 2:
                continue
        if len(parts) > 8:  # a path or URL: its last parts carry the meaning
            parts = parts[-8:]
        if parts not in seen:
            seen.add(parts)
            terms.append(Term(parts))
    return terms


# Control (Cc), format (Cf: BiDi overrides, zero-width) and the line/paragraph separators.
_STRIP_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}
_INDEX_MARKUP = re.compile(r"\s*->\s*|#tags:|\[confidence:[^\]]*\]", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def sanitize_title(title: object, limit: int = TITLE_MAX) -> str:
    """A title safe for one index line: NFC, no control/BiDi/zero-width characters, none of
    the index format's own markers (` -> `, `#tags:`), at most `limit` characters."""
    if not isinstance(title, str):
        title = "" if title is None else str(title)
    title = unicodedata.normalize("NFC", title[: limit * 8])
    title = "".join(ch for ch in title if unicodedata.category(ch) not in _STRIP_CATEGORIES)
    title = _INDEX_MARKUP.sub(" ", title)
    title = _SPACES.sub(" ", title).strip()
    if len(title) > limit:
        title = title[: limit - 1].rstrip() + "…"
    return title


_TAG_BAD = re.compile(r"[^\w.\-+#/ ]", re.UNICODE)


def sanitize_tag(tag: object) -> str:
    """A tag safe for `#tags:a,b`: no commas, no markup, no control characters."""
    text = sanitize_title(tag, limit=48).lower()
    return _SPACES.sub("-", _TAG_BAD.sub("", text)).strip("-")
