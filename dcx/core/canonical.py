"""The one canonical encoder (RFC 8785 / JCS) and the ref functions (SPEC §3.1, §3.3).

A packet's ref is ``<prefix>-<first 32 hex of blake3(JCS(packet minus its ref field))>``.
A private value's opaque ref is the same shape but keyed with the workspace key,
so a guessable path cannot be confirmed by hashing it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import blake3

REF_HEX = 32
REF_RE = re.compile(r"^(?P<prefix>[a-z][a-z0-9-]*[a-z0-9])-(?P<hex>[0-9a-f]{32})$")


def canonical_bytes(value: Any) -> bytes:
    """RFC 8785 bytes of ``value`` (sorted keys, minimal numbers, UTF-8).

    Fast path: the C ``json`` encoder (sorted keys, no spaces, UTF-8, NaN refused)
    whose output is JCS when it can be shown to be — see :func:`_fast_jcs`; anything
    it cannot show is encoded by the reference encoder (``rfc8785``), so the bytes
    and the refusals are the reference's. ``tests/test_canonical_fast.py`` compares
    the two byte for byte.
    """
    fast = _fast_jcs(value)
    if fast is not None:
        return fast
    import rfc8785  # the reference encoder: floats in exponent form, astral keys, big ints, refusals

    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        from dcx.core.errors import InvalidInput

        raise InvalidInput(
            "value is not representable in canonical JSON (non-finite number or integer beyond 2^53)",
            code="not_canonical",
        ) from None


class _NotProven(Exception):
    """A float or integer whose ``json`` spelling may not be its JCS spelling."""


_SAFE_INT = 2**53 - 1


def _float_token(text: str) -> float:
    # Python's float repr and ECMAScript's Number::toString give the same shortest digits;
    # their layouts differ only for exponent forms ("1e-07", "1e+21": the reference encoder
    # spells those) and integral values ("10.0" against "10", "-0.0" against "0": respelled).
    if "e" in text:
        raise _NotProven
    return float(text)


def _int_token(text: str) -> int:
    number = int(text)
    if number > _SAFE_INT or number < -_SAFE_INT:
        raise _NotProven  # the reference refuses it (IntegerDomainError)
    return number


_ENCODER = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, sort_keys=True, separators=(",", ":")
)
_c_make_encoder = getattr(
    json.encoder, "c_make_encoder", None
)  # CPython's accelerator (not in the stubs)
if _c_make_encoder is not None:
    # The C encoder JSONEncoder.encode builds on every call, built once (no circular-reference
    # markers: a cycle ends in RecursionError, and the reference encoder decides).
    _c_encoder = _c_make_encoder(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", True, False, False
    )

    def _encode(value: Any) -> str:
        return "".join(_c_encoder(value, 0))
else:  # pragma: no cover - an interpreter without the C accelerator

    def _encode(value: Any) -> str:
        return _ENCODER.encode(value)


# (may hold a long integer, may hold an exponent or integral float) -> decoder
_DECODERS = {
    (False, False): json.JSONDecoder(),
    (True, False): json.JSONDecoder(parse_int=_int_token),
    (False, True): json.JSONDecoder(parse_float=_float_token),
    (True, True): json.JSONDecoder(parse_float=_float_token, parse_int=_int_token),
}


def _mark_table() -> bytes:
    table = bytearray(b" " * 256)
    for byte in b"0123456789":
        table[byte] = ord("0")
    for char, mark in (
        (b".", "."),
        (b"e", "e"),
        (b"+", "s"),
        (b"-", "s"),
        (b",", "c"),
        (b"]", "c"),
        (b"}", "c"),
    ):
        table[char[0]] = ord(mark)
    for lead in range(0xF0, 0x100):  # the lead byte of a 4-byte UTF-8 sequence: beyond the BMP
        table[lead] = ord("X")
    return bytes(table)


# One C pass over the UTF-8 bytes marks what needs a closer look (a superset: marks
# inside strings are false alarms, which only cost the slower check):
#   X                  a character beyond the BMP (UTF-16 code-unit order, the JCS key
#                      order, differs from code-point order, sort_keys's, only for them)
#   0 x 16             an integer that may be beyond 2^53 - 1 (2^53 has 16 digits)
#   0es                an exponent float (Python's repr always signs the exponent)
#   0.0c, 0.0 at end   an integral float
_MARKS = _mark_table()
_POINT_ZERO = re.compile(r"\.0(?=[,\]}]|$)")  # the end of an integral float (or of text like it)
_DIGITS = frozenset("0123456789")


def _fast_jcs(value: Any) -> bytes | None:
    r"""JCS bytes of ``value`` from the C ``json`` encoder, or None when not proven equal.

    The ``json`` text with sorted keys, ``(",", ":")`` separators and
    ``ensure_ascii=False`` escapes exactly what RFC 8785 escapes (``"``, ``\\``,
    ``\b \f \n \r \t``, other C0 controls as lower-case ``\u00xx``) and spells
    null, booleans, strings and integers alike. It is JCS when, in addition:
    decoding it gives back a value equal to ``value`` (so every key was a string:
    ``json`` turns ``1``, ``1.5``, ``True`` and ``None`` keys into strings),
    no float needs an exponent, no integer is beyond 2^53 - 1, no character is
    beyond the BMP (key order), and it encodes to UTF-8 (no lone surrogates).
    Integral floats are respelled without their ``.0``.
    """
    try:
        text = _encode(value)
        data = text.encode("utf-8")
        marks = data.translate(_MARKS)
        if b"X" in marks:
            return None
        integral = b"0.0c" in marks or marks.endswith(b"0.0")
        decoder = _DECODERS[b"0000000000000000" in marks, integral or b"0es" in marks]
        back, end = decoder.scan_once(text, 0)  # type: ignore[attr-defined]  # CPython's scanner, not in the stubs
        if end != len(text) or back != value:
            return None
        return _drop_integral_fractions(text).encode("utf-8") if integral else data
    except (_NotProven, StopIteration, TypeError, ValueError, RecursionError, UnicodeEncodeError):
        return None


def _drop_integral_fractions(text: str) -> str:
    """``10.0`` -> ``10`` and ``-0.0`` -> ``0`` for every number outside a string."""
    # Outside a string means an even number of unescaped quotes before it. With every
    # escaped backslash blanked (escapes are read left to right, as str.replace does),
    # a quote is escaped exactly when a backslash precedes it.
    plain = text.replace("\\\\", "__")
    parts: list[str] = []
    last = 0
    for match in _POINT_ZERO.finditer(text):
        end = at = match.start()
        while at > 0 and text[at - 1] in _DIGITS:
            at -= 1
        if at == end:
            continue
        if at > 0 and text[at - 1] == "-":
            at -= 1
        if at > 0 and text[at - 1] not in ":,[":
            continue  # not where a number stands in compact JSON
        if (plain.count('"', 0, at) - plain.count('\\"', 0, at)) % 2:
            continue  # inside a string
        digits = text[at:end]
        parts += (text[last:at], "0" if digits in ("0", "-0") else digits)
        last = match.end()
    parts.append(text[last:])
    return "".join(parts)


def pretty_bytes(value: Any) -> bytes:
    """How packets are stored: indent 2, sorted keys, UTF-8, trailing newline.

    One field per line, so a one-field change is a one-line diff.
    """
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def pretty_json(value: Any) -> str:
    """``json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)``, by ``orjson``
    when that provably writes the same text (a large ``--format json`` answer: the
    json module's indenting encoder is pure Python).

    ``orjson`` answers only when it is already imported (a command that verified
    packets; a small command does not pay its import), and its text is kept only
    when reading it back gives a value equal to ``value`` (so nothing was coerced:
    no NaN or infinity written as null, no tuple, no dataclass or date) and no
    float in it may be spelled otherwise (no digit-``e``-sign, no ``0.0000``; see
    :func:`load_pretty`); layout, key order and escapes are the json module's
    (``test_orjson_layout_is_the_json_modules``). Otherwise the json module writes it.
    ``tests/test_canonical_fast.py`` compares the two.
    """
    fast = _ORJSON[0] if _ORJSON else None
    if fast is not None:
        try:
            data: bytes = fast.dumps(value, option=fast.OPT_INDENT_2 | fast.OPT_SORT_KEYS)
        except TypeError:  # orjson.JSONEncodeError: a key that is not a string, a big int, ...
            pass
        else:
            if (
                b"0.0000" not in data
                and b"0es" not in data.translate(_MARKS)
                and fast.loads(data) == value
            ):
                return data.decode("utf-8")
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def load_stored(data: bytes) -> tuple[Any, bool]:
    """``json.loads(data)``, and whether every float in it is spelled as ``repr`` spells it.

    The second answer lets :func:`is_pretty` trust a faster encoder's floats.
    Raises what ``json.loads`` raises.
    """
    spelled = [True]

    def parse_float(token: str) -> float:
        number = float(token)
        if spelled[0] and repr(number) != token:
            spelled[0] = False
        return number

    value = json.loads(data, parse_float=parse_float)
    return value, spelled[0]


_ORJSON: list[Any] = []  # [orjson module or None], resolved on first use
_CHECKED = [0]  # bytes checked by the json module before orjson is imported
ORJSON_AFTER = (
    64 * 1024
)  # about what the json module's indenting encoder checks in orjson's import time


def _orjson() -> Any:
    if not _ORJSON:
        try:
            import orjson  # optional (the `fast` extra): Rust, about 20x the indenting json encoder
        except ImportError:  # pragma: no cover - without it the json module answers
            _ORJSON.append(None)
        else:
            _ORJSON.append(orjson)
    return _ORJSON[0]


def is_pretty(data: bytes, value: Any, *, repr_floats: bool) -> bool:
    """``pretty_bytes(value) == data``, for ``value, repr_floats = load_stored(data)``
    (see :func:`pretty_by_orjson`, which answers first)."""
    return pretty_by_orjson(data, value, repr_floats=repr_floats) or pretty_bytes(value) == data


def pretty_by_orjson(data: bytes, value: Any, *, repr_floats: bool) -> bool:
    """``pretty_bytes(value) == data``, for ``value, repr_floats = load_stored(data)``.

    ``orjson``'s ``OPT_INDENT_2 | OPT_SORT_KEYS`` layout, key order (code points),
    string escapes and integer spelling are those of ``json.dumps(indent=2,
    sort_keys=True, ensure_ascii=False)``; its floats may be spelled otherwise
    (``1e16`` for ``1e+16``), so its answer counts only when every float in
    ``data`` is spelled as ``repr`` spells it. Equal bytes then prove the pretty
    form (True); False says only that ``orjson`` did not prove it (or is not there,
    or not yet imported): :func:`pretty_bytes` settles it.
    ``tests/test_canonical_fast.py`` compares the two.

    True also tells :func:`parsed_jcs` that ``orjson`` spells every key, string
    and number of ``value`` as the ``json`` module does (its bytes are theirs).
    """
    fast = None
    if repr_floats:
        if _ORJSON:
            fast = _ORJSON[0]
        elif _CHECKED[0] < ORJSON_AFTER:
            _CHECKED[0] += len(
                data
            )  # a few packets (log, show): not worth orjson's import (~1.5 ms)
        else:
            fast = _orjson()
    if fast is not None:
        try:
            if fast.dumps(value, option=fast.OPT_INDENT_2 | fast.OPT_SORT_KEYS) + b"\n" == data:
                return True
        except TypeError:  # orjson.JSONEncodeError: integers beyond 64 bits, lone surrogates, ...
            pass
    return False


def load_pretty(data: bytes) -> Any:
    """``orjson.loads(data)`` when that proves ``data`` is stored right, else None.

    It answers only when ``orjson`` (already imported: see :func:`is_pretty`) parses
    ``data`` and writes the parse back, indented and key-sorted, as exactly ``data``
    with no float it might spell otherwise than ``repr``: no exponent (``orjson``
    writes ``1e-9`` where ``repr`` writes ``1e-09``; every such exponent is signed)
    and nothing below 1e-4 written out in full (``0.00001`` where ``repr`` writes
    ``1e-05``) — tested as "no digit, ``e``, sign" and "no ``0.0000``" anywhere in
    ``data``, text included. Then ``data`` is the pretty form :func:`pretty_bytes`
    writes, its parse is what ``json.loads`` gives (``data`` is plain RFC 8259
    JSON that ``orjson`` wrote) and :func:`pretty_by_orjson` holds: the caller may
    skip :func:`load_stored` and :func:`is_pretty`. ``tests/test_fastcheck.py``
    compares the two reads.
    """
    fast = _ORJSON[0] if _ORJSON else None
    if fast is None:
        return None
    try:
        value = fast.loads(data)
    except ValueError:  # orjson.JSONDecodeError: json.loads may still read it (NaN, big ints)
        return None
    if b"0.0000" in data or b"0es" in data.translate(_MARKS):
        return None
    try:
        if fast.dumps(value, option=fast.OPT_INDENT_2 | fast.OPT_SORT_KEYS) + b"\n" != data:
            return None
    except TypeError:
        return None
    return value


# Where a number in compact JSON may not be spelled as JCS spells it: an integer of 16 or
# more digits (maybe beyond 2^53 - 1), an exponent float, an integral float. A number
# follows ':', ',' or '[' (text inside a string may look the same: a false alarm, which
# only sends the value to the exact encoder).
_UNPLAIN_NUMBER = re.compile(rb"[:,\[]-?(?:[0-9]{16,}[,\]}]|[0-9]+(?:\.[0-9]+)?e|[0-9]+\.0[,\]}])")


def parsed_jcs(value: Any) -> bytes | None:
    """JCS bytes of a value parsed from stored bytes that :func:`pretty_by_orjson` proved,
    or None when they are not proven here (the caller then uses :func:`canonical_bytes`).

    Such a value holds only what ``json.loads`` makes (``dict`` with ``str`` keys,
    ``list``, ``str``, ``int``, ``float``, ``bool``, None), and ``orjson`` spells all
    of it as the ``json`` module does; its compact, key-sorted bytes are therefore
    the ``json`` text :func:`_fast_jcs` starts from, and they are JCS under the same
    conditions — no character beyond the BMP, no integer beyond 2^53 - 1 — and, more
    strictly, no exponent and no integral float at all (nothing is respelled). So
    the ``orjson`` bytes of every part of ``value`` (a record of a list) are that
    part's JCS bytes too: a checker may sort records by them (``dcx.core.fastcheck``).
    Values made from such a value by a shape check (sorted lists, normalised
    timestamps, omitted nulls) stay within it.
    """
    fast = _ORJSON[0] if _ORJSON else None
    if fast is None:
        return None
    try:
        data: bytes = fast.dumps(value, option=fast.OPT_SORT_KEYS)
    except TypeError:
        return None
    marks = data.translate(_MARKS)
    if b"X" in marks:
        return None
    if (
        b"0000000000000000" in marks or b"0es" in marks or b"0.0c" in marks
    ) and _UNPLAIN_NUMBER.search(data):
        return None
    return data


def sort_key_parsed() -> Any:
    """The record sort key that goes with :func:`parsed_jcs` (``orjson``'s compact bytes)."""
    from functools import partial

    fast = _orjson()
    return partial(fast.dumps, option=fast.OPT_SORT_KEYS) if fast is not None else None


def digest_hex(data: bytes, *, key: bytes | None = None, length: int = REF_HEX) -> str:
    hasher = blake3.blake3(data, key=key) if key is not None else blake3.blake3(data)
    return hasher.hexdigest()[:length]


def packet_ref(prefix: str, packet: Mapping[str, Any], ref_field: str) -> str:
    body = {k: v for k, v in packet.items() if k != ref_field}
    return f"{prefix}-{digest_hex(canonical_bytes(body))}"


def keyed_ref(key: bytes, prefix: str, fields: Iterable[Any]) -> str:
    """Opaque ref of a private value: blake3 keyed with the workspace key over JCS(fields)."""
    return f"{prefix}-{digest_hex(canonical_bytes(list(fields)), key=key)}"


def content_digest(value: Any) -> str:
    """Full blake3 hex of a value's canonical bytes (profile and registry digests)."""
    return blake3.blake3(canonical_bytes(value)).hexdigest()
