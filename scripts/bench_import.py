#!/usr/bin/env python3
"""Import speed: `memindex import adr` over N generated ADRs (default 200), first run and
an idempotent second run, against baselines measured in the same run.

    python scripts/bench_import.py [--adrs 200] [--runs 3]

The ADRs are realistic: half Nygard/adr-tools (`# N. Title`, `Date:`, `## Status`, ...),
half MADR 2/3/4 (bullets or front matter, considered options, pros and cons), 600-2,500
bytes each, every tenth one superseded by the next through an adr-tools link, every
twenty-fifth deprecated. Each run starts from a fresh `memindex init`; the commands run as
processes (`python -m memindex`), as a user runs them. Baselines: the interpreter's floor
(`python -c "import sqlite3, json"`), and the write path alone: the same memories saved
with `save_memory`, one call (one lock and one index update) each, in one process.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex.config import load_config  # noqa: E402
from memindex.evaluation.metrics import table  # noqa: E402
from memindex.importers import adr  # noqa: E402
from memindex.importers.engine import Report  # noqa: E402
from memindex.store.scaffold import init_project  # noqa: E402
from memindex.index.sync import sync  # noqa: E402
from memindex.write import save_memory  # noqa: E402

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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--adrs", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    py = sys.executable
    rows: dict[str, list[float]] = {k: [] for k in ("floor", "write path", "first", "second", "dry")}
    written = unchanged = 0
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="memindex-importbench-") as tmp:
            project = Path(tmp) / "p"
            project.mkdir()
            write_adrs(project / "docs" / "adr", args.adrs, seed=run)
            init_project(project)
            rows["floor"].append(_timed([py, "-c", "import sqlite3, json"], project))
            rows["dry"].append(_timed([py, "-m", "memindex", "import", "adr", "--dry-run", "-q"], project))
            rows["first"].append(_timed([py, "-m", "memindex", "import", "adr", "-q"], project))
            rows["second"].append(_timed([py, "-m", "memindex", "import", "adr", "--json"], project))
            out = subprocess.run([py, "-m", "memindex", "import", "adr", "--json"], cwd=project, capture_output=True,
                                 text=True, env={**os.environ, "PYTHONPATH": str(REPO)}).stdout
            import json

            report = json.loads(out)
            written = len(report["created"]) + len(report["updated"]) + len(report["retired"]) + len(report["archived"])
            unchanged = report["unchanged"]
            # the write path alone: the same planned memories, saved one by one
            other = Path(tmp) / "q"
            other.mkdir()
            root = init_project(other).root
            sync(root, progress=False)
            planned = adr.plan(project, adr.find_folders(project), Report("adr", True))
            cfg = load_config(str(root))
            start = time.perf_counter()
            for item in planned:
                save_memory(root, cfg, item.category, {**item.data, "id": item.id})
            rows["write path"].append(time.perf_counter() - start)
            shutil.rmtree(other)
    med = {k: sorted(v)[len(v) // 2] for k, v in rows.items()}
    base = med["write path"]
    print(f"{args.adrs} ADRs, {args.runs} runs, {os.cpu_count()} cores; medians; ratio = time / the write path alone\n")
    print(table(["what", "seconds", "per ADR (ms)", "ratio"], [
        ["floor: python -c 'import sqlite3, json'", med["floor"], "-", med["floor"] / base],
        ["write path alone: save_memory x N, one process", med["write path"], 1000 * med["write path"] / args.adrs, 1.0],
        ["memindex import adr --dry-run", med["dry"], 1000 * med["dry"] / args.adrs, med["dry"] / base],
        ["memindex import adr (first run)", med["first"], 1000 * med["first"] / args.adrs, med["first"] / base],
        [f"memindex import adr (second run: {written} written, {unchanged} unchanged)", med["second"],
         1000 * med["second"] / args.adrs, med["second"] / base],
    ]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
