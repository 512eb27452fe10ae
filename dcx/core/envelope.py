"""The stored-packet envelope: ``PacketSpec`` wraps a kind's fields (SPEC §3.1).

Every stored packet carries its schema token, goal, key id, (for decision-bound
kinds) decision id, and a ref derived from its content. The body's fields are
the kind's; the envelope's are dcx's and can never be given by a caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dcx.core import public
from dcx.core.canonical import canonical_bytes, digest_hex, packet_ref
from dcx.core.errors import InvalidInput
from dcx.core.fields import Const, DecisionId, Field, Hex8, Ref, Shape, Token, bad, type_name

_FORBIDDEN_NEEDLES = tuple(f'"{key}":'.encode() for key in sorted(public.FORBIDDEN_KEYS))


# check_parsed compiles a spec's check after this many packets (~20 ms for the assembly,
# about what 8 interpreted assembly checks cost)
COMPILE_AFTER = 8


class PacketContext(NamedTuple):
    """Identity every stored packet carries (SPEC §3.1)."""

    goal_id: str
    key_id: str
    decision_id: str | None = None
    agent_id: str | None = None


ENVELOPE_DOC = {
    "schema_version": "The packet's schema token.",
    "goal_id": "The goal this packet serves.",
    "key_id": "First 8 hex of blake3(workspace key, 'dcx-key-id'): which key minted its opaque refs.",
    "decision_id": "The decision the packet belongs to.",
    "agent_id": "The acting agent that stored this packet (a public token; SPEC §16). Absent on packets "
    "stored before agents were recorded, and on goal-level packets no agent made.",
}


class PacketSpec:
    """A stored packet kind: its folder, schema token, ref prefix and ref field."""

    def __init__(
        self,
        *,
        kind: str,
        schema_version: str,
        prefix: str,
        ref_field: str,
        fields: Mapping[str, Field],
        decision_scoped: bool | str = False,
        doc: str = "",
    ) -> None:
        """``decision_scoped``: True (always carries ``decision_id``), False (never), or
        ``"optional"`` (carries it when the context has one: scan receipts, coverage and
        freshness are goal-level from ``dcx scan`` and bound to a decision from ``prepare``)."""
        self.kind = kind
        self.schema_version = schema_version
        self.prefix = prefix
        self.ref_field = ref_field
        self.decision_scoped = decision_scoped
        envelope: dict[str, Field] = {
            "schema_version": Const(
                value=schema_version, doc=ENVELOPE_DOC["schema_version"], computed=True
            ),
            "goal_id": Token(doc=ENVELOPE_DOC["goal_id"], computed=True),
            "key_id": Hex8(doc=ENVELOPE_DOC["key_id"], computed=True),
        }
        if decision_scoped:
            envelope["decision_id"] = DecisionId(
                doc=ENVELOPE_DOC["decision_id"],
                computed=True,
                optional=decision_scoped == "optional",
            )
        envelope["agent_id"] = Token(doc=ENVELOPE_DOC["agent_id"], computed=True, optional=True)
        body = dict(fields)
        body[ref_field] = Ref(prefix, doc="This packet's content-derived ref.", computed=True)
        # a kind may declare an envelope name as its own field (the assembly's required agent_id)
        self.envelope_keys = frozenset(k for k in envelope if k not in fields) | {ref_field}
        self.shape = Shape(schema_version, {**envelope, **body}, doc=doc)
        self._fast: Any = None  # the compiled check_parsed, made after COMPILE_AFTER packets
        self._checked = 0

    def build(self, ctx: PacketContext, values: Mapping[str, Any]) -> dict[str, Any]:
        """Validate ``values``, add the envelope, normalise, and compute the ref.

        The envelope (schema token, goal, key id, decision id, the ref) is dcx's: a value
        that names one of its keys is refused, never allowed to override it."""
        clash = sorted(name for name in values if name in self.envelope_keys)
        if clash:
            raise InvalidInput(
                f"{self.kind}: {', '.join(clash)} belong(s) to the packet envelope, not to its values",
                field=clash[0],
                code="envelope_field",
            )
        draft: dict[str, Any] = {
            "schema_version": self.schema_version,
            "goal_id": ctx.goal_id,
            "key_id": ctx.key_id,
            **values,
        }
        if self.decision_scoped:
            if ctx.decision_id is None and self.decision_scoped != "optional":
                raise InvalidInput(f"{self.kind} packets need a decision id", field="decision_id")
            if ctx.decision_id is not None:
                draft["decision_id"] = ctx.decision_id
        if ctx.agent_id is not None:
            draft["agent_id"] = ctx.agent_id
        for name, rule in self.shape.fields.items():
            if isinstance(rule, Const) and name not in draft:
                draft[name] = rule.value  # constant flags are the spec's, not the caller's
        draft[self.ref_field] = f"{self.prefix}-{'0' * 32}"  # placeholder, replaced below
        packet = self.shape.check(draft, self.schema_version)
        public.check_record(packet, where=self.schema_version)
        packet[self.ref_field] = packet_ref(self.prefix, packet, self.ref_field)
        return packet

    def input_shape(self, title: str, *, doc: str, accepted: tuple[str, ...] = ()) -> Shape:
        """What a caller writes: the fields that are not ``computed``, and the computed ones
        in ``accepted`` as optional (dcx checks a given one against what it computes)."""
        import copy  # here: the read paths never build an input shape (copy imports weakref)

        fields: dict[str, Field] = {}
        for name, rule in self.shape.fields.items():
            if not rule.computed:
                fields[name] = rule
            elif name in accepted:
                given = copy.copy(rule)
                given.optional, given.computed = True, False
                fields[name] = given
        return Shape(title, fields, doc=doc)

    def check_parsed(self, value: Any) -> None:
        """:meth:`check_stored` of a packet as ``load_stored`` parsed it from bytes that
        ``pretty_by_orjson`` proved (the store's read path, ``dcx verify``, ``dcx report``).

        Once a spec has checked a few packets, a check compiled from its shape
        (``dcx.core.fastcheck``) answers first; whatever it cannot prove valid,
        :meth:`check_stored` decides — so every verdict and message is its own. It
        answers by raising or not (what the compiled check makes may be shared by
        later checks: it is not returned)."""
        from dcx.core import fastcheck

        fast = self._fast
        if fast is None:
            self._checked += 1
            if self._checked <= COMPILE_AFTER:  # a few packets (show, log): not worth compiling
                self.check_stored(value)
                return
            fast = self.compiled()
        if fastcheck.ready():
            try:
                fast(value)
                return
            except Exception:  # any doubt: the interpreted checker decides
                pass
        self.check_stored(value)

    def compiled(self) -> Any:
        """The compiled check of :meth:`check_parsed`, made now if it was not yet."""
        if self._fast is None:
            from dcx.core.fastcheck import compile_spec

            self._fast = compile_spec(self)
        return self._fast

    def check_stored(self, value: Any, path: str = "") -> dict[str, Any]:
        """Validate a packet read back (or embedded): shape, safety, and that its ref recomputes."""
        packet = self.shape.check(value, path or self.schema_version)
        try:
            body = canonical_bytes({k: v for k, v in packet.items() if k != self.ref_field})
        except InvalidInput:
            public.check_record(
                packet, where=path or self.schema_version
            )  # its refusal comes first
            raise
        # A forbidden key k is spelled '"k":' in canonical JSON: when none is, there is none
        # to find (a nested packet was checked on its own already; this is its second pass).
        for needle in _FORBIDDEN_NEEDLES:
            if needle in body:
                public.check_record(packet, where=path or self.schema_version)
                break
        expected = f"{self.prefix}-{digest_hex(body)}"
        if packet[self.ref_field] != expected:
            raise InvalidInput(
                f"{path or self.kind}: {self.ref_field} does not match the content",
                field=f"{path}.{self.ref_field}" if path else self.ref_field,
                code="ref_mismatch",
            )
        return packet

    def schema(self) -> dict[str, Any]:
        body = self.shape.schema()
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"{self.schema_version}.schema.json",
            "title": self.schema_version,
            **body,
        }


class Nested(Field):
    """A nested stored packet, embedded whole and keeping its own ref."""

    spec: PacketSpec | None = None

    def check(self, value: Any, path: str) -> Any:
        assert self.spec is not None
        return self.spec.check_stored(value, path)

    def schema(self) -> dict[str, Any]:
        assert self.spec is not None
        return {"$ref": f"{self.spec.schema_version}.schema.json"}


class NestedList(Field):
    """A list of nested stored packets of one kind, sorted by ref, refs unique."""

    spec: PacketSpec | None = None
    max_items: int = 64

    def check(self, value: Any, path: str) -> Any:
        assert self.spec is not None
        if not isinstance(value, list):
            raise bad(path, f"expected a list, got {type_name(value)}", "invalid_type")
        if len(value) > self.max_items:
            raise bad(
                path,
                f"holds {len(value)} items, over the limit of {self.max_items}",
                "too_many_items",
            )
        spec = self.spec
        items = [spec.check_stored(v, f"{path}[{i}]") for i, v in enumerate(value)]
        refs = [item[spec.ref_field] for item in items]
        if len(set(refs)) != len(refs):
            raise bad(path, "holds the same packet twice", "duplicate_id")
        return sorted(items, key=lambda item: item[spec.ref_field])

    def schema(self) -> dict[str, Any]:
        assert self.spec is not None
        return {
            "type": "array",
            "maxItems": self.max_items,
            "items": {"$ref": f"{self.spec.schema_version}.schema.json"},
        }
