"""dcx.core.gitcmd: the argv and environment every git dcx runs takes (SPEC §3.7), against a hand table."""

from __future__ import annotations

from dcx.core import gitcmd


def _config(argv: list[str]) -> dict[str, str]:
    pairs = [argv[i + 1] for i, arg in enumerate(argv) if arg == "-c"]
    out: dict[str, str] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        out[key] = value  # a later -c wins, as in git
    return out


def test_local_work_allows_no_protocol_and_switches_every_program_off() -> None:
    argv = gitcmd.argv(["status", "--porcelain"])
    assert argv[:2] == ["git", "--no-pager"] and argv[-2:] == ["status", "--porcelain"]
    config = _config(argv)
    assert {k: config[k] for k in ("core.fsmonitor", "commit.gpgSign", "tag.gpgSign")} == {
        "core.fsmonitor": "false",
        "commit.gpgSign": "false",
        "tag.gpgSign": "false",
    }
    for key in ("core.sshCommand", "core.askPass", "credential.helper", "diff.external"):
        assert config[key] == "", key
    assert config["protocol.allow"] == "never"
    for name in ("file", "git", "http", "https", "ssh", "ext", "fd"):
        assert config[f"protocol.{name}.allow"] == "never", name


def test_the_hooks_folder_is_empty_and_the_same_for_the_process() -> None:
    import os

    first = _config(gitcmd.argv(["status"]))["core.hooksPath"]
    assert os.path.isdir(first) and os.listdir(first) == []
    assert _config(gitcmd.argv(["log"]))["core.hooksPath"] == first


def test_network_steps_allow_the_ordinary_transports_and_name_gits_own_programs() -> None:
    fetch = gitcmd.argv(["fetch", "-q", "origin"], network=True)
    config = _config(fetch)
    assert {n: config[f"protocol.{n}.allow"] for n in ("file", "git", "http", "https", "ssh")} == {
        n: "always" for n in ("file", "git", "http", "https", "ssh")
    }
    assert config["protocol.ext.allow"] == config["protocol.fd.allow"] == "never"
    assert fetch[-4:] == ["fetch", "--upload-pack=git-upload-pack", "-q", "origin"]
    push = gitcmd.argv(["push", "-q"], network=True)
    assert push[-3:] == ["push", "--receive-pack=git-receive-pack", "-q"]
    assert gitcmd.argv(["fetch"])[-1] == "fetch"  # not a network step: nothing added


def test_every_configured_driver_is_switched_off_by_name() -> None:
    names = [
        "filter.lfs.clean",
        "filter.lfs.process",
        "filter.lfs.required",
        "diff.word.textconv",
        "merge.npm.driver",
        "merge.npm.name",
        "core.editor",  # not a driver
        "filter.a.b.clean",  # a driver name holding a dot
    ]
    assert gitcmd.driver_settings(names) == [
        ("filter.lfs.clean", ""),
        ("filter.lfs.smudge", ""),
        ("filter.lfs.process", ""),
        ("filter.lfs.required", "false"),
        ("diff.word.textconv", ""),
        ("diff.word.command", ""),
        ("merge.npm.driver", ""),
        ("filter.a.b.clean", ""),
        ("filter.a.b.smudge", ""),
        ("filter.a.b.process", ""),
        ("filter.a.b.required", "false"),
    ]
    extra = gitcmd.argv(["merge"], extra=gitcmd.driver_settings(["merge.npm.driver"]))
    assert _config(extra)["merge.npm.driver"] == ""


def test_versions() -> None:
    assert gitcmd.parse_version("git version 2.39.5\n") == (2, 39)
    assert gitcmd.parse_version("git version 2.45.1.windows.1") == (2, 45)
    assert gitcmd.parse_version("nonsense") is None
    assert gitcmd.too_old((2, 35)) and gitcmd.too_old(None) and not gitcmd.too_old((2, 36))


def test_the_environment_has_no_prompt_pager_editor_or_lazy_fetch() -> None:
    env = gitcmd.env({"EXTRA": "1"})
    assert env["GIT_TERMINAL_PROMPT"] == "0" and env["GIT_NO_LAZY_FETCH"] == "1"
    assert env["GIT_ASKPASS"] == "" and env["SSH_ASKPASS"] == "" and env["GIT_EDITOR"] == ":"
    assert env["EXTRA"] == "1"
