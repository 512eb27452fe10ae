from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from dcx.core.canonical import canonical_bytes, keyed_ref, packet_ref, pretty_bytes
from dcx.core.envelope import PacketContext
from dcx.packets import manifest

CTX = PacketContext(goal_id="goal-test", key_id="0123abcd")


def _row(source_id: str, objectives: list[str]) -> dict:
    return {
        "source_id": source_id,
        "provider_id": "files",
        "source_kind": "document",
        "priority": "p0",
        "evidence_level": "s1",
        "objectives": objectives,
        "scan_mode": "incremental",
        "exact_read_policy": "always",
        "freshness_seconds": 86400,
        "max_changes": 1000,
        "enabled": True,
    }


def test_canonical_bytes_are_rfc8785() -> None:
    assert (
        canonical_bytes({"b": 1, "a": [1.0, "é"], "c": None})
        == b'{"a":[1,"\xc3\xa9"],"b":1,"c":null}'
    )


def test_known_answer_refs_are_pinned() -> None:
    # If these change, every stored packet ref changes: that is a format break.
    pinned = packet_ref("decision-evidence", {"a": 1, "packet_ref": "ignored"}, "packet_ref")
    assert pinned == packet_ref("decision-evidence", {"a": 1}, "packet_ref")
    assert pinned == KNOWN_EVIDENCE_REF
    assert keyed_ref(bytes(range(32)), "source-change", ["s", "docs/a.md"]) == KNOWN_KEYED_REF


def test_known_manifest_ref() -> None:
    packet = manifest.SPEC.build(
        CTX, {"source_count": 1, "enabled_source_count": 1, "sources": [_row("s1", ["x"])]}
    )
    assert packet["manifest_ref"] == KNOWN_MANIFEST_REF


def test_keyed_ref_depends_on_key() -> None:
    a = keyed_ref(bytes(32), "source-change", ["s", "docs/a.md"])
    b = keyed_ref(bytes(range(32)), "source-change", ["s", "docs/a.md"])
    assert a != b and a.startswith("source-change-") and len(a.split("-")[-1]) == 32


def test_pretty_bytes_one_field_per_line() -> None:
    text = pretty_bytes({"b": 1, "a": {"c": 2}}).decode()
    assert text == '{\n  "a": {\n    "c": 2\n  },\n  "b": 1\n}\n'


token = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)


@given(
    rows=st.lists(
        st.tuples(token, st.lists(token, min_size=1, max_size=4)),
        min_size=1,
        max_size=6,
        unique_by=lambda r: r[0],
    ),
    data=st.data(),
)
def test_key_order_and_record_order_never_change_a_ref(rows, data) -> None:
    values = [_row(sid, objs) for sid, objs in rows]
    first = manifest.SPEC.build(
        CTX, {"source_count": len(values), "enabled_source_count": len(values), "sources": values}
    )
    shuffled = data.draw(st.permutations(values))
    reordered = []
    for row in shuffled:
        keys = data.draw(st.permutations(list(row)))
        objectives = data.draw(st.permutations(row["objectives"]))
        reordered.append({k: (list(objectives) if k == "objectives" else row[k]) for k in keys})
    body = {"sources": reordered, "enabled_source_count": len(values), "source_count": len(values)}
    second = manifest.SPEC.build(CTX, json.loads(json.dumps(body)))
    assert first["manifest_ref"] == second["manifest_ref"]
    assert pretty_bytes(first) == pretty_bytes(second)


# blake3(b'{"a":1}')[:32], computed independently with b3sum
KNOWN_EVIDENCE_REF = "decision-evidence-d59b6562d7c9b121bc9760873d787890"
KNOWN_KEYED_REF = "source-change-a8736915277b3efda8550244a9bbb512"
KNOWN_MANIFEST_REF = "decision-source-manifest-0e299619aa585c5307124cf1b8fcaca5"
