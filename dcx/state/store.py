"""The content-addressed packet store (SPEC §3.1).

``packets/<kind>/<ref>.json`` is written once and verified on write and on
every read: a stored file verifies only if its bytes equal the pretty
rendering of its parse and its ref recomputes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.canonical import REF_RE, load_pretty, load_stored, pretty_by_orjson, pretty_bytes
from dcx.core.envelope import PacketContext, PacketSpec
from dcx.core.errors import DcxError, InvalidInput, Refused
from dcx.core.fsutil import atomic_write, is_temp, list_dir, read_bytes
from dcx.core.public import without_private_values
from dcx.core.workspace import Workspace
from dcx.packets import BY_PREFIX, KINDS, spec_for
from dcx.state import statements
from dcx.state.redaction import Redacted, check_stub, is_stub

PACKET_MODE = 0o444


class StoredPacket(NamedTuple):  # a NamedTuple, not a dataclass: no `inspect` import on read paths
    kind: str
    ref: str
    path: Path
    packet: dict[str, Any]


class Store:
    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        # packets verified by this Store, by (path, size, mtime): a listing made again in the
        # same run (commit looks for receipts up to three times) re-hashes only new files
        self._listed: dict[tuple[Path, int, int], dict[str, Any]] = {}

    def path_for(self, kind: str, ref: str) -> Path:
        return self.ws.packets / kind / f"{ref}.json"

    # -- writing -----------------------------------------------------------
    def put(
        self, spec: PacketSpec, ctx: PacketContext, values: Mapping[str, Any]
    ) -> dict[str, Any]:
        """Build, validate and store a packet; return it (with its ref)."""
        packet = spec.build(ctx, values)
        self.put_built(spec, packet)
        return packet

    def put_built(self, spec: PacketSpec, packet: dict[str, Any]) -> str:
        ref = packet[spec.ref_field]
        data = pretty_bytes(packet)
        path = self.path_for(spec.kind, ref)
        if path.exists():
            self._verify_file(spec.kind, path)  # raises if the stored copy is corrupt
        else:
            atomic_write(path, data, mode=PACKET_MODE)
        statements.wrote(ref)  # a product of this command's signed statement (SPEC §18)
        return ref

    # -- reading -----------------------------------------------------------
    def get(self, ref: str, *, kind: str | None = None) -> dict[str, Any]:
        found_kind = self.kind_of(ref)
        if kind is not None and found_kind != kind:
            raise Refused(f"{ref} is not a {kind} packet", code="wrong_kind", hint="dcx verify")
        path = self.path_for(found_kind, ref)
        if not path.exists():
            raise Refused(
                f"packet {ref} is missing from packets/{found_kind}/",
                code="packet_missing",
                hint="run `dcx verify` to list missing and corrupt packets",
            )
        packet = self._verify_file(found_kind, path)
        statements.read(ref)  # a material of this command's signed statement (SPEC §18)
        return packet

    def exists(self, ref: str) -> bool:
        try:
            return self.path_for(self.kind_of(ref), ref).exists()
        except DcxError:
            return False

    @staticmethod
    def kind_of(ref: str) -> str:
        match = REF_RE.fullmatch(ref)
        kind = BY_PREFIX.get(match.group("prefix")) if match else None
        if kind is None:
            raise InvalidInput(f"not a packet ref: {ref[:80]!r}", code="invalid_ref", field="ref")
        return kind.folder

    def _verify_file(self, kind: str, path: Path) -> dict[str, Any]:
        """The verified packet at ``path``; a redaction stub raises ``Redacted``."""
        packet = self.read_verified(kind, path)
        if is_stub(packet):
            raise Redacted(packet)
        return packet

    def read_verified(self, kind: str, path: Path) -> dict[str, Any]:
        """The verified packet or redaction stub at ``path``."""
        problem = verify_file(self.ws, kind, path)
        if problem:
            raise Refused(
                f"{self.ws.rel(path)}: {problem}",
                code="packet_corrupt",
                hint="run `dcx verify` to list every corrupt packet",
            )
        return json.loads(read_bytes(path))

    def get_or_stub(self, ref: str, *, kind: str | None = None) -> dict[str, Any]:
        """Like :meth:`get`, but a redacted packet comes back as its stub."""
        try:
            return self.get(ref, kind=kind)
        except Redacted as exc:
            return exc.stub

    def iter_files(self) -> Iterator[tuple[str, Path]]:
        """(kind folder, path) of every stored packet file; a link or special file is never
        listed (SPEC §3.5 v4: `dcx verify` reports it as ``public_symlink``)."""
        for kind, what in list_dir(self.ws.packets):
            if what != "dir":
                continue
            folder = self.ws.packets / kind
            for name, entry in list_dir(folder):
                path = folder / name
                if entry == "file" and path.suffix == ".json" and not is_temp(path):
                    yield kind, path

    def iter_packets(self, kind: str | None = None) -> Iterator[StoredPacket]:
        """Every verifiable packet (of ``kind``); corrupt files raise, redacted ones are skipped."""
        for folder, path in self.iter_files():
            if kind is not None and folder != kind:
                continue
            try:
                st = path.stat()
            except FileNotFoundError:
                packet = self.read_verified(folder, path)  # says what is wrong, as before
            else:
                key = (path, st.st_size, st.st_mtime_ns)
                known = self._listed.get(key)
                packet = known if known is not None else self.read_verified(folder, path)
                self._listed[key] = packet
            if is_stub(packet):
                continue  # redacted: nothing left to read
            yield StoredPacket(folder, path.stem, path, packet)

    def resolve(self, text: str) -> str:
        """A full ref from a unique prefix of a ref or of its hex part (like git)."""
        text = text.strip()
        if REF_RE.fullmatch(text):
            return text
        names = {path.stem for _, path in self.iter_files()}
        return unique_prefix(
            text,
            names,
            "packet",
            hint="give more characters of the ref (`dcx log` lists each decision's packets)",
        )


def unique_prefix(text: str, names: Iterable[str], noun: str, *, hint: str) -> str:
    """The one name that ``text`` is a prefix of (of the whole name or of its hex part), like git.

    None matches: ``ref_not_found``; several: ``ref_ambiguous``, naming the candidates
    (shortened, still unique) so the next try is a copy. Both exit 2.
    """
    text = text.strip()
    if len(text) < 4:
        raise InvalidInput("ref: give at least 4 characters", field="ref")
    matches = sorted(
        {n for n in names if n.startswith(text) or n.rsplit("-", 1)[-1].startswith(text)}
    )
    if not matches:
        raise InvalidInput(f"no {noun} matches {text[:80]!r}", code="ref_not_found", field="ref")
    if len(matches) > 1:
        shown = ", ".join(_unique_short(m, matches) for m in matches[:6]) + (
            ", …" if len(matches) > 6 else ""
        )
        raise InvalidInput(
            f"{text[:80]!r} is ambiguous: {len(matches)} {noun}s match: {shown}",
            code="ref_ambiguous",
            field="ref",
            hint=hint,
        )
    return matches[0]


def _unique_short(ref: str, others: list[str]) -> str:
    """``ref`` cut to prefix + the fewest hex digits (at least 8) that no other ref shares."""
    prefix, _, hexpart = ref.rpartition("-")
    for size in range(8, len(hexpart) + 1):
        candidate = f"{prefix}-{hexpart[:size]}"
        if not any(o != ref and o.startswith(candidate) for o in others):
            return candidate
    return ref


def verify_file(ws: Workspace, kind: str, path: Path) -> str | None:
    """Why ``path`` does not verify as a ``kind`` packet, or None when it does."""
    if kind not in KINDS:
        return f"unknown packet folder {kind!r}"
    try:
        data = read_bytes(path)
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return verify_bytes(kind, path.stem, data)


def verify_bytes(kind: str, name: str, data: bytes) -> str | None:
    """Why ``data``, stored as ``<name>.json`` in ``packets/<kind>/``, does not verify, or None."""
    return verify_parsed(kind, name, data)[0]


def verify_parsed(kind: str, name: str, data: bytes) -> tuple[str | None, dict[str, Any] | None]:
    """:func:`verify_bytes`'s answer and, when ``data`` parsed to an object, the parse
    (so a reader that verifies does not parse twice)."""
    if kind not in KINDS:
        return f"unknown packet folder {kind!r}", None
    packet = load_pretty(data)  # orjson's read, when it proves the pretty form too
    trusted = packet is not None
    if not trusted:
        try:
            packet, repr_floats = load_stored(data)
        except (ValueError, UnicodeDecodeError):
            return "not valid JSON", None
    if not isinstance(packet, dict):
        return "not a JSON object", None
    if not trusted:
        # orjson's proof also lets check_parsed take orjson's bytes (proven after its pass)
        trusted = pretty_by_orjson(data, packet, repr_floats=repr_floats)
        if not trusted and pretty_bytes(packet) != data:
            return "bytes differ from the canonical pretty form (edited by hand?)", packet
    return _verify_packet(kind, name, packet, trusted), packet


def _verify_packet(kind: str, name: str, packet: dict[str, Any], trusted: bool) -> str | None:
    meta = KINDS[kind]
    if is_stub(packet):
        return check_stub(packet, kind, name)
    if packet.get("schema_version") != meta.schema_version:
        return f"schema_version is not {meta.schema_version} (wrong folder or unknown version)"
    if packet.get(meta.ref_field) != name:
        return f"file name does not match its {meta.ref_field}"
    spec = spec_for(kind)  # every kind of KINDS has its module
    try:
        with without_private_values():
            if trusted:
                spec.check_parsed(packet)
            else:
                spec.check_stored(packet)
    except DcxError as exc:
        return exc.message
    return None
