"""Every constant and default of memindex, in one place.

The old matcher copied its tokenizer and constants into several scripts and they drifted
apart; here each module imports them from this one.
"""

from __future__ import annotations

SCHEMA_VERSION = "1.0"
# Bump when the index layout or the text it stores changes: every writer rebuilds an index
# whose PRAGMA user_version differs, every reader reports it.
INDEX_VERSION = 9

MEMORY_DIR = (".claude", "memory")
INDEX_FILE = ".index.db"
LOCK_FILE = ".index.lock"
WATCH_MARKER = ".watch.pid"
INDEX_MD = "index.md"
CONFIG_FILE = "memory-config.json"

# folder -> category, in the order the reference system lists them
FOLDERS: dict[str, str] = {
    "sessions": "session_summary",
    "decisions": "decision",
    "runbooks": "runbook",
    "constraints": "constraint",
    "tech-debt": "tech_debt",
    "preferences": "preference",
}
CATEGORY_FOLDER: dict[str, str] = {c: f for f, c in FOLDERS.items()}
CATEGORIES: tuple[str, ...] = tuple(FOLDERS.values())

# Ties only: lower wins.
CATEGORY_PRIORITY: dict[str, int] = {
    "decision": 1,
    "constraint": 2,
    "preference": 3,
    "runbook": 4,
    "tech_debt": 5,
    "session_summary": 6,
}
RECORD_STATUSES = ("active", "retired", "archived")

TITLE_MAX = 120
TAGS_MAX = 12

# FTS5 tokenizer: chosen by measurement (docs/evaluation.md). Identifiers are not glued by
# tokenchars; the query side turns `user_id` into the phrase "user id" instead, which keeps
# plain-language recall (SciFact) and finds the identifier.
TOKENIZER = "porter unicode61 remove_diacritics 2"

# Exit codes of the CLI (documented in the README).
EXIT_OK = 0
EXIT_PROBLEMS = 1  # validate found invalid files; a command failed on bad input
EXIT_USAGE = 2
EXIT_LOCKED = 3  # the writer lock could not be taken in time
EXIT_NO_INDEX = 4  # a reader found no usable index
EXIT_NO_ROOT = 5  # no memory root found
EXIT_CONFLICT = 6  # update --expect-hash: the file changed underneath

# Defaults of memory-config.json. Each leaf is (default, checker); config.py validates a
# user's file against this tree and falls back to the default, with one warning, per bad key.
DEFAULT_CATEGORY_DESCRIPTIONS = {
    # The old matcher's category descriptions (used by the title_tags strategy only).
    "session_summary": "High-level summary of work done in a coding session, including goals, outcomes, and next steps",
    "decision": "Architectural and technical choices with rationale -- why X was chosen over Y",
    "runbook": "Step-by-step procedures for diagnosing and fixing specific errors or issues",
    "constraint": "External limitations, platform restrictions and hard rules the project must respect",
    "tech_debt": "Deferred work, known shortcuts and cleanup items with their priority",
    "preference": "Conventions and personal preferences for code style, tools and workflow",
}

# Query construction (chosen on the evaluation, docs/evaluation.md).
PREFIX_MIN_LEN = 4  # plain words of at least this length also match as a prefix: auth -> authentication
PREFIX_MODE = "prefix"  # "none" | "prefix" (w*) | "both" ("w" OR "w"*)
MAX_QUERY_TERMS = 32  # longest prompts keep their rarest terms
MAX_POSTINGS = 4_000  # rows the OR query may touch; the commonest terms go first past it
COVERAGE_TERMS = 6  # coverage is measured against this many of the prompt's rarest terms
KIND_WEIGHT = 1.0  # bm25 weight of the category-words column
# On-demand search: memories tagged like the best matches gain score (score regularization,
# the cluster hypothesis). Chosen on a plateau of the evaluation (docs/evaluation.md).
RELATED_ANCHORS = 3  # how many of the top hits lend their tags
RELATED_ANCHOR_FLOOR = 0.5  # ... each scoring at least this share of the best
RELATED_WEIGHT = 0.5  # the boost, as a share of the best score, for a memory with all of an anchor's tags
RELATED_DEPTH = 3  # word matches considered: this many times the result limit
DF_SAMPLE = 500  # document frequencies are exact below this, estimated above it
MAX_DF_RATIO = 0.25  # terms in more than this share of memories are left out (low IDF, many postings)

# Words that name each category, indexed in a column of their own so that "the open tech
# debt on the frontend" or "what did we decide" lean towards the right kind of memory.
CATEGORY_WORDS: dict[str, str] = {
    "session_summary": "session summary",
    "decision": "decision decided",
    "runbook": "runbook procedure",
    "constraint": "constraint limitation",
    "tech_debt": "tech debt",
    "preference": "preference convention",
}
