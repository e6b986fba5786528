#!/usr/bin/env python3
"""Import speed: `memindex import adr` over N generated ADRs (default 200), which registers
the folder and indexes the files in place, first run and an idempotent second run, against
baselines measured in the same run.

    python scripts/bench_import.py [--adrs 200] [--runs 3]

The ADRs are realistic: half Nygard/adr-tools (`# N. Title`, `Date:`, `## Status`, ...),
half MADR 2/3/4 (bullets or front matter, considered options, pros and cons), 600-2,500
bytes each, every tenth one superseded by the next through an adr-tools link, every
twenty-fifth deprecated. Each run starts from a fresh `memindex init --no-documents`; the
commands run as processes (`python -m memindex`), as a user runs them. Baselines: the
interpreter's floor (`python -c "import sqlite3, json"`), and reading the same files alone
(`store.interpret.load` of each, in one process: the parse the import and its sync share).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex.store.interpret import load  # noqa: E402
from memindex.store.scaffold import init_project  # noqa: E402

SUBJECTS = ["orders", "billing", "search", "auth", "notifications", "inventory", "reporting", "checkout", "shipping", "catalog"]
TECH = ["PostgreSQL", "Kafka", "Redis", "gRPC", "GraphQL", "OpenTelemetry", "Terraform", "Argo CD", "S3", "DynamoDB",
        "RabbitMQ", "Elasticsearch", "Temporal", "Envoy", "Vault", "ClickHouse"]
WORDS = ("latency budget retries idempotent schema migration rollout canary tenant partition cache invalidation "
         "backpressure quota audit compliance encryption rotation failover replica consistency throughput "
         "on-call runbook dashboard alert contract versioning deprecation cost ownership").split()


def _sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def write_adrs(folder: Path, count: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    names = {}
    for n in range(1, count + 1):
        subject, tech = rng.choice(SUBJECTS), rng.choice(TECH)
        names[n] = (f"{n:04d}-use-{tech.lower().replace(' ', '-')}-for-{subject}.md", f"Use {tech} for {subject}")
    for n, (name, title) in names.items():
        status = "Accepted"
        if n % 10 == 0 and n < count:
            status = f"Superseded by [{n + 1}. {names[n + 1][1]}]({names[n + 1][0]})"
        elif n % 25 == 0:
            status = "Deprecated"
        context = " ".join(_sentence(rng) for _ in range(rng.randint(2, 8)))
        if n % 2:
            text = (f"# {n}. {title}\n\nDate: 2024-{1 + n % 12:02d}-{1 + n % 28:02d}\n\n## Status\n\n{status}\n\n"
                    f"## Context\n\n{context}\n\n## Decision\n\n{_sentence(rng, 24)}\n\n## Consequences\n\n"
                    + "\n".join(f"* {_sentence(rng)}" for _ in range(rng.randint(1, 5))) + "\n")
        else:
            options = [title.split(" for ")[0].removeprefix("Use "), *rng.sample(TECH, 2)]
            text = (f"---\nstatus: {status.lower() if n % 10 else status}\ndate: 2024-{1 + n % 12:02d}-{1 + n % 28:02d}\n"
                    f"deciders: Dana, Ken\n---\n# {title}\n\n## Context and Problem Statement\n\n{context}\n\n"
                    "## Considered Options\n\n" + "\n".join(f"* {o}" for o in options) + "\n\n"
                    f"## Decision Outcome\n\nChosen option: \"{options[0]}\", because {_sentence(rng, 10)}\n\n"
                    "### Consequences\n\n" + f"* Good, because {_sentence(rng, 8)}\n* Bad, because {_sentence(rng, 8)}\n\n"
                    "## Pros and Cons of the Options\n\n"
                    + "".join(f"### {o}\n\n* Good, because {_sentence(rng, 6)}\n* Bad, because {_sentence(rng, 6)}\n\n" for o in options[1:]))
        (folder / name).write_text(text)


def _timed(cmd: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    import json

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adrs", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    py = sys.executable
    rows: dict[str, list[float]] = {k: [] for k in ("floor", "read", "first", "second", "dry")}
    counts: dict[str, int] = {}
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="memindex-importbench-") as tmp:
            project = Path(tmp) / "p"
            project.mkdir()
            write_adrs(project / "docs" / "adr", args.adrs, seed=run)
            init_project(project)
            rows["floor"].append(_timed([py, "-c", "import sqlite3, json"], project))
            start = time.perf_counter()
            for path in sorted((project / "docs" / "adr").iterdir()):
                load(str(project), f"docs/adr/{path.name}", "adr")
            rows["read"].append(time.perf_counter() - start)
            rows["dry"].append(_timed([py, "-m", "memindex", "import", "adr", "docs/adr", "--dry-run", "-q"], project))
            rows["first"].append(_timed([py, "-m", "memindex", "import", "adr", "docs/adr", "-q"], project))
            rows["second"].append(_timed([py, "-m", "memindex", "import", "adr", "docs/adr", "-q"], project))
            out = subprocess.run([py, "-m", "memindex", "import", "adr", "docs/adr", "--json"], cwd=project,
                                 capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}).stdout
            counts = json.loads(out)["counts"]
    med = {k: sorted(v)[len(v) // 2] for k, v in rows.items()}
    base = med["read"]
    print(f"{args.adrs} ADRs, {args.runs} runs, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; medians; "
          "ratio = time / reading the files alone\n")
    print(table(["what", "seconds", "per ADR (ms)", "ratio"], [
        ["floor: python -c 'import sqlite3, json'", med["floor"], "-", med["floor"] / base],
        ["reading the files alone: store.interpret.load x N, one process", med["read"], 1000 * med["read"] / args.adrs, 1.0],
        ["memindex import adr --dry-run", med["dry"], 1000 * med["dry"] / args.adrs, med["dry"] / base],
        [f"memindex import adr (first run: {counts.get('indexed')} indexed, {counts.get('retired')} retired, "
         f"{counts.get('archived')} archived)", med["first"], 1000 * med["first"] / args.adrs, med["first"] / base],
        ["memindex import adr (second run: nothing new to index)", med["second"], 1000 * med["second"] / args.adrs,
         med["second"] / base],
    ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
