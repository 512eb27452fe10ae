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
    "provider_version_incompatible": "upgrade `ov` to at least context_provider.config.minimum_version",
    "provider_service_unavailable": "start the OpenViking server and check `ov status`",
    "provider_unavailable": "this build of dcx has no extension provider",
    "profile_changed_during_recall": "the profile changed while recalling: run the command again",
}


def hint(reason_code: str | None) -> str | None:
    return HINTS.get(reason_code or "")
