from __future__ import annotations

from pathlib import Path


def test_init_creates_layout_default_off(dcx, tmp_path: Path) -> None:
    result = dcx("init", "--goal-id", "checkout-latency", "--agent-id", "agent-a")
    assert result.exit_code == 0, result.stderr
    dc = Path(".decision-context")
    for name in (
        "README.md",
        ".gitignore",
        ".gitattributes",
        "workspace.toml",
        "profile.toml",
        "sources.toml",
        "events.jsonl",
    ):
        assert (dc / name).is_file(), name
    assert (dc / "packets").is_dir() and (dc / "decisions").is_dir()
    key = dc / "private" / "key"
    assert len(key.read_bytes()) == 32
    assert key.stat().st_mode & 0o777 == 0o600
    assert "enabled = false" in (dc / "profile.toml").read_text()
    assert 'enabled_agents = ["agent-a"]' in (dc / "profile.toml").read_text()
    ignored = (dc / ".gitignore").read_text().split()
    for private in ("profile.toml", "sources.toml", "private/", "*.lock", "*.tmp"):
        assert private in ignored


def test_init_twice_overwrites_nothing(dcx) -> None:
    assert dcx("init", "--goal-id", "g1").exit_code == 0
    dc = Path(".decision-context")
    (dc / "profile.toml").write_text("# my edits\n")
    key = (dc / "private" / "key").read_bytes()
    other = dcx("init", "--goal-id", "other")
    assert other.exit_code == 2 and "already serves goal 'g1'" in other.stderr
    second = dcx("init", "--format", "json")
    assert second.exit_code == 0
    assert second.json()["data"]["already_initialised"] is True
    assert second.json()["data"]["goal_id"] == "g1"
    assert (dc / "profile.toml").read_text() == "# my edits\n"
    assert (dc / "private" / "key").read_bytes() == key


def test_init_recreates_only_what_is_missing(dcx) -> None:
    dcx("init", "--goal-id", "g1")
    Path(".decision-context/README.md").unlink()
    result = dcx("init", "--format", "json")
    assert result.json()["data"]["created"] == [".decision-context/README.md"]


def test_init_goal_id_defaults_to_folder_name(dcx, tmp_path: Path) -> None:
    root = tmp_path / "My Goal!"
    root.mkdir()
    result = dcx("-C", str(root), "init", "--format", "json")
    assert result.json()["data"]["goal_id"] == "My-Goal"


def test_init_rejects_bad_goal_id(dcx) -> None:
    result = dcx("init", "--goal-id", "has space")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: --goal-id:")
    assert not Path(".decision-context").exists()


def test_workspace_found_by_walking_up_and_by_env(dcx, fresh_ws: Path) -> None:
    sub = fresh_ws / "a" / "b"
    sub.mkdir(parents=True)
    import os

    os.chdir(sub)
    assert dcx("status", "--format", "json").json()["data"]["activation"]["goal_id"] == "goal-test"
    os.chdir(fresh_ws.parent)
    assert dcx("status", "--format", "json", env={"DCX_WORKSPACE": str(fresh_ws)}).exit_code == 0
    assert dcx("-C", str(fresh_ws), "status", "--format", "json").exit_code == 0
