"""Recall reason codes and what a person can do about each (docs/exit-codes.md lists them).

A reason code is all a receipt says about a failure; the hint is printed as a
warning by commands that recall, never stored.
"""

from __future__ import annotations

HINTS: dict[str, str] = {
    "context_provider_disabled": "set [context_provider] provider in .decision-context/profile.toml",
    "index_missing": "build the bm25 index with `dcx index`",
    "index_corrupt": "rebuild the bm25 index with `dcx index --rebuild`",
    "index_busy": "`dcx index` is writing the index (or was interrupted): run `dcx index`, then recall again",
    "scope_source_not_indexed": "check the source ids in the scope, and run `dcx index` after adding a source",
    "provider_scope_unsupported": "bm25 takes '' or source:<id>[,<id>…]; openviking takes a viking:// URI",
    "provider_search_timeout": "raise --timeout or [context_provider] timeout_seconds (at most 120)",
    "provider_cli_unavailable": "install OpenViking's `ov` CLI or set context_provider.config.binary",
    "provider_cli_not_configured": "run `ov language en` once as this user (a fresh HOME needs it)",
    "provider_version_incompatible": "upgrade `ov` and the OpenViking server to at least "
    "context_provider.config.minimum_version (`ov version` shows both)",
    "provider_service_unavailable": "start the OpenViking server and check `ov status`",
    "provider_unavailable": "this build of dcx has no extension provider",
    "profile_changed_during_recall": "the profile changed while recalling: run the command again",
    "provider_retrieval_failed": "the provider raised an error: check its own logs, then recall again",
    "provider_contract_invalid": "the provider's answer broke the retrieval contract: fix or replace the provider",
    "provider_search_failed": "`ov find` failed: check the scope URI exists (`ov tree`) and the server's logs",
    "provider_search_parse_failed": "`ov` answered something that is not its JSON envelope: check `ov version` "
    "(OpenViking >= 0.5) and that nothing wraps the binary",
    "provider_reads_unusable": "hits came back but none had readable content under the limit: check the server's "
    "content store (`ov read URI`), or narrow the scope",
    # extension readiness (nothing was spawned)
    "extension_not_installed": "install it with `dcx ext install PATH`, or fix context_provider.config.extension_id",
    "extension_disabled": "enable it with `dcx ext enable ID`",
    "extension_doctor_not_ready": "run `dcx ext doctor ID` until it passes",
    "extension_incompatible": "install a revision that implements decision_context_advisory_provider_v0",
    "extension_provider_ambiguous": "several extensions are ready: name one in context_provider.config.extension_id",
    "extension_provider_not_installed": "install an advisory provider extension with `dcx ext install PATH`",
    "extension_provider_not_ready": "run `dcx ext doctor ID` for the installed provider, or enable it",
    "extension_state_unavailable": "private/extensions/state.json is damaged: restore it, or move it aside and "
    "reinstall",
    # extension process and contract
    "extension_timeout": "raise --timeout or the manifest's timeout_seconds, or make the extension faster",
    "response_too_large": "the extension printed over 1,000,000 bytes: make it answer within the limit",
    "request_too_large": "shorten the query (the request passed 1,000,000 bytes)",
    "extension_spawn_failed": "the pinned program cannot start: `dcx ext doctor ID`, or reinstall it",
    "extension_exit_nonzero": "the extension exited non-zero: run `dcx ext doctor ID` and read its own logs",
    "response_not_json": "the extension must print one JSON object (UTF-8, no repeated keys) on stdout",
    "extension_request_invalid": "dcx could not build a request from this call: check --scope and --query",
}


def hint(reason_code: str | None) -> str | None:
    return HINTS.get(reason_code or "")
