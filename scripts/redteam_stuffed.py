#!/usr/bin/env python3
"""Red team: one keyword-stuffed memory planted in a judged store.

A repository's memories are its authors' to write: one could hold every word its store
uses, under a bland title, to be shown on as many prompts as it can. This plants such a
memory (a decision whose text is the store's commonest words, each of four letters or
more, ranked by how many memories hold it) in a copy of each set, syncs it, and runs every
prompt of the set through the injection policy in process, under the rules (`fts5_bm25`)
and the relevance model (`calibrated`, the default). It prints, per set and size, how many
prompts the planted memory was injected into and each policy's injection metrics
(`evaluation.memory.inject_metrics`, as every evaluation table).

    python scripts/redteam_stuffed.py harbor ibis pylon --words 0 300 3000
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memindex import index  # noqa: E402
from memindex.config import Config, parse_config  # noqa: E402
from memindex_dev.evaluation.memory import inject_metrics  # noqa: E402
from memindex_dev.evaluation.metrics import table  # noqa: E402
from memindex_dev.evaluation.sets import local_set  # noqa: E402
from memindex.index.sync import sync  # noqa: E402
from memindex.policy.inject import decide  # noqa: E402

PLANTED = "z-stuffed"
STRATEGIES = ("fts5_bm25", "calibrated")
FIELD_WORDS = {"active", "null", "true", "false", "schema_version", "record_status", "created_at", "updated_at"}


def plant(root: Path, words: int) -> None:
    """A decision holding the store's `words` commonest words, in the place of each of its
    free-text fields (a field of a few words, such as its status, is left as it is)."""
    held: collections.Counter[str] = collections.Counter()
    for path in root.rglob("*.json"):
        held.update(set(re.findall(r"[a-z][a-z0-9_-]{3,}", path.read_text(encoding="utf-8").lower())))
    text = " ".join([w for w, _ in held.most_common() if w not in FIELD_WORDS][:words])
    memory = json.loads(next(root.glob("decisions/*.json")).read_text(encoding="utf-8"))
    memory.update(id=PLANTED, title="Notes", tags=["misc"], related_files=[])
    for key, value in memory["content"].items():
        if isinstance(value, str) and len(value.split()) > 3:
            memory["content"][key] = text
    (root / "decisions" / f"{PLANTED}.json").write_text(json.dumps(memory), encoding="utf-8")


def run(name: str, words: int) -> list[object]:
    with tempfile.TemporaryDirectory(prefix="memindex-redteam-") as tmp:
        (store,) = local_set(name, REPO / "evalsets" / name, Path(tmp))
        if words:
            plant(store.root, words)
        sync(store.root, Config())
        conn = index.open_reader(store.root)
        row: list[object] = [name, words]
        try:
            for strategy in STRATEGIES:
                cfg = parse_config({"retrieval": {"match_strategy": strategy}})
                got = {q["id"]: {"inject": [h.path for h in decide(conn, q["query"], cfg).hits]} for q in store.queries}
                m = inject_metrics(store.queries, got)
                planted = sum(any(PLANTED in p for p in r["inject"]) for r in got.values())
                negatives = sum(1 for q in store.queries if not q["judgments"])
                row += [f"{planted}/{len(store.queries)}",
                        f"{m['precision']:.3f} / {m['recall_g2']:.3f} / {round(m['false_inject'] * negatives)} of {negatives}"]
        finally:
            conn.close()
        return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sets", nargs="+", help="judged sets in evalsets/ (harbor, ibis, pylon ...)")
    parser.add_argument("--words", type=int, nargs="+", default=[0, 300, 3000], help="sizes of the planted memory (0: none)")
    args = parser.parse_args(argv)
    rows = [run(name, words) for name in args.sets for words in args.words]
    print(table(["set", "planted words", "rules: planted one injected into", "rules: precision / grade-2 recall / unrelated",
                 "model: planted one injected into", "model: precision / grade-2 recall / unrelated"], rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
