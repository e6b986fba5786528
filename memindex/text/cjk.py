"""Text without spaces: Chinese, Japanese and Korean (CJK) as overlapping bigrams.

FTS5's unicode61 tokenizer keeps a run of CJK characters as one token, so "数据库" was
never found inside "数据库迁移方案", nor "배포" inside "배포를", nor a word glued to CJK
text ("PostgreSQLのインデックス" is one token). This module turns such text into terms
that can be matched; `index` stores them in a second FTS5 table, `fts_cjk(title, tags,
body)`, beside `fts`. In a store that has such text `query` counts each term there too,
and ranks with it (`cjk_search`) only when a term it keeps matches there.

**Why bigrams, not a trigram column.** Every CJK run is indexed as its overlapping
character pairs (数据库迁移 -> 数据 据库 库迁 迁移), the scheme of Lucene's CJKBigramFilter
(Elasticsearch's `cjk` analyzer), pg_bigm and Xapian's CJK n-grams. Most words in these
languages have two characters (认证, 部署, 認証, 設定, 배포, 서버): with trigrams they could
only be found by a LIKE scan without BM25 statistics, the common case served worst. A
bigram is an ordinary FTS5 token, so a two-character query is one posting-list lookup
with document frequencies, column weights and BM25 like any English word. A query run is
cut the same way and each bigram is a term of the OR query: a natural-language prompt
("数据库迁移用什么工具") needs no word segmenter: the bigrams straddling two words
(库迁, 移用) are in few memories or none (then they cost and score nothing), and the
memory holding 数据 据库 迁移 ranks first. (A trigram table would need LIKE or instr
scans for two-character words; a query-side split into single characters over unicode61
would match 数 and 据 anywhere, not as a pair, and would need single-character tokens.) Single CJK characters are not terms (as single letters are not): they are
mostly particles (の, 的, 는) and inflections.

**What the second table holds.** Only memories with CJK text get a row, and only the
part unicode61 cannot split: each token containing CJK characters becomes the bigrams of
its CJK runs plus the Latin or digit pieces glued to them ("PostgreSQLのインデックス"
-> `PostgreSQL のイ イン ...`), so the English word is found too. Text is NFC-normalized
first (decomposed Hangul becomes syllables). The table uses the index's own tokenizer,
so a glued English word is stemmed exactly as in `fts`, and bigrams pass through it
unchanged. `fts` itself is untouched: a store without CJK text has an empty `fts_cjk`,
the same `fts` rows, and its queries take the same path as before.

The character classes are those unicode61 treats as token characters: Han ideographs
(BMP, extensions, compatibility), Hiragana and Katakana (with ー, 々, iteration marks;
not the middle dot ・, which separates words), Hangul syllables and Jamo, Bopomofo.
Standard library only: the prompt hook imports this.
"""

from __future__ import annotations

# (first, last) code points, each a block or part of one that unicode61 keeps in tokens.
CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3005, 0x3007), (0x3021, 0x3029), (0x3031, 0x3035), (0x3038, 0x303C),  # 々〆〇, numerals, iteration marks
    (0x3041, 0x3096), (0x309D, 0x309F),  # Hiragana
    (0x30A1, 0x30FA), (0x30FC, 0x30FF),  # Katakana, without the middle dot U+30FB
    (0x3105, 0x312F), (0x3131, 0x318E), (0x31A0, 0x31BF), (0x31F0, 0x31FF),  # Bopomofo, Hangul compat., Katakana ext.
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF),  # CJK Unified Ideographs, Extension A
    (0xA960, 0xA97C), (0xAC00, 0xD7A3), (0xD7B0, 0xD7FB),  # Hangul Jamo ext. A, syllables, Jamo ext. B
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0xFF66, 0xFF9F), (0xFFA0, 0xFFDC),  # halfwidth Katakana and Hangul
    (0x1B000, 0x1B16F),  # Kana supplement and extension A
    (0x20000, 0x323AF),  # CJK Unified Ideographs, Extensions B to H, compatibility supplement
)
CJK_CHARS = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in CJK_RANGES)
_BOUNDS = [b for lo, hi in CJK_RANGES for b in (lo, hi + 1)]
_RUN = None  # compiled on first CJK text: the hook never loads `re` otherwise
_TOKEN = r"[^\W_]+"  # unicode61's tokens, near enough: letters and digits (compiled on use)


def _runs_re():
    """`([CJK]+)`: one group, so that `split` keeps the runs and `findall` returns them."""
    global _RUN
    if _RUN is None:
        import re

        _RUN = re.compile(f"([{CJK_CHARS}]+)")
    return _RUN


def has_cjk(text: str) -> bool:
    """Does the text contain CJK characters? (ASCII answers at C speed, other text by its
    distinct characters: no regular expression to compile for a prompt without CJK.)"""
    if text.isascii():
        return False
    from bisect import bisect_right  # here: an ASCII prompt never pays the import

    return any(ch >= "\u1100" and bisect_right(_BOUNDS, ord(ch)) % 2 for ch in set(text))


def bigrams(run: str) -> list[str]:
    """The overlapping character pairs of a CJK run (none for a single character)."""
    return [run[i : i + 2] for i in range(len(run) - 1)]


def pieces(text: str) -> list[str]:
    """The text cut around its CJK runs: other text at even positions, runs at odd ones."""
    return _runs_re().split(text)


def runs(text: str) -> list[str]:
    """The distinct CJK runs of a text (NFC), in order."""
    if not has_cjk(text):
        return []
    import unicodedata

    return list(dict.fromkeys(_runs_re().findall(unicodedata.normalize("NFC", text))))


def segment(text: str) -> str:
    """What `fts_cjk` stores for one field: for each token holding CJK characters, the
    bigrams of its CJK runs and the other pieces glued to them, in order; "" when the text
    has no CJK (the memory gets no row)."""
    if not has_cjk(text):
        return ""
    import re
    import unicodedata

    out: list[str] = []
    for token in re.findall(_TOKEN, unicodedata.normalize("NFC", text)):
        if not has_cjk(token):
            continue  # fts indexes it as a word already
        for i, piece in enumerate(_runs_re().split(token)):
            if i % 2:
                out.extend(bigrams(piece))
            elif piece:
                out.append(piece)
    return " ".join(out)
