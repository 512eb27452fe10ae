"""The global options of every command, typer-free (the fast paths in ``_fast`` use them too)."""

from __future__ import annotations


class Globals:
    """Options given before the subcommand, as in git (a plain class: no dataclasses import at start-up)."""

    def __init__(self, workspace: str | None = None, verbose: int = 0, no_color: bool = False) -> None:
        self.workspace = workspace
        self.verbose = verbose
        self.no_color = no_color

    def __repr__(self) -> str:
        return f"Globals(workspace={self.workspace!r}, verbose={self.verbose!r}, no_color={self.no_color!r})"

    def ws(self):  # -> Workspace; imported lazily to keep --help light
        from dcx.privacy import LazyPrivateValues
        from dcx.public import bind_goal_root, bind_private_values
        from dcx.workspace import find_workspace

        found = find_workspace(self.workspace)
        bind_goal_root(str(found.root))
        bind_private_values(LazyPrivateValues(found))  # SPEC 3.4: writers refuse this workspace's values
        return found
