"""What every subcommand module shares: output helpers and argument types."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable


# `add(name, json_flag=True, example=None)`: a subparser with `--json`/`--quiet` and the
# help line of the command table (`memindex.cli.main.COMMANDS`).
AddParser = Callable[..., argparse.ArgumentParser]


def err(message: str) -> None:
    print(f"memindex: {message}", file=sys.stderr)


def emit_json(value: object) -> None:
    print(json.dumps(value, ensure_ascii=False, indent=None))


def clean_arg(text: str | None) -> str | None:
    """A command-line string as valid Unicode (undecodable bytes become U+FFFD)."""
    if text is None:
        return None
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def bounded(lo: float, hi: float, unit: str, integer: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number within lo..hi (NaN, infinities and negatives are
    refused with the range, never waited on forever)."""

    def parse(text: str) -> float:
        try:
            value: float = int(text) if integer else float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {'an integer' if integer else 'a number'}: {text!r}") from None
        if not math.isfinite(value) or not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"must be between {lo:g} and {hi:g}{' ' + unit if unit else ''}")
        return value

    return parse


positive_int = bounded(1, 100_000, "", integer=True)
lock_timeout = bounded(0, 3600, "seconds")


def arg_type(convert: Callable[[str], str]) -> Callable[[str], str]:
    """An argparse type from a library normaliser: its UsageError becomes a usage error."""

    def parse(text: str) -> str:
        from ..errors import UsageError

        try:
            return convert(text)
        except UsageError as exc:
            raise argparse.ArgumentTypeError(str(exc.args[0])) from None

    return parse


def category_arg(text: str) -> str:
    from ..write.validate import normalize_category  # the validator alone, not the writer

    return arg_type(normalize_category)(text)


def category_option(p: argparse.ArgumentParser, required: bool = False) -> None:
    from ..defaults import CATEGORIES

    p.add_argument(
        "--category", "-c", type=category_arg, required=required, metavar="CATEGORY", help=f"one of {', '.join(CATEGORIES)}"
    )


def lock_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--lock-timeout", type=lock_timeout, metavar="S",
        help="seconds to wait for another writer, 0..3600 (default: index.lock_timeout_s = 10)",
    )
