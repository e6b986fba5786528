"""Every constant and default of memindex, in one place.

The old matcher copied its tokenizer and constants into several scripts and they drifted
apart; here each module imports them from this one.
"""

from __future__ import annotations

import os

# The installed package and its data files (weights, patterns, tables): found from here, never
# from the working directory.
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(PACKAGE_DIR, "data")
SCHEMA_VERSION = "1.0"
# Bump when the index layout or the text it stores changes: every writer rebuilds an index
# whose PRAGMA user_version differs, every reader reports it.
INDEX_VERSION = 15

MEMORY_DIR = (".claude", "memory")
INDEX_FILE = ".index.db"
LOCK_FILE = ".index.lock"
WAIT_FILE = ".sync.wait"  # held by the one background sync waiting for the lock
QUEUE_FILE = ".sync.queue"  # the files the hooks' syncs handed over to that one (index.sync.hand_over)
QUEUE_MAX_BYTES = 262_144  # a longer queue is not read: a full sync instead
WATCH_MARKER = ".watch.pid"
INDEX_MD = "index.md"
CONFIG_FILE = "memory-config.json"
CONFIG_MAX_BYTES = 1_048_576
SPAWN_MARKER = ".sync.spawned"  # the hooks' last background sync start (single flight)
LOG_FILE = ".memindex.log"  # stderr of background syncs
SERVE_MARKER = ".serve.pid"  # the resident worker's pid marker (flock: one worker per root)
SERVE_SPAWN_MARKER = ".serve.spawned"  # the hooks' last worker start (single flight; a future mtime backs off)
# Every file memindex derives in a memory root (gitignore patterns): `memindex init` lists
# them in the root's .gitignore, so none is committed; a committed index is never read anyway
# (memindex/index/provenance.py). A new derived file adds its pattern here.
DERIVED_FILES: tuple[str, ...] = (
    INDEX_FILE, INDEX_FILE + "-*", LOCK_FILE, WAIT_FILE, QUEUE_FILE, WATCH_MARKER, SPAWN_MARKER, LOG_FILE, LOG_FILE + ".1",
    SERVE_MARKER, SERVE_SPAWN_MARKER, INDEX_MD, ".*.tmp", "sessions-local/",  # CAPTURE_GITIGNORE, below
)
GITIGNORE = ".gitignore"
# What memindex creates in a project (memory files, memory-config.json, .gitignore, category
# folders, sessions-local/): these modes whatever the umask (a umask can only take more away).
# A umask of 000 would otherwise make them writable by every user, and sync refuses those
# (store/paths.why_foreign).
FILE_MODE = 0o644
FOLDER_MODE = 0o755

# The hooks (Claude Code runs them with a 10 s timeout of its own).
HOOK_MAX_STDIN = 16 * 1024 * 1024
HOOK_BUDGET_S = 5.0  # past this the hook gives up silently
SPAWN_GUARD_S = 10.0  # at most one background sync started per root in this window
LOG_MAX_BYTES = 1_000_000  # the log is rotated once past this
# No cold start: with no usable index, a store of at most this many memory files is
# indexed in the foreground (about 0.2 s per 1,000 files), within this budget; a larger
# one, or one that overruns, goes on in the background as before.
COLD_SYNC_MAX_FILES = 5_000
COLD_SYNC_BUDGET_S = 3.0
# Freshness (docs/reliability.md, "What is on disk is what is answered"). Git's racy rule: a
# file or folder whose timestamp is not older than a sync's start minus this window may
# change again within the same timestamp tick (1 s on ext2/3, HFS+, many shares; 2 s on
# FAT; Linux's coarse clock lags time.time() too): the sync re-reads it next time.
RACY_WINDOW_NS = 2_000_000_000
# The prompt hook starts a background sync when the last full one is older than this
# (an in-place edit moves no folder mtime), but never more often than its own cost times
# FRESH_SYNC_COST_FACTOR: at 100k memories (a 1 s sync) one sync per 10 s at most.
FRESH_SYNC_MIN_S = 3.0
FRESH_SYNC_COST_FACTOR = 10.0
FUTURE_SLACK_S = 5.0  # a guard or stamp further in the future than this: the clock went back, it has expired
# A memory's created_at / updated_at may be at most this far ahead of this machine's clock
# (another machine's drift). Further ahead: `save` and `validate` refuse it, the index does not
# take it for the memory's date (never "the latest session"), store/stamps.py.
STAMP_FUTURE_SLACK_S = 300.0
# The Stop hook's save prompts (memindex/capture/triage.py, patterns in data/triage.json).
TURN_TAIL_BYTES = 131_072  # the transcript's end read for the latest turn (x4 while it holds no prompt)...
TURN_MAX_BYTES = 4 * 1024 * 1024  # ... up to this
SAVE_PROMPT_TOPICS = 2  # topics named in one save prompt
SAVE_PROMPTS_PER_SESSION = 5  # save prompts in one session, at most
TOPIC_MAX_CHARS = 120  # of a topic quoted in the prompt
TOOL_RESULT_CHARS = 400  # the end of a command's output the triage reads (a build's verdict: never a file's text)...
TOOL_RESULTS_MAX = 20  # ... of the turn's last this many
BEFORE_TURNS = 2  # the assistant's turns before the prompt read for the options a terse pick answers...
BEFORE_CHARS = 4_000  # ... their last this many characters
TURN_TEXT_CHARS = 16_000  # of each prompt or answer the triage reads (its first three quarters and last quarter: a pasted log)
SAVED_TEXT_CHARS = 2_000  # of the save commands the model ran in a turn, kept as the topic of what it saved
TOPIC_KEY_IDS = 8  # identifiers (code spans, paths, names with digits) a topic's key also keeps
ASKED_MAX_BYTES = 65_536  # a session's record of topics asked about, at most
ASKED_TTL_S = 7 * 86_400  # ... removed this long after the session's last ask
ASKED_MAX_TOPICS = 48  # the topics a session's record keeps (the oldest dropped), each key of at most
TOPIC_KEY_WORDS = 24  # ... this many words (a sentence's first), each cut to
TOPIC_KEY_WORD_CHARS = 40  # ... this many ASCII characters (a record also keeps as many words of the user's turn: past
#   ASKED_MAX_BYTES the oldest records go first, asked.save)

# folder -> category, in the order the reference system lists them
FOLDERS: dict[str, str] = {
    "sessions": "session_summary",
    "decisions": "decision",
    "runbooks": "runbook",
    "constraints": "constraint",
    "tech-debt": "tech_debt",
    "preferences": "preference",
    # Session summaries captured from transcripts (memindex.capture), by default: indexed
    # like the others, ignored by git (the folder holds its own `.gitignore` of `*`).
    "sessions-local": "session_summary",
}
CAPTURE_FOLDER = "sessions-local"
CAPTURE_GITIGNORE = CAPTURE_FOLDER + "/"  # the line `memindex init`'s .gitignore lists for it
# category -> the folder `save` writes it to (the first folder of that category)
CATEGORY_FOLDER: dict[str, str] = {}
for _folder, _category in FOLDERS.items():
    CATEGORY_FOLDER.setdefault(_category, _folder)
del _folder, _category
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_FOLDER)

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
TAGS_MAX = 12  # shown per memory
# Bounds on what a memory file may make memindex do (a file is untrusted input).
TAGS_INDEX_MAX = 64  # tags indexed per memory; more are reported and dropped
TAG_MAX_CHARS = 100
# `questions`: phrasings a memory answers, written at save time (docs/memory-format.md)
QUESTIONS_MAX = 8
QUESTION_MAX_CHARS = 200
FILES_INDEX_MAX = 64  # related files indexed per memory (file-anchored recall)
DENSE_K = 20  # the semantic worker's nearest memories the injection policy is told per prompt
# Below this many memories the calibrated policy leaves the choice to the rules. The model
# learnt on stores of 50-130 memories; in a store of a handful most of a prompt's words are in
# no memory (its strongest sign of an unrelated prompt) and FTS5's BM25 gives any word found in
# half the memories or more an IDF of zero (in a store of one or two, every word score is zero).
# Measured on the judged sets cut small (docs/evaluation.md, "Fifth round"): in stores of 3-7
# memories the model's grade-2 recall was 0.02-0.06 under the rules', from 8 on about even.
CALIBRATED_MIN_DOCS = 8
NEAREST_CANDIDATES = 3  # the calibrated policy also scores the prompt's this many nearest memories by meaning
STANDOUT_PEERS = 9  # rule 7 compares the nearest memory's cosine with the mean of the next this many
FILE_ANCHOR_MAX = 3  # a file named by more memories than this anchors none (README.md)
FILES_TAIL_BYTES = 65_536  # files touched in this much of the transcript's end count as recent
JSON_MAX_DEPTH = 32  # memories nest 4 levels; 600 levels crashed recursive code
JSON_MAX_DIGITS = 64  # a 4,301-digit integer made json.loads raise ValueError

# FTS5 tokenizer: chosen by measurement (docs/evaluation.md). Identifiers are not glued by
# tokenchars; the query side turns `user_id` into the phrase "user id" instead, which keeps
# plain-language recall (SciFact) and finds the identifier.
TOKENIZER = "porter unicode61 remove_diacritics 2"


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
DF_FLOOR = 25  # ... and in more than this many memories: a store under 100 keeps its common terms

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

# --- The write path (memindex.write) ---------------------------------------------------
MAX_CHANGES = 50  # entries kept in a memory's `changes` history (the oldest go first)
MAX_REASON = 500  # characters of a change summary or a retire/archive reason
ID_MAX = 80  # characters of a memory id (a slug)
TEMP_MAX_AGE_S = 3600  # gc removes crashed writers' temp files older than this
# Imports (memindex.importers): provenance kinds, and bounds on what a source may make them do.
SOURCE_KINDS = ("adr", "claude-memory", "claude-md", "markdown", "transcript")  # documented; others allowed
IMPORT_MAX_SOURCE_BYTES = 1_048_576  # a larger ADR, note or CLAUDE.md is reported and skipped
IMPORT_MAX_FILES = 10_000  # source files one import reads at most (a folder of 1e6 files is cut there)
IMPORT_BATCH = 50  # new memories saved per transaction (the writer lock is held for one batch)
SYNC_PROGRESS_MIN = 2000  # files to read from which a terminal shows sync's progress bar
EMBED_PROGRESS_MIN = 256  # memories to embed from which a terminal shows a progress bar
IMPORT_PROGRESS_MIN = 20  # memories to write from which a terminal shows a progress bar
# Where ADRs live: adr-tools (`doc/adr`, or the folder named in `.adr-dir`), log4brains and
# MADR 2 (`docs/adr`), MADR 3/4 (`docs/decisions`), and common hand-made layouts.
ADR_FOLDERS = ("docs/adr", "doc/adr", "docs/decisions", "docs/architecture/decisions", "adr", "architecture/decisions", "docs/architecture/adr")
# Candidate selection (`memindex candidate`): the calibration is in memindex/write/candidate.py.
UPDATE_THRESHOLD = 0.70  # match (containment + title overlap, 0..2) from which new text updates a memory
NOOP_THRESHOLD = 0.95  # exact containment from which the memory already says it all
CANDIDATE_POOL = 5  # best BM25 hits looked at
NO_DELETE = frozenset({"decision", "preference", "session_summary"})  # history: updated, never deleted
# The content keys `candidate` shows of a memory, per category.
KEY_FIELDS: dict[str, tuple[str, ...]] = {
    "session_summary": ("goal", "outcome", "in_progress", "next_actions"),
    "decision": ("status", "decision"),
    "runbook": ("trigger", "steps"),
    "constraint": ("kind", "rule", "severity"),
    "tech_debt": ("status", "priority", "description"),
    "preference": ("topic", "value", "strength"),
}
# The order of keys in a file memindex writes (unknown keys follow, as they came).
KEY_ORDER = (
    "schema_version", "category", "id", "title", "created_at", "updated_at", "tags", "questions", "content",
    "related_files", "confidence", "record_status", "changes", "times_updated",
    "retired_at", "retired_reason", "archived_at", "archived_reason",
)
IMMUTABLE = ("created_at", "schema_version", "category", "id")  # an update may not change these
MANAGED = (  # set by memindex only, never by an update
    "updated_at", "times_updated", "changes", "record_status",
    "retired_at", "retired_reason", "archived_at", "archived_reason",
)
LIFECYCLE_FIELDS = ("retired_at", "retired_reason", "archived_at", "archived_reason")

# --- The watcher (memindex.watch); chosen on scripts/bench_watch.py, see docs/benchmarks.md ---
WAIT_SLICE_S = 0.25  # the main loop looks at the stop flag at least this often
CHECK_S = 2.0  # periodic check: root, index, marker, observer
MAX_DELAY_MIN_S = 2.0  # a continuous stream of events still syncs at least this often...
MAX_DELAY_FACTOR = 10.0  # ...or every 10 x debounce, whichever is longer
TARGETED_MAX = 256  # more modified files than this: a full sync (one walk) instead
SYNC_LOCK_TIMEOUT_MAX_S = 2.0  # wait for another writer at most this long, then retry later
RETRY_MAX_S = 30.0  # a failing sync is retried after a doubling delay, at most this long
POLL_CPU_BUDGET = 0.01  # a poll scan may use at most this share of one core...
POLL_WALL_BUDGET = 0.10  # ...and take at most this share of the time (slow network stats)
POLL_DEBOUNCE_S = 0.05  # polled events come all at once, once per scan: no need to wait long
# `search` asks a running watcher instead of stat-ing every file (memindex.index.watched)
WATCH_SOCKET_SUFFIX = ".watch.sock"  # <runtime dir>/<hash of the root>.watch.sock
WATCH_ASK_BUDGET_S = 0.05  # the whole question (connect, sentinel, answer), at least; then the stat pass...
WATCH_ASK_PER_FILE_S = 2e-6  # ...or longer on a large store, where the stat pass it saves costs more
WATCH_ASK_BUDGET_MAX_S = 0.5  # (2-3 us a file on this machine's CPython, 3-6 under load)
WATCH_SYNC_WAIT_S = 1.0  # a reader waits this long for the watcher to sync changes it had pending
# A resident reader's own watch (the MCP server, memindex.watch.resident) vouches for its last
# exact check for at most this long: a hard link made from outside the root, then edited
# there, raises no event here; this bounds how long such a change could go unseen.
RESIDENT_RECHECK_S = 10.0
# File systems where inotify (or the platform's native API) misses changes made elsewhere:
# on the Windows side of WSL, on another machine, on the host of a VM or container.
POLLING_FS: dict[str, str] = {
    "9p": "9p (WSL 2 /mnt drives, VM shares)",
    "drvfs": "drvfs (WSL /mnt drives)",
    "cifs": "CIFS/SMB network share",
    "smb3": "SMB network share",
    "smbfs": "SMB network share",
    "nfs": "NFS network share",
    "nfs4": "NFS network share",
    "afs": "AFS network file system",
    "ceph": "CephFS network file system",
    "glusterfs": "GlusterFS network file system",
    "fuse.glusterfs": "GlusterFS network file system",
    "lustre": "Lustre network file system",
    "vboxsf": "VirtualBox shared folder",
    "vmhgfs": "VMware shared folder",
    "fuse.vmhgfs-fuse": "VMware shared folder",
    "fuse.sshfs": "sshfs remote folder",
    "sshfs": "sshfs remote folder",
    "fuse.grpcfuse": "Docker Desktop file sharing",
    "fuse.osxfs": "Docker Desktop file sharing",
    "fakeowner": "Docker Desktop file sharing",
    "prl_fs": "Parallels shared folder",
}

# --- Session capture (memindex.capture; docs/capture.md) ----------------------------------
SUMMARY_MAX_BYTES = 8_192  # a captured session summary, as its file (the cut order: capture/summary.py)
CAPTURE_TRANSCRIPT_MAX_BYTES = 256 * 1024 * 1024  # a transcript is read up to this many bytes
CAPTURE_LINE_MAX_BYTES = 8 * 1024 * 1024  # ... one line at most this long (a longer one, a pasted image or a hostile line, is skipped)
CAPTURE_KEPT_CHARS = 4_000_000  # of prompts and assistant texts kept while reading (past it the oldest go: capture/parse.py)
CAPTURE_SOURCE_KIND = "transcript"  # `source.kind` of what capture and `import transcripts` write
# The tag of every captured summary. The prompt hook leaves these out of its word matches
# (they restate the user's own earlier prompts, so a repeated question matches them best
# while they hold little of the answer: tests/e2e); "where did we leave off?", `search`
# and SessionStart's recent list find them.
CAPTURE_TAG = "captured-session"

# --- the project's documents, indexed in place (memindex/store/documents.py) ---
MARKDOWN_MAX_CHARS = 1_000_000  # a longer document is indexed up to here, and says so
MARKDOWN_MAX_SECTIONS = 2_000  # headings past this many join the last section
FRONT_MATTER_MAX_CHARS = 16_384  # a larger front matter is not read (its keys are few)
# what a registered folder or file holds: ADRs, runbooks, a docs folder (its pages' category by
# a stated rule: memindex/store/classify.py), CLAUDE.md / AGENTS.md, Claude Code's auto memory
# notes, or pages of one category named as such (`memindex import markdown --category C`)
DOC_KINDS = ("adr", "runbook", "docs", "claude-md", "notes", *(c for c in CATEGORIES if c != "runbook"))
DOC_MAX_BYTES = 1_048_576  # a larger document is named and not indexed
DOC_MAX_FILES = 20_000  # documents registered in all, at most
DOC_MAX_DEPTH = 8  # folder levels read below a registered folder
DOC_SKIP_DIRS = frozenset({"node_modules", "vendor", "third_party", "build", "dist", "target", "site-packages", "__pycache__"})
DOC_UNIT_WORDS = 400  # a section longer than this is indexed as passages of about this size
DOC_FETCH_FACTOR = 4  # a search over documents ranks this many times the rows (sections collapse into documents)
DOC_SUFFIXES = (".md", ".markdown", ".mdx")  # the files a registered folder contributes
SECTION_DECAY = 0.5  # a document's n-th best matching section adds this power n of its score (retrieval.hits.collapse)
FORMS_WEIGHT = 1.0  # the `forms` column (identifiers in their other spelling) weighs as the body does
DOC_POOL_MIN = 100  # documents to read from which sync parses them in a pool of processes
DOC_POOL_MAX = 4  # ... of at most this many
