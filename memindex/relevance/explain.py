"""`memindex explain`'s words for the relevance model's decisions: what each feature means,
which features moved a candidate's probability most, and the bar it met or missed. Loaded
only when a decision is explained: the prompt hook never words one.
"""

from __future__ import annotations

from ..defaults import CATEGORY_PRIORITY

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config import Config
    from . import Model

# What each feature means, in words `memindex explain` can show.
DESCRIBE: dict[str, str] = {
    "rel_score": "word-match score against the best",
    "norm_score": "word-match score against the store's scale",
    "top": "the best word match",
    "rank": "rank among the word matches",
    "gap_next": "lead over the next word match",
    "coverage": "share of the prompt's rare words it holds",
    "coverage_rel": "coverage against the best-covering match",
    "coverage_top": "covers most of the prompt (top match)",
    "best_coverage": "how well the best match covers the prompt",
    "coverage_rank": "rank by coverage",
    "known_coverage": "share of the prompt's known words it holds (typos and unknown words left out)",
    "title_coverage": "share of the prompt's rare words in its title",
    "tags_coverage": "share of the prompt's rare words in its tags",
    "body_coverage": "share of the prompt's rare words in its text",
    "questions_coverage": "share of the prompt's rare words in the questions it answers",
    "has_questions": "it lists the questions it answers",
    "identifier": "holds the identifiers the prompt names (`user_id`, `Foo.bar`)",
    "has_identifier": "the prompt names an identifier this store knows",
    "n_terms": "number of words in the prompt",
    "rarity": "how rare the prompt's words are in this store",
    "unknown": "share of the prompt's words no memory has",
    "anchored": "its related_files name a file in play",
    "asked": "the prompt asks for this kind of memory",
    "general": "a general question, not about the project",
    "general_gap": "a general question it does not fully cover",
    "age": "age of the memory",
    "age_session": "how long before the store's latest session this session was",
    "document": "a section of one of the project's documents",
    "sections": "how many more of the document's sections match",
    "replacement": "found through a retired memory it replaces",
    "cos": "meaning: cosine to the prompt",
    "cos_gap": "meaning: distance behind the prompt's nearest memory",
    "standout": "meaning: how far the nearest memory stands out",
    "is_nearest": "meaning: the prompt's nearest memory",
    "cos_rank": "meaning: rank among the candidates",
    "cos_x_coverage": "meaning and words agree",
    "meaning_only": "found by meaning alone (no word in common)",
    "mo_cos": "found by meaning alone: cosine to the prompt",
    "mo_cos_gap": "found by meaning alone: distance behind the nearest memory",
    "mo_standout": "found by meaning alone: how far the nearest memory stands out",
    "mo_is_nearest": "found by meaning alone: the prompt's nearest memory",
    "mo_cos_rank": "found by meaning alone: rank among the candidates",
    "mo_standout_nearest": "found by meaning alone: the nearest memory, standing out",
    **{f"cat_{c}": f"category {c}" for c in CATEGORY_PRIORITY},
}


def reasons(model: Model, f: dict[str, float], k: int = 3) -> list[tuple[str, float]]:
    """The `k` features that moved this candidate's score most from an average one's:
    (words, push in logit units; positive raises it)."""
    pushes = [(name, w * (f.get(name, 0.0) - model.means.get(name, 0.0))) for name, w in model.weights.items()]
    pushes.sort(key=lambda p: -abs(p[1]))
    return [(DESCRIBE.get(n, n), p) for n, p in pushes[:k] if abs(p) >= 0.05]


def why(model: Model, p: float, f: dict[str, float], kept: bool, floor: float, share: float, best: float,
        cfg: Config) -> str:
    """`explain`'s words for one candidate's decision: its P against the bar it met or missed,
    and the features that moved it most."""
    moved = ", ".join(f"{words} {'+' if push > 0 else '-'}" for words, push in reasons(model, f))
    if kept:
        return f"P(relevant) {p:.2f} >= min_confidence {floor:.2f}" + (f": {moved}" if moved else "")
    bar = (f"under min_confidence {floor:.2f}" if p < floor else
           f"under {share:g} x the best candidate's {best:.2f}" if p < share * best else
           f"beyond max_inject {cfg['retrieval.max_inject']}")
    return f"P(relevant) {p:.2f}, {bar}" + (f": {moved}" if moved else "")
