"""The persistent bm25 index (SPEC §6.3 v4): a tantivy index under ``private/index/``.

Layout:

- ``bm25.json`` — the index's record (schema ``dcx_bm25_index_v2``): the
  analyzer it was built with, the tantivy directory that holds it, the tantivy
  commit (opstamp) it describes, its chunk count and last update. It is
  replaced atomically, and last, by ``dcx index``: a reader that has read it
  opens a complete index.
- ``bm25-<12 hex>/`` — the tantivy directory. One document per chunk:
  ``text`` (the chunk, stored, analyzed, term frequencies without positions),
  ``source`` (the source id, one raw term: the scope filter), ``file`` (source
  id and path, one raw term: what a changed file is deleted by), ``path``,
  ``revision`` (stored) and ``ordinal`` (stored integer). Beside tantivy's own
  files, ``dcx-files.json`` lists every file the index has seen — (source,
  path) → revision, kind (``text|binary|oversize``) and chunk count — with the
  opstamp it matches: what the next ``dcx index`` compares against.

Only ``dcx index`` writes, under ``bm25.lock``. A reader (``recall``,
``prepare``, ``status --check``) creates no file and writes none: tantivy's
reader opens ``.tantivy-meta.lock`` (which the writer leaves) write-only and
holds an exclusive ``flock`` on it while it opens the segments, so a directory
without that file is refused as incomplete rather than have a reader create it.
An FTS5 index of an earlier dcx (``bm25.sqlite``) is not read: it is removed by
the next ``dcx index``, which builds this one.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

SCHEMA = "dcx_bm25_index_v2"
RECORD_NAME = "bm25.json"
FILES_NAME = "dcx-files.json"
DIR_RE = re.compile(r"bm25-[0-9a-f]{12}")
LOCK_NAME = "bm25"  # file_lock adds ".lock"
META_LOCK = ".tantivy-meta.lock"
# the FTS5 index of dcx before v4, and what came with it
LEGACY_NAMES = ("bm25.sqlite", "bm25.sqlite-journal", "bm25.sqlite.lock")
LEGACY_TMP = ".bm25.sqlite.*.tmp*"

# The analyzers compared on the labelled corpora (docs/recall.md, "Tokenizer"), each a
# chain of tantivy's own parts; the index and the query go through the same one.
# ``default`` and ``en_stem`` are tantivy's built-in chains of those names.
ANALYZERS = ("default", "en_stem", "fold", "fold_stem")
ANALYZER = "fold_stem"  # the best mean nDCG@5 over both corpora (docs/recall.md, "Tokenizer")


class IndexUnavailable(Exception):
    """The index cannot answer; ``reason_code`` goes into the receipt."""

    def __init__(self, reason_code: str) -> None:
        super().__init__(reason_code)
        self.reason_code = reason_code


class Record(NamedTuple):
    analyzer: str
    directory: str
    opstamp: int
    chunk_count: int
    updated_at: str
    sources: tuple[str, ...]  # the source ids indexed (a scope may name only these)

    def body(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA, **self._asdict(), "sources": list(self.sources)}


def index_path(index_dir: Path) -> Path:
    """The index's record: what names the index (``private/index/bm25.json``)."""
    return index_dir / RECORD_NAME


def tokenizer_name(analyzer: str) -> str:
    return f"dcx_{analyzer}"


def text_analyzer(name: str | None = None) -> Any:
    """The tantivy ``TextAnalyzer`` called ``name`` (one of ``ANALYZERS``; this dcx's by default)."""
    return _analyzer(name or ANALYZER)


@cache
def _analyzer(name: str) -> Any:
    import tantivy

    builder = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
    )
    if name in ("fold", "fold_stem"):
        builder = builder.filter(tantivy.Filter.ascii_fold())
    if name in ("en_stem", "fold_stem"):
        builder = builder.filter(tantivy.Filter.stemmer("english"))
    if name not in ANALYZERS:
        raise ValueError(f"unknown analyzer {name}")
    return builder.build()


def schema(analyzer: str | None = None) -> Any:
    import tantivy

    analyzer = analyzer or ANALYZER
    builder = tantivy.SchemaBuilder()
    builder.add_text_field(
        "text", stored=True, tokenizer_name=tokenizer_name(analyzer), index_option="freq"
    )
    for name in ("source", "file"):
        builder.add_text_field(
            name, stored=name == "source", tokenizer_name="raw", index_option="basic"
        )
    for name in ("path", "revision"):
        builder.add_text_field(name, stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("ordinal", stored=True)
    return builder.build()


def file_key(source_id: str, path: str) -> str:
    return f"{source_id}\x00{path}"


def read_record(index_dir: Path) -> Record | None:
    """The record, None when there is none; ``IndexUnavailable('index_corrupt')`` if it is not ours."""
    path = index_path(index_dir)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError:
        raise IndexUnavailable("index_corrupt") from None
    try:
        body = json.loads(raw)
        record = Record(**{k: body[k] for k in Record._fields})
        record = record._replace(sources=tuple(record.sources))
    except (ValueError, TypeError, KeyError):
        raise IndexUnavailable("index_corrupt") from None
    if (
        body.get("schema_version") != SCHEMA
        or not all(isinstance(s, str) for s in record.sources)
        or record.analyzer not in ANALYZERS
        or not isinstance(record.directory, str)
        or not DIR_RE.fullmatch(record.directory)
        or not all(isinstance(v, int) and v >= 0 for v in (record.opstamp, record.chunk_count))
    ):
        raise IndexUnavailable("index_corrupt")
    return record


def open_read_only(index_dir: Path) -> tuple[Any, Record]:
    """Open the index for reading: no file created, none written, no re-index.

    Returns the tantivy ``Index`` (its reader reloads only when asked) and the
    record. A record of another analyzer than this dcx's is ``index_corrupt``
    (``dcx index --rebuild`` makes it current).
    """
    for attempt in (0, 1):
        record = read_record(index_dir)
        if record is None:
            raise IndexUnavailable("index_missing")
        if record.analyzer != ANALYZER:
            raise IndexUnavailable("index_corrupt")
        directory = index_dir / record.directory
        if not (directory / "meta.json").is_file() or not (directory / META_LOCK).is_file():
            if attempt == 0 and read_record(index_dir) != record:
                continue  # a rebuild replaced the directory between the two reads
            raise IndexUnavailable("index_corrupt")
        import tantivy

        try:
            index = tantivy.Index.open(str(directory))
        except Exception:  # tantivy reports damage as ValueError or OSError, text only
            if attempt == 0 and read_record(index_dir) != record:
                continue
            raise IndexUnavailable("index_corrupt") from None
        return index, record
    raise IndexUnavailable("index_busy")  # replaced twice while opening: a writer is busy


def read_files(directory: Path) -> tuple[int, dict[str, dict[str, list[Any]]]] | None:
    """``(opstamp, {source_id: {path: [revision, kind, chunks]}})`` of ``dcx-files.json``, or None."""
    try:
        body = json.loads((directory / FILES_NAME).read_bytes())
        opstamp, sources = body["opstamp"], body["sources"]
    except (OSError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(opstamp, int) or not isinstance(sources, dict):
        return None
    return opstamp, sources
