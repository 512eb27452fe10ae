"""The global options of every command, typer-free (the fast paths in ``_fast`` use them too)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Globals:
    """Options given before the subcommand, as in git."""

    workspace: str | None = None
    verbose: int = 0
    no_color: bool = False

    def ws(self):  # -> Workspace; imported lazily to keep --help light
        from dcx.core.public import bind_goal_root, bind_private_values
        from dcx.core.workspace import find_workspace
        from dcx.state.privacy import LazyPrivateValues

        found = find_workspace(self.workspace)
        bind_goal_root(str(found.root))
        bind_private_values(LazyPrivateValues(found))  # SPEC 3.4: writers refuse this workspace's values
        return found

    def clock(self, observed_at: str | None = None):  # -> Clock; the one clock of this command
        """``--observed-at`` wins, then ``DCX_NOW``, then the system (``dcx.core.clock.clock_from_env``)."""
        from dcx.core.clock import clock_from_env

        return clock_from_env(observed_at)
