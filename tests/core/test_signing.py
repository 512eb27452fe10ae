"""dcx.core.signing against the libraries themselves, and who imports the crypto library (SPEC §18)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from dcx.core import signing
from tests.support import signing as oracle


def test_key_id_is_the_documented_blake3_fingerprint() -> None:
    public = oracle.public_of(bytes(range(32, 64)))
    assert signing.key_id(public) == oracle.key_id(public)
    assert signing.key_id(public).startswith("signer-") and len(signing.key_id(public)) == 39


def test_a_dcx_signature_verifies_with_the_library_over_rfc8785_bytes() -> None:
    seed = signing.new_seed()
    doc = {"schema_version": "x", "b": ["2", "1"], "a": "é"}
    sig = signing.sign(seed, oracle.body_bytes(doc))
    assert oracle.verifies(oracle.public_of(seed), {**doc, "signature": sig})
    # and one the library made verifies with dcx
    other = Ed25519PrivateKey.generate()
    made = oracle.b64(other.sign(b"bytes"))
    assert signing.verifies(other.public_key().public_bytes_raw(), made, b"bytes")
    assert not signing.verifies(other.public_key().public_bytes_raw(), made, b"bytez")


@pytest.mark.parametrize(
    "text",
    ["", "A" * 85, "A" * 87, "=" * 86, "A" * 84 + "==", "A" * 85 + "B", "A" * 85 + "+", 7],
)
def test_only_the_one_unpadded_base64url_form_of_64_bytes_decodes(text) -> None:
    assert signing.decode(text, 64) is None


def test_decode_round_trips_what_the_library_encodes() -> None:
    raw = os.urandom(64)
    assert signing.decode(oracle.b64(raw), 64) == raw and signing.encode(raw) == oracle.b64(raw)


def test_public_of_matches_the_library() -> None:
    seed = os.urandom(32)
    assert signing.public_of(seed) == oracle.public_of(seed)


@pytest.mark.parametrize(
    "args",
    [
        ["--version"],
        ["status"],
        ["status", "--format", "json"],
        ["log"],
        ["log", "--format", "json"],
    ],
)
def test_start_up_paths_never_import_the_crypto_library(cycled: Path, args: list[str]) -> None:
    """`dcx --version`, `status` and `log` (even with signed statements to show) import no crypto:
    `-X importtime` lists every module a process imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "dcx", "-C", str(cycled), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DCX_AGENT_ID": "agent-a"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert imported, "no -X importtime output"
    assert not {m for m in imported if m.split(".")[0] in ("cryptography", "_cffi_backend")}


def test_a_writing_command_imports_it(cycled: Path) -> None:
    """The other side of the check above: the import test sees the library when it is loaded."""
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "dcx",
            "-C",
            str(cycled),
            "writeback",
            "--decision-id",
            "ttl-2026-12",
            "--kind",
            "todo_add",
            "--summary",
            "check the purge backlog",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "DCX_AGENT_ID": "agent-a"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "cryptography.hazmat.primitives.asymmetric.ed25519" in proc.stderr
