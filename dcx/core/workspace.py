"""Finding, laying out and creating the workspace (SPEC §2).

The goal root holds ``.decision-context/``. Commands find it by ``-C PATH``,
then ``DCX_WORKSPACE``, then by walking up from the current directory.
"""

from __future__ import annotations

import os
import re
from functools import cached_property
from pathlib import Path
from typing import Any

from dcx.core.errors import InvalidInput, NoWorkspace
from dcx.core.fsutil import read_text

DC_DIR = ".decision-context"
WORKSPACE_SCHEMA = "dcx_workspace_v0"
# the entries of .decision-context/ that never leave the machine; everything else is the public tree
PRIVATE_NAMES = ("private", "profile.toml", "sources.toml")
KEY_BYTES = 32
GOAL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$")


class Workspace:
    """Paths of one workspace. Everything under ``private/`` never leaves the machine."""

    def __init__(self, root: Path) -> None:
        self.root = root  # the goal root: the directory that holds .decision-context/

    def __repr__(self) -> str:
        return f"Workspace({self.root!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workspace) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @property
    def dc(self) -> Path:
        return self.root / DC_DIR

    @property
    def workspace_toml(self) -> Path:
        return self.dc / "workspace.toml"

    @property
    def profile(self) -> Path:
        return self.dc / "profile.toml"

    @property
    def sources(self) -> Path:
        return self.dc / "sources.toml"

    @property
    def packets(self) -> Path:
        return self.dc / "packets"

    @property
    def decisions(self) -> Path:
        return self.dc / "decisions"

    @property
    def events(self) -> Path:
        return self.dc / "events.jsonl"

    @property
    def statements(self) -> Path:
        return self.dc / "statements.jsonl"  # signed statements (SPEC §18)

    @property
    def signers(self) -> Path:
        return self.dc / "signers"  # public keys: signers/<agent-id>/<key-id>.pub (SPEC §18)

    @property
    def private(self) -> Path:
        return self.dc / "private"

    @property
    def signing(self) -> Path:
        return self.private / "signing"  # this host's signing keys: signing/<agent-id>.key

    @property
    def key_path(self) -> Path:
        return self.private / "key"

    @property
    def cursors(self) -> Path:
        return self.private / "cursors.json"

    @property
    def trees(self) -> Path:
        return self.private / "trees"

    @property
    def pending(self) -> Path:
        return self.private / "pending"

    @property
    def refs_db(self) -> Path:
        return self.private / "refs.sqlite"

    @property
    def freshness(self) -> Path:
        return self.private / "freshness.json"

    @property
    def cache(self) -> Path:
        return self.private / "cache"

    @property
    def index(self) -> Path:
        return self.private / "index"

    @property
    def openviking(self) -> Path:
        return self.private / "openviking"

    @property
    def extension_state(self) -> Path:
        return self.private / "extensions" / "state.json"

    @property
    def log_dir(self) -> Path:
        return self.private / "log"

    def rel(self, path: Path) -> str:
        """A path as shown to people: relative to the goal root, never absolute."""
        try:
            return path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return path.name

    @property
    def settings(self) -> dict[str, Any]:
        """``workspace.toml``, parsed once per process while it is unchanged (SPEC §3.6).

        A missing file is exit 3, one that is not TOML exit 2 (``workspace_invalid``).
        """
        from dcx.core.tomlerrors import once

        table: dict[str, Any] = once("workspace", self.workspace_toml, self._read_settings)
        return table

    def _read_settings(self) -> dict[str, Any]:
        import tomllib

        try:
            text = read_text(self.workspace_toml)
        except FileNotFoundError:
            raise NoWorkspace(
                f"{DC_DIR}/workspace.toml is missing",
                code="workspace_invalid",
                hint="run `dcx init` to restore it",
            ) from None
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"{DC_DIR}/workspace.toml: invalid TOML ({exc})", code="workspace_invalid"
            ) from None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InvalidInput(
                f"{DC_DIR}/workspace.toml: invalid TOML ({exc})", code="workspace_invalid"
            ) from None

    @cached_property
    def goal_id(self) -> str:
        data = self.settings
        goal = data.get("goal_id")
        if (
            data.get("schema_version") != WORKSPACE_SCHEMA
            or not isinstance(goal, str)
            or not GOAL_ID_RE.fullmatch(goal)
        ):
            raise InvalidInput(
                f"{DC_DIR}/workspace.toml: expected schema_version = {WORKSPACE_SCHEMA!r} and a goal_id token",
                code="workspace_invalid",
                field="goal_id",
            )
        return goal


def find_workspace(explicit: str | None = None, *, cwd: Path | None = None) -> Workspace:
    """Locate the workspace: ``-C``, then ``DCX_WORKSPACE``, then walk up from ``cwd``."""
    chosen = explicit or os.environ.get("DCX_WORKSPACE")
    if chosen:
        start = Path(chosen).expanduser()
        if start.name == DC_DIR:
            start = start.parent
        if (start / DC_DIR).is_dir():
            return _checked(Workspace(start.resolve()))
        raise NoWorkspace(
            f"no {DC_DIR}/ folder in the directory given by {'-C' if explicit else 'DCX_WORKSPACE'}",
            hint="run `dcx init` there first",
        )
    here = (cwd or Path.cwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / DC_DIR).is_dir():
            return _checked(Workspace(candidate))
    raise NoWorkspace(
        f"no {DC_DIR}/ folder here or in any parent directory",
        hint="run `dcx init` in the goal's root directory",
    )


def _checked(ws: Workspace) -> Workspace:
    """``.decision-context`` linked elsewhere is refused unless allowed (SPEC §3.5 v4)."""
    from dcx.core.fsutil import check_workspace_root

    check_workspace_root(ws.root)
    return ws


def goal_id_from_name(name: str) -> str:
    """A folder name made into a goal token."""
    token = re.sub(r"[^A-Za-z0-9_.:-]+", "-", name).strip("-._:")
    return (token or "goal")[:128]
