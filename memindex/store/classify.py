"""Which category a note is: a CLAUDE.md / AGENTS.md section, a Claude Code auto memory
note, a page of a docs folder.

The rule, in order, on the note's label (its title, headings, description and file name;
never its whole body, where "deploy" or "never" often appear in passing) and declared type:
1. a Claude Code memory of type `user` is a preference (it describes the person);
2. runbook words (how to, steps, deploy, release, setup, install, troubleshoot, debug,
   commands, workflow, rollback) make a runbook, if the note has steps (list items or
   code) to give it;
3. decision words (decision, decided, chose, architecture, adr, switched to) a decision;
4. debt words (tech debt, todo, known issue, fixme, hack, workaround, flaky, legacy) tech debt;
5. hard-rule words (must, never, do not, don't, cannot, required, forbidden, not allowed,
   constraint, limit, rule, policy, security, gotcha, pitfall, caveat, important, warning,
   freeze, deadline), in the label or in the note's first sentence, a constraint;
6. anything else the default: a preference for notes and instruction files (most say how
   the team likes things done, and a preference claims less than a constraint), a runbook
   for a docs page (`DOCS_DEFAULT`).

A docs page is classified on its title and front matter only: decision words (decision,
ADR, RFC), debt words, then policy words (policy, rules, constraints, limits, requirements,
compliance) in its title alone, else a runbook: an operations or developer manual is reference for doing
the work, which is what a runbook holds (and a runbook does not age), while its pages'
"Warning" headings and "must" sentences are advice, not the page's kind.
"""

from __future__ import annotations

import re

RUNBOOK = re.compile(r"\b(how ?to|runbook|steps?|procedures?|deploy\w*|releas\w*|set ?up|install\w*|troubleshoot\w*|debug\w*|commands?|workflows?|rollback|recover\w*)\b", re.I)
DECISION = re.compile(r"\b(decisions?|decided|chose|chosen|architecture|adrs?|switched to)\b", re.I)
DEBT = re.compile(r"\b(tech(nical)? debt|todos?|known (issues?|bugs?)|fixme|hacks?|workarounds?|flaky|legacy)\b", re.I)
HARD = re.compile(r"\b(must|never|do not|don't|cannot|can't|required|forbidden|not allowed|constraints?|limits?|limitations?|rules?|polic(y|ies)|security|gotchas?|pitfalls?|caveats?|important|warning|freeze|deadlines?)\b", re.I)
BOILERPLATE = re.compile(r"this file provides guidance to (claude|agents?|ai)", re.I)
NOTES = ("runbook", "decision", "tech_debt", "constraint", "preference")
INSTRUCTIONS = ("constraint", "preference")  # a CLAUDE.md / AGENTS.md section
DOCS_DEFAULT = "runbook"


def first_sentence(blocks: list[str]) -> str:
    """The first sentence of a note's prose (its first block that is no code)."""
    for block in blocks:
        text = block[2:] if block.startswith("- ") else block
        if text.strip():
            return re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return ""


def has_steps(blocks: list[str], code: set[int] | None = None) -> bool:
    """List items or code: what a runbook's steps can be."""
    return any(b.startswith("- ") for b in blocks) or bool(code)


def classify(label: str, first: str, steps: bool, declared_type: str = "",
             allowed: tuple[str, ...] = NOTES, default: str = "preference") -> str:
    """The category of a note (rules 1-6 above), among `allowed`, else `default`."""
    if declared_type.lower() == "user":
        return "preference" if "preference" in allowed else default
    order = (
        ("runbook", bool(RUNBOOK.search(label)) and steps),
        ("decision", bool(DECISION.search(label))),
        ("tech_debt", bool(DEBT.search(label))),
        ("constraint", bool(HARD.search(label) or HARD.search(first))),
    )
    for category, hit in order:
        if hit and category in allowed:
            return category
    return default


def classify_page(title: str, description: str = "", page_type: str = "") -> str:
    """A docs page's category (the rule for docs pages above)."""
    label = " ".join((title, description, page_type))
    if re.search(r"\b(decisions?|decided|adrs?|rfcs?|decision records?)\b", label, re.I) and not RUNBOOK.search(title):
        return "decision"
    if DEBT.search(label):
        return "tech_debt"
    if re.search(r"\b(polic(y|ies)|rules?|constraints?|limits?|limitations?|requirements?|compliance)\b", title, re.I):
        return "constraint"
    return DOCS_DEFAULT
