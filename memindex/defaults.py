"""Every constant of memindex that is not a setting, in one place, grouped by what it bounds.

Settings (what memory-config.json may change) are the table in settings.py; data (weights,
patterns) are files in memindex/data. Each module imports what it needs from here, so no
constant is copied into a second place.
"""

from __future__ import annotations

import os

# --- The package, a memory root and the files memindex derives in it -------------------------
PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(PACKAGE_DIR, "data")  # found from here, never from the working directory
SCHEMA_VERSION = "1.0"
INDEX_VERSION = 16  # bump when the index's layout or stored text changes: every writer rebuilds
MEMORY_DIR = (".claude", "memory")
INDEX_FILE = ".index.db"
LOCK_FILE = ".index.lock"
WAIT_FILE = ".sync.wait"  # held by the one background sync waiting for the lock
QUEUE_FILE = ".sync.queue"  # the files the hooks' syncs handed over to that one (index.sync.hand_over)
QUEUE_MAX_BYTES = 262_144  # a longer queue is not read: a full sync instead
QUEUE_LOCK_S = 2.0  # a holder keeps the queue's lock for one read or one append
WATCH_MARKER = ".watch.pid"
INDEX_MD = "index.md"
CONFIG_FILE = "memory-config.json"
CONFIG_MAX_BYTES = 1_048_576
SPAWN_MARKER = ".sync.spawned"  # the hooks' last background sync start (single flight)
LOG_FILE = ".memindex.log"  # stderr of background syncs
SERVE_MARKER = ".serve.pid"  # the resident worker's pid marker (flock: one worker per root)
SERVE_SPAWN_MARKER = ".serve.spawned"  # the hooks' last worker start (single flight; a future mtime backs off)
# Every file memindex derives in a root, as gitignore patterns: `memindex init` lists them in
# the root's .gitignore. A new derived file adds its pattern here.
DERIVED_FILES: tuple[str, ...] = (
    INDEX_FILE, INDEX_FILE + "-*", LOCK_FILE, WAIT_FILE, QUEUE_FILE, WATCH_MARKER, SPAWN_MARKER, LOG_FILE, LOG_FILE + ".1",
    SERVE_MARKER, SERVE_SPAWN_MARKER, INDEX_MD, ".*.tmp", "sessions-local/",  # CAPTURE_GITIGNORE, below
)
GITIGNORE = ".gitignore"
# What memindex creates in a project gets these modes whatever the umask: sync refuses files
# other users may write (store/paths.why_foreign).
FILE_MODE = 0o644
FOLDER_MODE = 0o755
MAX_PID_BYTES = 64  # of a pid marker
PROVENANCE_MAX_BYTES = 8192  # of one index's provenance record
PROVENANCE_PRUNE_S = 86_400.0  # a record whose index is gone is removed after this long
TRUST_MAX_BYTES = 4 * 1024 * 1024  # of the user's trust record

# --- The hooks (Claude Code gives them 10 s) ----------------------------------------------------
HOOK_MAX_STDIN = 16 * 1024 * 1024
HOOK_BUDGET_S = 5.0  # past this the hook gives up silently
SPAWN_GUARD_S = 10.0  # at most one background sync started per root in this window
LOG_MAX_BYTES = 1_000_000  # the log is rotated once past this
NICE = 10  # background jobs run at this niceness
# No cold start: with no usable index, a store of at most this many files is indexed in the
# foreground within this budget; a larger one, or an overrun, goes on in the background.
COLD_SYNC_MAX_FILES = 5_000
COLD_SYNC_BUDGET_S = 3.0
# Git's racy rule: a file not older than a sync's start minus this may change again within
# the same timestamp tick (2 s on FAT), so the sync reads it again next time.
RACY_WINDOW_NS = 2_000_000_000
# The prompt hook starts a background sync when the last full one is older than this (an
# in-place edit moves no folder mtime), but not more often than the sync's own cost times this.
FRESH_SYNC_MIN_S = 3.0
FRESH_SYNC_COST_FACTOR = 10.0
FUTURE_SLACK_S = 5.0  # a guard or stamp further in the future than this: the clock went back, it has expired
# A memory's dates may be this far ahead of this machine's clock (another machine's drift);
# further, `save` refuses them and the index does not take them for the memory's date.
STAMP_FUTURE_SLACK_S = 300.0
BLOCK_LIMIT = 8000  # characters of the hook's block; Claude Code caps hook output at 10,000
# The session memo (runtime.py): what the prompt hook left for the PreToolUse hook.
MEMO_MAX = 65_536  # bytes of one memo file
MEMO_TTL_S = 2 * 86_400  # removed this long after the session's last prompt
MEMO_PROMPT_MAX = 8_000  # characters of the prompt kept (coverage reads its rarest terms)
SUN_PATH_MAX = 100  # a socket path holds 108 bytes on Linux, 104 on macOS, with its NUL

# --- The Stop hook's save prompts (capture/triage.py, patterns in data/triage.json) -----------
TURN_TAIL_BYTES = 131_072  # the transcript's end read for the latest turn (x4 while it holds no prompt)...
TURN_MAX_BYTES = 4 * 1024 * 1024  # ... up to this
SAVE_PROMPT_TOPICS = 2  # topics named in one save prompt
SAVE_PROMPTS_PER_SESSION = 5  # save prompts in one session, at most
TOPIC_MAX_CHARS = 120  # of a topic quoted in the prompt
TOOL_RESULT_CHARS = 400  # the end of a command's output the triage reads (a build's verdict, never a file)...
TOOL_RESULTS_MAX = 20  # ... of the turn's last this many
BEFORE_TURNS = 2  # the assistant's turns before the prompt read for the options a terse pick answers...
BEFORE_CHARS = 4_000  # ... their last this many characters
TURN_TEXT_CHARS = 16_000  # of each prompt or answer read (its first three quarters and last quarter: a pasted log)
SAVED_TEXT_CHARS = 2_000  # of the save commands the model ran in a turn, kept as the topic of what it saved
TOPIC_KEY_IDS = 8  # identifiers (code spans, paths, names with digits) a topic's key also keeps
ASKED_MAX_BYTES = 65_536  # a session's record of topics asked about, at most (the oldest go first)
ASKED_TTL_S = 7 * 86_400  # ... removed this long after the session's last ask
ASKED_MAX_TOPICS = 48  # the topics a record keeps, each key of at most...
TOPIC_KEY_WORDS = 24  # ... this many words, each cut to...
TOPIC_KEY_WORD_CHARS = 40  # ... this many ASCII characters
TALLY_TAIL_CHARS = 20_000  # of a test run's output read for its counts, from its end
TAG_ATTRS_MAX = 512  # characters of attributes in an opening tag of Claude Code's own (`<channel source="...">`)

# --- Memories: categories and bounds on what a file may make memindex do ----------------------
# folder -> category, in the order the reference system lists them
FOLDERS: dict[str, str] = {
    "sessions": "session_summary",
    "decisions": "decision",
    "runbooks": "runbook",
    "constraints": "constraint",
    "tech-debt": "tech_debt",
    "preferences": "preference",
    "sessions-local": "session_summary",  # captured summaries, by default: indexed, ignored by git
}
CAPTURE_FOLDER = "sessions-local"
CAPTURE_GITIGNORE = CAPTURE_FOLDER + "/"  # the line `memindex init`'s .gitignore lists for it
# category -> the folder `save` writes it to (the first folder of that category)
CATEGORY_FOLDER: dict[str, str] = {}
for _folder, _category in FOLDERS.items():
    CATEGORY_FOLDER.setdefault(_category, _folder)
del _folder, _category
CATEGORIES: tuple[str, ...] = tuple(CATEGORY_FOLDER)
CATEGORY_PRIORITY: dict[str, int] = {  # ties only: lower wins
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
TAGS_INDEX_MAX = 64  # tags indexed per memory; more are reported and dropped
TAG_MAX_CHARS = 100
QUESTIONS_MAX = 8  # `questions`: phrasings a memory answers, written at save time
QUESTION_MAX_CHARS = 200
FILES_INDEX_MAX = 64  # related files indexed per memory (file-anchored recall)
JSON_MAX_DEPTH = 32  # memories nest 4 levels; recursive code must not meet 600
JSON_MAX_DIGITS = 64  # json.loads refuses integers past 4,300 digits with an error of its own
MESSAGE_MAX = 300  # characters of a value quoted in a validation error
MAX_FORMS = 2000  # identifier forms indexed for one text (a generated file of identifiers stays bounded)

# --- The injection policy (policy/) -----------------------------------------------------------
DENSE_K = 20  # the semantic worker's nearest memories the policy is told per prompt
# Below this many memories the calibrated policy leaves the choice to the rules: the model
# learnt on larger stores, and in a tiny one BM25's IDF is zero for most words
# (docs/evaluation.md, "Fifth round").
CALIBRATED_MIN_DOCS = 8
NEAREST_CANDIDATES = 3  # the calibrated policy also scores the prompt's this many nearest memories by meaning
STANDOUT_PEERS = 9  # rule 7 compares the nearest memory's cosine with the mean of the next this many
FILE_ANCHOR_MAX = 3  # a file named by more memories than this anchors none
FILES_TAIL_BYTES = 65_536  # files touched in this much of the transcript's end count as recent
TRANSCRIPT_MAX_WINDOW = 4 * 1024 * 1024  # the transcript's end read for its latest turns, at most

# --- Search: the tokenizer and query construction (docs/evaluation.md) ------------------------
# Identifiers are not glued by tokenchars: the query turns `user_id` into the phrase "user
# id", which keeps plain-language recall and finds the identifier.
TOKENIZER = "porter unicode61 remove_diacritics 2"
PREFIX_MIN_LEN = 4  # plain words of at least this length also match as a prefix: auth -> authentication
PREFIX_MODE = "prefix"  # "none" | "prefix" (w*) | "both" ("w" OR "w"*)
MAX_QUERY_TERMS = 32  # longest prompts keep their rarest terms
MAX_POSTINGS = 4_000  # rows the OR query may touch; the commonest terms go first past it
COVERAGE_TERMS = 6  # coverage is measured against this many of the prompt's rarest terms
KIND_WEIGHT = 1.0  # bm25 weight of the category-words column
# On-demand search: memories tagged like the best matches gain score (score regularization,
# the cluster hypothesis).
RELATED_ANCHORS = 3  # how many of the top hits lend their tags
RELATED_ANCHOR_FLOOR = 0.5  # ... each scoring at least this share of the best
RELATED_WEIGHT = 0.5  # the boost, as a share of the best score, for a memory with all of an anchor's tags
RELATED_DEPTH = 3  # word matches considered: this many times the result limit
DF_SAMPLE = 500  # document frequencies are exact below this, estimated above it
MAX_DF_RATIO = 0.25  # terms in more than this share of memories are left out (low IDF, many postings)
DF_FLOOR = 25  # ... and in more than this many memories: a store under 100 keeps its common terms
# Words that name each category, indexed in a column of their own so that "the open tech
# debt on the frontend" leans towards the right kind of memory.
CATEGORY_WORDS: dict[str, str] = {
    "session_summary": "session summary",
    "decision": "decision decided",
    "runbook": "runbook procedure",
    "constraint": "constraint limitation",
    "tech_debt": "tech debt",
    "preference": "preference convention",
}
HEALTH_SHOWN = 3  # problem paths named per kind in status's one-line summary
HEALTH_KEPT = 20  # ... kept per kind in the index (the counts are exact)
MMAP_BYTES = 256 * 1024 * 1024
CHECKPOINT_BYTES = 4 * 1024 * 1024  # a writer checkpoints a WAL past this, as SQLite's 1000 pages

# --- The write path (write/) ------------------------------------------------------------------
MAX_CHANGES = 50  # entries kept in a memory's `changes` history (the oldest go first)
MAX_REASON = 500  # characters of a change summary or a retire/archive reason
ID_MAX = 80  # characters of a memory id (a slug)
TEMP_MAX_AGE_S = 3600  # gc removes crashed writers' temp files older than this
# `memindex candidate` (the figures behind the thresholds: docs/evaluation.md, "Candidate selection")
UPDATE_THRESHOLD = 0.70  # match (containment + title overlap, 0..2) from which new text updates a memory
NOOP_THRESHOLD = 0.95  # exact containment from which the memory already says it all
CANDIDATE_POOL = 5  # best BM25 hits looked at
NO_DELETE = frozenset({"decision", "preference", "session_summary"})  # history: updated, never deleted
KEY_FIELDS: dict[str, tuple[str, ...]] = {  # the content keys `candidate` shows of a memory
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

# --- Imports (importers/) ---------------------------------------------------------------------
SOURCE_KINDS = ("adr", "claude-memory", "claude-md", "markdown", "transcript")  # documented; others allowed
IMPORT_MAX_SOURCE_BYTES = 1_048_576  # a larger ADR, note or CLAUDE.md is reported and skipped
IMPORT_MAX_FILES = 10_000  # source files one import reads at most
IMPORT_BATCH = 50  # new memories saved per transaction (the writer lock is held for one batch)
SYNC_PROGRESS_MIN = 2000  # files to read from which a terminal shows sync's progress bar
EMBED_PROGRESS_MIN = 256  # memories to embed from which a terminal shows a progress bar
IMPORT_PROGRESS_MIN = 20  # memories to write from which a terminal shows a progress bar
# `memindex init` and `import` looking for a project's ADRs and runbooks (importers/discover.py)
FIND_MAX_DIRS = 20_000
FIND_MAX_DEPTH = 6
FIND_HEAD_BYTES = 4096  # of a file read to tell its shape
FIND_SAMPLE = 200  # files of a candidate folder looked at for an ADR shape
FOLDER_MAX_ENTRIES = 10_000  # names of an ADR's folder looked at for its references by number
AUTO_MEMORY_KEY_MAX = 200  # characters of a project key in Claude Code's auto memory folder name
SMALL_FILE_MAX = 65_536  # a .git file, commondir or gitdir record is one line

# --- The watcher (watch/; chosen on scripts/bench_watch.py, docs/benchmarks.md) -------------
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
# `search` asks a running watcher instead of stat-ing every file (index/watched.py)
WATCH_SOCKET_SUFFIX = ".watch.sock"  # <runtime dir>/<hash of the root>.watch.sock
WATCH_ASK_BUDGET_S = 0.05  # the whole question, at least; then the stat pass...
WATCH_ASK_PER_FILE_S = 2e-6  # ...or longer on a large store, where the stat pass it saves costs more...
WATCH_ASK_BUDGET_MAX_S = 0.5  # ...up to this
WATCH_SYNC_WAIT_S = 1.0  # a reader waits this long for the watcher to sync changes it had pending
WATCH_REQUEST_MAX = 4096  # bytes of one question to the watcher
WATCH_REPLY_MAX = 4096  # ... and of its answer
WATCH_CONN_DEADLINE_S = 0.5  # a connection that has not asked within this is closed
WATCH_BACKLOG = 16
WATCH_TICK_S = 0.25  # after a failed accept (too many open files), wait this long
# A resident reader's own watch (the MCP server) vouches for its last exact check this long at
# most: a hard link edited from outside the root raises no event here.
RESIDENT_RECHECK_S = 10.0
# File systems where inotify (or the platform's native API) misses changes made elsewhere:
# the Windows side of WSL, another machine, the host of a VM or container.
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

# --- The semantic channel: the resident worker and its client (semantic/) ---------------------
WORKER_POOL = 2  # threads answering connections
WORKER_BACKLOG = 8  # connections waiting for a thread; more are closed at once
WORKER_CONN_DEADLINE_S = 5.0  # a connection gets this long in all
WORKER_TICK_S = 0.5  # the main loop wakes this often (stop flag, idle, periodic checks)
WORKER_PARENT_POLL_S = 2.0  # how often the parents, the socket and the marker are looked at
WORKER_CACHE = 32  # query vectors kept (a prompt seen by the hook and then by `explain`)
WORKER_REQUEST_MAX = 65_536  # bytes of one request line, newline included
WORKER_REPLY_MAX = 4 * 1024 * 1024
WORKER_TEXT_MAX = 8_000  # characters of text sent (the model reads 256 tokens at most)
WORKER_K_MAX = 1_000  # dense top-k entries one query may ask for
WORKER_ROWIDS_MAX = 2_000  # rowids one query may ask the cosines of
FAIL_BACKOFF_S = 300.0  # a worker that cannot start, or a model download that failed, is not retried for this long
PARENTS_MAX = 64  # client processes a worker keeps track of
RRF_K = 60  # reciprocal rank fusion's constant
FUSION_DEPTH = 50  # memories each channel contributes (at least the result limit)
EMBED_TEXT_CHARS = 2_000  # characters embedded per memory: the model reads 256 tokens at most
NORM_TOLERANCE = 1e-3  # the models write L2-normalised rows (or zeros): longer ones are damage
ATTN_BUDGET = 1 << 23  # floats in one batch's attention scores (32 MiB): bounds peak memory
# The development stand-in embedder (memindex_dev/standin.py, not in the wheel) for tests:
# loaded only by a process whose environment sets STANDIN_ENV to "1", whatever a config says.
STANDIN = "builtin:hashing"
STANDIN_ENV = "MEMINDEX_DEV_STANDIN"

# --- Session capture (capture/; docs/capture.md) ----------------------------------------------
SUMMARY_MAX_BYTES = 8_192  # a captured session summary, as its file (the cut order: capture/summary.py)
CAPTURE_TRANSCRIPT_MAX_BYTES = 256 * 1024 * 1024  # a transcript is read up to this many bytes...
CAPTURE_LINE_MAX_BYTES = 8 * 1024 * 1024  # ... one line at most this long (longer: a pasted image or a hostile line, skipped)
CAPTURE_SKIP_CHUNK = 1024 * 1024  # an over-long line is read past in chunks of this
CAPTURE_KEPT_CHARS = 4_000_000  # of prompts and assistant texts kept while reading (past it the oldest go)
CAPTURE_MAX_ITEMS = 2_000  # of each list kept while reading (the summary keeps far fewer)
CAPTURE_PENDING_MAX = 10_000  # tool calls waiting for their result
CAPTURE_TEXT_KEEP = 32_000  # characters of one prompt or text kept while reading...
CAPTURE_COMMAND_KEEP = 2_000  # ... of one command
REDACT_MARGIN = 1_024  # characters past a cut that its redaction reads (a credential across the cut goes whole)
SESSION_ID_MAX = 200  # characters of a session id
CAPTURE_LOCK_TRIES_S = 1.0  # a hook probes the lock for microseconds: retry this long before coalescing
CAPTURE_MARKER_TTL_S = 7 * 86_400  # markers of sessions not captured for this long are removed
# What a summary shows of each part, in characters (capture/summary.py cuts in this order)
SUMMARY_GOAL_CHARS = 1_500
SUMMARY_REQUEST_CHARS = 800
SUMMARY_NOTE_CHARS = 600
SUMMARY_CLOSING_CHARS = 3_000
SUMMARY_COMMAND_CHARS = 200
SUMMARY_ITEM_CHARS = 300
SUMMARY_FILES_KEPT = 20  # files past these are cut before test runs
SUMMARY_TAGS_FROM_FILES = 3
CAPTURE_SOURCE_KIND = "transcript"  # `source.kind` of what capture and `import transcripts` write
# The tag of every captured summary. The prompt hook leaves these out of its word matches:
# they restate the user's own earlier prompts, so a repeated question matches them best while
# they hold little of the answer. "Where did we leave off?", `search` and SessionStart find them.
CAPTURE_TAG = "captured-session"

# --- The project's documents, indexed in place (store/documents.py) ---------------------------
MARKDOWN_MAX_CHARS = 1_000_000  # a longer document is indexed up to here, and says so
MARKDOWN_MAX_SECTIONS = 2_000  # headings past this many join the last section
FRONT_MATTER_MAX_CHARS = 16_384  # a larger front matter is not read (its keys are few)
# What a registered folder or file holds: ADRs, runbooks, a docs folder (its pages' category
# by a stated rule, store/classify.py), CLAUDE.md / AGENTS.md, Claude Code's auto memory
# notes, or pages of one named category (`memindex import markdown --category C`).
DOC_KINDS = ("adr", "runbook", "docs", "claude-md", "notes", *(c for c in CATEGORIES if c != "runbook"))
DOC_MAX_BYTES = 1_048_576  # a larger document is named and not indexed
DOC_MAX_FILES = 20_000  # documents registered in all, at most
DOC_MAX_DEPTH = 8  # folder levels read below a registered folder
DOC_SKIP_DIRS = frozenset({"node_modules", "vendor", "third_party", "build", "dist", "target", "site-packages", "__pycache__"})
DOC_UNIT_WORDS = 400  # a section longer than this is indexed as passages of about this size
DOC_FETCH_FACTOR = 4  # a search over documents ranks this many times the rows (sections collapse into documents)
DOC_SUFFIXES = (".md", ".markdown", ".mdx")  # the files a registered folder contributes
SECTION_DECAY = 0.5  # a document's n-th best matching section adds this power n of its score
FORMS_WEIGHT = 1.0  # the `forms` column (identifiers in their other spelling) weighs as the body does
DOC_POOL_MIN = 100  # documents to read from which sync parses them in a pool of processes...
DOC_POOL_MAX = 4  # ... of at most this many

# --- use, measured (memindex/usage.py): per user, outside the repository ---
USAGE_SESSION_MAX_BYTES = 262_144  # one session's use log stops growing here (about 250 prompts)
USAGE_MAX_SESSIONS = 400  # session logs kept per store, newest first...
USAGE_TTL_DAYS = 180  # ... and none untouched for longer than this
USAGE_READ_MAX_BYTES = 33_554_432  # a reader reads at most this much of them, newest first

# --- the local web page (`memindex ui`, memindex/ui; memindex/catalog underneath) ---
UI_PAGE_ROWS = 50  # memories listed per page
UI_SEARCH_LIMIT = 50  # hits a search on the page lists (the CLI's engine, `memindex search`)
UI_GIT_LOG_COMMITS = 20  # commits of a memory's file listed on its page ...
UI_GIT_BUDGET_S = 2.0  # ... within this many seconds (git is asked with review/git.py's hardening)
UI_SESSIONS = 100  # sessions of the use log listed
UI_TOP_TAGS = 40  # tags offered as filters
UI_CHART_MONTHS = 36  # months drawn in the pictures
UI_CHART_MEMORIES = 15  # memories drawn in "injections and opens"
UI_FILE_SHOWN_BYTES = 262_144  # of a document's file shown on its page
UI_DOCTOR_TTL_S = 60.0  # `memindex doctor`'s findings are shown from a run this recent (it runs in the background)
