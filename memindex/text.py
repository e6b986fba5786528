"""Text handling shared by every path: title sanitizing, query terms, stop words."""

from __future__ import annotations

import re
import unicodedata
from collections import namedtuple

from . import cjk
from .defaults import TITLE_MAX

# The old matcher's 64 stop words plus common words of prompts to an assistant. Two-letter
# technical terms (ci, db, ui, qa, pr, s3) are deliberately absent.
STOP_WORDS = frozenset(
    # English function words (the usual IR lists) ...
    """
    a about above after again against all almost along already also although always am
    among an and another any anybody anyone anything anyway anywhere are around as at be
    became because become becomes been before behind being below beside besides between
    beyond both but by can cannot could did do does doing done during each either else
    elsewhere enough etc even ever every everyone everything everywhere except few for
    from further get gets getting give given gives go goes going gone got gotten had has
    have having he her here hers herself him himself his how however i if in indeed
    instead into is it its itself just keep let like likely made make makes making many
    may maybe me might mine more moreover most mostly much must my myself need needs
    neither never nevertheless no nobody none nor not nothing now nowhere of often on
    once only onto or other others otherwise our ours ourselves out over own per perhaps
    please quite rather really said same say says see seem seemed seems several she should
    since so some somebody someone something sometime sometimes somewhere still such sure
    than that the their theirs them themselves then there thereby therefore these they
    thing things think this those though through thus to together too toward towards
    until upon us use used uses using very via vs want wants was way we well were what
    whatever when whenever where whereas wherever whether which while who whoever whole
    whom whose why will with within without would yet you your yours yourself yourselves
    """
    # ... and the filler of prompts to an assistant (two-letter technical terms such as
    # ci, db, ui, qa, pr, s3 are deliberately absent).
    """
    ok okay hey hi hello thanks thank cool great fine yeah yep nope lets let's i'm im
    i've i'd i'll don't dont can't cant isn't isnt it's that's what's there's we're
    you're we've should've doesn't didn't won't wouldn't aren't wasn't weren't haven't
    hasn't stuff kind sort bit lot lots basically actually currently probably exactly
    quickly properly simply really just anyway wondering wonder guess mean means tell
    show look find try trying tried figure help know knew today yesterday tomorrow
    tonight right able e.g i.e re ve ll
    """.split()
)


# A word: letters/digits, optionally joined by . _ - / into an identifier (user_id,
# React.FC, .env.production, next.config.js). A leading dot is kept for dotfiles.
_WORD_RE = re.compile(r"\.?[^\W_]+(?:[._\-/][^\W_]+)*|[^\W_]+", re.UNICODE)
_PART_RE = re.compile(r"[^\W_]+", re.UNICODE)


def valid_unicode(text: str) -> str:
    """Text that SQLite can bind: lone surrogates (from JSON escapes like \\ud800 or
    undecodable command-line bytes) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


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
    (`user_id` -> "user id") so FTS5 matches them as an adjacent phrase. Text without
    spaces (Chinese, Japanese, Korean) becomes the bigrams of its runs (`cjk`), each a term.
    """
    seen: set[tuple[str, ...]] = set()
    terms: list[Term] = []
    text = valid_unicode(text[:max_chars])
    text = unicodedata.normalize("NFC", text)  # a decomposed accent stays in its word
    text = text.lower()
    if not cjk.has_cjk(text):
        _words(text, seen, terms)
        return terms
    for i, piece in enumerate(cjk.pieces(text)):
        if not i % 2:
            _words(piece, seen, terms)
            continue
        for pair in cjk.bigrams(piece):
            if (pair,) not in seen:
                seen.add((pair,))
                terms.append(Term((pair,)))
    return terms


def _words(text: str, seen: set[tuple[str, ...]], terms: list[Term]) -> None:
    """Append the word and identifier terms of (lowercased) text not seen yet."""
    for match in _WORD_RE.finditer(text):
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


# Control (Cc), format (Cf: BiDi overrides, zero-width) and the line/paragraph separators.
_STRIP_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}
_INDEX_MARKUP = re.compile(r"\s*->\s*|#tags:|\[confidence:[^\]]*\]", re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def sanitize_title(title: object, limit: int = TITLE_MAX) -> str:
    """A title safe for one index line: NFC, no control/BiDi/zero-width characters, none of
    the index format's own markers (` -> `, `#tags:`), at most `limit` characters."""
    if not isinstance(title, str):
        title = "" if title is None else str(title)
    title = title[: limit * 8]
    if not (title.isascii() and title.isprintable()):  # plain ASCII needs none of this
        title = unicodedata.normalize("NFC", title)
        # Line breaks and other separators become spaces (words stay apart); then every
        # control, format (BiDi, zero-width) and unassigned character goes.
        title = "".join(
            " " if ch.isspace() else ch for ch in title if ch.isspace() or unicodedata.category(ch) not in _STRIP_CATEGORIES
        )
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
