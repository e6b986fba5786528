"""The prompt before any search: is it worth a look, which earlier user turns complete it,
and what the semantic model reads of it.

The first steps of the injection policy (`inject`), apart so that the prompt hook can
decide them, and send the prompt to the semantic worker, before it imports the search
engine: the worker embeds while the hook loads and runs the lexical side.
"""

from __future__ import annotations

from collections.abc import Sequence

from .text import query_terms

TYPE_CHECKING = False  # annotations only
if TYPE_CHECKING:
    from .config import Config


def dense_text(prompt: str, turns: Sequence[str]) -> str:
    """What the semantic model reads for a prompt: the prompt first (it reads 256 tokens),
    then the earlier user turns, latest first."""
    return "\n".join([prompt, *reversed(turns)])


def wants_injection(prompt: str, cfg: Config) -> bool:
    """Is injection on, and is the prompt long enough to be worth a look?"""
    if not cfg["retrieval.enabled"] or cfg["retrieval.max_inject"] <= 0:
        return False
    return len(prompt.strip()) >= cfg["retrieval.min_prompt_chars"]


def needs_context(prompt: str, cfg: Config) -> bool:
    """Should earlier user turns enrich this prompt? Only short ones ("fix that again"):
    more terms would dilute a specific prompt."""
    if not cfg["retrieval.transcript_context.enabled"]:
        return False
    return len(query_terms(prompt)) <= cfg["retrieval.transcript_context.max_prompt_terms"]


def enrich(prompt: str, turns: Sequence[str], cfg: Config) -> str:
    """The prompt preceded by the last user turns, when it needs them."""
    if not turns or not needs_context(prompt, cfg):
        return prompt
    keep = list(turns)[-cfg["retrieval.transcript_context.max_turns"]:]
    return "\n".join([*keep, prompt])
