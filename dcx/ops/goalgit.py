"""git in the goal's own repository, for ``dcx sync`` (SPEC §3.7, §16).

Every call is one ``git`` process through dcx's one subprocess boundary
(``dcx.core.process.run_bounded``: argv without a shell, an allow-listed
environment, its own process group, capped output, a deadline) with the
settings every git dcx runs takes (``dcx.core.gitcmd``): no hook, monitor,
signing, pager, editor, prompt or askpass, and every protocol named. On top
of them, for this repository:

- each filter, diff and merge driver its config defines is switched off by
  name (asked once: ``git config --name-only --get-regexp``), so a committed
  ``.gitattributes`` cannot start one during dcx's ``add``, ``commit`` or
  ``merge``;
- the network steps (``fetch``, ``push``, ``ls-remote``) allow the ordinary
  transports (file, git, http, https, ssh; never ``ext`` or ``fd``), run
  ssh as the user's global config or ``GIT_SSH_COMMAND`` say (else plain
  ``ssh``, never a command the repository chose), take the credential
  helpers of the user's global config only, and start git's own
  ``git-upload-pack``/``git-receive-pack`` on the other end.

The user's global config (identity, credential helpers) applies;
``SSH_AUTH_SOCK`` and ``GIT_SSH_COMMAND`` pass through for ssh remotes.
"""

from __future__ import annotations

from dcx.core import gitcmd
from dcx.core.errors import Refused
from dcx.core.workspace import Workspace

GIT_TIMEOUT = 120.0  # seconds per git call (a fetch or push over a network)
GIT_ALLOW = (
    "SSH_AUTH_SOCK",
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_AUTHOR_DATE",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_COMMITTER_DATE",
    "GIT_CONFIG_GLOBAL",
    "XDG_CONFIG_HOME",
    "USER",
)
USER_NETWORK_KEYS = r"^(credential\..*helper|core\.sshcommand)$"


def _refuse(code: str, message: str, hint: str | None = None) -> Refused:
    return Refused(f"sync refused ({code}): {message}", code=code, hint=hint)


class GoalGit:
    """The goal repository's git: ``git(*args)`` -> (exit status or None, stdout)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._drivers: list[tuple[str, str]] | None = None
        self._network: list[tuple[str, str]] | None = None

    def raw(
        self,
        args: tuple[str, ...] | list[str],
        extra: list[tuple[str, str]] | tuple[()] = (),
        *,
        network: bool = False,
        stdin: bytes = b"",
        timeout: float = GIT_TIMEOUT,
    ) -> tuple[int | None, str]:
        from dcx.core.process import run_bounded

        outcome = run_bounded(
            gitcmd.argv(args, extra=list(extra), network=network),
            timeout=timeout,
            stdin=stdin,
            env_allow=GIT_ALLOW,
            extra_env=gitcmd.env(),
            cwd=str(self.ws.root),
        )
        if outcome.status == "spawn_failed":
            raise _refuse("sync_git_missing", "git could not be run", hint="install git")
        if outcome.status != "exited":
            return None, ""
        return outcome.returncode, outcome.stdout.decode("utf-8", "replace")

    def __call__(
        self, *args: str, network: bool = False, stdin: bytes = b"", timeout: float = GIT_TIMEOUT
    ) -> tuple[int | None, str]:
        extra = self.drivers() + (self.network_settings() if network else [])
        return self.raw(args, extra, network=network, stdin=stdin, timeout=timeout)

    def check_version(self) -> None:
        """A git too old to honour the settings is refused, naming its version (SPEC §3.7)."""
        code, out = self.raw(["--version"])
        version = gitcmd.parse_version(out) if code == 0 else None
        if gitcmd.too_old(version):
            shown = ".".join(map(str, version)) if version else "unknown"
            wanted = ".".join(map(str, gitcmd.MIN_GIT))
            raise _refuse(
                "sync_git_too_old",
                f"git {shown} cannot be told to start no other program (git {wanted} or later can)",
                hint=f"install git {wanted} or later",
            )

    def drivers(self) -> list[tuple[str, str]]:
        if self._drivers is None:
            code, out = self.raw(gitcmd.DRIVER_QUERY)
            self._drivers = gitcmd.driver_settings(out.splitlines() if code == 0 else ())
        return self._drivers

    def network_settings(self) -> list[tuple[str, str]]:
        """The user's own ssh command and credential helpers (global config); git's own pack programs
        are named on the command line (``gitcmd.TRANSPORT_OPTIONS``)."""
        if self._network is None:
            code, out = self.raw(["config", "--global", "--get-regexp", USER_NETWORK_KEYS])
            users = [
                (key, value)
                for key, _, value in (line.partition(" ") for line in out.splitlines())
                if code == 0 and key
            ]
            ssh = [(k, v) for k, v in users if k.lower() == "core.sshcommand"]
            self._network = [*users, *([] if ssh else [("core.sshCommand", "ssh")])]
        return self._network
