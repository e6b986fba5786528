"""Text handling shared by every path: title sanitizing, query terms, stop words.

Scans, not regular expressions: the prompt hook then never loads `re`. tests/test_lean.py
checks each scan against the pattern it replaces.
"""

from __future__ import annotations

from ..defaults import TITLE_MAX

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


_JOINERS = "._-/"  # what joins the parts of an identifier
_JOINERS_TO_SPACE = str.maketrans(_JOINERS, "    ")


def valid_unicode(text: str) -> str:
    """Text that SQLite can bind: lone surrogates (from JSON escapes like \\ud800 or
    undecodable command-line bytes) become U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


class Term(tuple):
    """A query term: a single word, or an identifier searched as the phrase of its parts.
    (A one-field tuple, as a namedtuple would be, without loading `collections`.)"""

    __slots__ = ()

    def __new__(cls, parts: tuple[str, ...]) -> "Term":
        return tuple.__new__(cls, (parts,))

    def __getnewargs__(self) -> tuple[tuple[str, ...]]:
        return (self[0],)

    def __repr__(self) -> str:
        return f"Term(parts={self[0]!r})"

    @property
    def parts(self) -> tuple[str, ...]:
        return self[0]

    @property
    def is_phrase(self) -> bool:
        return len(self.parts) > 1

    @property
    def text(self) -> str:
        return " ".join(self.parts)


def has_cjk(text: str) -> bool:
    """Does the text hold CJK characters? ASCII (most prompts and memories) answers without
    loading `cjk` and building its tables."""
    if text.isascii():
        return False
    from . import cjk

    return cjk.has_cjk(text)


def spaceless(text: str) -> str:
    """What `fts_cjk` holds of a text (`cjk.segment`): "" without CJK, `cjk` not loaded."""
    if not has_cjk(text):
        return ""
    from . import cjk

    return cjk.segment(text)


def query_terms(text: str, max_chars: int = 20_000) -> list[Term]:
    """Meaningful terms of free text, in order, without duplicates.

    Plain words drop stop words and single characters; identifiers keep all their parts
    (`user_id` -> "user id") so FTS5 matches them as an adjacent phrase. Text without
    spaces (Chinese, Japanese, Korean) becomes the bigrams of its runs (`cjk`), each a term.
    """
    seen: set[tuple[str, ...]] = set()
    terms: list[Term] = []
    text = valid_unicode(text[:max_chars])
    if not text.isascii():  # ASCII is NFC already
        import unicodedata

        text = unicodedata.normalize("NFC", text)  # a decomposed accent stays in its word
    text = text.lower()
    if not has_cjk(text):
        _words(text, seen, terms)
        return terms
    from . import cjk

    for i, piece in enumerate(cjk.pieces(text)):
        if not i % 2:
            _words(piece, seen, terms)
            continue
        for pair in cjk.bigrams(piece):
            if (pair,) not in seen:
                seen.add((pair,))
                terms.append(Term((pair,)))
    return terms


def camel_alternatives(text: str, max_chars: int = 20_000) -> dict[str, tuple[str, ...]]:
    """The query's CamelCase words (`KubeQuotaExceeded`, `HTTPServer`), lowercased, -> their
    parts (`kube quota exceeded`): `retrieval.query` asks for either (text/identifiers.py)."""
    out: dict[str, tuple[str, ...]] = {}
    for word in words(text[:max_chars]):
        if word.islower() or word.isupper() or not word.isalnum() or not word.isascii():
            continue
        parts: list[str] = []
        start = 0
        for i in range(1, len(word)):
            a, b = word[i - 1], word[i]
            nxt = word[i + 1] if i + 1 < len(word) else ""
            if (a.islower() and b.isupper()) or (a.isupper() and b.isupper() and nxt.islower()) or (a.isalpha() != b.isalpha()):
                parts.append(word[start:i])
                start = i
        parts.append(word[start:])
        if len(parts) >= 2:
            out[word.lower()] = tuple(p.lower() for p in parts)
    return out


def words(text: str) -> list[str]:
    """The words of text, in order: runs of letters and digits, joined by single `.`, `_`,
    `-` or `/` into identifiers (user_id, React.FC, next.config.js), with a leading dot
    kept for dotfiles (.env.production). The pattern it stands for:
    `\\.?[^\\W_]+(?:[._\\-/][^\\W_]+)*`."""
    found = []
    i, n = 0, len(text)
    while i < n:
        start = i
        if text[i] == "." and i + 1 < n and text[i + 1].isalnum():
            i += 1
        elif not text[i].isalnum():
            i += 1
            continue
        while True:
            while i < n and text[i].isalnum():
                i += 1
            if i + 1 < n and text[i] in _JOINERS and text[i + 1].isalnum():
                i += 1
                continue
            break
        found.append(text[start:i])
    return found


def _words(text: str, seen: set[tuple[str, ...]], terms: list[Term]) -> None:
    """Append the word and identifier terms of (lowercased) text not seen yet."""
    for word in words(text):
        parts = tuple(word.translate(_JOINERS_TO_SPACE).split())
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
# The index format's own markers, replaced by a space: ` -> `, `#tags:`, `[confidence:...]`.
_INDEX_MARKUP = r"\s*->\s*|#tags:|\[confidence:[^\]]*\]"


def _without_markup(title: str) -> str:
    """`re.sub(_INDEX_MARKUP, " ", title, flags=re.IGNORECASE)`. ASCII is scanned (its
    lowercase is the pattern's case folding); other text, rare here, loads `re`."""
    if not title.isascii():
        import re

        return re.sub(_INDEX_MARKUP, " ", title, flags=re.IGNORECASE)
    low, n = title.lower(), len(title)
    out: list[str] = []
    i = 0
    while i < n:
        j = i
        while j < n and title[j].isspace():
            j += 1
        if title.startswith("->", j):
            j += 2
            while j < n and title[j].isspace():
                j += 1
            out.append(" ")
            i = j
        elif j > i:  # spaces not before "->": each later start in them fails the same way
            out.append(title[i:j])
            i = j
        elif low.startswith("#tags:", i):
            out.append(" ")
            i += 6
        elif low.startswith("[confidence:", i) and (end := title.find("]", i + 12)) >= 0:
            out.append(" ")
            i = end + 1
        else:
            out.append(title[i])
            i += 1
    return "".join(out)


def sanitize_title(title: object, limit: int = TITLE_MAX) -> str:
    """A title safe for one index line: NFC, no control/BiDi/zero-width characters, none of
    the index format's own markers (` -> `, `#tags:`), at most `limit` characters."""
    if not isinstance(title, str):
        title = "" if title is None else str(title)
    title = title[: limit * 8]
    if not (title.isascii() and title.isprintable()):  # plain ASCII needs none of this
        import unicodedata

        title = unicodedata.normalize("NFC", title)
        # Line breaks and other separators become spaces (words stay apart); then every
        # control, format (BiDi, zero-width) and unassigned character goes.
        title = "".join(
            " " if ch.isspace() else ch for ch in title if ch.isspace() or unicodedata.category(ch) not in _STRIP_CATEGORIES
        )
    if "->" in title or "#" in title or "[" in title:  # every marker holds one of these
        title = _without_markup(title)
    title = " ".join(title.split())
    if len(title) > limit:
        title = title[: limit - 1].rstrip() + "…"
    return title


def sanitize_tag(tag: object) -> str:
    """A tag safe for `#tags:a,b`: no commas, no markup, no control characters."""
    text = sanitize_title(tag, limit=48).lower()
    kept = "".join(ch for ch in text if ch.isalnum() or ch in "_.-+#/ ")  # [\w.\-+#/ ]
    return "-".join(kept.split()).strip("-")
