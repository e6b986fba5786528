"""Dates as documents write them, read into the index's `YYYY-MM-DDT00:00:00Z`."""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_ISO = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_DMY = re.compile(r"\b(\d{1,2})([-/.])(\d{1,2})\2(\d{4})\b")
_WORDY = re.compile(r"\b([A-Za-z]{3,9})\.?[\s-]+(\d{1,2})(?:st|nd|rd|th)?,?[\s-]+(\d{4})\b"
                    r"|\b(\d{1,2})(?:st|nd|rd|th)?[\s-]+([A-Za-z]{3,9})\.?,?[\s-]+(\d{4})\b")
_MONTH_YEAR = re.compile(r"\b([A-Za-z]{3,9})\.?\s*,?\s+(\d{4})\b")


def parse_date(text: str) -> str:
    """The first real day in a text (2024-01-15, 2022/12/14, 2024-14-02 read day first when
    the month cannot be one, 22-10-2024, "Sep 13th, 2024", "11-April-2023", "January, 2026"
    as its first day), as `YYYY-MM-DDT00:00:00Z`; "" when none, or only one after tomorrow
    (a typo would make it the newest)."""
    for found in _ISO.finditer(text or ""):
        y, m, d = (int(g) for g in found.groups())
        if m > 12 >= d:
            m, d = d, m
        if (found_day := day(y, m, d)):
            return found_day
    for found in _DMY.finditer(text or ""):
        a, sep, b, y = int(found.group(1)), found.group(2), int(found.group(3)), int(found.group(4))
        m, d = (a, b) if (sep == "/" and a <= 12) or b > 12 else (b, a)  # 22-10-2024; 10/22/2024
        if (found_day := day(y, m, d)):
            return found_day
    for found in _WORDY.finditer(text or ""):
        mon, d, y = (found.group(1), found.group(2), found.group(3)) if found.group(1) else (found.group(5), found.group(4), found.group(6))
        m = _month(mon)
        if m and (found_day := day(int(y), m, int(d))):
            return found_day
    for found in _MONTH_YEAR.finditer(text or ""):  # "January, 2026": its first day
        if (m := _month(found.group(1))) and (found_day := day(int(found.group(2)), m, 1)):
            return found_day
    return ""


def _month(word: str) -> int | None:
    """1-12 for a month's name or its abbreviation of 3 letters or more (`Sep`, `Sept`)."""
    low = word.lower()
    for i, name in enumerate(_MONTHS):
        if len(low) >= 3 and name.startswith(low):
            return i + 1
    return None


def day(y: int, m: int, d: int) -> str:
    """The day as index text; "" when it is no real day, before 1990 or after tomorrow."""
    try:
        when = date(y, m, d)
    except ValueError:
        return ""
    if y < 1990 or when > datetime.now(timezone.utc).date() + timedelta(days=1):
        return ""
    return f"{when.isoformat()}T00:00:00Z"
