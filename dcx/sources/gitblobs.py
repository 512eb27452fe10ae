"""Blobs out of a git repository: ``cat-file --batch`` passes and git's object hash.

``read_blobs`` answers many blob ids in one ``cat-file --batch`` process
(sizes first with ``--batch-check`` only when one pass would pass
``ONE_PASS_CAP``); ``object_id`` re-hashes bytes as git does, so nothing read
counts before it is checked against the id it was asked by.

``start_pass`` / ``verified_pass`` are the exact reads' form of one pass: the
process is started first and runs unattended (its answer spooled), so a
caller can check the previous pass meanwhile; the answer is parsed,
re-hashed and decoded in one loop.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from dcx.sources.gitrepo import REPO_CORRUPT, REPO_TOO_LARGE, GitError, is_oid

if TYPE_CHECKING:
    from dcx.sources.gitrepo import Repo

_IDS_RE = re.compile("[0-9a-f]{40}(?:[0-9a-f]{24})?(?:\n[0-9a-f]{40}(?:[0-9a-f]{24})?)*")
ONE_PASS_CAP = (
    64 * 1024 * 1024
)  # output of one cat-file --batch pass before it falls back to sizes first


class Blob(NamedTuple):
    oid: str
    size: int
    data: bytes | None  # None when over the byte bound (not fetched) or missing
    missing: bool = False


def object_id(data: bytes, oid_len: int) -> str:
    """git's id of a blob holding ``data`` (sha1, or sha256 for 64-hex repositories)."""
    algo = hashlib.sha256 if oid_len == 64 else hashlib.sha1
    return algo(b"blob %d\0" % len(data) + data).hexdigest()


def read_blobs(
    repo: Repo,
    oids: Iterable[str],
    max_bytes: int,
    deadline: float,
    *,
    byte_budget: int | None = None,
    one_pass: bool = True,
) -> dict[str, Blob]:
    """Blobs by id, with the bytes of those of at most ``max_bytes``.

    First one ``cat-file --batch`` pass over all of them, its output
    capped at ``ONE_PASS_CAP``: sizes and bytes in one process. Past the
    cap (a large blob among them), sizes first (``--batch-check``), then
    bytes only of the blobs within ``max_bytes``; there, with
    ``byte_budget``, blobs past it (in the order asked; the first is
    always fetched) are left out of the answer, to be asked again.
    ``one_pass=False`` goes sizes first at once (a pass already found too large).
    """
    wanted = _wanted(oids)
    if not wanted:
        return {}
    if one_pass:
        found = _one_pass(repo, wanted, max_bytes, deadline)
        if found is not None:
            return found
    found, small, total = _sizes(repo, wanted, max_bytes, deadline, byte_budget)
    if small:
        request = "".join(f"{o}\n" for o in small).encode()
        code, out = repo._run(
            ["cat-file", "--batch"],
            deadline,
            stdin=request,
            cap=total + 200 * len(small) + 1024,
            spool=True,
        )
        if code != 0:
            raise GitError(REPO_CORRUPT)
        answered = {oid: data for oid, kind, _, data in _parse_batch(out) if kind == "blob"}
        for oid in small:
            data = answered.get(oid)
            found[oid] = (
                Blob(oid, len(data), data) if data is not None else Blob(oid, 0, None, missing=True)
            )
    return found


def _one_pass(
    repo: Repo, wanted: list[str], max_bytes: int, deadline: float
) -> dict[str, Blob] | None:
    """Every blob's size and bytes from one ``cat-file --batch``; None past ``ONE_PASS_CAP``."""
    request = ("\n".join(wanted) + "\n").encode()
    try:
        code, out = repo._run(
            ["cat-file", "--batch"], deadline, stdin=request, cap=ONE_PASS_CAP, spool=True
        )
    except GitError as exc:
        if exc.reason_code != REPO_TOO_LARGE:
            raise
        return None
    if code != 0:
        raise GitError(REPO_CORRUPT)
    parsed = _parse_one_pass(out, max_bytes)
    for oid in wanted:
        parsed.setdefault(oid, Blob(oid, 0, None, missing=True))
    return parsed


def _sizes(
    repo: Repo, wanted: list[str], max_bytes: int, deadline: float, byte_budget: int | None
) -> tuple[dict[str, Blob], list[str], int]:
    """``cat-file --batch-check``: the blobs answered by their size alone (missing, not a
    blob, over ``max_bytes``), and the ones to fetch (within the budget) with their total."""
    code, out = repo._run(
        ["cat-file", "--batch-check"], deadline, stdin="".join(f"{o}\n" for o in wanted).encode()
    )
    if code != 0:
        raise GitError(REPO_CORRUPT)
    found: dict[str, Blob] = {}
    small: list[str] = []
    total = 0
    for line in out.decode("ascii", "replace").splitlines():
        parts = line.split(" ")
        if len(parts) == 2 and parts[1] == "missing":
            found[parts[0]] = Blob(parts[0], 0, None, missing=True)
        elif len(parts) == 3 and parts[1] == "blob" and parts[2].isdigit():
            size = int(parts[2])
            if size > max_bytes:
                found[parts[0]] = Blob(parts[0], size, None)  # oversize: its size is the answer
            elif byte_budget is None or not small or total + size <= byte_budget:
                small.append(parts[0])
                total += size
        elif len(parts) >= 2:
            found[parts[0]] = Blob(parts[0], 0, None, missing=True)  # not a blob
    return found, small, total


# what ``verified_pass`` answers for a blob that is not a verified text
MISSING, OVERSIZE, MISMATCH, BINARY = 0, 1, 2, 3


class Pass(NamedTuple):
    wanted: list[str]
    started: Any  # dcx.core.process.Child, or None when nothing was asked


def start_pass(repo: Repo, oids: Iterable[str], deadline: float) -> Pass:
    """Start one ``cat-file --batch`` over ``oids`` (deduplicated, checked); it runs unattended."""
    wanted = _wanted(oids)
    if not wanted:
        return Pass(wanted, None)
    request = ("\n".join(wanted) + "\n").encode()
    return Pass(
        wanted, repo.start(["cat-file", "--batch"], deadline, stdin=request, cap=ONE_PASS_CAP)
    )


def verified_pass(repo: Repo, one: Pass, max_bytes: int) -> dict[str, str | int] | None:
    """Each blob's text when its bytes hash to its id and decode as UTF-8, else one of
    ``MISSING``, ``OVERSIZE`` (over ``max_bytes``), ``MISMATCH``, ``BINARY`` (a wanted id git
    did not answer at all is absent: missing too); None when the answer passed
    ``ONE_PASS_CAP`` (then ``read_blobs`` reads them sizes first)."""
    if one.started is None:
        return {}
    try:
        code, out = repo.answer(one.started.finish())
    except GitError as exc:
        if exc.reason_code != REPO_TOO_LARGE:
            raise
        return None
    if code != 0:
        raise GitError(REPO_CORRUPT)
    found: dict[str, str | int] = {}
    find = out.find
    sha1, sha256 = hashlib.sha1, hashlib.sha256
    pos, end = 0, len(out)
    while pos < end:
        nl = find(b"\n", pos)
        if nl < 0:
            break
        parts = out[pos:nl].split(b" ")
        pos = nl + 1
        if len(parts) != 3:
            if parts and parts[0]:  # "<oid> missing"
                found[parts[0].decode("ascii", "replace")] = MISSING
            continue
        size = int(parts[2])
        oid = parts[0].decode("ascii")
        if parts[1] != b"blob":
            found[oid] = MISSING  # not a blob
        elif size > max_bytes:
            found[oid] = OVERSIZE
        else:
            data = out[pos : pos + size]
            hasher = (sha256 if len(oid) == 64 else sha1)(b"blob %d\0" % size)
            hasher.update(data)
            if len(data) != size or hasher.hexdigest() != oid:
                found[oid] = MISMATCH  # the object store gave other bytes
            else:
                try:
                    found[oid] = data.decode("utf-8")
                except UnicodeDecodeError:
                    found[oid] = BINARY
        pos += size + 1
    return found


def _wanted(oids: Iterable[str]) -> list[str]:
    wanted = list(dict.fromkeys(oids))
    if not _IDS_RE.fullmatch("\n".join(wanted)):  # one check of the whole request, else one by one
        wanted = [o for o in wanted if is_oid(o)]
    return wanted


def _parse_one_pass(out: bytes, max_bytes: int) -> dict[str, Blob]:
    """``_parse_batch`` folded into Blobs, kept tight: a pass may answer 100k blobs."""
    found: dict[str, Blob] = {}
    new = tuple.__new__  # Blob(...) without the keyword machinery
    find = out.find
    pos, end = 0, len(out)
    while pos < end:
        nl = find(b"\n", pos)
        if nl < 0:
            break
        parts = out[pos:nl].split(b" ")
        pos = nl + 1
        if len(parts) != 3:
            if parts and parts[0]:  # "<oid> missing"
                oid = parts[0].decode("ascii", "replace")
                found[oid] = new(Blob, (oid, 0, None, True))
            continue
        size = int(parts[2])
        oid = parts[0].decode("ascii")
        if parts[1] == b"blob":
            found[oid] = new(
                Blob, (oid, size, out[pos : pos + size] if size <= max_bytes else None, False)
            )
        else:
            found[oid] = new(Blob, (oid, 0, None, True))  # not a blob
        pos += size + 1
    return found


def _parse_batch(out: bytes) -> Iterator[tuple[str, str | None, int, bytes]]:
    """(oid, type or None when missing, size, bytes) per answer of ``cat-file --batch``."""
    pos = 0
    end = len(out)
    while pos < end:
        nl = out.find(b"\n", pos)
        if nl < 0:
            return
        parts = out[pos:nl].split(b" ")
        pos = nl + 1
        if len(parts) != 3:
            if parts:
                yield parts[0].decode("ascii", "replace"), None, 0, b""  # "<oid> missing"
            continue
        size = int(parts[2])
        yield (
            parts[0].decode("ascii"),
            parts[1].decode("ascii", "replace"),
            size,
            out[pos : pos + size],
        )
        pos += size + 1
