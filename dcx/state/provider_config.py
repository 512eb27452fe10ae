"""Each context provider's private ``[context_provider.config]`` rules, on plain values.

``[context_provider] provider`` picks one of ``bm25`` (the default), ``openviking``,
``extension`` or ``none``; its private ``[context_provider.config]`` table is
validated strictly for that provider (an unknown or bad key is exit 2 naming
``context_provider.config.<key>``). The profile calls this when it reads a
config table; which provider then runs is chosen above the planes
(``dcx.evidence.recall.make_provider``). The rules are plain values in, plain values
out: the profile imports no provider, and no provider imports the profile.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from dcx.core.errors import InvalidInput
from dcx.packets.advisory import ExtensionId

CONFIG_FIELD = "context_provider.config"


def reject_unknown(config: dict[str, Any], allowed: tuple[str, ...], provider: str) -> None:
    for key in sorted(config):
        if key not in allowed:
            raise InvalidInput(
                f"{CONFIG_FIELD}.{key}: unknown key for provider {provider}"
                + (
                    f" (allowed: {', '.join(allowed)})"
                    if allowed
                    else " (it takes no configuration)"
                ),
                field=f"{CONFIG_FIELD}.{key}",
                code="unknown_field",
            )


def validate_config(provider: str, namespace: str, config: dict[str, Any]) -> dict[str, Any]:
    """``provider``'s config, checked strictly; ``InvalidInput`` (exit 2) otherwise."""
    config = dict(config)
    if provider in ("bm25", "none"):
        reject_unknown(config, (), provider)
        return config
    if provider == "openviking":
        return validate_openviking(config, namespace=namespace)
    return validate_extension(config)


# openviking (SPEC §6.4): keys all optional; ``binary`` (default ``ov``: a command on
# PATH, an absolute path, or a path relative to the goal root), ``minimum_version``
# (default ``0.5.0``), ``url``, ``account``, ``user``, ``api_key``, ``result_levels``
# (a non-empty, sorted subset of {0, 1, 2}), ``min_score`` (0..1: semantic hits scoring
# below it are dropped, SPEC §6.4 v4). Namespace ``reward_memory`` always needs
# L2 records: it implies ``[2]`` and rejects any other explicit setting. Messages name
# the key, never its value (``api_key`` and ``url`` are private).

OPENVIKING_KEYS = (
    "binary",
    "minimum_version",
    "url",
    "account",
    "user",
    "api_key",
    "result_levels",
    "min_score",
)
DEFAULT_MINIMUM_VERSION = "0.5.0"
REWARD_MEMORY = "reward_memory"
VERSION_RE = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def _bad(key: str, message: str, code: str = "invalid_field") -> InvalidInput:
    return InvalidInput(
        f"{CONFIG_FIELD}.{key}: {message}", field=f"{CONFIG_FIELD}.{key}", code=code
    )


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = VERSION_RE.fullmatch(text.strip())
    if not match:
        return None
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def _text(config: dict[str, Any], key: str, *, limit: int = 2048) -> str | None:
    if key not in config:
        return None
    value = config[key]
    if (
        not isinstance(value, str)
        or not value.strip()
        or len(value) > limit
        or any(ord(c) < 32 for c in value)
    ):
        raise _bad(key, f"expected non-empty text of at most {limit} characters", "invalid_type")
    return value


def _levels(value: Any) -> list[int]:
    if not isinstance(value, list) or not value:
        raise _bad("result_levels", "expected a non-empty list drawn from 0, 1, 2", "invalid_type")
    if any(isinstance(v, bool) or not isinstance(v, int) or v not in (0, 1, 2) for v in value):
        raise _bad("result_levels", "every level must be 0, 1 or 2", "out_of_range")
    if any(a >= b for a, b in itertools.pairwise(value)):
        raise _bad("result_levels", "levels must be sorted and distinct (e.g. [0, 2])")
    return list(value)


def validate_openviking(config: dict[str, Any], *, namespace: str) -> dict[str, Any]:
    """The config with defaults filled, or ``InvalidInput`` (exit 2) naming the key."""
    for key in sorted(config):
        if key not in OPENVIKING_KEYS:
            raise _bad(
                key,
                f"unknown key for provider openviking (allowed: {', '.join(OPENVIKING_KEYS)})",
                "unknown_field",
            )
    out: dict[str, Any] = {
        "binary": _text(config, "binary") or "ov",
        "minimum_version": _text(config, "minimum_version", limit=32) or DEFAULT_MINIMUM_VERSION,
    }
    if parse_version(out["minimum_version"]) is None:
        raise _bad("minimum_version", "expected a version such as 0.5.0")
    url = _text(config, "url")
    if url is not None and not url.lower().startswith(("http://", "https://")):
        raise _bad("url", "expected an http:// or https:// URL")
    for key, value in (
        ("url", url),
        ("account", _text(config, "account", limit=128)),
        ("user", _text(config, "user", limit=128)),
        ("api_key", _text(config, "api_key")),
    ):
        if value is not None:
            out[key] = value
    levels = _levels(config["result_levels"]) if "result_levels" in config else None
    if namespace == REWARD_MEMORY:
        if levels is not None and levels != [2]:
            raise _bad("result_levels", "namespace reward_memory requires [2] (L2 records only)")
        levels = [2]
    out["result_levels"] = levels
    out["min_score"] = _min_score(config["min_score"]) if "min_score" in config else None
    return out


def _min_score(value: Any) -> float:
    """OpenViking's scores are in [0, 1] (higher is better): so is the floor below which hits drop."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad("min_score", "expected a number from 0 to 1", "invalid_type")
    if not 0 <= value <= 1:  # NaN fails this too
        raise _bad("min_score", "expected a number from 0 to 1", "out_of_range")
    return float(value)


# extension (SPEC §12)

EXTENSION_KEYS = ("extension_id",)


def validate_extension(config: dict[str, Any]) -> dict[str, Any]:
    """``[context_provider.config]`` for ``provider = "extension"``: only ``extension_id``."""
    if not isinstance(config, dict):
        raise InvalidInput(
            "context_provider.config: expected a table",
            field="context_provider.config",
            code="invalid_type",
        )
    for key in config:
        if key not in EXTENSION_KEYS:
            raise InvalidInput(
                f"context_provider.config.{key}: unknown key (allowed: extension_id)",
                field=f"context_provider.config.{key}",
                code="unknown_field",
            )
    out: dict[str, Any] = {}
    if "extension_id" in config:
        out["extension_id"] = ExtensionId().check(
            config["extension_id"], "context_provider.config.extension_id"
        )
    return out
