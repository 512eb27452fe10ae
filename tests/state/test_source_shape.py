"""One source shape: the registry's SOURCE fields are the Source tuple's, and the public
manifest row is that shape less what is private (the locator)."""

from __future__ import annotations

from dcx.packets.manifest import SOURCE_ROW
from dcx.state.profile import SOURCE, Source


def test_the_source_tuple_has_exactly_the_registry_fields() -> None:
    assert tuple(SOURCE.fields) == Source._fields
    optional = {name for name, rule in SOURCE.fields.items() if rule.optional}
    assert optional == set(Source._field_defaults)


def test_the_manifest_row_is_the_source_less_its_locator() -> None:
    assert set(SOURCE_ROW.fields) == set(Source._fields) - {"locator"}
