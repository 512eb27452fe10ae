"""Extension lifecycle state: ``private/extensions/state.json`` (SPEC §7).

One JSON document, ``dcx_extension_state_v0``, written atomically under the
OS lock ``state.json.lock``. Per extension id: ``enabled``,
``active_revision``, ``rollback_revision``, ``revisions`` (at most 5 stored
snapshots, oldest first; the active and rollback revisions are never pruned),
``doctor_verified_revision`` and ``doctor_verified_identity``.

A revision record holds the normalised manifest and what was pinned at
install: the absolute entrypoint path (or interpreter), the module file for
``python_module`` runtimes, and the manifest file it came from. Reading is
strict: a snapshot that does not re-hash to its revision id, a dangling
active revision or any shape error makes the whole state *unavailable*
(never silently repaired); resolving then reports
``extension_state_unavailable``. Reading never creates a file or directory.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

from dcx.core.canonical import pretty_bytes
from dcx.core.errors import InvalidInput, Refused
from dcx.core.fields import Any_, Bool, Const, Pattern, PrivateText, Records, Shape, Timestamp
from dcx.core.fsutil import file_lock, read_bytes, write_private
from dcx.core.workspace import Workspace
from dcx.extensions.manifest import REVISION_HEX, normalise, revision_of
from dcx.packets.advisory import EXTENSION_ID_MAX, EXTENSION_ID_PATTERN

SCHEMA = "dcx_extension_state_v0"
MAX_REVISIONS = 5


def _hex(n: int, **kw: Any) -> Pattern:
    return Pattern(regex=f"[0-9a-f]{{{n}}}", limit=n, what=f"{n} hex digits", **kw)


_REVISION = Shape(
    "revision",
    {
        "revision": _hex(REVISION_HEX),
        "manifest": Any_(),
        "entrypoint_path": PrivateText(limit=4096),
        "module_path": PrivateText(limit=4096, optional=True),
        "manifest_path": PrivateText(limit=4096, optional=True),
        "installed_at": Timestamp(),
    },
)

_EXTENSION = Shape(
    "extension",
    {
        "enabled": Bool(),
        "active_revision": _hex(REVISION_HEX),
        "rollback_revision": _hex(REVISION_HEX, nullable=True),
        "revisions": Records(
            shape=_REVISION, id_field="revision", min_items=1, max_items=MAX_REVISIONS, ordered=True
        ),
        "doctor_verified_revision": _hex(REVISION_HEX, nullable=True),
        "doctor_verified_identity": _hex(64, nullable=True),
    },
)

_STATE = Shape("state", {"schema_version": Const(value=SCHEMA), "extensions": Any_()})
_ID = Pattern(regex=EXTENSION_ID_PATTERN, limit=EXTENSION_ID_MAX, what="an extension id")


class StateUnavailable(Refused):
    """state.json exists but cannot be read or does not verify (exit 1)."""

    default_code = "extension_state_unavailable"


def empty_state() -> dict[str, Any]:
    return {"schema_version": SCHEMA, "extensions": {}}


def _check(data: Any) -> dict[str, Any]:
    state = _STATE.check(data, "state")
    extensions = state["extensions"]
    if not isinstance(extensions, dict):
        raise InvalidInput("state.extensions: expected an object", field="extensions")
    out: dict[str, Any] = {}
    for ext_id, raw in extensions.items():
        _ID.check(ext_id, f"extensions.{ext_id}")
        record = _EXTENSION.check(raw, f"extensions.{ext_id}")
        known = set()
        for rev in record["revisions"]:
            snapshot = normalise(rev["manifest"], strict_protocol=False)
            if snapshot != rev["manifest"] or revision_of(snapshot) != rev["revision"]:
                raise InvalidInput(
                    f"extensions.{ext_id}: revision {rev['revision']} does not match its manifest"
                )
            if snapshot["id"] != ext_id:
                raise InvalidInput(f"extensions.{ext_id}: a revision belongs to another extension")
            known.add(rev["revision"])
        for key in ("active_revision", "rollback_revision"):
            if record[key] is not None and record[key] not in known:
                raise InvalidInput(f"extensions.{ext_id}.{key}: names no stored revision")
        out[ext_id] = record
    return {"schema_version": SCHEMA, "extensions": out}


def load_state(ws: Workspace) -> dict[str, Any]:
    """The verified state; an absent file is an empty state. Never creates anything."""
    path = ws.extension_state
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return empty_state()
    except OSError:
        raise _unavailable(ws) from None
    try:
        return _check(json.loads(raw.decode("utf-8")))
    except (ValueError, InvalidInput):
        raise _unavailable(ws) from None


def _unavailable(ws: Workspace) -> StateUnavailable:
    return StateUnavailable(
        f"{ws.rel(ws.extension_state)}: unreadable or does not verify",
        hint="restore it from a backup, or move it aside and run `dcx ext install` again",
    )


def save_state(ws: Workspace, state: dict[str, Any]) -> None:
    """Write the whole state atomically (caller holds ``locked``)."""
    write_private(ws.extension_state, pretty_bytes(_check(state)))


@contextlib.contextmanager
def locked(ws: Workspace, wait: float) -> Iterator[dict[str, Any]]:
    """Hold the state lock and yield the state as read under it (lock, then read again)."""
    with file_lock(ws.extension_state, wait=wait, display=ws.rel(ws.extension_state)):
        yield load_state(ws)


def revision_record(record: dict[str, Any], revision: str | None) -> dict[str, Any] | None:
    return next((r for r in record["revisions"] if r["revision"] == revision), None)


def active_record(record: dict[str, Any]) -> dict[str, Any]:
    found = revision_record(record, record["active_revision"])
    assert found is not None  # guaranteed by _check
    return found


def add_revision(record: dict[str, Any], rev: dict[str, Any]) -> None:
    """Append (or move to newest) a revision, then prune to ``MAX_REVISIONS``.

    The active and rollback revisions are never pruned; the oldest other one goes first.
    """
    record["revisions"] = [r for r in record["revisions"] if r["revision"] != rev["revision"]] + [
        rev
    ]
    keep = {record["active_revision"], record["rollback_revision"], rev["revision"]}
    while len(record["revisions"]) > MAX_REVISIONS:
        victim = next(r for r in record["revisions"] if r["revision"] not in keep)
        record["revisions"].remove(victim)


def clear_proof(record: dict[str, Any]) -> None:
    record["doctor_verified_revision"] = None
    record["doctor_verified_identity"] = None
