"""The secret check on the write path: memindex's compiled patterns
(memindex/store/secrets.py) against maintained rule sets, if installed: detect-secrets
with the plugins session capture adds (data/secret_patterns.json "detector": format and
keyword plugins), detect-secrets with its defaults (its high-entropy plugins too), and
kingfisher (MongoDB's scanner, `pip install kingfisher-secret-scanner`). Prints a table:
import cost (and kingfisher's rule compile, cached per user after the first run), scan
cost per memory, tokens caught out of a planted sample, the credential forms of issue 36
caught (commands and assignments: tests/stresskit/hostile_capture.py), and flags raised
on every judged memory of every set in evalsets/ (written without secrets, so every flag
is false).

    python scripts/bench_secrets.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from stresskit.hostile_capture import CREDENTIAL_FORMS  # noqa: E402

FORMS = [text for text, _, _ in CREDENTIAL_FORMS]
NOT_MEMORIES = {"queries.json", "questions.json", "conventions.json", "endings.json", "sequences.json", "split.json"}

PLANTED = [
    "rotate key sk_live_4eC39HqLyjWDarjtT1zdp7dc in the dashboard",
    "db password = 'hunter2xyzQ9!kL'",
    "AWS key AKIAIOSFODNN7EXAMPLE for the uploader",
    "token ghp_" + "a1B2c3D4e5" * 4,
    "slack xoxb-2048-123456789012-AbCdEfGhIjKlMnOp",
    "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----",
    "anthropic sk-ant-api03-" + "Zx9_Yw8-Vu7T" * 6,
    "openai sk-proj-" + "Qa1Ws2Ed3Rf4" * 5,
    "postgres://app:s3cr3tPassw0rd@db.internal:5432/ledger",
]


def strings(value: object):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def memories() -> list[list[str]]:
    out = []
    for path in sorted((REPO / "evalsets").rglob("*.json")):
        if path.name not in NOT_MEMORIES:
            out.append(list(strings(json.loads(path.read_text()))))
    return out


def import_ms(stmt: str) -> float:
    code = f"import time; t = time.perf_counter(); {stmt}; print((time.perf_counter() - t) * 1000)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO).stdout or "nan") for _ in range(5)]
    return sorted(runs)[2]


def ours(texts: list[str]) -> int:
    from memindex.store.secrets import find

    return sum(bool(find(t)) for t in texts)


def detect_secrets_scan(plugins: list[str] | None):
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings, transient_settings

    def scan(texts: list[str]) -> int:
        with (transient_settings({"plugins_used": [{"name": n} for n in plugins]}) if plugins else default_settings()):
            return sum(any(True for _ in scan_line(line)) for t in texts for line in t.splitlines() or [""])

    return scan


def kingfisher_scan():
    from kingfisher_sdk import Scanner

    scanner = Scanner()
    return lambda texts: sum(any(True for _ in scanner.scan(t)) for t in texts if t)


def row(name: str, imp: str, scan) -> str:
    mems = memories()
    flat = [t for m in mems for t in m]
    scan(PLANTED)  # warm (compile)
    start = time.perf_counter()
    flagged_mems = sum(bool(scan(m)) for m in mems)
    per_mem_ms = (time.perf_counter() - start) * 1000 / len(mems)
    caught = sum(bool(scan([p])) for p in PLANTED)
    forms = sum(bool(scan([f])) for f in FORMS)
    return (f"| {name:<30} | {imp:>16} | {per_mem_ms:12.3f} | {caught:>3}/{len(PLANTED)} | {forms:>3}/{len(FORMS)} "
            f"| {flagged_mems:>4}/{len(mems)} memories ({len(flat)} strings) |")


def main() -> int:
    import os

    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    print("| detector                       | import ms        | scan ms/mem  | planted | issue 36 forms | false flags on evalsets/ |")
    print("|--------------------------------|------------------|--------------|---------|----------------|--------------------------|")
    print(row("memindex patterns", f"{import_ms('import memindex.store.secrets as s; s._patterns()'):.1f}", ours))
    try:
        from memindex.store.secrets import _detector_plugins

        imp = f"{import_ms('from detect_secrets.core.scan import scan_line; from detect_secrets.settings import transient_settings'):.1f}"
        print(row("detect-secrets (capture's set)", imp, detect_secrets_scan(_detector_plugins())))
        print(row("detect-secrets (defaults)", imp, detect_secrets_scan(None)))
    except ImportError:
        print("| detect-secrets                 | not installed (pip install detect-secrets) |")
    try:
        imp_k = import_ms("import kingfisher_sdk")
        compile_k = import_ms("from kingfisher_sdk import Scanner; Scanner()") - imp_k
        print(row("kingfisher", f"{imp_k:.1f} + {compile_k:.0f}", kingfisher_scan()))
    except ImportError:
        print("| kingfisher                     | not installed (pip install kingfisher-secret-scanner) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
