"""The OpenViking adapter against a fake ``ov`` replaying real 0.5.2 recordings (SPEC §6.4)."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from dcx.core.errors import InvalidInput
from dcx.evidence.recall import make_provider
from dcx.state.profile import load_profile
from tests.support.recall import enable, request
from tests.support.workspace import REPO

FAKE = REPO / "fixtures" / "openviking-0.5.2" / "fake_ov.py"
SCOPE = "viking://resources/catalog-ttl"
HAPPY = {
    "version": "version_subcommand",  # `ov version`: the CLI's and the server's versions
    "status": "status_json",
    "find": "find_L2_read_content",
    "read": {"*": "read_uri"},
}


class FakeOv:
    def __init__(
        self,
        root: Path,
        tmp: Path,
        cases: dict[str, Any],
        *,
        language: bool = True,
        sleep: dict[str, float] | None = None,
        config: dict[str, Any] | None = None,
        namespace: str = "decision-context",
        timeout: float = 10,
    ) -> None:
        self.log = tmp / "ov-calls.jsonl"
        scenario = tmp / "scenario.json"
        scenario.write_text(
            json.dumps({"log": str(self.log), "cases": cases, "sleep": sleep or {}})
        )
        self.binary = tmp / "bin" / "ov"
        self.binary.parent.mkdir(exist_ok=True)
        self.binary.write_text(
            f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" --scenario "{scenario}" "$@"\n'
        )
        self.binary.chmod(0o755)
        if language:  # what `ov language en` leaves behind
            settings = Path(os.environ["HOME"]) / ".openviking" / "ovcli.settings.conf"
            settings.parent.mkdir(parents=True, exist_ok=True)
            settings.write_text('{"language": "en"}')
        self.ws = enable(
            root,
            provider="openviking",
            namespace=namespace,
            timeout=timeout,
            config={"binary": str(self.binary), "url": "http://127.0.0.1:1933", **(config or {})},
        )

    def provider(self, *, transient: bool = False):
        return make_provider(self.ws, load_profile(self.ws).context_provider, transient=transient)

    def retrieve(self, *, transient: bool = False, timeout: float = 10, **kw: Any):
        req = request(scope_ref=kw.pop("scope_ref", SCOPE), timeout_seconds=timeout, **kw)
        return self.provider(transient=transient).retrieve(req, deadline=time.monotonic() + timeout)

    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def find_argv(self) -> list[str]:
        return next(c["argv"] for c in self.calls() if c["argv"][:1] == ["find"])


def _opt(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv else None


@pytest.fixture
def fake(fresh_ws: Path, tmp_path: Path):
    def make(cases: dict[str, Any] = HAPPY, **kw: Any) -> FakeOv:
        return FakeOv(fresh_ws, tmp_path, cases, **kw)

    return make


def test_l2_call_shape_results_and_config_file(fake) -> None:
    ov = fake(config={"result_levels": [2], "api_key": "CANARY-KEY"})
    result = ov.retrieve(max_results=3)
    assert result.status == "completed" and len(result.items) == 3
    assert [c["argv"][:1] for c in ov.calls()] == [["version"], ["status"], ["find"]]
    argv = ov.find_argv()
    assert argv[1] == "how do I roll back the cache TTL change"
    assert (_opt(argv, "-u"), _opt(argv, "-n"), _opt(argv, "-L"), _opt(argv, "-o")) == (
        SCOPE,
        "12",
        "2",
        "json",
    )
    assert "--read-content" in argv
    top = result.items[0]
    assert top.resource_ref == f"{SCOPE}/runbook-ttl-rollback/runbook-ttl-rollback.md"
    assert top.content.startswith("# Runbook: roll back the catalog cache TTL change")
    assert top.summary == "STUB-SUMMARY: Runbook: roll back the catalog cache TTL change; Steps"
    assert top.score == pytest.approx(0.7722644805908203)
    assert (result.provider_version, result.search_performed, result.read_performed) == (
        "0.5.2",
        True,
        True,
    )
    conf = ov.calls()[0]["conf"]
    assert (
        conf["echo_command"] is False
        and conf["_mode"] == "0o600"
        and conf["api_key"] == "CANARY-KEY"
    )
    assert 0 < conf["timeout"] <= 10
    assert "roll back" not in json.dumps(conf)


def test_without_result_levels_no_L_but_overfetch_and_no_sidecars(fake) -> None:
    """Default levels (issue 11): all levels are searched, but the L0/L1 sidecars are the server's
    generated summaries, never authority: they are dropped and the budget over-fetched to fill up."""
    ov = fake({**HAPPY, "find": "find_default_levels"})
    result = ov.retrieve(max_results=5)
    argv = ov.find_argv()
    assert "-L" not in argv and _opt(argv, "-n") == "20"
    assert result.status == "completed"
    assert not any(
        i.resource_ref.endswith(("/.abstract.md", "/.overview.md")) for i in result.items
    )
    assert (
        len(result.items) == 2 and result.items_dropped == 2
    )  # the recording holds 2 files, 2 sidecars


def test_default_levels_return_max_results_real_items_without_front_matter(fake) -> None:
    ov = fake({**HAPPY, "find": "find_L0_1_2_n12"})
    result = ov.retrieve(max_results=4)
    assert result.status == "completed" and len(result.items) == 4
    assert all(i.resource_ref.endswith(".md") and "/." not in i.resource_ref for i in result.items)
    for item in result.items:
        assert (
            not item.content.startswith("---")
            and "upload_" not in item.content
            and "<WORKSPACE>" not in item.content
        )


def test_explicit_sidecar_levels_keep_sidecars_with_front_matter_stripped(fake) -> None:
    ov = fake({**HAPPY, "find": "find_L0_1_2_n12"}, config={"result_levels": [0, 1, 2]})
    result = ov.retrieve(max_results=8)
    sidecars = [
        i for i in result.items if i.resource_ref.endswith(("/.abstract.md", "/.overview.md"))
    ]
    assert sidecars  # asked for by name
    for item in result.items:
        assert not item.content.startswith("---") and "upload_" not in item.content
        assert "generated_by" not in item.content
    overview = next(i for i in sidecars if i.resource_ref.endswith("/.overview.md"))
    assert overview.content.startswith("STUB-SUMMARY")


def test_l2_only_drops_level_0_1_rows_and_sidecars(fake) -> None:
    ov = fake({**HAPPY, "find": "find_L0_1_2_n12"}, config={"result_levels": [2]})
    result = ov.retrieve(max_results=8)
    assert _opt(ov.find_argv(), "-n") == "32"  # x4, at most 32
    assert result.status == "completed" and len(result.items) == 5
    assert not any(i.resource_ref.endswith((".abstract.md", ".overview.md")) for i in result.items)
    assert result.items_dropped == 4  # 3 x L0 and 1 x L1


def test_explicit_levels_are_sent_and_contradictions_dropped(fake) -> None:
    ov = fake({**HAPPY, "find": "find_L0_1_2_n12"}, config={"result_levels": [0, 2]})
    result = ov.retrieve(max_results=8)
    assert _opt(ov.find_argv(), "-L") == "0,2" and _opt(ov.find_argv(), "-n") == "8"
    assert result.items_dropped == 1  # the L1 row contradicts -L 0,2
    assert len(result.items) == 8


def test_reward_memory_requires_l2(fake) -> None:
    ov = fake(namespace="reward_memory")
    ov.retrieve(namespace="reward_memory")
    assert _opt(ov.find_argv(), "-L") == "2"
    with pytest.raises(InvalidInput) as err:
        fake(namespace="reward_memory", config={"result_levels": [1, 2]}).provider()
    assert err.value.field == "context_provider.config.result_levels" and err.value.exit_code == 2


def test_scope_filtering_drops_hits_outside_the_scope(fake) -> None:
    ov = fake(config={"result_levels": [2]})
    narrow = f"{SCOPE}/runbook-ttl-rollback"
    result = ov.retrieve(scope_ref=narrow)
    assert [i.resource_ref for i in result.items] == [f"{narrow}/runbook-ttl-rollback.md"]
    assert result.items_dropped == 2


def test_a_non_viking_scope_is_unsupported_without_spawning(fake) -> None:
    ov = fake()
    result = ov.retrieve(scope_ref="host-session:codex:t-1")
    assert result.reason_code == "provider_scope_unsupported" and ov.calls() == []


def test_empty_scope_omits_u(fake) -> None:
    ov = fake()
    ov.retrieve(scope_ref="")
    assert "-u" not in ov.find_argv()


def test_a_hit_without_content_is_read(fake) -> None:
    ov = fake({**HAPPY, "find": "find_L2"}, config={"result_levels": [2]})
    result = ov.retrieve(max_results=1)
    reads = [c["argv"] for c in ov.calls() if c["argv"][:1] == ["read"]]
    assert reads == [
        ["read", f"{SCOPE}/runbook-ttl-rollback/runbook-ttl-rollback.md", "-o", "json"]
    ]
    assert result.items[0].content.startswith("# Runbook")


def test_unreadable_hits_are_provider_reads_unusable(fake) -> None:
    ov = fake(
        {**HAPPY, "find": "find_L2", "read": {"*": "read_missing"}}, config={"result_levels": [2]}
    )
    result = ov.retrieve()
    assert (result.status, result.reason_code, result.search_performed) == (
        "unavailable",
        "provider_reads_unusable",
        True,
    )


def test_echo_line_is_tolerated(fake) -> None:
    result = fake({**HAPPY, "find": "find_with_echo_command"}).retrieve()
    assert result.status == "completed" and len(result.items) == 3


@pytest.mark.parametrize(
    ("cases", "reason"),
    [
        ({**HAPPY, "find": "find_table"}, "provider_search_parse_failed"),
        ({**HAPPY, "find": "find_L2_read_content_c_false"}, "provider_search_parse_failed"),
        ({**HAPPY, "find": "read_uri"}, "provider_search_parse_failed"),
        ({**HAPPY, "find": "find_invalid_uri"}, "provider_search_failed"),
        ({**HAPPY, "find": "server_down"}, "provider_search_failed"),
        ({**HAPPY, "status": "status_json_server_down"}, "provider_service_unavailable"),
        # `--version`'s answer to `version`: no CLI line, as from an `ov` without the subcommand
        ({**HAPPY, "version": "version"}, "provider_version_incompatible"),
        ({**HAPPY, "version": "version_subcommand_server_down"}, "provider_service_unavailable"),
    ],
)
def test_failures_map_to_reason_codes(fake, cases: dict[str, Any], reason: str) -> None:
    result = fake(cases).retrieve()
    assert (result.status, result.reason_code, result.items) == ("unavailable", reason, ())


def test_language_trap_is_cli_not_configured(fake) -> None:
    ov = fake(language=False)
    result = ov.retrieve()
    assert result.reason_code == "provider_cli_not_configured"
    assert [c["argv"] for c in ov.calls()] == [["version"]]


def test_missing_binary_is_cli_unavailable(fresh_ws: Path) -> None:
    ws = enable(fresh_ws, provider="openviking", config={"binary": "/nonexistent/ov"})
    result = make_provider(ws, load_profile(ws).context_provider).retrieve(
        request(scope_ref=SCOPE), deadline=time.monotonic() + 5
    )
    assert result.reason_code == "provider_cli_unavailable"


def test_old_version_is_incompatible(fake) -> None:
    result = fake(config={"minimum_version": "0.6"}).retrieve()
    assert result.reason_code == "provider_version_incompatible"


def test_a_hanging_find_is_killed_at_the_deadline(fake) -> None:
    ov = fake(sleep={"find": 30})
    started = time.monotonic()
    result = ov.retrieve(timeout=1.5)
    assert time.monotonic() - started < 5
    assert (result.reason_code, result.search_performed) == ("provider_search_timeout", True)
    assert ov.calls()[0]["conf"]["timeout"] <= 1.5


def test_cli_deadline_exceeded_is_a_search_timeout(fake) -> None:
    # the recorded DEADLINE_EXCEEDED answer arrives after the CLI's own HTTP timeout
    ov = fake({**HAPPY, "find": "server_timeout"}, sleep={"find": "conf_timeout"})
    started = time.monotonic()
    result = ov.retrieve(timeout=2)
    assert result.reason_code == "provider_search_timeout"
    assert time.monotonic() - started < 2.5  # the CLI gave up first: no kill was needed


def test_unrelated_query_still_answers_and_no_hits_is_empty(fake) -> None:
    result = fake({**HAPPY, "find": "find_unrelated_query"}).retrieve(
        query="zebra xylophone quokka"
    )
    assert result.status == "completed" and {i.score for i in result.items} == {0.5}
    result = fake({**HAPPY, "find": "find_no_hits"}).retrieve()
    assert (result.status, result.items) == ("completed", ())


def test_a_leading_dash_query_is_passed_after_double_dash(fake) -> None:
    ov = fake()
    ov.retrieve(query="-n 99 rollback")
    argv = ov.find_argv()
    assert argv[-2:] == ["--", "-n 99 rollback"] and _opt(argv, "-n") == "12"  # 3, over-fetched x4


def test_conf_location_persistent_vs_transient(fake) -> None:
    ov = fake()
    conf = ov.ws.openviking / "ovcli.conf"
    ov.retrieve(transient=True)
    assert not conf.exists() and not ov.ws.openviking.exists()
    transient_conf = ov.calls()[0]["conf"]
    assert transient_conf["echo_command"] is False
    ov.retrieve()
    assert stat.S_IMODE(conf.stat().st_mode) == 0o600
    assert json.loads(conf.read_text())["echo_command"] is False


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"bogus": 1}, "bogus"),
        ({"result_levels": []}, "result_levels"),
        ({"result_levels": [2, 0]}, "result_levels"),
        ({"result_levels": [3]}, "result_levels"),
        ({"result_levels": [True]}, "result_levels"),
        ({"url": "ftp://x"}, "url"),
        ({"minimum_version": "latest"}, "minimum_version"),
        ({"api_key": 5}, "api_key"),
    ],
)
def test_config_is_strict_and_names_the_key(
    fresh_ws: Path, config: dict[str, Any], key: str
) -> None:
    ws = enable(fresh_ws, provider="openviking", config=config)
    with pytest.raises(InvalidInput) as err:
        make_provider(ws, load_profile(ws).context_provider)
    assert err.value.field == f"context_provider.config.{key}"
    assert "ftp://x" not in err.value.message


@pytest.mark.parametrize(
    ("cases", "config", "reason", "asked"),
    [
        (HAPPY, {}, None, ["version", "status", "find"]),
        (  # `ov version` without its Server line: the recorded answer with the server stopped
            {**HAPPY, "version": "version_subcommand_server_down"},
            {},
            "provider_service_unavailable",
            ["version"],
        ),
        (
            {**HAPPY, "status": "status_json_server_down"},
            {},
            "provider_service_unavailable",
            ["version", "status"],
        ),
        (
            {**HAPPY, "status": "server_down"},
            {},
            "provider_service_unavailable",
            ["version", "status"],
        ),
        (HAPPY, {"minimum_version": "0.9.0"}, "provider_version_incompatible", ["version"]),
        (  # status healthy, but search cannot answer (a dead embedding backend): the recorded
            # failing find (exit 1; dcx reads the exit code only, never the message)
            {**HAPPY, "find": "server_down"},
            {},
            "provider_search_failed",
            ["version", "status", "find"],
        ),
    ],
)
def test_status_check_asks_what_recall_needs(dcx, fake, cases, config, reason, asked) -> None:
    """SPEC §6.4 v4: `status --check` says ready only when recall's preflight passes and a tiny
    find answers; a remembered answer is never used, and nothing is written."""
    ov = fake(cases, config=config)
    result = dcx("-C", str(ov.ws.root), "status", "--check", "--format", "json")
    recall = result.json()["data"]["checks"]["recall"]
    assert recall["provider"] == "openviking"
    assert (recall["status"], recall["reason_code"]) == (
        ("ready", None) if reason is None else ("unavailable", reason)
    )
    assert [c["argv"][0] for c in ov.calls()] == asked
    finds = [c["argv"] for c in ov.calls() if c["argv"][0] == "find"]
    if finds:  # the probe: one candidate, no content, in the profile's scope
        assert _opt(finds[0], "-n") == "1" and "--read-content" not in finds[0]
        assert finds[0][1] == "dcx readiness probe"
    assert not ov.ws.openviking.exists()  # no ovcli.conf, no ready.json


@pytest.mark.parametrize(
    ("find", "reason", "hint"),
    [
        (
            "server_down",
            "provider_search_failed",
            "`ov find` failed: check the scope URI exists (`ov tree`) and the server's logs",
        ),
        (
            "find_table",
            "provider_search_parse_failed",
            "`ov` answered something that is not its JSON envelope: check `ov version` (OpenViking >= 0.5) "
            "and that nothing wraps the binary",
        ),
    ],
)
def test_recall_failure_warnings_carry_a_hint(dcx, fake, find: str, reason: str, hint: str) -> None:
    ov = fake({**HAPPY, "find": find})
    result = dcx(
        "-C",
        str(ov.ws.root),
        "recall",
        "--scope",
        SCOPE,
        "--query",
        "roll back the TTL",
        "--query-summary",
        "TTL rollback",
        "--format",
        "json",
    )
    assert result.exit_code == 0
    body = result.json()
    assert body["data"]["retrieval"]["reason_code"] == reason
    assert body["warnings"] == [
        f"recall unavailable ({reason}): {hint}"
    ]  # the words, written out here


@pytest.mark.parametrize("edited", [True, False])
def test_items_whose_authority_was_edited_after_ingest_are_stale(dcx, fake, edited: bool) -> None:
    """Issue 11: OpenViking ingested fixtures/openviking-0.5.2/corpus; the example's docs are the same
    files edited since. A content-matched file that exists but no longer confirms is stale, not
    unverifiable (so stale-claim figures count it); the unedited corpus is accepted."""
    import shutil

    ov = fake(config={"result_levels": [2]})
    corpus = REPO / ".dcx-example" / "docs" if edited else FAKE.parent / "corpus"
    shutil.copytree(corpus, ov.ws.root / "docs")
    assert dcx("-C", str(ov.ws.root), "index").exit_code == 0
    result = dcx(
        "-C",
        str(ov.ws.root),
        "prepare",
        "--decision-id",
        "d1",
        "--auto-rebase",
        "--scope",
        SCOPE,
        "--query",
        "how do I roll back the cache TTL change",
        "--query-summary",
        "TTL rollback",
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    evidence = result.json()["data"]["assembly"]["evidence"]
    if edited:
        assert evidence["recalled_claims"] == []
        assert [c["reason_code"] for c in evidence["stale_or_rejected_claims"]] == [
            "stale_authority_revision"
        ] * 3
        listed = {r["source_ref"] for r in evidence["source_revisions"]}
        assert all(c["source_ref"] in listed for c in evidence["stale_or_rejected_claims"])
    else:
        assert len(evidence["recalled_claims"]) == 3 and evidence["stale_or_rejected_claims"] == []


# -- SPEC §6.4 v4: the server's version, the remembered preflight, levels, min_score ------------


def test_the_receipt_records_the_servers_version(fake) -> None:
    result = fake().retrieve()
    assert (result.status, result.provider_version) == ("completed", "0.5.2")


def test_a_server_older_than_minimum_version_is_incompatible(fake) -> None:
    """DERIVED, not recorded: `ov version`'s recorded bytes with the Server line's version changed
    (no server of another version was recorded); the CLI line still says 0.5.2."""
    ov = fake(config={"minimum_version": "0.5.0"})
    (ov.log.parent / "scenario.json").write_text(
        json.dumps(
            {
                "log": str(ov.log),
                "cases": HAPPY,
                "derive": {"version": [["Server:  0.5.2", "Server:  0.4.9"]]},
            }
        )
    )
    result = ov.retrieve()
    assert (result.status, result.reason_code, result.provider_version) == (
        "unavailable",
        "provider_version_incompatible",
        "0.4.9",
    )
    assert [c["argv"][0] for c in ov.calls()] == ["version"]  # nothing searched


def _recall(dcx, ov: FakeOv, query: str = "roll back the TTL"):
    result = dcx(
        "-C", str(ov.ws.root), "recall", "--scope", SCOPE, "--query", query,
        "--query-summary", "TTL rollback", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    return result.json()["data"]


def _forget_this_process() -> None:
    """Each `dcx recall` is its own process; the in-process runner keeps one process for all."""
    from dcx.providers import openviking_ready

    openviking_ready._PROCESS.clear()


def test_a_healthy_recall_runs_one_ov_process_once_the_checks_are_remembered(dcx, fake) -> None:
    from tests.support.workspace import tree_bytes

    ov = fake()
    dc = ov.ws.root / ".decision-context"
    before = tree_bytes(dc)
    first = _recall(dcx, ov, "CANARY-QUERY-41 roll back")
    assert [c["argv"][0] for c in ov.calls()] == ["version", "status", "find"]
    _forget_this_process()
    second = _recall(dcx, ov)
    assert [c["argv"][0] for c in ov.calls()][3:] == ["find"]  # the next process: one `ov`
    assert (
        first["retrieval"]["provider_version"] == second["retrieval"]["provider_version"] == "0.5.2"
    )
    # recall wrote exactly one file: the remembered preflight, private and without the query
    after = tree_bytes(dc)
    ready = "private/openviking/ready.json"
    assert sorted(set(after) - set(before)) == [ready]
    assert {k: v for k, v in after.items() if k != ready} == before
    body = json.loads(after[ready])
    assert sorted(body) == ["checked_at", "cli_version", "key", "schema_version", "server_version"]
    assert (body["cli_version"], body["server_version"]) == ("0.5.2", "0.5.2")
    text = after[ready].decode()
    assert "CANARY-QUERY" not in text and "127.0.0.1" not in text and "roll back" not in text
    assert oct((dc / ready).stat().st_mode & 0o777) == "0o600"


def test_the_remembered_checks_expire(dcx, fake) -> None:
    ov = fake()
    _recall(dcx, ov)
    ready = ov.ws.openviking / "ready.json"
    body = json.loads(ready.read_text())
    body["checked_at"] -= 61  # older than the 60 s TTL
    ready.write_text(json.dumps(body))
    _forget_this_process()
    _recall(dcx, ov)
    assert [c["argv"][0] for c in ov.calls()] == ["version", "status", "find"] * 2


def test_another_config_is_checked_afresh(dcx, fake) -> None:
    ov = fake()
    _recall(dcx, ov)
    profile = ov.ws.root / ".decision-context" / "profile.toml"
    profile.write_text(profile.read_text().replace("127.0.0.1:1933", "127.0.0.1:1934"))
    _forget_this_process()
    _recall(dcx, ov)
    assert [c["argv"][0] for c in ov.calls()] == ["version", "status", "find"] * 2


def test_a_failure_after_remembered_checks_asks_again_for_the_reason(dcx, fake) -> None:
    """The server stopped after the checks were remembered: the find fails, the preflight runs
    again and its reason (service unavailable) is the answer; the memory is dropped."""
    ov = fake()
    _recall(dcx, ov)
    _forget_this_process()
    (ov.log.parent / "scenario.json").write_text(
        json.dumps(
            {
                "log": str(ov.log),
                "cases": {
                    **HAPPY,
                    "version": "version_subcommand_server_down",
                    "find": "server_down",
                },
            }
        )
    )
    again = _recall(dcx, ov)
    assert (again["status"], again["reason_code"]) == (
        "unavailable",
        "provider_service_unavailable",
    )
    assert [c["argv"][0] for c in ov.calls()][3:] == ["find", "version"]
    assert not (ov.ws.openviking / "ready.json").exists()


def test_the_workbench_path_keeps_the_checks_in_process_only(fake) -> None:
    """`transient` without `ready_file` (the workbench, prepare --show-content): nothing on disk."""
    ov = fake()
    assert ov.retrieve(transient=True).status == "completed"
    assert ov.retrieve(transient=True).status == "completed"
    assert [c["argv"][0] for c in ov.calls()] == ["version", "status", "find", "find"]
    assert not ov.ws.openviking.exists()


def test_default_levels_ask_again_for_l2_when_every_hit_is_a_sidecar(fake) -> None:
    """The recorded L0 find (3 `.abstract.md` hits, the top candidates were all L0 records)
    answers the default-level find; the recorded L2 find answers the `-L 2` retry."""
    ov = fake({**HAPPY, "find": {"-L none": "find_L0", "-L 2": "find_L2_read_content"}})
    result = ov.retrieve(max_results=3)
    finds = [c["argv"] for c in ov.calls() if c["argv"][0] == "find"]
    assert [_opt(f, "-L") for f in finds] == [None, "2"]
    assert [_opt(f, "-n") for f in finds] == ["12", "12"]
    assert result.status == "completed" and len(result.items) == 3
    assert all(i.resource_ref.endswith(".md") and "/." not in i.resource_ref for i in result.items)
    assert result.items_dropped == 3  # the three sidecars of the first answer


def test_explicit_levels_never_ask_again(fake) -> None:
    ov = fake({**HAPPY, "find": "find_L0"}, config={"result_levels": [2]})
    result = ov.retrieve(max_results=3)
    assert [c["argv"][0] for c in ov.calls()].count("find") == 1
    assert (result.status, result.items, result.items_dropped) == ("completed", (), 3)


@pytest.mark.parametrize(
    ("find", "min_score", "kept", "dropped"),
    [
        (
            "find_unrelated_query",
            0.55,
            0,
            3,
        ),  # every hit at exactly 0.5: an unrelated query is empty
        ("find_unrelated_query", 0.5, 3, 0),  # the floor itself is kept
        ("find_L2_read_content", 0.75, 2, 1),  # 0.7723 and 0.7645 stay, 0.7169 goes
    ],
)
def test_min_score_drops_weaker_semantic_hits(fake, find, min_score, kept, dropped) -> None:
    ov = fake({**HAPPY, "find": find}, config={"min_score": min_score, "result_levels": [2]})
    result = ov.retrieve(max_results=3)
    assert (result.status, len(result.items), result.items_dropped) == ("completed", kept, dropped)
    assert all(i.score >= min_score for i in result.items)


@pytest.mark.parametrize("value", [-0.1, 1.5, True, "0.5"])
def test_min_score_is_validated(fresh_ws: Path, value) -> None:
    ws = enable(fresh_ws, provider="openviking", config={"min_score": value})
    with pytest.raises(InvalidInput) as err:
        make_provider(ws, load_profile(ws).context_provider)
    assert err.value.field == "context_provider.config.min_score" and err.value.exit_code == 2
