"""``dcx verify``: re-hash every packet; ``--repair`` moves torn log fragments aside."""

from __future__ import annotations

from typing import Any

from dcx.errors import ExitCode
from dcx.fsutil import atomic_write, file_lock, read_lines
from dcx.result import Result
from dcx.store import Store, verify_file
from dcx.workspace import Workspace


def _logs(ws: Workspace) -> list:
    logs = [ws.events]
    if ws.decisions.is_dir():
        logs.extend(sorted(ws.decisions.glob("*.jsonl")))
    return logs


def verify(*, ws: Workspace, repair: bool = False, wait: float = 5.0) -> Result:
    store = Store(ws)
    problems: list[dict[str, Any]] = []
    checked = 0
    for kind, path in store.iter_files():
        checked += 1
        problem = verify_file(ws, kind, path)
        if problem:
            problems.append({"file": ws.rel(path), "ref": path.stem, "problem": problem})
    repaired: list[str] = []
    for log in _logs(ws):
        _, torn = read_lines(log)
        if not torn:
            continue
        if repair:
            repaired.append(_repair(ws, log, wait))
        else:
            problems.append(
                {"file": ws.rel(log), "problem": "last line is incomplete; run `dcx verify --repair`"}
            )
    data = {"packets_checked": checked, "problems": problems, "repaired": repaired}
    if problems:
        return Result("verify", data, status="error", exit_code=ExitCode.REFUSED)
    return Result("verify", data)


def _repair(ws: Workspace, log, wait: float) -> str:
    """Move a torn last line to private/log/ — the one rewrite dcx ever does."""
    with file_lock(log, wait=wait, display=ws.rel(log)):
        data = log.read_bytes()
        cut = data.rfind(b"\n") + 1
        fragment = data[cut:]
        if fragment:
            ws.log_dir.mkdir(parents=True, exist_ok=True)
            from dcx.canonical import digest_hex

            atomic_write(ws.log_dir / f"torn-{log.stem}-{digest_hex(fragment, length=12)}.fragment", fragment, mode=0o600)
            atomic_write(log, data[:cut])
    return ws.rel(log)
