"""The frozen corpus: its documents, its lock, and matching recalled content back to it (SPEC §11).

A document is a file under ``corpus.path`` matched by ``corpus.include``
(gitwildmatch), named by its relative POSIX path. At ``section``
granularity each file is cut at its ATX headings (``#``..``######`` then a
space, indented less than 4 — the bm25 chunker's rule) and a section is
named ``path#<heading-slug>``: the heading lower-cased, characters other than
letters, digits, spaces, ``-`` and ``_`` dropped, spaces turned into ``-``; a
repeated slug gets ``-1``, ``-2``…; text before the first heading is
``path#top``.

Matching normalises line endings (CRLF/CR → LF) and trailing spaces of every
line on both sides, trims the item's leading and trailing blank lines, and
looks for the item as a substring. At file granularity the item belongs to
the first document (path order) that contains it. At section granularity it
belongs to the section that holds the most of its first occurrence (the
first such section on a tie): a chunk that carries a title heading and its
date line into the section they introduce is that section's, and a
whole-file hit is its largest section's. An item that runs past the section
it is matched to is counted as ``spanning``. An item found nowhere is
``unmatched``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.errors import InvalidInput, Refused

LOCK_SCHEMA = "dcx_corpus_lock_v0"
_HEADING_RE = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)[ \t#]*$")
_TRAILING_RE = re.compile(r"[ \t]+$", re.M)


class Document(NamedTuple):
    path: str  # relative to corpus.path, POSIX
    data: bytes
    text: str  # normalised


class Unit(NamedTuple):
    """What qrels name: a whole file, or one section of it."""

    docid: str
    path: str
    start: int  # offsets into the document's normalised text
    end: int


class Match(NamedTuple):
    docid: str | None  # None: unmatched
    spanning: bool


def normalise(text: str) -> str:
    return _TRAILING_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def read_corpus(
    root: Path, include: tuple[str, ...], *, skip: tuple[Path, ...] = ()
) -> tuple[Document, ...]:
    """The documents, in path order; ``skip`` (the lock itself) is never one of them."""
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines(include)  # as the local-file walker reads include
    skipped = {p.resolve() for p in skip}
    out: list[Document] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if not spec.match_file(rel) or path.resolve() in skipped:
            continue
        data = path.read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInput(f"corpus: {rel} is not UTF-8 text", code="invalid_corpus") from None
        out.append(Document(rel, data, normalise(text)))
    if not out:
        raise InvalidInput("corpus: no document matches corpus.include", code="invalid_corpus")
    return tuple(out)


def slug(heading: str) -> str:
    text = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"\s", "-", text) or "section"


def units(documents: tuple[Document, ...], granularity: str) -> tuple[Unit, ...]:
    out: list[Unit] = []
    for doc in documents:
        if granularity == "file":
            out.append(Unit(doc.path, doc.path, 0, len(doc.text)))
            continue
        starts: list[tuple[int, str]] = []
        offset = 0
        for line in doc.text.splitlines(keepends=True):
            heading = _HEADING_RE.match(line.rstrip("\n"))
            if heading:
                starts.append((offset, heading.group(1)))
            offset += len(line)
        if not starts or doc.text[: starts[0][0]].strip():
            starts.insert(0, (0, "top"))
        seen: dict[str, int] = {}
        for i, (start, title) in enumerate(starts):
            name = slug(title)
            count = seen.get(name, 0)
            seen[name] = count + 1
            name = f"{name}-{count}" if count else name
            end = starts[i + 1][0] if i + 1 < len(starts) else len(doc.text)
            out.append(Unit(f"{doc.path}#{name}", doc.path, start, end))
    return tuple(out)


class Matcher:
    def __init__(self, documents: tuple[Document, ...], granularity: str) -> None:
        self.documents = documents
        self.by_path: dict[str, list[Unit]] = {}
        for unit in units(documents, granularity):
            self.by_path.setdefault(unit.path, []).append(unit)

    def match(self, content: str) -> Match:
        needle = normalise(content).strip("\n")
        if not needle.strip():
            return Match(None, False)
        for doc in self.documents:
            at = doc.text.find(needle)
            if at < 0:
                continue
            end = at + len(needle)
            best, share = None, -1
            for unit in self.by_path[doc.path]:
                overlap = min(end, unit.end) - max(at, unit.start)
                if overlap > share:
                    best, share = unit, overlap
            if best is None:
                return Match(None, False)
            return Match(best.docid, at < best.start or end > best.end)
        return Match(None, False)


def lock_body(
    plan: Any, documents: tuple[Document, ...], queries_bytes: bytes, qrels_bytes: bytes
) -> dict[str, Any]:
    from blake3 import blake3

    return {
        "schema_version": LOCK_SCHEMA,
        "granularity": plan.granularity,
        "include": list(plan.include),
        "k": list(plan.k),
        "documents": [
            {"path": d.path, "bytes": len(d.data), "blake3": blake3(d.data).hexdigest()}
            for d in documents
        ],
        "queries_blake3": blake3(queries_bytes).hexdigest(),
        "qrels_blake3": blake3(qrels_bytes).hexdigest(),
    }


def lock_bytes(body: dict[str, Any]) -> bytes:
    return (json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def check_lock(plan: Any, body: dict[str, Any]) -> None:
    """Exit 1 ``corpus_changed`` naming the first frozen input that differs from the lock."""
    shown = plan.shown(plan.lock)
    hint = (
        f"restore the frozen corpus, or re-freeze on purpose: dcx compare {plan.display} --freeze"
    )
    if not plan.lock.is_file():
        raise Refused(
            f"{shown}: the corpus is not frozen yet",
            code="corpus_not_frozen",
            hint=f"freeze it once and keep the lock with the plan: dcx compare {plan.display} --freeze",
        )
    try:
        frozen = json.loads(plan.lock.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise InvalidInput(
            f"{shown}: not a corpus lock (unreadable JSON)", code="invalid_lock"
        ) from None
    if not isinstance(frozen, dict) or frozen.get("schema_version") != LOCK_SCHEMA:
        raise InvalidInput(f"{shown}: not a {LOCK_SCHEMA} file", code="invalid_lock")

    def changed(what: str) -> Refused:
        return Refused(
            f"corpus_changed: {what} differs from {shown}", code="corpus_changed", hint=hint
        )

    old = {d.get("path"): d for d in frozen.get("documents", []) if isinstance(d, dict)}
    new = {d["path"]: d for d in body["documents"]}
    for path in sorted(set(old) | set(new), key=str):
        if path not in new:
            raise changed(f"document {path} (missing now)")
        if path not in old:
            raise changed(f"document {path} (not in the lock)")
        if old[path] != new[path]:
            was, now = old[path].get("bytes"), new[path]["bytes"]
            detail = f"{was} → {now} bytes" if was != now else "same size, other bytes"
            raise changed(f"document {path} ({detail})")
    for key, what in (
        ("granularity", "corpus.granularity"),
        ("include", "corpus.include"),
        ("k", "k"),
        ("queries_blake3", plan.shown(plan.queries_path)),
        ("qrels_blake3", plan.shown(plan.qrels_path)),
    ):
        if frozen.get(key) != body[key]:
            raise changed(what)
