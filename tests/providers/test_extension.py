"""ExtensionProvider.retrieve against small hostile and honest executables (fixtures/extensions/).

Each judged process case is its own test and ends in its unavailable retrieval
with the readiness packet; nothing the process wrote beyond a validated
response reaches the result.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from dcx.core.errors import InvalidInput
from dcx.core.workspace import Workspace
from dcx.extensions.resolve import resolve
from dcx.ops.ext import doctor, set_enabled
from dcx.providers.extension import ExtensionProvider
from dcx.state.provider_config import validate_extension
from tests.support.bounds import cut_short, gone, soon
from tests.support.extensions import install, make_extension, retrieve


@pytest.fixture
def installed(fresh_ws: Path, tmp_path: Path):
    """Install one fixture executable as the only extension; returns the goal root."""

    def go(script: str, ext_id: str | None = None, **manifest: object) -> Path:
        install(fresh_ws, make_extension(tmp_path / "exts", script, ext_id, **manifest))
        return fresh_ws

    return go


def _unavailable(result, reason: str, *canaries: str) -> None:
    assert result.status == "unavailable" and result.reason_code == reason
    assert result.items == () and not result.ok
    assert result.provider == "extension"
    assert result.provider_readiness is not None and result.provider_readiness["status"] == "ready"
    text = repr(result)
    for canary in canaries:
        assert canary not in text


def test_good_response_completes_with_the_exact_request(installed) -> None:
    provider, result = retrieve(installed("good.py"))
    assert result.status == "completed" and result.reason_code is None and result.ok
    assert provider.version == "1.0.0" and result.provider_version == "1.0.0"
    assert [i.resource_ref for i in result.items] == ["good:first", "good:second"]
    assert [i.score for i in result.items] == [1.5, None]
    assert result.items[0].summary == "Fixture match one"
    sent = json.loads(result.items[0].content.split(" ", 1)[1])
    assert sent == {
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
    assert result.search_performed and result.read_performed
    assert result.provider_readiness["status"] == "ready"


def test_max_results_reaches_the_extension(installed) -> None:
    _, result = retrieve(installed("good.py"), max_results=1)
    assert result.status == "completed" and len(result.items) == 1


def test_completed_with_no_items_differs_from_unavailable(installed) -> None:
    _, result = retrieve(installed("good.py", args=("--empty",)))
    assert (result.status, result.reason_code, result.items, result.ok) == (
        "completed",
        None,
        (),
        True,
    )
    assert result.search_performed and not result.read_performed


def test_retrieve_writes_nothing(installed, fresh_ws) -> None:
    root = installed("good.py")
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    _, result = retrieve(root)
    assert result.status == "completed"
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_effective_timeout_is_the_smaller_of_request_and_manifest(installed) -> None:
    root = installed("good.py", timeout=3)
    _, result = retrieve(root, timeout_seconds=7.5)
    assert json.loads(result.items[0].content.split(" ", 1)[1])["timeout_seconds"] == 3
    _, result = retrieve(root, timeout_seconds=2.5)
    assert json.loads(result.items[0].content.split(" ", 1)[1])["timeout_seconds"] == 2.5


def test_hang_is_killed_at_the_deadline_with_its_grandchild(installed) -> None:
    root = installed("hang.py", timeout=1)
    started = time.monotonic()
    _, result = retrieve(root)
    elapsed = time.monotonic() - started
    _unavailable(result, "extension_timeout")
    assert result.search_performed
    assert cut_short(elapsed, 1)  # the deadline cut it: hang.py sleeps forever
    grandchild = int((Path(os.environ["HOME"]) / "hang-grandchild.pid").read_text())
    assert soon(lambda: gone(grandchild))


def test_callers_deadline_shorter_than_the_manifest_wins(installed) -> None:
    root = installed("hang.py", timeout=30)
    started = time.monotonic()
    _, result = retrieve(root, deadline_in=1.0)
    _unavailable(result, "extension_timeout")
    assert cut_short(time.monotonic() - started, 1.0)  # the caller's deadline, not the 30 s


def test_a_spent_deadline_spawns_nothing(installed) -> None:
    _, result = retrieve(installed("hang.py"), deadline_in=0)
    _unavailable(result, "extension_timeout")
    assert not result.search_performed
    assert not (Path(os.environ["HOME"]) / "hang-grandchild.pid").exists()


def test_stdout_flood_is_capped(installed) -> None:
    _, result = retrieve(installed("flood.py"))
    _unavailable(result, "response_too_large", "xxxxxxxx")


def test_non_json_output(installed) -> None:
    _, result = retrieve(installed("not_json.py"))
    _unavailable(result, "response_not_json", "NOT-JSON-CANARY")


def test_non_zero_exit_despite_a_valid_response(installed) -> None:
    _, result = retrieve(installed("exit_nonzero.py"))
    _unavailable(result, "extension_exit_nonzero")


def test_extra_field_is_listed_and_refused(installed) -> None:
    provider, result = retrieve(installed("extra_field.py"))
    _unavailable(result, "provider_contract_invalid", "EXTRA-CANARY", "debug_payload")
    assert "unknown field(s): debug_payload" in provider.last_detail
    assert "EXTRA-CANARY" not in provider.last_detail


def test_missing_fields_are_listed_and_refused(installed) -> None:
    provider, result = retrieve(installed("missing_field.py"))
    _unavailable(result, "provider_contract_invalid")
    assert "missing field(s): reason_code, items" in provider.last_detail


def test_nan_score_is_refused(installed) -> None:
    provider, result = retrieve(installed("nan_score.py"))
    _unavailable(result, "provider_contract_invalid", "NAN-CANARY")
    assert "score" in provider.last_detail and "finite" in provider.last_detail


def test_nine_items_are_refused(installed) -> None:
    provider, result = retrieve(installed("nine_items.py"), max_results=8)
    _unavailable(result, "provider_contract_invalid", "NINE-CANARY")
    assert "9 items" in provider.last_detail


def test_more_items_than_asked_for_are_refused(installed) -> None:
    root = installed("nine_items.py", args=("--count", "3"))
    provider, result = retrieve(root, max_results=3)
    assert result.status == "completed" and len(result.items) == 3
    provider, result = retrieve(root, max_results=2)
    _unavailable(result, "provider_contract_invalid", "NINE-CANARY")
    assert "more than the 2 asked for" in provider.last_detail


def test_completed_with_a_reason_is_refused(installed) -> None:
    _, result = retrieve(installed("completed_reason.py"))
    _unavailable(result, "provider_contract_invalid")


def test_unavailable_with_items_is_refused(installed) -> None:
    _, result = retrieve(installed("unavailable_items.py"))
    _unavailable(result, "provider_contract_invalid", "UNAVAIL-CANARY")


def test_summary_with_a_path_is_refused(installed) -> None:
    _, result = retrieve(installed("summary_path.py"))
    _unavailable(
        result, "provider_contract_invalid", "PATH-CANARY", "PATH-CONTENT-CANARY", "/home/alice"
    )


def test_stderr_is_never_kept(installed) -> None:
    provider, result = retrieve(installed("stderr_canary.py"))
    assert result.status == "completed" and result.items[0].content == "STDERR-CASE-CONTENT"
    assert "STDERR-CANARY" not in repr(result) and "Traceback" not in repr(result)
    assert "STDERR-CANARY" not in repr(provider.__dict__)


def test_a_valid_unavailable_answer_keeps_its_reason(installed) -> None:
    _, result = retrieve(installed("unavailable_ok.py"))
    _unavailable(result, "backend_offline")


def test_environment_is_allow_listed_plus_the_manifest_names(
    installed, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("LEAKY_SECRET_CANARY", "s3cret-parent-value")
    monkeypatch.setenv("NAMED_TOKEN_CANARY", "named-value")
    root = installed("env_probe.py", env=("NAMED_TOKEN_CANARY",))
    _, result = retrieve(root)
    seen = json.loads(result.items[0].content)
    assert "LEAKY_SECRET_CANARY" not in seen
    assert seen["NAMED_TOKEN_CANARY"] == "named-value"
    assert {"PATH", "HOME"} <= set(seen) and not any(k.startswith("DCX_") for k in seen)


def test_spawn_failure_when_the_pinned_file_vanishes_is_not_ready(installed, tmp_path) -> None:
    root = installed("good.py")
    (tmp_path / "exts" / "good" / "good.py").unlink()
    _, result = retrieve(root)
    assert result.reason_code == "extension_doctor_not_ready"


def test_dispatch_uses_the_stored_revision_not_the_manifest_on_disk(installed, tmp_path) -> None:
    root = installed("good.py")
    folder = tmp_path / "exts" / "good"
    # a different program at a different path, named by a manifest that is then moved away
    (folder / "extension.toml").write_text(
        (folder / "extension.toml").read_text().replace("./good.py", "./flood.py")
    )
    (folder / "extension.toml").rename(folder / "moved.toml")
    _, result = retrieve(root)
    assert result.status == "completed" and result.items[0].resource_ref == "good:first"


@pytest.mark.parametrize(
    ("setup", "status", "next_action"),
    [
        ("none", "extension_provider_not_installed", "install_or_select_extension"),
        ("disabled", "extension_disabled", "enable_extension"),
        ("replaced", "extension_doctor_not_ready", "run_extension_doctor"),
        ("corrupt", "extension_state_unavailable", "repair_extension_state"),
    ],
)
def test_not_ready_is_unavailable_with_the_readiness_packet(
    installed, fresh_ws, tmp_path, setup, status, next_action
) -> None:
    if setup != "none":
        installed("good.py")
    ws = Workspace(fresh_ws)
    if setup == "disabled":
        set_enabled(ws=ws, ext_id="good", enabled=False)
    elif setup == "replaced":
        script = tmp_path / "exts" / "good" / "good.py"
        script.write_bytes(script.read_bytes() + b"\n# new bytes\n")
    elif setup == "corrupt":
        ws.extension_state.write_text("{")
    provider, result = retrieve(fresh_ws)
    assert (result.status, result.reason_code) == ("unavailable", status)
    assert result.provider_readiness["next_action"] == next_action
    assert not result.search_performed and provider.version == "unresolved"


def test_repair_recovers_without_touching_the_profile(installed, fresh_ws) -> None:
    installed("good.py")
    ws = Workspace(fresh_ws)
    profile = ws.profile.read_bytes()
    set_enabled(ws=ws, ext_id="good", enabled=False)
    provider = ExtensionProvider(ws, {"extension_id": "good"}, resolve=resolve)
    from tests.support.extensions import request

    assert (
        provider.retrieve(request(), deadline=time.monotonic() + 10).reason_code
        == "extension_disabled"
    )
    set_enabled(ws=ws, ext_id="good", enabled=True)
    assert (
        provider.retrieve(request(), deadline=time.monotonic() + 10).status == "completed"
    )  # same instance
    assert doctor(ws=ws, ext_id="good").exit_code == 0
    assert ws.profile.read_bytes() == profile


def test_explicit_id_not_installed(fresh_ws) -> None:
    _, result = retrieve(fresh_ws, {"extension_id": "nope"})
    assert result.reason_code == "extension_not_installed"
    assert result.provider_readiness["extension_id"] == "nope"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"binary": "x"}, "context_provider.config.binary"),
        ({"extension_id": "Bad_ID"}, "context_provider.config.extension_id"),
        ({"extension_id": 3}, "context_provider.config.extension_id"),
    ],
)
def test_validate_config_is_strict(config, field) -> None:
    with pytest.raises(InvalidInput) as err:
        validate_extension(config)
    assert (
        err.value.field == field
        and err.value.message.startswith(field)
        and err.value.exit_code == 2
    )


def test_validate_config_accepts_only_extension_id() -> None:
    assert validate_extension({}) == {}
    assert validate_extension({"extension_id": "dcx-obelisk"}) == {"extension_id": "dcx-obelisk"}


def test_a_python_module_extension_end_to_end(fresh_ws, tmp_path, monkeypatch) -> None:
    import shutil

    from tests.support.extensions import FIXTURES, manifest_text

    modules = tmp_path / "modules"
    modules.mkdir()
    shutil.copy2(FIXTURES / "good.py", modules / "dcx_fixture_good.py")
    monkeypatch.setenv("PYTHONPATH", str(modules))
    folder = tmp_path / "module-ext"
    folder.mkdir()
    text = manifest_text("module-ext", "unused", env=("PYTHONPATH",)).replace(
        'entrypoint = "unused"', 'python_module = "dcx_fixture_good"'
    )
    (folder / "extension.toml").write_text(text)
    install(fresh_ws, folder / "extension.toml")
    _, result = retrieve(fresh_ws)
    assert result.status == "completed" and result.items[0].resource_ref == "good:first"
    (modules / "dcx_fixture_good.py").write_text(
        (modules / "dcx_fixture_good.py").read_text() + "\n# edited\n"
    )
    assert retrieve(fresh_ws)[1].reason_code == "extension_doctor_not_ready"
