"""The global options of every command, as values (typer-free: ``dcx.cli.main`` makes them)."""

from __future__ import annotations


class Globals:
    """Options given before the subcommand, as in git.

    A plain class, not a dataclass: ``dataclasses`` imports ``inspect`` (about
    9 ms of a read-only command's start-up, SPEC §3.6).
    """

    __slots__ = ("allow_linked", "no_color", "verbose", "workspace")

    def __init__(
        self,
        workspace: str | None = None,
        verbose: int = 0,
        no_color: bool = False,
        allow_linked: bool = False,
    ) -> None:
        self.workspace = workspace
        self.verbose = verbose
        self.no_color = no_color
        self.allow_linked = allow_linked  # --allow-linked-workspace (SPEC §3.5 v4)

    def __repr__(self) -> str:
        return f"Globals(workspace={self.workspace!r}, verbose={self.verbose!r}, no_color={self.no_color!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Globals):
            return NotImplemented
        return (self.workspace, self.verbose, self.no_color) == (
            other.workspace,
            other.verbose,
            other.no_color,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it was

    def ws(self, *, writes: bool = True):  # -> Workspace; imported lazily to keep --help light
        """The workspace of ``-C`` (or found from here), bound as the goal root of the detector.

        A command that may write public text binds this workspace's private values
        too (SPEC §3.4: writers refuse them); ``writes=False`` is for a command that
        writes no file at all (``dcx status``).
        """
        from dcx.core.fsutil import begin_command
        from dcx.core.public import bind_goal_root, bind_private_values
        from dcx.core.workspace import find_workspace

        begin_command(allow_linked=self.allow_linked)
        found = find_workspace(self.workspace)
        bind_goal_root(str(found.root))
        if writes:
            from dcx.state.privacy import LazyPrivateValues

            bind_private_values(LazyPrivateValues(found))
        return found

    def clock(self, observed_at: str | None = None):  # -> Clock; the one clock of this command
        """``--observed-at`` wins, then ``DCX_NOW``, then the system (``dcx.core.clock.clock_from_env``)."""
        from dcx.core.clock import clock_from_env

        return clock_from_env(observed_at)
