"""The progress bar of long runs (sync, embedding, import): on a terminal only, so pipes
and the hooks' background jobs stay clean; tqdm when it is installed, else none."""

from __future__ import annotations

import sys


def progress_bar(total: int, enabled: bool, minimum: int, unit: str, desc: str):
    """A tqdm bar on stderr for a run of `total` items, or None (not asked for, shorter
    than `minimum`, stderr not a terminal, or no tqdm). Callers `update` and `close` it."""
    if not enabled or total < minimum or not sys.stderr.isatty():
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, leave=False)
