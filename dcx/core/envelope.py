"""The stored-packet envelope: ``PacketSpec`` wraps a kind's fields (SPEC §3.1).

Every stored packet carries its schema token, goal, key id, (for decision-bound
kinds) decision id, and a ref derived from its content. The body's fields are
the kind's; the envelope's are dcx's and can never be given by a caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from dcx.core import public
from dcx.core.canonical import digest_hex, packet_ref, parsed_jcs
from dcx.core.errors import InvalidInput
from dcx.core.fields import (
    Const,
    DecisionId,
    Field,
    Hex8,
    Ref,
    Refusal,
    Shape,
    Token,
    Unproven,
    jcs_of,
    raised,
    refuse,
    type_name,
    within_bmp,
)

_FORBIDDEN_NEEDLES = tuple(f'"{key}":'.encode() for key in sorted(public.FORBIDDEN_KEYS))


def _bmp_only(dumps: Any) -> Any:
    """The body bytes of a parsed packet without opaque parts: the rules of dcx's own have
    proved its numbers spelled as JCS spells them (``fields.Number``); what is left to prove
    is the key order, which differs only for characters beyond the BMP."""

    def jcs(value: Any) -> bytes:
        data: bytes = dumps(value)
        if not within_bmp(data):
            raise Unproven
        return data

    return jcs


def _proven(value: Any) -> bytes:
    """``orjson``'s bytes of a parsed packet's body, proven to be its JCS bytes."""
    data = parsed_jcs(value)
    if data is None:
        raise Unproven
    return data


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
        self._checkers: dict[tuple[bool, bool], Any] = {}

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
                given.__dict__.pop("_checkers", None)  # compiled for the rule, not for the copy
                fields[name] = given
        return Shape(title, fields, doc=doc)

    def check_parsed(self, value: Any) -> None:
        """:meth:`check_stored` of a packet parsed from stored bytes (the store's read path:
        ``dcx verify``, ``dcx report``), answering by raising or not.

        A first pass sorts records by their ``orjson`` bytes, remembers checked records by
        them and hashes them; it answers only when ``canonical.parsed_jcs`` then proves the
        packet's bytes canonical (so every part's are: the order and the refs were JCS's).
        Anything else — a refusal, no proof, any exception — goes to :meth:`check_stored`,
        so every verdict and message is the exact check's."""
        try:
            self.checker(parsed=True, top=True)(value)
            return
        except Exception:  # any doubt: the exact check decides
            pass
        self.check_stored(value)

    def check_stored(self, value: Any, path: str = "") -> dict[str, Any]:
        """Validate a packet read back (or embedded): shape, safety, and that its ref recomputes."""
        try:
            packet: dict[str, Any] = self.checker()(value)
        except Refusal as refused:
            raise refused.error(path) from None
        return packet

    def checker(self, parsed: bool = False, *, top: bool = False) -> Any:
        """:meth:`check_stored` as a closure of the packet alone, raising ``Refusal``
        (``fields.Field.checker``); compiled on first use and kept. ``top``: the outermost
        packet of a ``parsed`` check, whose bytes it proves canonical before it answers."""
        run = self._checkers.get((parsed, top))
        if run is None:
            run = self._checkers[parsed, top] = self._compile(parsed, top)
        return run

    def _compile(self, parsed: bool, top: bool) -> Any:
        shape, jcs = self.shape.checker(parsed), jcs_of(parsed)
        if top and self.shape.opaque():
            jcs = _proven
        elif top:
            jcs = _bmp_only(jcs)
        # a nested packet was checked on its own: only this packet's own parts may hold one
        needles = _FORBIDDEN_NEEDLES if self.shape.opens_keys() else ()
        ref_field, kind, version = self.ref_field, self.kind, self.schema_version
        prefix = f"{self.prefix}-"

        def where(path: str) -> str:
            return path or version

        def unsafe(packet: dict[str, Any]) -> Refusal | None:
            """The detector's refusal of a forbidden key anywhere in ``packet``, if it has one."""
            for _ in public.forbidden_keys(packet):
                return Refusal(lambda path: raised(public.check_record, packet, where=where(path)))
            return None

        def mismatch(path: str) -> InvalidInput:
            return InvalidInput(
                f"{path or kind}: {ref_field} does not match the content",
                field=f"{path}.{ref_field}" if path else ref_field,
                code="ref_mismatch",
            )

        def run(value: Any) -> dict[str, Any]:
            try:
                packet: dict[str, Any] = shape(value)
            except Refusal as refused:
                raise refused.based(where) from None
            try:
                unsigned = dict(packet)
                del unsigned[ref_field]
                body = jcs(unsigned)
            except InvalidInput:
                first = unsafe(packet)  # its refusal comes first
                if first is not None:
                    raise first from None
                raise
            # A forbidden key k is spelled '"k":' in canonical JSON: when none is, there is
            # none to find; a packet whose rules name every key it may hold has none.
            for needle in needles:
                if needle in body:
                    found = unsafe(packet)
                    if found is not None:
                        raise found
                    break
            if packet[ref_field] != prefix + digest_hex(body):
                raise Refusal(mismatch)
            return packet

        return run

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

    def compile(self, parsed: bool) -> Any:
        assert self.spec is not None
        return self.spec.checker(parsed)

    def _opens_keys(self) -> bool:
        return False  # checked whole by its own spec, forbidden keys included

    def _opaque(self) -> bool:
        assert self.spec is not None
        return self.spec.shape.opaque()

    def schema(self) -> dict[str, Any]:
        assert self.spec is not None
        return {"$ref": f"{self.spec.schema_version}.schema.json"}


class NestedList(Field):
    """A list of nested stored packets of one kind, sorted by ref, refs unique."""

    spec: PacketSpec | None = None
    max_items: int = 64

    def compile(self, parsed: bool) -> Any:
        assert self.spec is not None
        check, most, ref_field = self.spec.checker(parsed), self.max_items, self.spec.ref_field

        def ref_of(item: dict[str, Any]) -> Any:
            return item[ref_field]

        def run(value: Any) -> Any:
            if not isinstance(value, list):
                raise refuse(f"expected a list, got {type_name(value)}", "invalid_type")
            if len(value) > most:
                raise refuse(
                    f"holds {len(value)} items, over the limit of {most}", "too_many_items"
                )
            items: list[dict[str, Any]] = []
            try:
                for item in value:
                    items.append(check(item))
            except Refusal as refused:
                refused.steps.append(f"[{len(items)}]")
                raise refused from None
            refs = [item[ref_field] for item in items]
            if len(set(refs)) != len(refs):
                raise refuse("holds the same packet twice", "duplicate_id")
            return sorted(items, key=ref_of)

        return run

    def _opens_keys(self) -> bool:
        return False  # each checked whole by its own spec

    def _opaque(self) -> bool:
        assert self.spec is not None
        return self.spec.shape.opaque()

    def schema(self) -> dict[str, Any]:
        assert self.spec is not None
        return {
            "type": "array",
            "maxItems": self.max_items,
            "items": {"$ref": f"{self.spec.schema_version}.schema.json"},
        }
