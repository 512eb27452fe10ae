"""docs/ stays true: every extension reason code, readiness status and `dcx ext` command is documented."""

from __future__ import annotations

from dcx.extensions.doctor import FAILURES
from dcx.packets.advisory import NEXT_ACTIONS
from dcx.providers.extension import PROCESS_REASONS
from tests.support.workspace import REPO

EXTENSIONS = (REPO / "docs" / "extensions.md").read_text()
COMMANDS = (REPO / "docs" / "commands.md").read_text()


def test_every_code_is_in_docs_extensions() -> None:
    codes = {
        *PROCESS_REASONS.values(),
        *FAILURES.values(),
        *NEXT_ACTIONS,
        *filter(None, NEXT_ACTIONS.values()),
        "extension_exit_nonzero",
        "response_not_json",
        "provider_contract_invalid",
        "extension_request_invalid",
        "doctor_exit_nonzero",
        "entrypoint_changed_during_doctor",
        "manifest_changed",
        "revision_changed_during_doctor",
    }
    missing = sorted(code for code in codes if f"`{code}`" not in EXTENSIONS)
    assert not missing


def test_every_ext_command_is_in_docs_commands() -> None:
    for verb in (
        "install PATH",
        "upgrade PATH",
        "enable ID",
        "disable ID",
        "doctor ID",
        "doctor --all",
        "rollback ID",
        "list",
    ):
        assert f"dcx ext {verb}" in COMMANDS
