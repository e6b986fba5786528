"""The SQLite file itself: opening for readers and writers, creating (index/schema.py), repair, meta."""

from __future__ import annotations

import os

from ..defaults import CHECKPOINT_BYTES, INDEX_FILE, INDEX_VERSION, MMAP_BYTES, PACKAGE_DIR
from .schema import SCHEMA, TABLES
from . import provenance
from ..store import rootfs
from ..errors import IndexTooNew, IndexUnavailable, UnsafeFile
from ..lean import loads, sqlite3


def is_corruption(exc: BaseException) -> bool:
    """Is this SQLite error a damaged file (as opposed to a busy lock or a full disk)?"""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def index_path(root: str | os.PathLike[str]) -> str:
    return os.path.join(root, INDEX_FILE)


def _uri(path: str) -> str:
    """A read-only SQLite URI for a file path (percent-encoding what URIs reserve)."""
    quoted = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{quoted}?mode=ro"


# Writers map the index (a sync reads much of a large one without copying); readers read
# the few pages a prompt or a search needs, where mapping costs more (docs/benchmarks.md).


def _pragmas(conn: sqlite3.Connection, busy_ms: int, mmap: bool = False) -> None:
    conn.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
    if mmap:
        conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")


def open_reader(root: str | os.PathLike[str], busy_ms: int = 2000) -> sqlite3.Connection:
    """A read-only connection to a valid index, or IndexUnavailable with the reason.

    A WAL reader needs the `-shm` file; where it cannot be made (a read-only folder, a full
    disk) the index is opened immutable: the last checkpointed state, still consistent."""
    path = index_path(root)
    _check_files(path)
    if not os.path.exists(path):
        raise IndexUnavailable(f"no index at {path} (run `memindex sync`)")
    salt = _wal_salt(path)  # before the record: a writer records a new salt right after it starts a WAL
    ids, recorded_salt = provenance.recorded(root)
    # A WAL this user's writer did not start is never applied (nor deleted): the file alone is read.
    conn = _open_any(path, busy_ms, immutable=not provenance.wal_accepted(salt, recorded_salt))
    try:
        ours = _ours(conn, root, ids)
    except sqlite3.Error as exc:
        conn.close()
        raise IndexUnavailable(f"cannot read the index {path}: {exc}") from None
    if not ours:
        conn.close()
        raise IndexUnavailable(f"{path} {NOT_OURS}: the next `memindex sync` rebuilds it from the memory files")
    return conn


# Why an index is not read: it holds no build id this user's memindex recorded for this root.
NOT_OURS = "was not built by this user's memindex in this folder (a committed or copied file, a moved project, or an older memindex)"


def _open_any(path: str, busy_ms: int, immutable: bool = False) -> sqlite3.Connection:
    try:
        return _open_ro(path, _uri(path) + ("&immutable=1" if immutable else ""), busy_ms)
    except sqlite3.Error as exc:
        if is_corruption(exc):
            raise IndexUnavailable(f"index {path} is corrupt ({exc}); run `memindex rebuild`") from None
        if immutable or not _cannot_share(exc):  # busy or locked: a writer is at work, never read around it
            raise IndexUnavailable(f"cannot read the index {path}: {exc}") from None
        try:
            return _open_ro(path, _uri(path) + "&immutable=1", busy_ms)
        except sqlite3.Error:
            raise IndexUnavailable(f"cannot read the index {path}: {exc}") from None


def _cannot_share(exc: BaseException) -> bool:
    """Could the reader not set up its shared-memory file (read-only folder, full disk)?"""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (8, 10, 13, 14)  # READONLY, IOERR, FULL, CANTOPEN
    text = str(exc).lower()
    return any(k in text for k in ("readonly", "read-only", "disk i/o", "unable to open", "disk is full"))


class Reader(sqlite3.Connection):
    """A read-only connection that keeps the meta table as it read it on opening: a
    prompt's checks (provenance, staleness, freshness, planning) take their values from
    it, one query in all (`meta_values`). Meant for a connection that lives for one answer
    (a prompt, a command; a sync reopens): the semantic worker's long-lived reader reads
    what changes under it from the table itself (`vectors.version`)."""

    meta: dict[str, object] | None = None


def meta_values(conn: sqlite3.Connection, keys: tuple[str, ...]) -> dict[str, object]:
    """The parsed values of `keys` in the meta table (absent keys left out): a Reader's
    copy, else one query. ValueError (or TypeError) if a value is not JSON."""
    meta = getattr(conn, "meta", None)
    if meta is not None:
        return {k: meta[k] for k in keys if k in meta}
    marks = ", ".join("?" * len(keys))
    return {k: loads(v) for k, v in conn.execute(f"SELECT key, value FROM meta WHERE key IN ({marks})", keys)}


def _open_ro(path: str, uri: str, busy_ms: int) -> sqlite3.Connection:
    conn = sqlite3.connect(uri, uri=True, check_same_thread=False, factory=Reader)
    try:
        _pragmas(conn, busy_ms)
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > INDEX_VERSION:
            raise too_new(conn, path, version)
        if version != INDEX_VERSION:
            raise IndexUnavailable(
                f"index {path} has version {version}, this memindex needs {INDEX_VERSION} (run `memindex sync`)"
            )
        damage = _damage(conn)
        if damage:
            raise IndexUnavailable(f"{path}: {damage}; run `memindex sync`")
    except BaseException:
        conn.close()
        raise
    return conn


def _build_id(conn: sqlite3.Connection) -> str | None:
    """The index's build id (`memindex.index.provenance`), or None (no meta table, no id)."""
    try:
        value = meta_values(conn, ("build_id",)).get("build_id")
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return None
        raise  # busy, a full disk, I/O: never a reason to call an index foreign and delete it
    except (ValueError, TypeError, RecursionError):
        return None
    return value if isinstance(value, str) and value else None


def _ours(conn: sqlite3.Connection, root: str | os.PathLike[str], ids: tuple[str, ...] | None = None) -> bool:
    """Did this user's memindex build this index for this root? (one small file read)"""
    built = _build_id(conn)
    return built is not None and built in (provenance.accepted(root) if ids is None else ids)


def begin(conn: sqlite3.Connection) -> None:
    """BEGIN IMMEDIATE for a writer (under the lock), in a WAL whose salt is recorded.

    SQLite starts a new WAL generation (a new salt) at the first write after a complete
    checkpoint: so the writer checkpoints here (autocheckpoint is off), starts any new one
    with a one-page write (user_version, unchanged), records its salt, then begins."""
    root = _db_root(conn)
    try:
        if os.stat(index_path(root) + "-wal").st_size > CHECKPOINT_BYTES:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except FileNotFoundError:
        pass
    conn.execute(f"PRAGMA user_version={int(conn.execute('PRAGMA user_version').fetchone()[0])}")
    try:
        provenance.record_wal(root, _wal_salt(index_path(root)))
    except UnsafeFile as exc:
        raise IndexUnavailable(f"cannot record the index's WAL: {exc}") from None
    conn.execute("BEGIN IMMEDIATE")


def _wal_salt(path: str) -> str | None:
    try:
        return provenance.wal_salt(path)
    except (OSError, UnsafeFile) as exc:
        raise IndexUnavailable(f"cannot read {path}-wal: {exc}") from None


def _db_root(conn: sqlite3.Connection) -> str:
    return os.path.dirname(next(row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"))


def _create(conn: sqlite3.Connection) -> None:
    """(Re)create the schema inside the caller's transaction: readers keep their snapshot.
    A new build id is recorded before the commit, the old one (if it was ours) still
    accepted until `confirm_build` runs after it."""
    root = _db_root(conn)
    previous = _build_id(conn)
    if previous is not None and previous not in provenance.accepted(root):
        previous = None
    for table in TABLES:
        conn.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    conn.execute(f"PRAGMA user_version={INDEX_VERSION}")
    build = provenance.new_id()
    set_meta(conn, build_id=build)
    provenance.record(root, build, previous)


def confirm_build(conn: sqlite3.Connection) -> None:
    """After the commit of a new build: only its id is accepted from now on."""
    build = _build_id(conn)
    if build is not None:
        provenance.record(_db_root(conn), build)


def describe(exc: BaseException, path: str) -> str:
    """The SQLite error, plus which file is to blame when the index cannot be written."""
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        for candidate in (path, path + "-wal", path + "-shm", os.path.dirname(path) or "."):
            if os.path.exists(candidate) and not os.access(candidate, os.W_OK):
                return f"{text} ({candidate} is not writable: fix its permissions or remove it)"
    return text


def remove_db_files(path: str, suffixes: tuple[str, ...] = ("", "-wal", "-shm", "-journal")) -> None:
    for suffix in suffixes:
        try:
            os.unlink(f"{path}{suffix}")
        except FileNotFoundError:
            pass
        except IsADirectoryError:
            raise IndexUnavailable(f"{path}{suffix} is a directory, not an index: remove it") from None


def open_writer(root: str | os.PathLike[str]) -> tuple[sqlite3.Connection, str | None]:
    """A read-write connection to a valid index, creating or repairing it.

    Returns (connection, why it was rebuilt or None). The caller must hold the lock. A
    wrong-version index is recreated in place (one transaction, readers unharmed); a file
    that is not a database is replaced.
    """
    from ..store import rootfs

    path = index_path(root)
    _check_files(path)
    reason = None if os.path.exists(path) else "index was missing"
    remove_db_files(path, ("-journal",))  # memindex never uses rollback mode: nobody's to play back
    try:
        ours = provenance.adopt_wal(root, path)  # under the lock: no writer is mid-commit
    except (OSError, UnsafeFile) as exc:
        raise IndexUnavailable(f"cannot read {path}-wal: {exc}") from None
    if not ours:
        remove_db_files(path)  # the whole index: readers on the old files keep a consistent view
        reason = reason or f"index's -wal {NOT_OURS}"
    for attempt in (1, 2, 3):
        try:
            rootfs.create_private(path)  # a new index starts private; sync then sets rootfs.derived_mode
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        except (sqlite3.Error, OSError) as exc:
            raise IndexUnavailable(f"cannot open {path}: {exc}") from None
        try:
            _pragmas(conn, 10_000, mmap=True)
            if reason is None and not _ours(conn, root):  # never read, never repaired in place: replaced
                conn.close()
                remove_db_files(path)
                reason = f"index {NOT_OURS}"
                continue
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")  # `begin` checkpoints: the WAL's salt stays recorded
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA cache_size=-65536")  # 64 MiB: a large sync's b-tree pages stay in memory
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > INDEX_VERSION:  # an older memindex never rebuilds a newer one's index
                raise too_new(conn, path, version)
            damage = _damage(conn) if version == INDEX_VERSION else None
            if version == INDEX_VERSION and damage is None:
                return conn, reason
            reason = reason or damage or f"index had version {version}, expected {INDEX_VERSION}"
            begin(conn)
            _create(conn)
            set_meta(conn, built_by=built_by())
            conn.execute("COMMIT")
            confirm_build(conn)
            return conn, reason
        except IndexTooNew:
            conn.close()
            raise
        except UnsafeFile as exc:  # no folder of this user can hold the build record
            conn.close()
            raise IndexUnavailable(f"cannot build the index {path}: {exc}") from None
        except sqlite3.DatabaseError as exc:
            conn.close()
            if not is_corruption(exc):  # a full disk, a read-only file, an I/O error: keep the index
                raise IndexUnavailable(f"cannot write the index {path}: {describe(exc, path)}") from None
            if attempt == 3:
                raise IndexUnavailable(f"cannot create index {path}: {exc}") from None
            reason = f"index was corrupt ({exc})"
            remove_db_files(path)
    raise AssertionError("unreachable")


def built_by() -> dict[str, object]:
    """Which memindex builds this index: its version, index version and location."""
    from .. import __version__

    return {"version": __version__, "index_version": INDEX_VERSION,
            "location": os.path.dirname(PACKAGE_DIR)}


def too_new(conn: sqlite3.Connection, path: str, version: int) -> IndexTooNew:
    """The refusal of an index a newer memindex built, naming both sides and what to do.

    Decided (docs/reliability.md, "One index, two versions"): the newer side upgrades an
    older index once; the older side refuses and says so, instead of rebuilding it back."""
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'built_by'").fetchone()
        other = loads(row[0]) if row else {}
    except (sqlite3.Error, ValueError, TypeError):
        other = {}
    other = other if isinstance(other, dict) else {}
    mine = built_by()
    them = f"memindex {other.get('version', '?')} at {other.get('location', '?')}" if other else "a newer memindex"
    return IndexTooNew(
        f"index {path} has version {version}, built by {them}; this memindex {mine['version']} at "
        f"{mine['location']} reads version {INDEX_VERSION} and will not rebuild it: upgrade this one "
        f"(`pip install -U` from the plugin's folder, or run the plugin's own `memindex`; `memindex doctor` says which)"
    )


def set_meta(conn: sqlite3.Connection, **values: object) -> None:
    import json  # writers only: readers parse with `lean`

    conn.executemany(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
        [(k, json.dumps(v)) for k, v in values.items()],
    )


def get_meta(conn: sqlite3.Connection) -> dict[str, object]:
    """The meta table; IndexUnavailable if a value is not JSON (writers rebuild such an
    index: `_damage`)."""
    try:
        return {k: loads(v) for k, v in conn.execute("SELECT key, value FROM meta")}
    except (ValueError, TypeError, RecursionError) as exc:
        raise IndexUnavailable(f"the index's metadata is damaged ({exc}); run `memindex sync`") from None


_PROBES = (
    ("documents", "rowid"), ("invalid", "path"), ("meta", "key"), ("tag_index", "tag"), ("file_index", "name"), ("fts", "rowid"),
    ("vectors", "doc"), ("fts_cjk", "rowid"), ("review", "key"),
)
_PROBE = "SELECT " + ", ".join(f"(SELECT {column} FROM {table} LIMIT 1)" for table, column in _PROBES)  # one statement


def _damage(conn: sqlite3.Connection) -> str | None:
    """Why an index of the right version cannot be used as it is (a table dropped, meta
    that is not JSON), or None. A writer rebuilds such an index in place."""
    try:
        conn.execute(_PROBE).fetchall()
        meta = get_meta(conn)
        if isinstance(conn, Reader):
            conn.meta = meta
    except sqlite3.OperationalError as exc:
        return f"index was incomplete ({exc})"
    except IndexUnavailable as exc:
        return str(exc).split("; run", 1)[0]  # the caller says what to run
    return None


def _check_files(path: str) -> None:
    """The index and its companions must be regular files of this user (never a link)."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            rootfs.check(path + suffix)
        except UnsafeFile as exc:
            raise IndexUnavailable(str(exc)) from None


class transaction:  # noqa: N801  (used as `with index.transaction(conn):`)
    """One write transaction (BEGIN IMMEDIATE: the write lock up front, so a reader's
    snapshot is never upgraded mid-way); rolled back on any exception, KeyboardInterrupt
    too. A class, not @contextmanager: contextlib would cost the hook an import."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        begin(self.conn)

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self.conn.execute("COMMIT")
        elif self.conn.in_transaction:
            self.conn.execute("ROLLBACK")
