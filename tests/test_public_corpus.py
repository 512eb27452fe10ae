"""The public-safety detector judged on a labelled corpus (SPEC §3.4 v3, issue 12).

``fixtures/public-safety/`` holds generated positives of every family SPEC §3.4
lists (shapes only, never real secrets) and ordinary decision prose, dcx refs,
routes, versions, dates, commit SHAs, ticket ids and numbers with units. The
first oracle is the labels; the second is Yelp's ``detect-secrets`` (a test
dependency only): whatever it flags in the corpus, dcx refuses too.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dcx.core.public import unsafe_class

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "public-safety"
FAMILIES = {
    "local_path",
    "url",
    "email",
    "bearer_token",
    "credential_assignment",
    "github_token",
    "aws_key",
    "aws_secret",
    "bare_aws_secret",
    "slack_token",
    "google_api_key",
    "stripe_key",
    "npm_token",
    "pypi_token",
    "jwt",
    "pem_private_key",
    "control_character",
    "high_entropy_secret",
    "high_entropy_hex",
    "authorization_header",
    "basic_auth",
    "openai_key",
    "anthropic_key",
    "gitlab_token",
    "huggingface_token",
    "twilio_key",
    "sendgrid_key",
    "discord_token",
    "telegram_token",
    "azure_connection_string",
    "ip_address",
    "private_host",
    "invisible_character",
    # v4 (SPEC §3.4)
    "json_secret_pair",
    "camel_secret_assignment",
    "env_secret_assignment",
    "userinfo_host",
    "base64_pem",
    "pem_body",
    "private_key_id",
    "keyword_hex_key",
    "mailgun_key",
    "fullwidth_secret",
    "soft_hyphen_split",
    "tag_character_split",
    "variation_selector_split",
    "mongolian_separator_split",
}


def rows(name: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (CORPUS / f"{name}.jsonl").read_text().splitlines()]


def test_the_corpus_is_large_and_covers_every_family() -> None:
    positives, negatives = rows("positives"), rows("negatives")
    assert len(positives) >= 400 and len(negatives) >= 500 and len(FAMILIES) >= 40
    assert {r["family"] for r in positives} == FAMILIES
    kinds = Counter(r["family"] for r in negatives)
    assert set(kinds) >= {
        "prose",
        "dcx_ref",
        "route",
        "semver",
        "date",
        "commit_sha",
        "ticket",
        "number_unit",
    }
    texts = " ".join(r["text"] for r in negatives)
    assert "secretary" in texts and "token budget" in texts


def test_every_positive_is_refused_and_no_negative_is() -> None:
    missed = [
        f"{r['family']}: {r['text']!r}"
        for r in rows("positives")
        if unsafe_class(r["text"]) is None
    ]
    wrongly = [
        f"{r['family']}: {r['text']!r} ({unsafe_class(r['text'])})"
        for r in rows("negatives")
        if unsafe_class(r["text"]) is not None
    ]
    assert not missed, "positives that passed the detector:\n" + "\n".join(missed)
    assert not wrongly, "negatives the detector refused:\n" + "\n".join(wrongly)


def test_the_corpus_is_what_the_generator_makes(tmp_path: Path) -> None:
    """The checked-in corpus is reproducible from its generator (fixed seed)."""
    import runpy

    module = runpy.run_path(str(CORPUS / "generate.py"))
    assert [tuple(r.values()) for r in rows("positives")] == list(map(tuple, module["positives"]()))
    assert [tuple(r.values()) for r in rows("negatives")] == list(map(tuple, module["negatives"]()))


@pytest.fixture(scope="module")
def detect_secrets_flags() -> dict[str, list[tuple[str, str]]]:
    """(type, text) of every corpus line detect-secrets flags, scanning each file as a file would be."""
    import tempfile

    from detect_secrets.core.scan import scan_file
    from detect_secrets.settings import default_settings

    flagged: dict[str, list[tuple[str, str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("positives", "negatives"):
            texts = [r["text"] for r in rows(name)]
            path = Path(tmp) / f"{name}.txt"
            path.write_text("".join(t.replace("\n", " ") + "\n" for t in texts))
            with default_settings():
                hits = list(scan_file(str(path)))
            flagged[name] = [(hit.type, texts[hit.line_number - 1]) for hit in hits]
    return flagged


def test_detect_secrets_differential(detect_secrets_flags) -> None:
    """Everything detect-secrets flags in the corpus, dcx refuses too."""
    assert len({t for _, t in detect_secrets_flags["positives"]}) >= 40, (
        "detect-secrets found next to nothing"
    )
    escaped = [
        f"{kind}: {text!r}"
        for name in ("positives", "negatives")
        for kind, text in detect_secrets_flags[name]
        if unsafe_class(text) is None
    ]
    assert not escaped, "detect-secrets flagged, dcx let through:\n" + "\n".join(escaped)


def test_detect_secrets_regex_plugins_line_by_line() -> None:
    """detect-secrets' ad-hoc scan with its shape plugins (no entropy or keyword guesses)."""
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import default_settings, get_settings

    guessers = {"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector"}
    escaped = []
    with default_settings():
        get_settings().disable_plugins(*guessers)
        for name in ("positives", "negatives"):
            for row in rows(name):
                kinds = {hit.type for hit in scan_line(row["text"].replace("\n", " "))}
                if kinds and unsafe_class(row["text"]) is None:
                    escaped.append(f"{sorted(kinds)}: {row['text']!r}")
    assert not escaped, "\n".join(escaped)
