"""The secret check on the write path: memindex's compiled patterns
(memindex/store/secrets.py) against detect-secrets, if installed. Prints a table: import
cost, scan cost per memory, secrets caught out of a planted sample, and flags raised on
the judged sets' memories (evalsets/*: written without secrets, so every flag is false).

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
    for path in sorted((REPO / "evalsets").glob("*/*/*.json")):
        out.append(list(strings(json.loads(path.read_text()))))
    return out


def import_ms(stmt: str) -> float:
    code = f"import time; t = time.perf_counter(); {stmt}; print((time.perf_counter() - t) * 1000)"
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO).stdout or "nan") for _ in range(5)]
    return sorted(runs)[2]


def ours(texts: list[str]) -> int:
    from memindex.store.secrets import find

    return sum(bool(find(t)) for t in texts)


def detect_secrets_scan():
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings

    def scan(texts: list[str]) -> int:
        with default_settings():
            return sum(any(True for _ in scan_line(line)) for t in texts for line in t.splitlines() or [""])

    return scan


def row(name: str, imp: float, scan) -> str:
    mems = memories()
    flat = [t for m in mems for t in m]
    scan(PLANTED)  # warm (compile)
    start = time.perf_counter()
    flagged_mems = sum(bool(scan(m)) for m in mems)
    per_mem_ms = (time.perf_counter() - start) * 1000 / len(mems)
    caught = scan([p for p in PLANTED]) if False else sum(bool(scan([p])) for p in PLANTED)
    return f"| {name:<22} | {imp:9.1f} | {per_mem_ms:12.3f} | {caught:>3}/{len(PLANTED)} | {flagged_mems:>4}/{len(mems)} memories ({len(flat)} strings) |"


def main() -> int:
    print("| detector               | import ms | scan ms/mem  | planted | false flags on evalsets/* |")
    print("|------------------------|-----------|--------------|---------|---------------------------|")
    print(row("memindex patterns", import_ms("import memindex.store.secrets as s; s._patterns()"), ours))
    try:
        scan = detect_secrets_scan()
    except ImportError:
        print("| detect-secrets         | not installed (pip install detect-secrets)                          |")
        return 0
    print(row("detect-secrets 1.5", import_ms("from detect_secrets.core.scan import scan_line; from detect_secrets.settings import default_settings"), scan))
    return 0


if __name__ == "__main__":
    sys.exit(main())
