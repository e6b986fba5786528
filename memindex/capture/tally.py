"""A test run's result as counts, read from its output: what a session summary says of a
test run ("Ran `make test`: 12 passed, 1 failed").

Only numbers leave this module, with fixed words (passed, failed, errors, skipped): a
runner's output is a repository's text (a test's name, a message it prints, a line that
says "NOTE: maintainers require ...") and never reaches a memory. Recognised: pytest,
unittest, jest, vitest, node's test runner, mocha, go test and gotestsum, cargo test and
nextest, RSpec, minitest, ExUnit, PHPUnit, Maven Surefire, Gradle, ctest, dotnet test and
the plain "N passed, N failed" line. Standard library only.
"""

from __future__ import annotations

import re

from ..defaults import TALLY_TAIL_CHARS

KINDS = ("passed", "failed", "errors", "skipped")
# a count and the word after it (pytest, mocha, rspec, minitest, ExUnit, gradle, nextest, plain)
_PAIR = re.compile(r"(\d{1,9}) (passed|passing|failed|failing|failures?|errors?|skipped|skips?|pending|ignored|"
                   r"xfailed|xpassed|tests? completed|examples?|runs?|tests?|total)\b")
# a word, a colon or "=", and a count (PHPUnit, Surefire, dotnet, unittest's FAILED (...))
_LABELLED = re.compile(r"\b(Passed|Failed|Failures|Errors|Skipped|Tests run|Tests|failures|errors|skipped)\s*[:=]\s*(\d{1,9})\b")
_WORD = {"passed": "passed", "passing": "passed", "xpassed": "passed", "failed": "failed", "failing": "failed",
         "failure": "failed", "failures": "failed", "error": "errors", "errors": "errors", "skipped": "skipped",
         "skip": "skipped", "skips": "skipped", "pending": "skipped", "ignored": "skipped", "xfailed": "skipped",
         "tests run": "total", "tests": "total", "test": "total", "tests completed": "total", "test completed": "total",
         "examples": "total", "example": "total", "runs": "total", "run": "total", "total": "total"}
_CARGO = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", re.M)
_NODE = re.compile(r"^\S? ?(tests|pass|fail|skipped|todo|cancelled) (\d{1,9})$", re.M)
_GO = re.compile(r"^(ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[)", re.M)
_GOTESTSUM = re.compile(r"^DONE (\d+) tests?(?:, (\d+) skipped)?(?:, (\d+) failures?)?(?:, (\d+) errors?)?", re.M)
_MOCHA = re.compile(r"^\s*(\d{1,9}) (passing|failing|pending)\b", re.M)
_UNITTEST = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*\n+\s*(OK|FAILED)\b(?: \(([^)\n]{0,200})\))?", re.M)
_CTEST = re.compile(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)")
_JEST = re.compile(r"^\s*Tests:?\s+(.+)$", re.M)


def counts(output: str) -> dict[str, int]:
    """{passed, failed, errors, skipped} (the kinds found) of a test run's output; {} when
    it holds no tally this module recognises."""
    text = output[-TALLY_TAIL_CHARS:]
    cargo = _CARGO.findall(text)
    if cargo:
        return _kept(passed=sum(int(p) for p, _, _ in cargo), failed=sum(int(f) for _, f, _ in cargo),
                     skipped=sum(int(i) for _, _, i in cargo))
    m = _last(_GOTESTSUM, text)
    if m:
        total, skipped, failed, errors = (int(g or 0) for g in m.groups())
        return _kept(passed=total - skipped - failed - errors, failed=failed, errors=errors, skipped=skipped)
    go = _GO.findall(text)
    if go:
        return _kept(passed=go.count("ok"), failed=go.count("FAIL"))
    m = _last(_UNITTEST, text)
    if m:
        found = _labelled(m.group(3) or "")
        found.pop("total", None)
        return _with_total(found, int(m.group(1)))
    m = _last(_CTEST, text)
    if m:
        failed, total = int(m.group(2)), int(m.group(3))
        return _kept(passed=total - failed, failed=failed)
    node = _NODE.findall(text)
    if node and {"pass", "fail"} <= {k for k, _ in node}:
        got = {k: int(v) for k, v in node}
        return _kept(passed=got.get("pass", 0), failed=got.get("fail", 0) + got.get("cancelled", 0),
                     skipped=got.get("skipped", 0) + got.get("todo", 0))
    mocha = _MOCHA.findall(text)
    if mocha:
        got = {}
        for n, word in mocha:
            got[_WORD[word]] = int(n)  # the last summary wins
        return _kept(**got)
    for line in reversed(text.splitlines()):
        line = line.strip()
        if not line:
            continue
        jest = _JEST.match(line)
        found = _pairs(jest.group(1) if jest else line)
        labelled = _labelled(line)
        if len(labelled) > len(found):
            found = labelled
        if "total" in found and line.startswith("OK ("):  # PHPUnit: "OK (12 tests, 30 assertions)"
            return _with_total({}, found["total"])
        if any(k in found for k in KINDS):
            total = found.pop("total", None)
            return _with_total(found, total) if total is not None else _kept(**found)
    return {}


def shown(found: dict[str, int]) -> str:
    """The counts as words: "12 passed, 1 failed, 2 skipped"."""
    return ", ".join(f"{found[k]} {k[:-1] if k == 'errors' and found[k] == 1 else k}" for k in KINDS if k in found)


def _last(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    m = None
    for m in rx.finditer(text):
        pass
    return m


def _pairs(line: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for n, word in _PAIR.findall(line):
        kind = _WORD[word]
        found[kind] = found.get(kind, 0) + int(n)
    return found


def _labelled(line: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for word, n in _LABELLED.findall(line):
        kind = _WORD.get(word.lower(), "")
        if kind:
            found[kind] = int(n)
    return found


def _with_total(found: dict[str, int], total: int) -> dict[str, int]:
    """The counts with `passed` derived from a total when the runner prints none."""
    if "passed" not in found:
        found["passed"] = max(0, total - sum(found.get(k, 0) for k in ("failed", "errors", "skipped")))
    return _kept(**found)


def _kept(**found: int) -> dict[str, int]:
    """The kinds in their order, zeros left out but for `passed` when nothing else is."""
    out = {k: found[k] for k in KINDS if found.get(k)}
    return out or {"passed": max(0, found.get("passed", 0))}
