"""``extension.toml``: the strict extension manifest (SPEC §7).

Schema ``dcx_extension_manifest_v0``; a ``loopx_extension_manifest_v0``
manifest is read too, its LoopX-only keys accepted and ignored. Every other
unknown key is an error (exit 2) naming the key path and its line.

``normalise`` turns a manifest into the one canonical snapshot that state
stores and hashes: LoopX keys dropped, the dcx schema token, defaults filled,
permission and env lists sorted. The snapshot is itself a valid manifest, so
re-checking it is idempotent — that is how a stored revision is re-verified.
The revision id is the first 16 hex of blake3 over its JCS.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from dcx.core.canonical import canonical_bytes, digest_hex
from dcx.core.errors import InvalidInput
from dcx.core.fields import (
    Const,
    Enum,
    Field,
    Int,
    Obj,
    Pattern,
    Records,
    Shape,
    Token,
    Tokens,
    bad,
)
from dcx.core.tomlerrors import load_toml, locate_error
from dcx.packets.advisory import CAPABILITY, PERMISSION, PROTOCOL, ExtensionId

SCHEMA = "dcx_extension_manifest_v0"
LOOPX_SCHEMA = "loopx_extension_manifest_v0"
# Keys a LoopX manifest may carry that mean nothing to dcx (accepted, ignored).
LOOPX_ONLY_KEYS = ("requires_loopx_api", "provides", "presentation_surfaces")
REVISION_HEX = 16
ARG_MAX = 4096


class _Strings(Field):
    """A list of argv strings: order kept, no NUL, bounded."""

    min_items: int = 0
    max_items: int = 64

    def check(self, value: Any, path: str) -> Any:
        if not isinstance(value, list):
            raise bad(path, "expected a list of strings", "invalid_type")
        for index, item in enumerate(value):
            if not isinstance(item, str) or "\x00" in item or len(item) > ARG_MAX:
                raise bad(
                    f"{path}[{index}]",
                    f"expected a string without NUL, at most {ARG_MAX} characters",
                    "invalid_type",
                )
        if len(value) < self.min_items:
            raise bad(path, f"needs at least {self.min_items} item(s)", "too_few_items")
        if len(value) > self.max_items:
            raise bad(
                path,
                f"holds {len(value)} items, over the limit of {self.max_items}",
                "too_many_items",
            )
        return list(value)

    def schema(self) -> dict[str, Any]:
        return {"type": "array", "items": {"type": "string"}, "minItems": self.min_items}


class _Entrypoint(Field):
    def check(self, value: Any, path: str) -> Any:
        if (
            not isinstance(value, str)
            or not value.strip()
            or "\x00" in value
            or len(value) > ARG_MAX
        ):
            raise bad(path, "expected a command name or a path", "invalid_type")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "minLength": 1, "maxLength": ARG_MAX}


def _runtime_shape(protocol: Field) -> Shape:
    return Shape(
        "runtime",
        {
            "protocol": protocol,
            "entrypoint": _Entrypoint(optional=True),
            "python_module": Pattern(
                regex=r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*",
                limit=200,
                what="a dotted Python module name",
                optional=True,
            ),
            "args": _Strings(optional=True),
            "doctor_args": _Strings(min_items=1),
            "required_permissions": Tokens(min_items=1),
            "timeout_seconds": Int(lo=1, hi=120),
            "env": Tokens(
                optional=True,
                item=Pattern(
                    regex=r"[A-Za-z_][A-Za-z0-9_]*", limit=128, what="an environment variable name"
                ),
            ),
        },
    )


def _manifest_shape(strict_protocol: bool) -> Shape:
    protocol: Field = Const(value=PROTOCOL) if strict_protocol else Token()
    capability: Field = Const(value=CAPABILITY) if strict_protocol else Token()
    implements = Shape("implements", {"capability_id": capability, "protocol": protocol})
    return Shape(
        "manifest",
        {
            "schema_version": Enum(values=(SCHEMA, LOOPX_SCHEMA)),
            "id": ExtensionId(),
            "version": Pattern(
                regex=r"[0-9A-Za-z][0-9A-Za-z.+_-]*", limit=64, what="a version such as 1.2.0"
            ),
            "permissions": Tokens(min_items=1),
            "runtime": Obj(shape=_runtime_shape(protocol)),
            "implements": Records(shape=implements, ordered=True, max_items=64),
        },
    )


_STRICT = _manifest_shape(True)
_STORED = _manifest_shape(False)  # a stored snapshot may name a protocol this dcx does not speak


class Manifest(NamedTuple):
    normalised: dict[str, Any]
    revision: str
    source: Path | None  # the file it was read from (private; never shown)

    @property
    def id(self) -> str:
        return self.normalised["id"]

    @property
    def version(self) -> str:
        return self.normalised["version"]

    @property
    def runtime(self) -> dict[str, Any]:
        return self.normalised["runtime"]


def revision_of(normalised: dict[str, Any]) -> str:
    return digest_hex(canonical_bytes(normalised), length=REVISION_HEX)


def normalise(data: Any, *, strict_protocol: bool = True) -> dict[str, Any]:
    """Validate a parsed manifest and return its canonical snapshot (raises ``InvalidInput``)."""
    if isinstance(data, dict) and data.get("schema_version") == LOOPX_SCHEMA:
        data = {k: v for k, v in data.items() if k not in LOOPX_ONLY_KEYS}
    clean = (_STRICT if strict_protocol else _STORED).check(data, "")
    runtime = clean["runtime"]
    if ("entrypoint" in runtime) == ("python_module" in runtime):
        raise bad(
            "runtime", "needs exactly one of entrypoint or python_module", "runtime_entrypoint"
        )
    if PERMISSION not in clean["permissions"]:
        raise bad("permissions", f"must include {PERMISSION!r}", "missing_permission")
    required = runtime["required_permissions"]
    if PERMISSION not in required:
        raise bad(
            "runtime.required_permissions", f"must include {PERMISSION!r}", "missing_permission"
        )
    undeclared = [p for p in required if p not in clean["permissions"]]
    if undeclared:
        raise bad(
            "runtime.required_permissions",
            f"not declared in permissions: {', '.join(undeclared)}",
            "permission_not_declared",
        )
    if len(clean["implements"]) != 1:
        raise bad(
            "implements",
            f"needs exactly one [[implements]] table, found {len(clean['implements'])}",
            "implements_count",
        )
    implements = clean["implements"][0]
    if implements["protocol"] != runtime["protocol"]:
        raise bad(
            "implements[0].protocol",
            f"must equal runtime.protocol ({runtime['protocol']!r})",
            "protocol_mismatch",
        )
    out_runtime: dict[str, Any] = {"protocol": runtime["protocol"]}
    for key in ("entrypoint", "python_module"):
        if key in runtime:
            out_runtime[key] = runtime[key]
    out_runtime.update(
        args=runtime.get("args", []),
        doctor_args=runtime["doctor_args"],
        required_permissions=required,
        timeout_seconds=runtime["timeout_seconds"],
        env=runtime.get("env", []),
    )
    return {
        "schema_version": SCHEMA,
        "id": clean["id"],
        "version": clean["version"],
        "permissions": clean["permissions"],
        "runtime": out_runtime,
        "implements": [implements],
    }


def display_name(path: Path) -> str:
    """How a manifest path is named in errors: as typed when relative, else its file name."""
    return path.as_posix() if not path.is_absolute() else path.name


def load_manifest(path: Path) -> Manifest:
    """Read and validate ``extension.toml``; errors name the key path and its line (exit 2)."""
    display = display_name(path)
    if path.is_dir():
        path = path / "extension.toml"
        display = display_name(path)
    if not path.is_file():
        raise InvalidInput(
            f"{display}: no such manifest file",
            code="manifest_missing",
            hint="pass the path of an extension.toml",
        )
    data, text = load_toml(path, display)
    try:
        normalised = normalise(data)
    except InvalidInput as exc:
        raise locate_error(exc, display, text) from None
    return Manifest(normalised, revision_of(normalised), path.resolve())


def implements_protocol(normalised: dict[str, Any]) -> bool:
    """Whether a (stored) snapshot implements the advisory protocol this dcx speaks."""
    runtime = normalised.get("runtime", {})
    return runtime.get("protocol") == PROTOCOL and any(
        i.get("capability_id") == CAPABILITY and i.get("protocol") == PROTOCOL
        for i in normalised.get("implements", [])
    )
