"""How dcx runs git, as data: the one place every git call takes its settings from (SPEC §3.7).

git reads settings that start other programs — hooks, a file-system monitor,
filter and merge drivers, textconv, an external diff, gpg, ssh, askpass,
credential helpers, an alternate-refs command, remote helpers such as
``ext::`` — from repository config that dcx did not write (a source
repository is anyone's; even the goal's own is foreign input after a
merge). Every git dcx starts, in a source repository (``dcx.sources``) or in
the goal's repository (``dcx sync``), gets the settings below on its command
line, where they win over every config file:

- ``SETTINGS``: ``-c key=value`` pairs that switch each program off (an empty
  value switches a command off; ``core.hooksPath`` is an empty folder);
- ``PROTOCOLS``: ``protocol.allow=never`` and each protocol named — all
  ``never`` for local work, the ordinary transports ``always`` for the
  network steps of ``dcx sync`` (fetch, push), ``ext`` and ``fd`` never;
- ``driver_settings``: each filter, diff and merge driver the repository's
  config defines, switched off by name — the override for dcx's own ``add``,
  ``commit`` and ``merge`` (a committed ``.gitattributes`` may name them);
- ``ENV``: the environment: no prompt, pager or editor, no lazy fetch of
  missing objects, no system attributes, the C locale.

This module only builds argv and environments; it starts nothing. Any runner
takes them (``dcx.core.process.run_bounded`` today). ``docs/safety.md`` lists
the same data (``scripts/git_settings.py`` writes that list from here).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import NamedTuple

MIN_GIT = (2, 36)  # core.fsmonitor became a boolean; before, "false" named a hook program
HOOKS_DIR = "{empty folder}"  # the value of core.hooksPath: an empty folder made for this process


class Setting(NamedTuple):
    key: str
    value: str
    why: str


SETTINGS: tuple[Setting, ...] = (
    Setting("core.fsmonitor", "false", "no file-system monitor hook on an index refresh"),
    Setting("core.hooksPath", HOOKS_DIR, "no hook of any kind (commit, merge, checkout, push, …)"),
    Setting("commit.gpgSign", "false", "no gpg (or gpg.program) to sign dcx's commits"),
    Setting("tag.gpgSign", "false", "no gpg to sign a tag"),
    Setting("push.gpgSign", "false", "no gpg to sign a push"),
    Setting("merge.verifySignatures", "false", "no gpg to verify what is merged"),
    Setting("log.showSignature", "false", "no gpg to show a signature in `git log`"),
    Setting("core.sshCommand", "", "no ssh command the repository chose"),
    Setting("core.askPass", "", "no askpass program to prompt for a password"),
    Setting("credential.helper", "", "no credential helper (the empty value clears the list)"),
    Setting("core.alternateRefsCommand", "", "no command listing an alternate's refs"),
    Setting("core.gitProxy", "", "no proxy command for the git:// protocol"),
    Setting("uploadpack.packObjectsHook", "", "no hook in front of pack-objects"),
    Setting("diff.external", "", "no external diff program"),
    Setting("core.editor", ":", "no editor (`:` is git's own no-op)"),
    Setting("sequence.editor", ":", "no sequence editor"),
    Setting("core.pager", "", "no pager"),
    Setting("gc.auto", "0", "no automatic `git gc` (nor its pre-auto-gc hook)"),
    Setting("maintenance.auto", "false", "no automatic maintenance"),
    Setting("submodule.recurse", "false", "no work in submodules (their own config, remotes)"),
    Setting("fetch.recurseSubmodules", "false", "no fetch into submodules"),
)

# protocol -> allowed for the network steps of `dcx sync` (fetch, push); never for anything else
PROTOCOLS: dict[str, bool] = {
    "file": True,
    "git": True,
    "http": True,
    "https": True,
    "ssh": True,
    "ext": False,  # runs its URL as a command
    "fd": False,  # talks over inherited file descriptors
}

# filter, diff and merge drivers: the keys of each that name a program, and the value that stops it
DRIVER_KEYS: dict[str, tuple[tuple[str, str], ...]] = {
    "filter": (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")),
    "diff": (("textconv", ""), ("command", "")),
    "merge": (("driver", ""),),
}

# The environment of every git dcx starts, with why.
ENV: tuple[Setting, ...] = (
    Setting("GIT_CONFIG_NOSYSTEM", "1", "no system-wide config"),
    Setting("GIT_ATTR_NOSYSTEM", "1", "no system-wide attributes"),
    Setting("GIT_TERMINAL_PROMPT", "0", "never prompt on the terminal"),
    Setting("GIT_ASKPASS", "", "no askpass program"),
    Setting("SSH_ASKPASS", "", "no ssh askpass program"),
    Setting("SSH_ASKPASS_REQUIRE", "never", "ssh never starts an askpass program"),
    Setting("GIT_EDITOR", ":", "no editor"),
    Setting("GIT_SEQUENCE_EDITOR", ":", "no sequence editor"),
    Setting("GIT_MERGE_AUTOEDIT", "no", "no editor for a merge message"),
    Setting("GIT_PAGER", "cat", "no pager (with --no-pager, none is started)"),
    Setting("PAGER", "cat", "no pager"),
    Setting("GIT_NO_LAZY_FETCH", "1", "no fetch of a partial clone's missing objects"),
    Setting("GIT_PROTOCOL_FROM_USER", "0", "protocols git allows only for a user's own URLs: none"),
    Setting("LC_ALL", "C", "the C locale: stable messages and formats"),
    Setting("LANG", "C", "the C locale"),
)

_hooks_dir: str | None = None


def empty_hooks_dir() -> str:
    """An empty folder, made once for this process (0700, removed at exit): git finds no hook there."""
    global _hooks_dir
    if _hooks_dir is None or not os.path.isdir(_hooks_dir):
        import atexit
        import shutil
        import tempfile

        _hooks_dir = tempfile.mkdtemp(prefix="dcx-no-hooks-")
        atexit.register(shutil.rmtree, _hooks_dir, True)
    return _hooks_dir


def protocol_settings(*, network: bool) -> list[tuple[str, str]]:
    """``protocol.allow=never``, then every protocol by name (allowed only for sync's network steps)."""
    out = [("protocol.allow", "never")]
    out += [
        (f"protocol.{name}.allow", "always" if network and allowed else "never")
        for name, allowed in PROTOCOLS.items()
    ]
    return out


def driver_settings(config_names: Iterable[str]) -> list[tuple[str, str]]:
    """Each filter, diff and merge driver named in ``config_names`` (``git config --name-only
    --get-regexp`` output lines, e.g. ``filter.lfs.clean``) switched off by name."""
    seen: dict[tuple[str, str], None] = {}
    for name in config_names:
        section, _, rest = name.strip().partition(".")
        driver, _, _key = rest.rpartition(".")
        if section.lower() in DRIVER_KEYS and driver:
            seen[(section.lower(), driver)] = None
    return [
        (f"{section}.{driver}.{key}", value)
        for section, driver in seen
        for key, value in DRIVER_KEYS[section]
    ]


# The programs a network step starts on the other end of a local or ssh transport: git's own, named
# on the command line (``remote.<name>.uploadpack``/``receivepack`` keep the first value config gives,
# so a ``-c`` cannot override the repository's).
TRANSPORT_OPTIONS: dict[str, tuple[str, ...]] = {
    "fetch": ("--upload-pack=git-upload-pack",),
    "ls-remote": ("--upload-pack=git-upload-pack",),
    "push": ("--receive-pack=git-receive-pack",),
}

DRIVER_QUERY = ("config", "--name-only", "--get-regexp", r"^(filter|diff|merge)\.")


def config_args(extra: Sequence[tuple[str, str]] = (), *, network: bool = False) -> list[str]:
    """``-c key=value`` for every setting above, the protocols, then ``extra`` (which win: later)."""
    pairs = [(s.key, empty_hooks_dir() if s.value == HOOKS_DIR else s.value) for s in SETTINGS]
    pairs += protocol_settings(network=network)
    pairs += list(extra)
    return [arg for key, value in pairs for arg in ("-c", f"{key}={value}")]


def argv(
    args: Sequence[str],
    *,
    flags: Sequence[str] = (),
    extra: Sequence[tuple[str, str]] = (),
    network: bool = False,
) -> list[str]:
    """The whole argv of one git call: ``git --no-pager FLAGS -c … ARGS`` (a network step's
    subcommand followed by its ``TRANSPORT_OPTIONS``)."""
    args = list(args)
    if network and args and args[0] in TRANSPORT_OPTIONS:
        args[1:1] = TRANSPORT_OPTIONS[args[0]]
    return ["git", "--no-pager", *flags, *config_args(extra, network=network), *args]


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The variables git runs with (the caller's runner adds its allow-listed base)."""
    return {**{s.key: s.value for s in ENV}, **(extra or {})}


def parse_version(text: str) -> tuple[int, ...] | None:
    """``git version 2.39.5`` -> (2, 39); None when it cannot be read."""
    words = text.split()
    numbers = words[2].split(".") if len(words) >= 3 else []
    try:
        version = tuple(int(n) for n in numbers[:2])
    except ValueError:
        return None
    return version if len(version) == 2 else None


def too_old(version: tuple[int, ...] | None) -> bool:
    return version is None or version < MIN_GIT
