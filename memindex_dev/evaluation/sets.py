"""The judged sets the evaluation runs on, side by side, each with a held-out slice.

- harbor: evalsets/harbor, written with the first version (its settings were chosen on it);
- atlas: evalsets/atlas, written later by someone who never saw harbor, in another domain
  and another style (terse, misspelt, inconsistent tags), with 24 negatives;
- locomo: LoCoMo (Maharana et al., ACL 2024; CC BY-NC 4.0), converted at run time from
  `../shared/data/locomo/locomo10.json` (never copied into the repository): ten stores of
  everyday facts, adversarial questions as negatives;
- cedar: evalsets/cedar, written blind by a helper that saw none of the other sets, the
  evaluation code or its figures, after the settings were chosen (a game studio's backend;
  first measured whole, unseen: docs/evaluation.md; only its dev slice was looked at after);
- fjord: evalsets/fjord, written blind the same way by another helper, after rule 8 was
  chosen (a salmon farm's monitoring platform; first measured whole, unseen);
- quarry: evalsets/quarry, written blind by a third helper after rule 9 was chosen, with
  most prompts worded as work requests (a transit agency's real-time passenger
  information; first measured whole, unseen; only its dev slice was looked at after);
- sedge: evalsets/sedge, a small store (53 memories) written blind by a fourth helper after
  the fixes found on quarry (an open-source Rust/Python raster-tiling tool; first measured
  whole, unseen; nothing tuned on it since);
- heron: evalsets/heron, written blind by a fifth helper, prompts drawn from a diary of two
  weeks' work, memories in three hands (a university genomics core's pipelines and LIMS;
  first measured whole, unseen, through the real hook; nothing tuned on it since);
- ibis: evalsets/ibis, written blind by a sixth helper, prompts in three developers' habits
  (long and precise, terse with typos, non-native paraphrase; a legal-tech SaaS for
  contracts: OCR, clause extraction, multi-tenancy; first measured whole, unseen, through
  the real hook; nothing tuned on it since);
- jetty: evalsets/jetty, written blind by a seventh helper for the relevance model (a
  satellite ground-station scheduler; first measured whole and unseen, rules against the
  shipped model: docs/evaluation.md; since then its dev slice is trained on like the
  other engineering sets'; it has no questions.json);
- lumen: evalsets/lumen, written blind by an eighth helper (a video transcoding platform;
  103 memories, 95 prompts, 23 unrelated), measured once, whole and unseen, through the
  real hook, rules against the calibrated model (docs/evaluation.md); its dev slice trained
  on since the relevance model's fifth round; no questions.json.
- mesa: evalsets/mesa, written blind by a ninth helper (a transit agency's live bus-arrival
  and ticketing platform; 106 memories, 102 of them with save-time questions written
  before the prompts, 95 prompts, 20 unrelated), measured once, whole and unseen, through
  the real hook, rules against the calibrated model, lexical and with the worker
  (docs/evaluation.md); its dev slice trained on since the fifth round; no questions.json.
- nectar and onyx: evalsets/nectar and evalsets/onyx, written blind by two more helpers at
  the same time (a B2B wholesale ordering platform for grocery distributors, 104 memories,
  90 prompts, 18 unrelated; firmware and cloud for 30,000 soil and weather sensors, 110
  memories, 90 prompts, 18 unrelated; every memory with save-time questions written before
  the prompts), each measured through the real hook, rules against the calibrated model,
  lexical and with the worker (docs/evaluation.md); their dev slices trained on since the
  fifth round; no questions.json.
- pylon and reef: evalsets/pylon and evalsets/reef, written blind by two more helpers at the
  same time (the backend of a mobile bank for freelancers, 99 memories, 90 prompts, 18
  unrelated; an open-source documentation toolchain in Rust with a hosted preview service,
  93 memories, 90 prompts, 18 unrelated; save-time questions written before the prompts),
  each measured once through the real hook, rules against the fifth round's model, lexical
  and with the worker (docs/evaluation.md); not trained on; no questions.json.
- tundra and vale: evalsets/tundra and evalsets/vale, written blind by two more helpers at
  the same time in the sixth session (cold-chain logistics telemetry: sensors, edge
  gateways, alerting, 98 memories, 91 prompts, 18 unrelated; hospital staff scheduling and
  shift swaps, 107 memories, 90 prompts, 18 unrelated; save-time questions written before
  the prompts), each measured once through the real hook, rules against the shipped model
  (unchanged since the fifth round), lexical and with the worker (docs/evaluation.md); not
  trained on; no questions.json.

Each local set also has `questions.json`: for every memory (path relative to the memory
folder), the questions a model would write at save time (the `questions` field), written
by a helper that never saw the set's prompts. With `questions`, they are added to each
memory of the store's copy before it is indexed (docs/evaluation.md, "Questions at save
time").

Every set keeps a held-out slice (`HOLDOUT_SHARE` of its queries, chosen by a hash of the
set name and query id, so it never moves): settings are chosen on the rest ("dev") and the
held-out figures are reported apart.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
HOLDOUT_SHARE = 0.3
SETS = ("harbor", "atlas", "locomo", "cedar", "fjord", "quarry", "sedge", "heron", "ibis", "jetty", "lumen", "mesa", "nectar", "onyx", "pylon", "reef", "tundra", "vale", "wren", "koi")  # every set, in the order tables show them
# the shared data folder beside the repository (or beside the folder of its git worktrees)
LOCOMO_JSON = next((p for p in (REPO.parent / "shared" / "data" / "locomo" / "locomo10.json",
                                REPO.parent.parent / "shared" / "data" / "locomo" / "locomo10.json") if p.exists()),
                   REPO.parent / "shared" / "data" / "locomo" / "locomo10.json")


@dataclass
class Store:
    """One memory store and the queries judged on it."""

    set_name: str
    name: str
    root: Path  # a folder with the category folders (a copy the caller may index)
    queries: list[dict]
    config: dict | None = None  # the store's own settings (a project's documents.paths)


def is_holdout(set_name: str, query_id: str) -> bool:
    digest = hashlib.sha256(f"{set_name}/{query_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < HOLDOUT_SHARE


def _memory_folder(folder: Path) -> Path:
    nested = folder / ".claude" / "memory"
    return nested if nested.is_dir() else folder


def copy_store(src: Path, dest: Path) -> Path:
    """The category folders of a set copied to `dest/.claude/memory` (no index, no index.md)."""
    root = dest / ".claude" / "memory"
    shutil.copytree(
        _memory_folder(src), root,
        ignore=shutil.ignore_patterns(".index.db*", "index.md", ".*", "*.md", "queries.json", "questions.json"),
    )
    return root


QUESTIONS_FILE = "questions.json"


def add_questions(folder: Path, root: Path) -> int:
    """Give each memory of the copy at `root` its questions from `folder/questions.json`
    (keys relative to the memory folder; a `.claude/memory/` prefix is accepted), as the
    write path would have stored them. Returns how many memories got questions (0 for a set
    without questions.json: jetty, written after them)."""
    from memindex.write.validate import serialize

    if not (folder / QUESTIONS_FILE).is_file():
        return 0
    given = json.loads((folder / QUESTIONS_FILE).read_text(encoding="utf-8"))
    done = 0
    for rel, questions in given.items():
        path = root / rel.removeprefix(".claude/memory/")
        if not path.is_file() or not questions:
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        data["questions"] = questions
        path.write_bytes(serialize(data))
        done += 1
    return done


def local_set(name: str, folder: Path, tmp: Path, questions: bool = False) -> list[Store]:
    queries = json.loads((folder / "queries.json").read_text(encoding="utf-8"))
    root = copy_store(folder, tmp / name)
    if questions:
        add_questions(folder, root)
    return [Store(name, name, root, queries)]


def locomo_stores(tmp: Path, path: Path = LOCOMO_JSON) -> list[Store]:
    from .locomo import build_all

    built = build_all(path, tmp / "locomo")
    return [Store("locomo", conv, tmp / "locomo" / conv / ".claude" / "memory", qs) for conv, qs in sorted(built.items())]


SMALL_SIZES = ((2, 2), (6, 6))  # (prompts, other memories) per small store: about 6 and 20 memories


def small_stores(store: Store, tmp: Path, prompts: int, others: int, seed: int = 7) -> list[Store]:
    """`store` cut into small stores, as a new user's is: each holds a few of its prompts
    (shuffled with `seed`), every memory they judge (and the successor a retired one names),
    and `others` of its other memories at random. The prompts keep their ids, so each stays
    in its set's dev or held-out slice."""
    import random

    from memindex.store.files import successor_refs

    rng = random.Random(f"{seed}/{store.name}/{prompts}")
    files = sorted(str(p.relative_to(store.root)) for p in store.root.rglob("*.json") if p.parent != store.root)
    queries = list(store.queries)
    rng.shuffle(queries)
    out = []
    for i in range(0, len(queries), prompts):
        part = queries[i:i + prompts]
        keep = {k.removeprefix(".claude/memory/") for q in part for k in q["judgments"]}
        for rel in sorted(keep):
            if (store.root / rel).is_file():
                data = json.loads((store.root / rel).read_text(encoding="utf-8"))
                refs = successor_refs(data)
                keep |= {f for f in files if f.removesuffix(".json") in refs or f.split("/")[-1].removesuffix(".json") in refs}
        rest = [f for f in files if f not in keep]
        keep |= set(rng.sample(rest, min(others, len(rest))))
        root = tmp / f"{store.name}-small{prompts}-{i}" / ".claude" / "memory"
        for rel in sorted(keep):
            if (store.root / rel).is_file():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(store.root / rel, root / rel)
        out.append(Store(store.set_name, f"{store.name}-small{prompts}-{i}", root, part))
    return out


def all_sets(tmp: Path, names: tuple[str, ...] = SETS, questions: bool = False) -> list[Store]:
    """Every available set's stores (LoCoMo only where its data file is present); with
    `questions`, each memory carries its set's blind questions (LoCoMo has none)."""
    stores: list[Store] = []
    for name in names:
        if name == "locomo":
            if LOCOMO_JSON.exists():
                stores += locomo_stores(tmp)
        else:
            stores += local_set(name, REPO / "evalsets" / name, tmp, questions)
    return stores
