"""`dcx workbench` over real HTTP (SPEC §12): every refusal, no writes, no leaks, a hung provider, Ctrl-C."""

from __future__ import annotations

import json
import socket
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.bounds import HOSTILE_SECONDS, cut_short
from tests.support.workbench import Workbench, hostile_goal, profile_text, running, start_workbench
from tests.support.workspace import tree_digest


@pytest.fixture
def goal(example: Path) -> Path:
    return hostile_goal(example)


@pytest.fixture
def bench(goal: Path) -> Iterator[Workbench]:
    with running(goal) as wb:
        yield wb


def recall_body(root: Path, **extra: object) -> dict[str, object]:
    return {
        "profile_toml": profile_text(root),
        "scope_ref": "",
        "query": "purge queue rollback drill",
        "query_summary": "rollback drill",
        **extra,
    }


# --- the page ----------------------------------------------------------------------------------


def test_page_needs_the_token_and_carries_a_strict_csp(bench: Workbench) -> None:
    assert bench.request("GET", "/")[0] == 403
    assert bench.request("GET", "/?token=wrong")[0] == 403
    status, headers, body = bench.request("GET", f"/?token={bench.token}")
    assert status == 200
    csp = headers["content-security-policy"]
    assert (
        "default-src 'none'" in csp and "script-src 'nonce-" in csp and "connect-src 'self'" in csp
    )
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert headers["referrer-policy"] == "no-referrer" and headers["cache-control"] == "no-store"
    page = body.decode()
    # self-contained: nothing fetched from elsewhere
    assert "http://" not in page.replace(bench.origin, "") and "https://" not in page
    assert "<link" not in page and "src=" not in page and "@import" not in page


def test_editor_text_cannot_close_its_island(goal: Path) -> None:
    profile = goal / ".decision-context" / "profile.toml"
    profile.write_text(profile.read_text() + "# </script><script>alert(1)</script>\n")
    with running(goal) as wb:
        _, _, body = wb.request("GET", f"/?token={wb.token}")
    page = body.decode()
    assert "</script><script>alert(1)" not in page
    assert "\\u003c/script\\u003e" in page


def test_foreign_host_is_421_even_with_the_token(bench: Workbench) -> None:
    status, _, _ = bench.request(
        "GET", f"/?token={bench.token}", headers={"Host": f"evil.example:{bench.port}"}
    )
    assert status == 421
    status, _ = bench.post("/api/inspect", {"profile_toml": ""}, headers={"Host": "evil.example"})
    assert status == 421


def test_localhost_host_is_accepted(bench: Workbench) -> None:
    status, _, _ = bench.request(
        "GET", f"/?token={bench.token}", headers={"Host": f"localhost:{bench.port}"}
    )
    assert status == 200


def test_unknown_path_404_and_other_methods_405(bench: Workbench) -> None:
    assert bench.request("GET", f"/other?token={bench.token}")[0] == 404
    assert bench.post("/api/nothing", {})[0] == 404
    assert bench.request("PUT", "/api/recall", b"{}")[0] == 405


# --- API refusals -------------------------------------------------------------------------------


def test_api_without_or_with_a_wrong_token_is_403(bench: Workbench, goal: Path) -> None:
    status, body = bench.post(
        "/api/inspect", {"profile_toml": profile_text(goal)}, headers={"X-DCX-Token": ""}
    )
    assert (status, body["error"]["code"]) == (403, "token_refused")
    status, body = bench.post(
        "/api/inspect", {"profile_toml": profile_text(goal)}, headers={"X-DCX-Token": "x" * 43}
    )
    assert status == 403


def test_cross_origin_or_missing_origin_post_is_403(bench: Workbench, goal: Path) -> None:
    body = {"profile_toml": profile_text(goal)}
    assert bench.post("/api/inspect", body, headers={"Origin": "http://evil.example"})[0] == 403
    assert (
        bench.post("/api/inspect", body, headers={"Origin": f"http://127.0.0.1:{bench.port + 1}"})[
            0
        ]
        == 403
    )
    status, _, _ = bench.request(
        "POST",
        "/api/inspect",
        json.dumps(body).encode(),
        {"Content-Type": "application/json", "X-DCX-Token": bench.token},
    )
    assert status == 403


def test_non_json_post_is_415(bench: Workbench) -> None:
    status, _, raw = bench.request(
        "POST",
        "/api/inspect",
        b"profile_toml=x",
        {
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": bench.origin,
            "X-DCX-Token": bench.token,
        },
    )
    assert status == 415 and json.loads(raw)["error"]["code"] == "json_required"


def test_oversize_body_is_413_and_unreadable_json_400(bench: Workbench) -> None:
    big = json.dumps({"profile_toml": "#" * (64 * 1024)}).encode()
    headers = {
        "Content-Type": "application/json",
        "Origin": bench.origin,
        "X-DCX-Token": bench.token,
    }
    assert bench.request("POST", "/api/inspect", big, headers)[0] == 413
    status, _, raw = bench.request("POST", "/api/inspect", b"{not json", headers)
    assert status == 400 and json.loads(raw)["error"]["code"] == "invalid_json"
    status, _, raw = bench.request(
        "POST", "/api/inspect", b'{"profile_toml": "a", "profile_toml": "b"}', headers
    )
    assert status == 400 and json.loads(raw)["error"]["field"] == "profile_toml"
    status, _, raw = bench.request("POST", "/api/inspect", b"[" * 30_000 + b"]" * 30_000, headers)
    assert status == 400 and json.loads(raw)["error"]["code"] == "invalid_json"
    status, _, raw = bench.request("POST", "/api/inspect", b"[1, 2]", headers)
    assert status == 400 and json.loads(raw)["error"]["code"] == "invalid_json"


def test_invalid_profile_is_400_naming_the_key(bench: Workbench, goal: Path) -> None:
    bad = profile_text(goal).replace("max_results = 2", "max_results = 99")
    status, body = bench.post("/api/inspect", {"profile_toml": bad})
    assert status == 400
    assert body["error"]["field"] == "context_provider.max_results"
    assert "profile_toml: context_provider.max_results, line" in body["error"]["message"]
    status, body = bench.post(
        "/api/inspect",
        {
            "profile": {
                "schema_version": "decision_context_profile_v0",
                "goal_id": "catalog-cache-ttl",
                "enabled": "yes",
            }
        },
    )
    assert status == 400 and body["error"]["field"] == "enabled"
    status, body = bench.post("/api/recall", {**recall_body(goal), "colour": "red"})
    assert status == 400 and body["error"]["field"] == "colour"


def test_profile_of_another_goal_is_400(bench: Workbench, goal: Path) -> None:
    other = profile_text(goal).replace('goal_id = "catalog-cache-ttl"', 'goal_id = "another-goal"')
    for path, body in (
        ("/api/inspect", {"profile_toml": other}),
        ("/api/recall", recall_body(goal, profile_toml=other)),
    ):
        status, answer = bench.post(path, body)
        assert status == 400 and answer["error"]["code"] == "goal_scope_mismatch"


def test_a_second_agent_in_the_posted_profile_does_not_change_who_acts(
    bench: Workbench, goal: Path
) -> None:
    only_b = profile_text(goal).replace(
        'enabled_agents = ["agent-a"]', 'enabled_agents = ["agent-b"]'
    )
    status, answer = bench.post("/api/inspect", {"profile_toml": only_b})
    assert status == 200 and answer["data"]["activation"]["agent_id"] == "agent-a"
    assert answer["data"]["activation"]["status"] == "agent_not_enabled"
    status, answer = bench.post("/api/recall", recall_body(goal, profile_toml=only_b))
    assert status == 400 and answer["error"]["code"] == "agent_not_enabled"
    both = profile_text(goal).replace(
        'enabled_agents = ["agent-a"]', 'enabled_agents = ["agent-b", "agent-a"]'
    )
    status, answer = bench.post("/api/recall", recall_body(goal, profile_toml=both))
    assert status == 200 and answer["data"]["agent_id"] == "agent-a"


def test_disabled_posted_profile_inspects_but_does_not_recall(bench: Workbench, goal: Path) -> None:
    off = profile_text(goal).replace("enabled = true", "enabled = false")
    status, answer = bench.post("/api/inspect", {"profile_toml": off})
    assert status == 200 and (
        answer["data"]["activation"]["status"],
        answer["data"]["activation"]["active"],
    ) == ("disabled", False)
    status, answer = bench.post("/api/recall", recall_body(goal, profile_toml=off))
    assert status == 400 and answer["error"]["code"] == "disabled"


# --- recall -------------------------------------------------------------------------------------


def test_recall_answers_what_dcx_recall_prints(bench: Workbench, goal: Path) -> None:
    from tests.support.cli import run_dcx

    status, answer = bench.post("/api/recall", recall_body(goal, max_results=2))
    assert status == 200 and answer["schema_version"] == "dcx_result_v0"
    packet = answer["data"]
    cli = run_dcx(
        "-C",
        str(goal),
        "recall",
        "--scope",
        "",
        "--query",
        "purge queue rollback drill",
        "--query-summary",
        "rollback drill",
        "--max-results",
        "2",
        "--format",
        "json",
    ).json()["data"]
    assert packet["schema_version"] == "decision_context_ephemeral_recall_v0"
    # the same results through the same port; the clock is the same fixed one
    assert [(r["provider_ref"], r["content"]) for r in packet["results"]] == [
        (r["provider_ref"], r["content"]) for r in cli["results"]
    ]
    assert packet["retrieval"]["retrieval_ref"] == cli["retrieval"]["retrieval_ref"]
    assert any("<script>" in r["content"] for r in packet["results"])
    # the page names each hit's file for the person here; dcx recall's JSON does not
    where = answer["view"]["locations"]
    assert set(where) == {r["provider_ref"] for r in packet["results"]}
    hostile = next(r["provider_ref"] for r in packet["results"] if "<script>" in r["content"])
    assert where[hostile] == "hostile-note.md (source:authority:docs)"
    assert "hostile-note.md" not in json.dumps(cli)


def test_the_posted_profile_is_what_recalls(bench: Workbench, goal: Path) -> None:
    one = profile_text(goal).replace("max_results = 2", "max_results = 1")
    status, answer = bench.post("/api/recall", recall_body(goal, profile_toml=one))
    assert status == 200 and len(answer["data"]["results"]) == 1
    none = profile_text(goal).replace('provider = "bm25"', 'provider = "none"')
    status, answer = bench.post("/api/recall", recall_body(goal, profile_toml=none))
    assert status == 200
    assert (answer["data"]["status"], answer["data"]["reason_code"]) == (
        "unavailable",
        "context_provider_disabled",
    )
    assert answer["hint"]


def test_bounds_are_the_recall_bounds(bench: Workbench, goal: Path) -> None:
    status, answer = bench.post("/api/recall", recall_body(goal, max_results=9))
    assert status == 400 and answer["error"]["field"] == "max_results"
    status, answer = bench.post("/api/recall", recall_body(goal, max_results=True))
    assert status == 400 and answer["error"]["field"] == "max_results"
    status, answer = bench.post("/api/recall", recall_body(goal, query="q" * 1001))
    assert status == 400 and answer["error"]["field"] == "query"
    status, answer = bench.post(
        "/api/recall", recall_body(goal, query_summary="key AKIAIOSFODNN7EXAMPLE")
    )
    assert status == 400 and answer["error"]["field"] == "query_summary"


def test_an_unknown_source_in_the_scope_is_said_so(bench: Workbench, goal: Path) -> None:
    """A typo in the scope is 400 "unknown source in scope" naming scope_ref, not a recall whose
    provider is "unavailable"; a source the registry holds still recalls."""
    status, answer = bench.post("/api/recall", recall_body(goal, scope_ref="source:nope"))
    assert status == 400, answer
    error = answer["error"]
    assert error["code"] == "unknown_scope_source" and error["field"] == "scope_ref"
    assert "unknown source in scope" in error["message"]
    status, answer = bench.post(
        "/api/recall", recall_body(goal, scope_ref="source:source:authority:docs")
    )
    assert status == 200 and answer["data"]["status"] == "completed"


CANARY_QUERY = "zebracanary4417 rollback"
CANARY_CONFIG = "ovcanary9913-secret-value"


def test_nothing_on_disk_changes_and_posted_values_leak_nowhere(goal: Path) -> None:
    before = tree_digest(goal)
    with_config = (
        profile_text(goal).replace('provider = "bm25"', 'provider = "openviking"')
        + f'\n[context_provider.config]\napi_key = "{CANARY_CONFIG}"\n'
    )
    wb = start_workbench(goal, env={"PATH": "/nonexistent"})  # no `ov` to find
    try:
        answers = [
            wb.post("/api/inspect", {"profile_toml": profile_text(goal)}),
            wb.post("/api/recall", recall_body(goal, query=CANARY_QUERY)),
            wb.post("/api/recall", recall_body(goal, query=CANARY_QUERY, profile_toml=with_config)),
            wb.post("/api/inspect", {"profile_toml": with_config}),
            wb.post(
                "/api/recall", recall_body(goal, query=CANARY_QUERY, profile_toml="enabled = [")
            ),
        ]
    finally:
        code, stderr = wb.stop()
    assert [status for status, _ in answers] == [200, 200, 200, 200, 400]
    assert answers[2][1]["data"]["reason_code"] == "provider_cli_unavailable"
    assert tree_digest(goal) == before
    for _status, answer in answers:
        receipt = json.dumps(answer.get("data", {}).get("retrieval", answer))
        assert "zebracanary4417" not in receipt and "ovcanary9913" not in receipt
    assert "zebracanary4417" not in stderr and "ovcanary9913" not in stderr
    assert code == 130


def test_a_hung_provider_does_not_hang_the_page(goal: Path, tmp_path: Path) -> None:
    hang = tmp_path / "ov-hangs"
    hang.write_text(f"#!/bin/sh\nsleep {HOSTILE_SECONDS}\n")
    hang.chmod(hang.stat().st_mode | stat.S_IXUSR)
    hung = (
        profile_text(goal)
        .replace('provider = "bm25"', 'provider = "openviking"')
        .replace("timeout_seconds = 10", "timeout_seconds = 2")
    )
    # the program is the workspace's own choice (SPEC §12 v4): its profile.toml names it
    own = goal / ".decision-context" / "profile.toml"
    own.write_text(hung + f'\n[context_provider.config]\nbinary = "{hang}"\n')
    with running(goal) as wb:
        answer: dict[str, object] = {}

        def slow() -> None:
            answer["value"] = wb.post(
                "/api/recall", recall_body(goal, profile_toml=hung), timeout=30
            )

        thread = threading.Thread(target=slow)
        started = time.monotonic()
        thread.start()
        time.sleep(0.3)
        # the page and inspect still answer while the provider hangs
        assert wb.request("GET", f"/?token={wb.token}", timeout=5)[0] == 200
        assert wb.post("/api/inspect", {"profile_toml": profile_text(goal)}, timeout=5)[0] == 200
        thread.join(timeout=30)
        elapsed = time.monotonic() - started
    status, body = answer["value"]  # type: ignore[misc]
    assert status == 200
    assert body["data"]["status"] == "unavailable"
    assert body["data"]["reason_code"] in (
        "provider_search_timeout",
        "provider_service_unavailable",
        "provider_cli_unavailable",
        "provider_version_incompatible",
    )
    assert cut_short(elapsed, 2)  # the recall's deadline, not the provider's sleep


def test_ctrl_c_is_exit_130_and_the_port_is_released(goal: Path) -> None:
    wb = start_workbench(goal)
    port = wb.port
    assert wb.request("GET", f"/?token={wb.token}")[0] == 200
    code, stderr = wb.stop()
    assert code == 130
    assert stderr.strip().splitlines()[-1] == "workbench stopped; nothing was written"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))


def test_the_token_differs_per_run_and_the_server_binds_loopback_only(goal: Path) -> None:
    with running(goal) as first, running(goal) as second:
        assert first.token != second.token
        assert first.url.startswith("http://127.0.0.1:")
    with socket.socket() as probe:
        probe.settimeout(1)
        # nothing listens on a non-loopback address of this host for that port
        try:
            other = socket.gethostbyname(socket.gethostname())
        except OSError:
            other = "127.0.0.1"
        if not other.startswith("127."):
            assert probe.connect_ex((other, first.port)) != 0


def test_start_without_an_agent_is_exit_3(goal: Path) -> None:
    from tests.support.cli import run_dcx

    profile = goal / ".decision-context" / "profile.toml"
    profile.write_text(
        profile.read_text().replace('enabled_agents = ["agent-a"]', 'enabled_agents = ["a", "b"]')
    )
    result = run_dcx("-C", str(goal), "workbench", "--port", "0")
    assert result.exit_code == 3
    assert "agent_id_required" in result.stderr or "--agent-id" in result.stderr


def test_a_port_in_use_is_exit_2_naming_the_flag(goal: Path) -> None:
    from tests.support.cli import run_dcx

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        result = run_dcx("-C", str(goal), "workbench", "--port", str(port))
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: --port {port}: cannot listen there")


def test_json_mode_prints_one_document_with_the_address(goal: Path) -> None:
    import subprocess
    import sys

    exe = str(Path(sys.executable).parent / "dcx")
    proc = subprocess.Popen(
        [exe, "-C", str(goal), "workbench", "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        while True:
            line = proc.stdout.readline()  # type: ignore[union-attr]
            lines.append(line)
            if line.rstrip() == "}":
                break
        document = json.loads("".join(lines))
    finally:
        proc.send_signal(2)
        proc.communicate(timeout=10)
    assert document["command"] == "workbench" and document["data"]["url"].startswith(
        "http://127.0.0.1:"
    )
    assert document["data"]["agent_id"] == "agent-a"
    assert proc.returncode == 130
