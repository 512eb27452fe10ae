"""The persistent bm25 index (SPEC §6.3): SQLite FTS5 in ``private/index/bm25.sqlite``.

Layout (schema ``dcx_bm25_index_v0``):

- ``chunks``: FTS5 over ``body`` (tokenizer ``unicode61 remove_diacritics 2``)
  with an unindexed ``sid`` (the source's number) for scoped queries;
- ``chunk_files``: chunk rowid → (file, ordinal, token count), indexed by
  file, so a changed file's chunks are deleted without scanning the FTS table;
- ``term_bounds``: per term, its exact document frequency and the largest
  BM25 tf factor it reached (see ``bm25_bounds``): what lets a search skip
  rows and stay exact;
- ``postings``: per (term, source, block of 4096 rowids), the rows holding the
  term with their tf and token count (see ``bm25_postings``): what lets a search
  score rows without calling ``bm25()``, which counts every query term's doclist;
- ``files``: (source, path) → revision, kind (``text|binary|oversize``) and
  chunk count — what the next run compares against;
- ``sources``, ``meta`` (schema, tokenizer, chunk and token counts, last update).

Only ``dcx index`` writes it, under ``bm25.sqlite.lock``, in one transaction
(a first build or ``--rebuild`` goes to a temp file that replaces the index
when complete). Rollback-journal mode, never WAL: a read-only opener
(``recall``, ``prepare``) creates no ``-wal``/``-shm`` file and takes no lock
file of ours.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

# A POSIX path in a sqlite ``file:`` URI, percent-encoded: what urllib.request.pathname2url
# is on POSIX, without importing urllib.request (http.client, ssl, email: most of a
# recall's start-up; SPEC §3.6).
pathname2url = quote

SCHEMA = "dcx_bm25_index_v1"
# an index of an earlier format is still read (the search without ``postings``) and
# rebuilt from scratch by the next ``dcx index``
LEGACY_SCHEMAS = ("dcx_bm25_index_v0",)
TOKENIZER = "unicode61 remove_diacritics 2"
INDEX_NAME = "bm25.sqlite"

DDL = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sources (sid INTEGER PRIMARY KEY, source_id TEXT NOT NULL UNIQUE);
CREATE TABLE files (
    fid INTEGER PRIMARY KEY,
    sid INTEGER NOT NULL,
    path TEXT NOT NULL,
    revision TEXT NOT NULL,
    kind TEXT NOT NULL,
    chunk_count INTEGER NOT NULL,
    UNIQUE (sid, path)
);
CREATE VIRTUAL TABLE chunks USING fts5(body, sid UNINDEXED, tokenize = '{TOKENIZER}');
CREATE TABLE chunk_files (
    rowid INTEGER PRIMARY KEY, fid INTEGER NOT NULL, ordinal INTEGER NOT NULL, dl INTEGER NOT NULL
);
CREATE INDEX chunk_files_by_file ON chunk_files (fid);
CREATE VIRTUAL TABLE vocab USING fts5vocab(chunks, 'row');
CREATE TABLE term_bounds (
    term TEXT PRIMARY KEY, df INTEGER NOT NULL, m REAL NOT NULL, avgdl REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE postings (
    term TEXT NOT NULL, sid INTEGER NOT NULL, block INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (term, sid, block)
) WITHOUT ROWID;
"""


class IndexUnavailable(Exception):
    """The index cannot answer; ``reason_code`` goes into the receipt."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


def index_path(index_dir: Path) -> Path:
    return index_dir / INDEX_NAME


def create_schema(conn: sqlite3.Connection) -> None:
    conn.executescript(DDL)
    conn.executemany(
        "INSERT INTO meta (key, value) VALUES (?, ?)",
        [
            ("schema_version", SCHEMA),
            ("tokenizer", TOKENIZER),
            ("chunk_count", "0"),
            ("total_tokens", "0"),
        ],
    )
    conn.commit()


def check_schema(conn: sqlite3.Connection, *, legacy: bool = False) -> dict[str, str]:
    """The meta table, or ``IndexUnavailable('index_corrupt')`` for anything not ours
    (``legacy``: an index of an earlier dcx format passes too)."""
    try:
        meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise IndexUnavailable(classify(exc)) from None
    known = (SCHEMA, *LEGACY_SCHEMAS) if legacy else (SCHEMA,)
    if meta.get("schema_version") not in known or meta.get("tokenizer") != TOKENIZER:
        raise IndexUnavailable("index_corrupt")
    if not all(str(meta.get(key, "")).isdigit() for key in ("chunk_count", "total_tokens")):
        raise IndexUnavailable("index_corrupt")
    return meta


def open_read_only(path: Path, *, busy_timeout: float) -> tuple[sqlite3.Connection, bool]:
    """Open the index for reading only: ``mode=ro``, no journal, no lock file, no re-index.

    Returns the connection and whether it has ``postings`` (the current format).
    """
    if not path.is_file():
        raise IndexUnavailable("index_missing")
    uri = f"file:{pathname2url(str(path))}?mode=ro"
    try:
        conn = sqlite3.connect(
            uri, uri=True, timeout=max(0.0, busy_timeout), check_same_thread=False
        )
    except sqlite3.OperationalError:
        raise IndexUnavailable("index_missing") from None
    try:
        meta = check_schema(conn, legacy=True)
    except IndexUnavailable:
        conn.close()
        raise
    return conn, meta["schema_version"] == SCHEMA


def is_legacy(path: Path) -> bool:
    """Whether ``path`` holds a dcx index of an earlier format (``dcx index`` rebuilds it)."""
    try:
        conn = sqlite3.connect(f"file:{pathname2url(str(path))}?mode=ro", uri=True)
    except sqlite3.Error:
        return False
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.Error:
        return False
    finally:
        conn.close()
    return row is not None and row[0] in LEGACY_SCHEMAS


def classify(exc: sqlite3.Error) -> str:
    """A reason code for an SQLite failure while reading."""
    text = str(exc).lower()
    if "interrupted" in text:
        return "provider_search_timeout"
    if "locked" in text or "busy" in text or "readonly" in text or "read-only" in text:
        return "index_busy"  # a writer holds it, or a crashed writer left a hot journal
    return "index_corrupt"
