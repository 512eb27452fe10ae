from __future__ import annotations

import pytest

from dcx.core.errors import UnsafeText
from dcx.core.public import bind_goal_root, check_record, check_text, check_token, unsafe_class

REJECTED = [
    ("local_path", "see ~/notes/plan.md"),
    ("local_path", "the file /home/alice/plan.md"),
    ("local_path", "under /Users/bob/Desktop"),
    ("local_path", "in /tmp/scratch"),
    ("local_path", "from /var/lib/app"),
    ("local_path", "/etc/hosts was edited"),
    ("local_path", "/opt/tool/bin"),
    ("local_path", "/srv/data"),
    ("local_path", "/mnt/share"),
    ("local_path", "/Volumes/USB"),
    ("local_path", "/private/var/folders"),
    ("local_path", "/usr/local/bin"),
    ("local_path", "/workspace/repo"),
    ("local_path", "/workspaces/repo"),
    ("local_path", "/data/exports"),
    ("local_path", "/root/.ssh"),
    ("local_path", r"C:\Users\alice\plan.docx"),
    ("local_path", "D:/exports/report.csv"),
    ("local_path", r"\\fileserver\share\plan"),
    ("url", "see https://example.org/page"),
    ("url", "ssh://git@host/repo"),
    ("url", "open file:plan.md"),
    ("email", "ask alice@example.com"),
    ("bearer_token", "Authorization: Bearer abc123def456ghi"),
    ("credential_assignment", "api_key=sk-12345"),
    ("credential_assignment", "secret=hunter2"),
    ("credential_assignment", "password: hunter2"),
    ("credential_assignment", "token=abcdef"),
    ("github_token", "ghp_" + "a1B2" * 9),
    ("github_token", "github_pat_" + "a" * 30),
    ("aws_key", "AKIAABCDEFGHIJKLMNOP"),
    ("slack_token", "xoxb-123456789012-abc"),
    ("google_api_key", "AIza" + "b" * 35),
    ("stripe_key", "sk_live_" + "c" * 24),
    ("npm_token", "npm_" + "d" * 36),
    ("pypi_token", "pypi-AgEIcHlwaS5vcmc" + "e" * 30),
    ("jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlMTIz"),
    ("pem_private_key", "-----BEGIN RSA PRIVATE KEY-----"),
    ("control_character", "two\nlines"),
    ("control_character", "bell\x07"),
]

ALLOWED = [
    "the secretary approved the plan",
    "token budget of 4000 per call",
    "API route /v2/catalog/* stays cached",
    "p50/p95 latency and/or error rate",
    "ratio 3:1 at 10:30 UTC",
    "use the password manager rotation policy",
    "a tokenizer change",
    "cache TTL of 300 s",
    "the /healthz route",
]


@pytest.mark.parametrize(("klass", "text"), REJECTED)
def test_detector_rejects_each_class(klass: str, text: str) -> None:
    assert unsafe_class(text) == klass
    with pytest.raises(UnsafeText) as err:
        check_text(text, field="summary")
    assert "summary" in err.value.message
    assert text not in err.value.message  # never echo the unsafe value


@pytest.mark.parametrize("text", ALLOWED)
def test_detector_lets_plain_words_through(text: str) -> None:
    assert unsafe_class(text) is None
    assert check_text(text, field="summary") == text


def test_goal_root_path_is_a_path(tmp_path) -> None:
    bind_goal_root("/srv2/goals/checkout")
    try:
        assert unsafe_class("see /srv2/goals/checkout/docs") == "local_path"
        assert unsafe_class("see docs") is None
    finally:
        bind_goal_root("")


def test_bounds_reject_never_truncate() -> None:
    with pytest.raises(UnsafeText, match="321 characters is over the limit of 320"):
        check_text("x" * 321, field="rationale")
    assert check_text("x" * 220, field="summary", limit=220) == "x" * 220
    with pytest.raises(UnsafeText):
        check_text("x" * 221, field="summary", limit=220)


def test_tokens() -> None:
    assert check_token("source:authority:docs", field="source_id") == "source:authority:docs"
    for bad in ("", "-x", "has space", "a" * 129, "é"):
        with pytest.raises(UnsafeText):
            check_token(bad, field="source_id")


@pytest.mark.parametrize(
    "key",
    [
        "content",
        "raw_content",
        "api_key",
        "credential",
        "credentials",
        "token",
        "provider_payload",
        "raw_chat",
        "tool_output",
        "raw_provider_payload",
    ],
)
def test_forbidden_keys_anywhere(key: str) -> None:
    with pytest.raises(UnsafeText, match=key):
        check_record({"rows": [{"ok": 1, "nested": {key: "x"}}]})


def test_a_trailing_newline_is_not_a_token() -> None:
    # `$` in Python matches before a final newline: tokens must use fullmatch
    with pytest.raises(UnsafeText):
        check_token("agent-a\n", field="agent_id")
