"""``dcx recall`` end to end (SPEC §6.7): transient packet, nothing written, fail-open, gates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dcx.providers import bm25
from tests.support.cli import run_dcx
from tests.support.recall import enable
from tests.support.workspace import tree_bytes

QUERY = "how do I roll back the catalog cache TTL"


def _recall(dcx, root: Path, *args: str, input: str | None = None):
    return dcx(
        "-C",
        str(root),
        "recall",
        "--scope",
        "",
        "--query-summary",
        "TTL rollback steps",
        *args,
        "--format",
        "json",
        input=input,
    )


@pytest.fixture
def indexed(dcx, example: Path) -> Path:
    assert dcx("-C", str(example), "index").exit_code == 0
    return example


def test_recall_json_snapshot(dcx, indexed: Path, snapshot_json) -> None:
    result = _recall(dcx, indexed, "--query", QUERY, "--max-results", "2")
    assert result.exit_code == 0, result.stderr
    envelope = result.json()
    assert envelope == snapshot_json
    packet = envelope["data"]
    assert packet["schema_version"] == "decision_context_ephemeral_recall_v0"
    assert (
        packet["visibility"],
        packet["authority"],
        packet["content_trust"],
        packet["content_may_instruct"],
    ) == ("local_private_transient", "advisory_only", "untrusted_advisory", False)
    assert packet["results"] and all(
        r["content_trust"] == "untrusted_advisory" and r["content_may_instruct"] is False
        for r in packet["results"]
    )
    assert packet["retrieval"]["result_count"] == len(packet["results"])


def test_index_json_snapshot(dcx, example: Path, snapshot_json) -> None:
    result = dcx("-C", str(example), "index", "--format", "json")
    assert result.exit_code == 0
    assert result.json() == snapshot_json


def test_recall_leaves_every_workspace_file_byte_identical(dcx, indexed: Path) -> None:
    dc = indexed / ".decision-context"
    before = tree_bytes(dc)
    assert _recall(dcx, indexed, "--query", QUERY).exit_code == 0
    assert _recall(dcx, indexed, "--query", "nothing matches xylophone").exit_code == 0
    assert (
        _recall(dcx, indexed, "--query", QUERY, "--scope", "source:nope").exit_code == 0
    )  # unavailable
    assert tree_bytes(dc) == before


def test_recall_with_no_index_is_partial_exit_0_and_writes_nothing(dcx, example: Path) -> None:
    before = tree_bytes(example / ".decision-context")
    result = _recall(dcx, example, "--query", QUERY)
    assert result.exit_code == 0
    envelope = result.json()
    assert (envelope["ok"], envelope["status"]) == (True, "partial")
    assert (envelope["data"]["status"], envelope["data"]["reason_code"]) == (
        "unavailable",
        "index_missing",
    )
    assert envelope["data"]["results"] == []
    assert "dcx index" in envelope["warnings"][0]
    assert tree_bytes(example / ".decision-context") == before


def test_canaries_never_reach_the_receipt_or_any_public_file(dcx, fresh_ws: Path, tree) -> None:
    enable(fresh_ws)
    tree(
        fresh_ws,
        {
            "docs": {
                "canary-path-91b": {
                    "plan.md": "# Pelican plan\n\nCANARY-CONTENT-7f3a pelican rollout.\n"
                }
            }
        },
    )
    assert dcx("-C", str(fresh_ws), "index").exit_code == 0
    result = dcx(
        "-C",
        str(fresh_ws),
        "recall",
        "--scope",
        "source:docs",
        "--query",
        "pelican CANARY-QUERY-55e",
        "--query-summary",
        "pelican rollout",
        "--format",
        "json",
    )
    assert result.exit_code == 0
    packet = result.json()["data"]
    assert packet["results"][0]["content"].startswith(
        "# Pelican plan"
    )  # the transient packet carries content
    receipt = json.dumps(packet["retrieval"])
    for canary in (
        "CANARY-CONTENT-7f3a",
        "canary-path-91b",
        "CANARY-QUERY-55e",
        "source:docs",
        "bm25:docs/",
    ):
        assert canary not in receipt
    for canary in ("canary-path-91b", "CANARY-QUERY-55e", "bm25:docs/"):
        assert (
            canary not in result.stdout
        )  # never a raw resource ref or the query, even transiently
    dc = fresh_ws / ".decision-context"
    public = [
        p
        for p in dc.rglob("*")
        if p.is_file()
        and "private" not in p.parts
        and p.name not in ("profile.toml", "sources.toml")
    ]
    for path in public:
        text = path.read_text(errors="replace")
        assert "CANARY" not in text and "canary-path" not in text, path


def test_query_file_and_stdin(dcx, indexed: Path, tmp_path: Path) -> None:
    query_file = tmp_path / "q.txt"
    query_file.write_text(QUERY + "\n")
    from_file = _recall(dcx, indexed, "--query-file", str(query_file)).json()["data"]
    from_flag = _recall(dcx, indexed, "--query", QUERY).json()["data"]
    from_stdin = _recall(dcx, indexed, "--query-file", "-", input=QUERY + "\n").json()["data"]
    assert from_file == from_flag == from_stdin
    assert from_flag["results"]


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--query", QUERY, "--max-results", "9"], "--max-results"),
        (["--query", QUERY, "--max-results", "0"], "--max-results"),
        (["--query", QUERY, "--max-results", "1.5"], "--max-results"),
        (["--query", QUERY, "--timeout", "0.5"], "--timeout"),
        (["--query", QUERY, "--timeout", "nan"], "--timeout"),
        (["--query", QUERY, "--timeout", "inf"], "--timeout"),
        (["--query", QUERY, "--timeout", "121"], "--timeout"),
        (["--query", "q" * 1001], "--query"),
        ([], "--query"),
        (["--query", QUERY, "--query-file", "-"], "--query"),
    ],
)
def test_bad_input_is_exit_2_naming_the_flag(
    dcx, indexed: Path, args: list[str], field: str
) -> None:
    result = dcx("-C", str(indexed), "recall", "--scope", "", "--query-summary", "s", *args)
    assert result.exit_code == 2, result.stdout
    assert field in result.stderr and "Traceback" not in result.stderr


def test_unsafe_query_summary_is_exit_2(dcx, indexed: Path) -> None:
    for summary in ("from /home/alice/notes.md", "key ghp_" + "a" * 36):
        result = dcx(
            "-C",
            str(indexed),
            "recall",
            "--scope",
            "",
            "--query",
            QUERY,
            "--query-summary",
            summary,
        )
        assert result.exit_code == 2 and "--query-summary" in result.stderr
        assert "alice" not in result.stderr and "ghp_" not in result.stderr


def test_codex_link_scope_is_normalised_or_refused_without_echo(dcx, indexed: Path) -> None:
    ok = _recall(dcx, indexed, "--query", QUERY, "--scope", "codex://threads/t-42")
    assert ok.exit_code == 0
    assert (
        ok.json()["data"]["reason_code"] == "provider_scope_unsupported"
    )  # bm25 does not serve host sessions
    bad = dcx(
        "-C",
        str(indexed),
        "recall",
        "--scope",
        "codex://threads/secret-thread?x=1",
        "--query",
        QUERY,
        "--query-summary",
        "s",
    )
    assert bad.exit_code == 2 and "--scope" in bad.stderr and "secret-thread" not in bad.stderr


def test_activation_gates_recall(dcx, fresh_ws: Path) -> None:
    result = dcx(
        "-C", str(fresh_ws), "recall", "--scope", "", "--query", QUERY, "--query-summary", "s"
    )
    assert result.exit_code == 3 and "not active" in result.stderr


def test_an_unavailable_source_adapter_does_not_gate_recall(dcx, fresh_ws: Path, tree) -> None:
    enable(fresh_ws)
    registry = fresh_ws / ".decision-context" / "sources.toml"
    registry.write_text(
        registry.read_text().replace(
            "[[sources]]",
            '[[bindings]]\nprovider_id = "mail"\nadapter = "imap-not-installed"\n[[sources]]',
            1,
        )
    )
    tree(fresh_ws, {"docs": {"a.md": "pelican rollout plan"}})
    assert (
        dcx("-C", str(fresh_ws), "status", "--format", "json").json()["data"]["activation"][
            "status"
        ]
        == "provider_unavailable"
    )
    assert dcx("-C", str(fresh_ws), "index").exit_code == 0
    result = dcx(
        "-C",
        str(fresh_ws),
        "recall",
        "--scope",
        "",
        "--query",
        "pelican",
        "--query-summary",
        "s",
        "--format",
        "json",
    )
    assert result.exit_code == 0 and result.json()["data"]["results"]


def test_profile_changed_during_recall(dcx, indexed: Path, monkeypatch) -> None:
    original = bm25.Bm25Provider.retrieve
    profile = indexed / ".decision-context" / "profile.toml"

    def edit_then_retrieve(self, request, *, deadline):
        profile.write_text(profile.read_text().replace("max_results = 2", "max_results = 3"))
        return original(self, request, deadline=deadline)

    monkeypatch.setattr(bm25.Bm25Provider, "retrieve", edit_then_retrieve)
    result = _recall(dcx, indexed, "--query", QUERY)
    assert result.exit_code == 0
    packet = result.json()["data"]
    assert (packet["status"], packet["reason_code"], packet["results"]) == (
        "unavailable",
        "profile_changed_during_recall",
        [],
    )
    assert packet["retrieval"]["result_count"] == 0


def test_a_comment_edit_is_not_a_profile_change(dcx, indexed: Path, monkeypatch) -> None:
    original = bm25.Bm25Provider.retrieve
    profile = indexed / ".decision-context" / "profile.toml"

    def comment_then_retrieve(self, request, *, deadline):
        profile.write_text(profile.read_text() + "# a note\n")
        return original(self, request, deadline=deadline)

    monkeypatch.setattr(bm25.Bm25Provider, "retrieve", comment_then_retrieve)
    assert _recall(dcx, indexed, "--query", QUERY).json()["data"]["status"] == "completed"


def test_provider_none_fails_open(dcx, fresh_ws: Path) -> None:
    enable(fresh_ws, provider="none")
    packet = _recall(dcx, fresh_ws, "--query", QUERY).json()["data"]
    assert (packet["status"], packet["reason_code"], packet["retrieval"]["provider"]) == (
        "unavailable",
        "context_provider_disabled",
        "none",
    )


def test_bad_provider_config_is_profile_invalid_naming_the_key(dcx, fresh_ws: Path) -> None:
    # the profile loader checks provider config strictly, so the capability is
    # not active (profile_invalid: exit 3 for commands that need activation)
    enable(fresh_ws, config={"colour": "blue"})
    result = dcx(
        "-C", str(fresh_ws), "recall", "--scope", "", "--query", QUERY, "--query-summary", "s"
    )
    assert result.exit_code == 3 and "context_provider.config.colour" in result.stderr
    status = dcx("-C", str(fresh_ws), "status")
    assert status.exit_code == 2 and "profile_invalid" in status.stdout


def test_text_output_labels_content_untrusted(dcx, indexed: Path) -> None:
    result = dcx(
        "-C", str(indexed), "recall", "--scope", "", "--query", QUERY, "--query-summary", "s"
    )
    assert result.exit_code == 0
    assert "advisory, untrusted" in result.stdout and "Runbook" in result.stdout


def test_installed_script_recall_and_index(example: Path) -> None:
    assert run_dcx("-C", str(example), "index").exit_code == 0
    before = tree_bytes(example / ".decision-context")
    result = run_dcx(
        "-C",
        str(example),
        "recall",
        "--scope",
        "",
        "--query-file",
        "-",
        "--query-summary",
        "TTL rollback steps",
        "--format",
        "json",
        input=QUERY,
    )
    assert result.exit_code == 0, result.stderr
    assert result.json()["data"]["results"]
    assert tree_bytes(example / ".decision-context") == before


def test_readiness_from_the_provider_reaches_the_packet_not_the_receipt(
    dcx, fresh_ws: Path, monkeypatch
) -> None:
    from dcx.evidence import recall as registry
    from dcx.providers.base import unavailable
    from tests.support.recall import ScriptedProvider

    readiness = {
        "schema_version": "dcx_extension_provider_readiness_v0",
        "status": "extension_disabled",
        "extension_id": "obelisk",
        "installed": True,
        "enabled": False,
        "doctor_verified": True,
        "next_action": "enable_extension",
    }
    provider = ScriptedProvider(
        lambda r: unavailable(r, "extension", "extension_disabled", provider_readiness=readiness),
        name="extension",
    )
    monkeypatch.setattr(registry, "make_provider", lambda *a, **k: provider)
    enable(fresh_ws, provider="extension")
    result = _recall(dcx, fresh_ws, "--query", QUERY)
    assert result.exit_code == 0 and provider.calls == 1
    packet = result.json()["data"]
    assert packet["provider_readiness"] == readiness
    assert (packet["status"], packet["reason_code"]) == ("unavailable", "extension_disabled")
    assert "provider_readiness" not in packet["retrieval"]


def test_scope_defaults_to_the_profiles_as_prepare_does(dcx, indexed: Path) -> None:
    """Without --scope, recall asks within `context_provider.scope_ref` (SPEC §6.3 v4), as
    prepare does; --scope '' still asks everywhere."""
    profile = indexed / ".decision-context" / "profile.toml"
    base = ("-C", str(indexed), "recall", "--query", QUERY, "--query-summary", "TTL rollback")

    def status(*args: str) -> tuple[str, str | None, int]:
        data = dcx(*base, *args, "--format", "json").json()["data"]
        return data["status"], data["reason_code"], len(data["results"])

    assert status()[0] == "completed" and status()[2] > 0  # the example sets no scope_ref
    text = profile.read_text()
    assert "scope_ref" not in text
    profile.write_text(
        text.replace(
            'provider = "bm25"', 'provider = "bm25"\nscope_ref = "source:source:elsewhere"'
        )
    )
    assert status() == ("unavailable", "scope_source_not_indexed", 0)
    assert status("--scope", "")[0] == "completed"
    profile.write_text(
        text.replace(
            'provider = "bm25"', 'provider = "bm25"\nscope_ref = "source:source:authority:docs"'
        )
    )
    assert status()[0] == "completed" and status()[2] > 0
