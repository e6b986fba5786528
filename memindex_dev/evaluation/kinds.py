"""Every judged set by the kind of store it is, for training and judging the relevance
model across kinds: a model trained on one kind says little about one it never saw.

- json: short JSON memories written for memindex (evalsets/<set>); TRAINED are trained on
  (dev slices), UNSEEN never (each was written blind and measured once before; they stay the
  kind's check on stores the model never saw);
- conversational: wren (evalsets/wren, written blind: a coding project's chatty captured sessions);
- locomo: LoCoMo's everyday facts about two people (../shared/data/locomo, when present): a kind
  of store never trained on, judged whole (the check on a kind the model never saw);
- cjk: koi (evalsets/koi, written blind: a team writing Chinese and Japanese with English
  identifiers);
- adr, runbook: real public collections indexed in place (evaluation/docsets.py; their files
  in ../shared/data/docs, the blind prompts in evalsets/docs), the FINAL ones never.
"""

from __future__ import annotations

from pathlib import Path

from . import docsets
from .sets import LOCOMO_JSON, Store, all_sets

TRAINED = ("harbor", "atlas", "cedar", "fjord", "quarry", "sedge", "heron", "ibis", "jetty", "lumen", "mesa",
           "nectar", "onyx")
UNSEEN = ("pylon", "reef", "tundra", "vale")
CONVERSATIONAL = ("wren",)
CJK = ("koi",)
KINDS = ("json", "conversational", "cjk", "adr", "runbook", "locomo")
NEVER_TRAINED = ("locomo",)  # whole kinds kept out of training
MEMORY_KINDS = ("json", "conversational", "cjk")  # their candidates are memory files: the memories' bar
DOCUMENT_KINDS = ("adr", "runbook")  # documents' sections: the documents' bar


def doc_kind(ds: docsets.DocSet) -> str:
    """An ADR collection is kind `adr`; runbooks and operations docs are `runbook`."""
    return "adr" if ds.kind == "adr" else "runbook"


def stores(tmp: Path, kinds: tuple[str, ...] = KINDS, unseen: bool = False, questions: bool = False) -> dict[str, list[Store]]:
    """kind -> its stores, built under `tmp` (`unseen`: the json kind's UNSEEN sets too; LoCoMo
    only where its data is; the docs sets that have their data and prompts here)."""
    out: dict[str, list[Store]] = {}
    if "json" in kinds:
        out["json"] = all_sets(tmp / "json", TRAINED + (UNSEEN if unseen else ()), questions=questions)
    if "cjk" in kinds:
        out["cjk"] = all_sets(tmp / "cjk", CJK)
    if "conversational" in kinds:
        out["conversational"] = all_sets(tmp / "conversational", CONVERSATIONAL)
    if "locomo" in kinds and LOCOMO_JSON.exists():
        out["locomo"] = all_sets(tmp / "locomo", ("locomo",))
    for slug in docsets.available():
        ds = docsets.load(slug)
        kind = doc_kind(ds)
        if kind in kinds:
            out.setdefault(kind, []).append(docsets.store(ds, tmp / "docs"))
    return out


def missing() -> list[str]:
    """What training needs that this machine lacks (then `--check` cannot reproduce it)."""
    out = []
    if not LOCOMO_JSON.exists():
        out.append(f"LoCoMo ({LOCOMO_JSON})")
    wanted = [p.name for p in docsets.QUERIES.iterdir() if p.is_dir()] if docsets.QUERIES.is_dir() else []
    have = set(docsets.available())
    out += [f"the documents of {slug} ({docsets.DOCS_DATA / slug})" for slug in wanted
            if slug not in have and slug not in docsets.FINAL]
    return out
