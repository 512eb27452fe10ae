"""dcx-obelisk as dcx runs it: a subprocess, one JSON request in, one response out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

FAKE_BIN = Path(__file__).resolve().parents[3] / "fixtures" / "obelisk" / "bin"
REQUEST = {
    "schema_version": "decision_context_advisory_retrieve_request_v0",
    "operation": "retrieve",
    "namespace": "decision-context",
    "scope_ref": "host-session:codex:thread-a",
    "query": "cache ttl QUERY-CANARY",
    "query_summary": "Cache TTL question",
    "max_results": 4,
    "timeout_seconds": 10,
    "observed_at": "2026-11-29T18:00:00Z",
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".fake-obelisk").mkdir(parents=True)
    return home


def _env(home: Path, *, fake: bool = True) -> dict[str, str]:
    path = os.environ.get("PATH", "")
    return {
        "HOME": str(home),
        "PATH": f"{FAKE_BIN}{os.pathsep}{path}" if fake else "/nonexistent",
        "TMPDIR": str(home),
    }


def _run(
    home: Path, *args: str, request: dict | None = None, fake: bool = True, timeout: float = 30
):
    body = json.dumps(request if request is not None else REQUEST)
    return subprocess.run(
        [sys.executable, "-m", "dcx_obelisk", *args],
        input=body,
        capture_output=True,
        text=True,
        env=_env(home, fake=fake),
        timeout=timeout,
    )


def _calls(home: Path) -> list[dict]:
    log = home / ".fake-obelisk" / "calls.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _response(proc) -> dict:
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_doctor_runs_only_obelisk_version(home: Path) -> None:
    proc = _run(home, "--doctor")
    assert proc.returncode == 0 and "obelisk 0.2.3" in proc.stdout
    assert _calls(home) == [{"argv": ["--version"]}]


def test_doctor_fails_without_obelisk(home: Path) -> None:
    assert _run(home, "--doctor", fake=False).returncode == 1
    (home / ".fake-obelisk" / "mode").write_text("version-fail")
    assert _run(home, "--doctor").returncode == 1


def test_retrieve_returns_only_the_sessions_visible_turns(home: Path) -> None:
    response = _response(_run(home))
    assert response["status"] == "completed" and response["reason_code"] is None
    assert [i["content"] for i in response["items"]] == [
        "KEEP user: should we raise the cache TTL to 600 seconds?",
        "KEEP assistant: the runbook says 300 seconds; raising it needs owner sign-off.",
    ]
    assert [i["score"] for i in response["items"]] == [7.25, 6.5]
    (call,) = _calls(home)
    assert call["argv"][0] == "--query" and len(call["argv"]) == 2 and call["query_file_existed"]
    assert "return await search(query, options);" in call["module"]
    assert (
        '"sessionId": "codex:thread-a"' in call["module"] and '"source": "codex"' in call["module"]
    )
    assert '"limit": 16' in call["module"] and "QUERY-CANARY" in call["module"]
    assert not Path(call["argv"][1]).exists() and not Path(call["argv"][1]).parent.exists()


def test_never_build_attune_or_the_database(home: Path) -> None:
    _run(home)
    _run(home, "--doctor")
    assert {call["argv"][0] for call in _calls(home)} == {"--query", "--version"}
    # statically too: every obelisk invocation in the package starts with --version or --query
    import ast

    package = Path(__file__).resolve().parents[1] / "src" / "dcx_obelisk"
    flags = []
    for source in package.glob("*.py"):
        assert "sqlite" not in source.read_text().lower()  # never opens Obelisk's database
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "run_obelisk":
                flags.append(node.args[0].elts[0].value)
    assert sorted(flags) == ["--query", "--version"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("fail", "provider_search_failed"), ("garbage", "provider_search_parse_failed")],
)
def test_obelisk_failures_become_reason_codes(home: Path, mode: str, reason: str) -> None:
    (home / ".fake-obelisk" / "mode").write_text(mode)
    proc = _run(home)
    response = _response(proc)
    assert (response["status"], response["reason_code"], response["items"]) == (
        "unavailable",
        reason,
        [],
    )
    assert "CANARY" not in proc.stdout and "CANARY" not in proc.stderr
    assert not Path(_calls(home)[0]["argv"][1]).exists()


def test_missing_obelisk_is_cli_unavailable(home: Path) -> None:
    assert _response(_run(home, fake=False))["reason_code"] == "provider_cli_unavailable"


def test_hanging_obelisk_is_stopped_before_the_deadline(home: Path) -> None:
    (home / ".fake-obelisk" / "mode").write_text("hang")
    started = time.monotonic()
    # a deadline long enough for the fake to start and record its call on a loaded machine
    response = _response(_run(home, request={**REQUEST, "timeout_seconds": 8}))
    assert response["reason_code"] == "provider_search_timeout"
    assert time.monotonic() - started < 8 + 30  # stopped at its deadline, not after the hang
    calls = _calls(home)
    assert calls, "the fake obelisk never started"
    assert not Path(calls[0]["argv"][1]).exists()


def test_sigterm_still_deletes_the_query_file(home: Path) -> None:
    (home / ".fake-obelisk" / "mode").write_text("hang")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dcx_obelisk"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(home),
        start_new_session=True,
    )
    proc.stdin.write(json.dumps(REQUEST).encode())
    proc.stdin.close()
    deadline = time.monotonic() + 10
    while not _calls(home) and time.monotonic() < deadline:
        time.sleep(0.05)
    import signal

    os.killpg(proc.pid, signal.SIGTERM)  # what dcx does at its deadline
    proc.wait(timeout=5)
    proc.stdout.close()
    proc.stderr.close()
    assert not Path(_calls(home)[0]["argv"][1]).exists()


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"scope_ref": "codex://threads/thread-a"}, "scope_unsupported"),
        ({"scope_ref": "host-session:claude:abc"}, "scope_unsupported"),
        ({"scope_ref": "host-session:codex:a/b"}, "scope_unsupported"),
        ({"operation": "sync"}, "request_invalid"),
        ({"max_results": True}, "request_invalid"),
    ],
)
def test_unsupported_scope_or_request(home: Path, change: dict, reason: str) -> None:
    assert _response(_run(home, request={**REQUEST, **change}))["reason_code"] == reason
    assert _calls(home) == []
