"""Fuzzed advisory provider responses (SPEC §6.5): accepted exactly, or refused without a trace.

- ``check_response`` (dcx/packets/advisory.py) on mutated valid responses:
  either a clean response that keeps every cross-field rule and bound, or an
  ``InvalidInput`` naming a ``response…`` field in one line that echoes no value;
- the whole extension path (dcx/providers/extension.py) on mutated response
  *bytes*, replayed by a real extension process: never an exception, and
  ``completed`` exactly when the bytes are one strict JSON object that the
  response rules accept with status ``completed``; otherwise ``unavailable``
  with a reason code (the response's own, or a contract reason).

CI runs 2,000 + 60 cases (each of these spawns the extension); ``DCX_HYPOTHESIS_PROFILE=deep`` runs more.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dcx.core.errors import InvalidInput
from dcx.core.public import check_text
from dcx.packets.advisory import CONTENT_MAX, RESOURCE_REF_MAX, check_response
from tests.support.extensions import install, make_extension, retrieve
from tests.support.figures import record
from tests.support.fuzz import examples, mutate, nudge

CANARY = "CNRYADV"
BASE = {
    "schema_version": "decision_context_advisory_retrieve_response_v0",
    "ok": True,
    "status": "completed",
    "reason_code": None,
    "items": [
        {
            "resource_ref": f"{CANARY}-ref-1",
            "summary": "Fixture match one",
            "content": f"{CANARY} content one",
            "score": 1.5,
        },
        {
            "resource_ref": f"{CANARY}-ref-2",
            "summary": "Fixture match two",
            "content": f"{CANARY} content two",
            "score": None,
        },
    ],
}
COUNTS = {"unit": 0, "unit_refused": 0, "e2e": 0, "e2e_completed": 0, "unexpected": 0}


def _clean_response_holds(clean: dict[str, Any], max_results: int) -> None:
    assert clean["status"] in ("completed", "unavailable")
    assert (clean["reason_code"] is None) == (clean["status"] == "completed")
    assert clean["status"] == "completed" or clean["items"] == []
    assert len(clean["items"]) <= max_results
    for item in clean["items"]:
        check_text(item["summary"], field="summary", limit=220)
        assert isinstance(item["content"], str) and len(item["content"]) <= CONTENT_MAX
        assert (
            isinstance(item["resource_ref"], str)
            and 0 < len(item["resource_ref"]) <= RESOURCE_REF_MAX
        )
        score = item["score"]
        assert score is None or (
            not isinstance(score, bool) and isinstance(score, int | float) and math.isfinite(score)
        )


@settings(max_examples=examples(2000))
@given(data=st.data(), max_results=st.integers(1, 8))
def test_fuzz_check_response(data, max_results: int) -> None:
    COUNTS["unit"] += 1
    doc = nudge(BASE, data) if data.draw(st.integers(0, 3)) == 0 else mutate(BASE, data)
    doc = json.loads(json.dumps(doc, allow_nan=True))
    try:
        clean = check_response(doc, max_results=max_results)
    except InvalidInput as exc:
        COUNTS["unit_refused"] += 1
        assert exc.field and exc.field.startswith("response"), exc.field
        assert exc.message and "\n" not in exc.message
        assert CANARY.lower() not in exc.message.lower()  # names fields and rules, never values
        return
    except Exception:
        COUNTS["unexpected"] += 1
        raise
    _clean_response_holds(clean, max_results)


def _strict(raw: bytes) -> Any:
    """The oracle's parse: one JSON object, UTF-8, unique keys (NaN/Infinity parse; the rules refuse them)."""

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)

    return json.loads(raw.decode("utf-8"), object_pairs_hook=unique)


def _expected(raw: bytes, max_results: int) -> str | None:
    """``completed``, a response's own reason code, or None (a contract failure)."""
    try:
        doc = _strict(raw)
        if not isinstance(doc, dict):
            return None
        clean = check_response(doc, max_results=max_results)
    except (ValueError, UnicodeDecodeError, InvalidInput):
        return None
    return "completed" if clean["status"] == "completed" else clean["reason_code"]


mangle = st.lists(
    st.tuples(
        st.sampled_from(["replace", "delete", "insert", "truncate"]),
        st.integers(0, 10_000),
        st.binary(min_size=1, max_size=3),
    ),
    max_size=3,
)


def _mangled(raw: bytes, edits: list[tuple[str, int, bytes]]) -> bytes:
    out = bytearray(raw)
    for action, at, junk in edits:
        at = at % (len(out) + 1)
        if action == "replace":
            out[at : at + len(junk)] = junk
        elif action == "delete":
            del out[at : at + len(junk)]
        elif action == "insert":
            out[at:at] = junk
        else:
            del out[at:]
    return bytes(out)


@settings(max_examples=examples(60, 2000))
@given(data=st.data(), max_results=st.integers(1, 8), edits=mangle)
def test_fuzz_extension_responses_end_to_end(
    fresh_ws: Path, tmp_path: Path, data, max_results: int, edits
) -> None:
    manifest = tmp_path / "exts" / "replay" / "extension.toml"
    if not manifest.exists():
        install(fresh_ws, make_extension(tmp_path / "exts", "replay.py"))
    COUNTS["e2e"] += 1
    if data.draw(st.booleans()):  # half: one plausible change, bytes intact, room for both items
        raw = json.dumps(nudge(BASE, data)).encode()
        max_results = max(max_results, 2)
    else:
        raw = _mangled(json.dumps(mutate(BASE, data), allow_nan=True).encode(), edits)
    (Path.home() / "response.bin").write_bytes(raw)
    want = _expected(raw, max_results)
    try:
        _provider, result = retrieve(fresh_ws, max_results=max_results)
    except Exception:
        COUNTS["unexpected"] += 1
        raise
    if want == "completed":
        COUNTS["e2e_completed"] += 1
        assert result.status == "completed", (result.reason_code, raw[:200])
        for item in result.items:
            check_text(item.summary, field="summary", limit=220)
        assert len(result.items) <= max_results
    else:
        assert result.status == "unavailable" and result.items == ()
        assert result.reason_code == (want or result.reason_code)
        assert want is not None or result.reason_code in (
            "provider_contract_invalid",
            "response_not_json",
        )


def test_fuzz_advisory_case_count_reported() -> None:
    """Runs last in this module: every case counted, none raised (bench/reliability.py prints them)."""
    if COUNTS["unit"]:
        record(
            "fuzz",
            "advisory",
            {"cases": COUNTS["unit"] + COUNTS["e2e"], **COUNTS, "tracebacks": COUNTS["unexpected"]},
        )
        assert COUNTS["unexpected"] == 0
        assert (
            COUNTS["unit_refused"] > 0 and COUNTS["e2e_completed"] > 0
        )  # both outcomes were exercised
