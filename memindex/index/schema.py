"""The index's schema: every table and index, in one statement list (index/db.py creates them)."""

from __future__ import annotations

from ..defaults import CAPTURE_FOLDER, TOKENIZER

# What a row captured on this machine is (sessions-local/, which git never fills): the partial
# index's condition, which its query repeats word for word (SQLite then knows it applies).
CAPTURED_HERE = ("category = 'session_summary' AND record_status = 'active'"
                 f" AND substr(path, 1, {len(CAPTURE_FOLDER) + 1}) = '{CAPTURE_FOLDER}/'")

SCHEMA = f"""
CREATE TABLE documents(
    rowid INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    id TEXT NOT NULL,
    category TEXT NOT NULL,
    title TEXT NOT NULL,
    tags TEXT NOT NULL,
    tag_key TEXT NOT NULL,
    record_status TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    related_files TEXT NOT NULL,
    confidence REAL,
    problems TEXT,
    index_line TEXT,
    successors TEXT
);
CREATE INDEX documents_category ON documents(category, record_status, updated_at);
-- The sessions captured on this machine, newest first ("where did we leave off?": reads.latest_captured)
CREATE INDEX documents_captured ON documents(updated_at) WHERE {CAPTURED_HERE};
CREATE INDEX documents_id ON documents(id);
CREATE TABLE invalid(
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    error TEXT NOT NULL
);
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tag_index(tag TEXT NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (tag, doc)) WITHOUT ROWID;
CREATE INDEX tag_index_doc ON tag_index(doc);
CREATE TABLE file_index(name TEXT NOT NULL, file TEXT NOT NULL, doc INTEGER NOT NULL, PRIMARY KEY (name, file, doc)) WITHOUT ROWID;
CREATE INDEX file_index_doc ON file_index(doc);
-- `forms`: the identifiers of the other columns in their other spelling (text/identifiers.py),
-- a column of its own so that they leave the others' lengths (and BM25's normalisation) alone.
CREATE VIRTUAL TABLE fts USING fts5(title, tags, body, kind, questions, forms, tokenize='{TOKENIZER}');
-- Text without spaces (CJK) as bigrams, for the memories that have some (memindex/text/cjk.py).
CREATE VIRTUAL TABLE fts_cjk USING fts5(title, tags, body, questions, tokenize='{TOKENIZER}');
CREATE TABLE vectors(doc INTEGER PRIMARY KEY, vec BLOB NOT NULL);
-- The project's documents indexed in place (memindex/store/documents.py): one row per file
-- registered, its stat as last read, and why it is not indexed (NULL when it is: its
-- sections are rows of `documents` whose path is `@<file>#<anchor>`).
CREATE TABLE sources(
    path TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    title TEXT,
    error TEXT,
    supersedes TEXT
);
-- The review's findings (memindex/review): what needs a human or the model, per memory.
CREATE TABLE review(doc INTEGER NOT NULL, path TEXT NOT NULL, mtime_ns INTEGER NOT NULL, kind TEXT NOT NULL, key TEXT PRIMARY KEY,
    basis TEXT, reason TEXT, evidence TEXT, suggested TEXT, other_path TEXT, note TEXT, dead INTEGER DEFAULT 0) WITHOUT ROWID;
"""
TABLES = ("fts_vocab", "fts", "fts_cjk", "documents", "invalid", "meta", "tag_index", "file_index", "vectors", "sources", "review")
