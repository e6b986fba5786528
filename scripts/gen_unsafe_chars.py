"""Derive the characters the hook's output escapes besides ASCII `<`, `>`, `&`, `"`, `'`,
and write them to memindex/data/unsafe_chars.json (`--check`: exit 1 if the file misses
any character this Python's Unicode database derives).

Two classes, both from `unicodedata` (so the hook never has to load it):
- look-alikes: a character whose NFKC form holds `<`, `>` or `&`, or whose name makes it an
  angle bracket or an angle quotation mark (fullwidth and small forms, U+2039/U+203A,
  U+3008/U+3009, U+27E8/U+27E9, ...): a model reads them as markup;
- invisible or line-breaking: every control (Cc: NEL U+0085 included), format character (Cf:
  bidi controls U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C, zero-width U+200B-U+200D,
  U+2060, U+FEFF, the tag characters U+E0000-U+E007F) and line or paragraph separator
  (Zl U+2028, Zp U+2029).
"""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "memindex" / "data" / "unsafe_chars.json"
NAME_WORDS = ("ANGLE BRACKET", "ANGLE QUOTATION MARK", "POINTING ANGLE", "LESS-THAN SIGN", "GREATER-THAN SIGN", "AMPERSAND")
CATEGORIES = ("Cc", "Cf", "Zl", "Zp")


def derive() -> dict[str, list]:
    lookalikes: list[list] = []
    invisible: list[int] = []
    for cp in range(0x110000):
        ch = chr(cp)
        cat = unicodedata.category(ch)
        if cat in CATEGORIES:
            if ch not in "\t\n":  # ASCII whitespace the block's own format uses stays out of fields anyway
                invisible.append(cp)
            continue
        if cp < 0x80 or cat in ("Cs", "Co", "Cn"):
            continue
        name = unicodedata.name(ch, "")
        nfkc = unicodedata.normalize("NFKC", ch)
        if any(c in nfkc for c in "<>&") or any(w in name for w in NAME_WORDS):
            lookalikes.append([cp, name])
    ranges: list[list[int]] = []
    for cp in invisible:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return {
        "unicode_version": unicodedata.unidata_version,
        "lookalikes": lookalikes,
        "invisible_ranges": ranges,
    }


def codepoints(data: dict) -> set[int]:
    out = {cp for cp, _ in data["lookalikes"]}
    for lo, hi in data["invisible_ranges"]:
        out.update(range(lo, hi + 1))
    return out


def main() -> int:
    data = derive()
    if "--check" in sys.argv[1:]:
        missing = codepoints(data) - codepoints(json.loads(OUT.read_text()))
        for cp in sorted(missing):
            print(f"U+{cp:04X} {unicodedata.name(chr(cp), '?')} is missing from {OUT}")
        return 1 if missing else 0
    OUT.write_text(json.dumps(data, indent=0, ensure_ascii=True) + "\n")
    print(f"{len(data['lookalikes'])} look-alikes, {sum(h - l + 1 for l, h in data['invisible_ranges'])} invisible characters -> {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
