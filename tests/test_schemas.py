"""Every schema is generated from the code and every snapshot validates against its schema."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from scripts import schemas

SNAPSHOTS = Path(__file__).resolve().parent


def test_checked_in_schemas_match_the_code() -> None:
    assert schemas.main(["--check"]) == 0, "run: python scripts/schemas.py"


def test_schemas_are_valid_draft_2020_12() -> None:
    for name, body in schemas.all_schemas().items():
        Draft202012Validator.check_schema(body)
        assert body["$id"] == f"{name}.schema.json"


def _registry() -> Registry:
    resources = [
        (f"{name}.schema.json", Resource.from_contents(body))
        for name, body in schemas.all_schemas().items()
    ]
    return Registry().with_resources(resources)


def _documents(value: Any) -> Iterator[dict[str, Any]]:
    if isinstance(value, dict):
        if isinstance(value.get("schema_version"), str):
            yield value
        for item in value.values():
            yield from _documents(item)
    elif isinstance(value, list):
        for item in value:
            yield from _documents(item)


def _snapshot_documents() -> list[tuple[str, dict[str, Any]]]:
    out = []
    known = schemas.all_schemas()
    for path in sorted(SNAPSHOTS.rglob("__snapshots__/**/*.json")):
        for doc in _documents(json.loads(path.read_text())):
            if doc["schema_version"] in known:
                out.append((f"{path.parent.name}/{path.name}:{doc['schema_version']}", doc))
    return out


DOCS = _snapshot_documents()


def test_snapshots_cover_schemas() -> None:
    assert len({doc["schema_version"] for _, doc in DOCS}) >= 5


@pytest.mark.parametrize(("where", "doc"), DOCS, ids=[w for w, _ in DOCS])
def test_every_snapshot_validates_against_its_schema(where: str, doc: dict[str, Any]) -> None:
    schema = schemas.all_schemas()[doc["schema_version"]]
    validator = Draft202012Validator(schema, registry=_registry())
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, f"{where}: {errors[0].message} at {list(errors[0].path)}"


def test_a_broken_document_is_rejected() -> None:
    schema = schemas.all_schemas()["decision_proposal_v0"]
    _, doc = next((w, d) for w, d in DOCS if d["schema_version"] == "decision_proposal_v0")
    broken = {**doc, "authority_confirmation_required": False}
    assert list(Draft202012Validator(schema, registry=_registry()).iter_errors(broken))
