"""Memory files for the stress scenarios: fillers, and targets that one prompt matches uniquely."""

from __future__ import annotations

import json
import os
import random
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memindex.defaults import CATEGORY_FOLDER, FOLDERS
from sample_words import VOCAB

from .procs import DISPLAY


TEXT_FIELD = {
    "session_summary": "goal", "decision": "context", "runbook": "trigger",
    "constraint": "rule", "tech_debt": "description", "preference": "value",
}
DEFAULT_CONTENT: dict[str, dict[str, Any]] = {
    "session_summary": {"goal": "", "outcome": "success", "completed": [], "in_progress": [],
                        "blockers": [], "next_actions": [], "key_changes": []},
    "decision": {"status": "accepted", "context": "", "decision": "", "alternatives": [],
                 "rationale": [], "consequences": []},
    "runbook": {"trigger": "", "symptoms": [], "steps": ["-"], "verification": "",
                "root_cause": "", "environment": ""},
    "constraint": {"kind": "technical", "rule": "", "impact": [], "workarounds": [],
                   "severity": "medium", "active": True, "expires": None},
    "tech_debt": {"status": "open", "priority": "medium", "description": "", "reason_deferred": "",
                  "impact": [], "suggested_fix": [], "acceptance_criteria": []},
    "preference": {"topic": "", "value": "", "reason": "", "strength": "default",
                   "examples": {"prefer": [], "avoid": []}},
}
CATEGORY_LIST = list(TEXT_FIELD)


def memory_doc(category: str, mem_id: str, title: str, tags: list[str], text: str, status: str = "active") -> dict[str, Any]:
    """A complete schema-1.0 memory."""
    content = json.loads(json.dumps(DEFAULT_CONTENT[category]))
    content[TEXT_FIELD[category]] = text
    stamp = "2026-01-15T10:00:00Z"
    return {
        "schema_version": "1.0", "category": category, "id": mem_id, "title": title,
        "created_at": stamp, "updated_at": stamp, "tags": tags, "content": content,
        "related_files": [], "confidence": 0.8, "record_status": status, "changes": [],
        "times_updated": 0,
        "retired_at": stamp if status == "retired" else None,
        "retired_reason": "replaced" if status == "retired" else None,
        "archived_at": stamp if status == "archived" else None,
        "archived_reason": "history" if status == "archived" else None,
    }


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)


def dump(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False, indent=1).encode("utf-8", "surrogatepass")


_CONS = "bdfgklmnprtvz"
_VOWELS = "aiou"
_ENDS = ["dak", "gop", "nux", "wib", "zot", "kef", "lup", "mav", "rix", "tob", "pag", "vum"]


class NonceWords:
    """Invented words of the same length that occur nowhere else, and that no stemmer
    shortens into a prefix of another (they end in a fixed set of inert syllables)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def __call__(self) -> str:
        while True:
            word = "".join(self.rng.choice(_CONS) + self.rng.choice(_VOWELS) + self.rng.choice(_CONS) for _ in range(2))
            word += self.rng.choice(_ENDS)
            if word not in self.used:
                self.used.add(word)
                return word


@dataclass
class Target:
    """A memory that one prompt matches uniquely (two invented words)."""

    id: str
    category: str
    words: tuple[str, str]
    extra: str = "cache"

    @property
    def rel(self) -> str:
        return f"{CATEGORY_FOLDER[self.category]}/{self.id}.json"

    @property
    def shown(self) -> str:
        return DISPLAY + self.rel

    @property
    def prompt(self) -> str:
        return f"what do we know about {self.words[0]} {self.words[1]}?"

    def doc(self, rev: int = 0) -> dict[str, Any]:
        w1, w2 = self.words
        title = f"{w1.capitalize()} {w2} and the {self.extra}" + (f", revision {rev}" if rev else "")
        text = f"When {w1} {w2} shows up, look at the {self.extra} first."
        return memory_doc(self.category, self.id, title, [w1, "stress"], text)


def new_target(words: NonceWords, rng: random.Random, category: str | None = None) -> Target:
    w1, w2 = words(), words()
    return Target(f"t-{w1}-{w2}", category or rng.choice(CATEGORY_LIST), (w1, w2), rng.choice(VOCAB))


def filler(i: int, rng: random.Random, marker: str = "") -> tuple[str, dict[str, Any]]:
    category = CATEGORY_LIST[i % len(CATEGORY_LIST)]
    sample = rng.sample(VOCAB, 6)
    title = f"{sample[0].capitalize()} {sample[1]} note {i}" + (f" {marker}" if marker else "")
    body = " ".join(rng.choice(VOCAB) for _ in range(40))
    status = "retired" if i % 23 == 5 else "active"
    mem_id = f"f{i:05d}"
    return f"{CATEGORY_FOLDER[category]}/{mem_id}.json", memory_doc(category, mem_id, title, sample[2:5], body, status)


def build_store(root: Path, n_fill: int, targets: list[Target], seed: int) -> None:
    rng = random.Random(seed)
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    for i in range(n_fill):
        rel, doc = filler(i, rng)
        (root / rel).write_bytes(dump(doc))
    for t in targets:
        (root / t.rel).write_bytes(dump(t.doc()))


GENERIC_QUERIES = ["postgres migration rollback", "redis cache timeout", "deploy canary feature flag", "jwt token rotation"]


def walk_rels(root: Path) -> list[str]:
    out = []
    for folder in FOLDERS:
        try:
            names = os.listdir(root / folder)
        except OSError:
            continue
        out += [f"{folder}/{n}" for n in names if n.endswith(".json") and not n.startswith(".")]
    return out
