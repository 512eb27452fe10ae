"""The one public-safety detector (SPEC §3.4).

Everything that may enter a public file passes through here. The detector
*rejects*; it never truncates or redacts, so what is written is exactly what
the caller meant, or nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from typing import Any

from dcx.errors import UnsafeText

TOKEN_MAX = 128
TEXT_MAX = 320
SUMMARY_MAX = 220
REASON_MAX = 120

TOKEN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

# Record keys that never belong in a public record, wherever they appear.
FORBIDDEN_KEYS = frozenset(
    {
        "content",
        "raw_content",
        "api_key",
        "credential",
        "credentials",
        "token",
        "provider_payload",
        "raw_chat",
        "tool_output",
        "raw_provider_payload",
    }
)

_ROOTS = (
    "home|Users|root|tmp|var|etc|opt|srv|mnt|Volumes|private|usr|workspace|workspaces|data"
)

# (class, pattern, flags). Order is the order reported when several match.
# Compiled on first use: `dcx status` imports this module but checks no text.
_I = re.IGNORECASE
_PATTERN_SOURCES: tuple[tuple[str, str, int], ...] = (
    ("pem_private_key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----", 0),
    ("local_path", r"(?:^|[\s\"'(=,;\[{<])~[/\\]", 0),
    ("local_path", r"(?:^|[^A-Za-z0-9])[A-Za-z]:[\\/][^\s]", 0),
    ("local_path", r"(?:^|[\s\"'(=,;\[{<])\\\\[A-Za-z0-9._$-]+\\", 0),
    ("local_path", rf"(?:^|[^A-Za-z0-9._~/-])/(?:{_ROOTS})(?:/|\b)", 0),
    ("url", r"\b[A-Za-z][A-Za-z0-9+.-]*://", 0),
    ("url", r"(?:^|[^A-Za-z0-9_])file:", _I),
    ("email", r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}", 0),
    ("bearer_token", r"\bbearer\s+[A-Za-z0-9._~+/-]{8,}=*", _I),
    (
        "credential_assignment",
        r"(?:^|[^A-Za-z0-9])(?:api[_-]?key|secret|password|passwd|token|access[_-]?key)"
        r"\s*[=:]\s*['\"]?[^\s'\"]+",
        _I,
    ),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})", 0),
    ("aws_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b", 0),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}", 0),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}", 0),
    ("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{10,}", 0),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0),
    ("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{20,}", 0),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}", 0),
)
_compiled: list[tuple[str, re.Pattern[str]]] = []


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    if not _compiled:
        _compiled.extend((name, re.compile(src, flags)) for name, src, flags in _PATTERN_SOURCES)
    return _compiled


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")

# The absolute path of the goal root being served: text containing it is a path.
_goal_root: ContextVar[str | None] = ContextVar("dcx_goal_root", default=None)


def bind_goal_root(path: str) -> None:
    _goal_root.set(path.rstrip("/") or None)


def unsafe_class(text: str) -> str | None:
    """The first class of unsafe content in ``text``, or None when it may be public."""
    if _CONTROL_RE.search(text):
        return "control_character"
    root = _goal_root.get()
    if root and len(root) > 1 and root in text:
        return "local_path"
    for name, pattern in _patterns():
        if pattern.search(text):
            return name
    return None


def check_text(value: Any, *, field: str, limit: int = TEXT_MAX, allow_empty: bool = False) -> str:
    """Return ``value`` if it may enter a public file, else raise ``UnsafeText`` naming ``field``."""
    if not isinstance(value, str):
        raise UnsafeText(f"{field}: expected text", field=field, code="invalid_type")
    if not value.strip() and not allow_empty:
        raise UnsafeText(f"{field}: must not be empty", field=field, code="empty_text")
    if len(value) > limit:
        raise UnsafeText(
            f"{field}: {len(value)} characters is over the limit of {limit}",
            field=field,
            code="text_too_long",
        )
    problem = unsafe_class(value)
    if problem:
        raise UnsafeText(
            f"{field}: text is not public-safe ({problem.replace('_', ' ')})",
            field=field,
            hint="public text may not hold paths, URLs, e-mail addresses or credentials",
        )
    return value


def check_token(value: Any, *, field: str, limit: int = TOKEN_MAX) -> str:
    if isinstance(value, str) and len(value) <= limit and TOKEN_RE.fullmatch(value):
        return value
    raise UnsafeText(
        f"{field}: expected a token ([A-Za-z0-9][A-Za-z0-9_.:-]*, at most {limit} characters)",
        field=field,
        code="invalid_token",
    )


def forbidden_keys(record: Any, path: str = "") -> Iterator[str]:
    """Key paths in ``record`` whose key may never appear in a public record."""
    if isinstance(record, Mapping):
        for key, value in record.items():
            here = f"{path}.{key}" if path else str(key)
            if key in FORBIDDEN_KEYS:
                yield here
            yield from forbidden_keys(value, here)
    elif isinstance(record, list):
        for index, value in enumerate(record):
            yield from forbidden_keys(value, f"{path}[{index}]")


def check_record(record: Any, *, where: str = "record") -> None:
    for key_path in forbidden_keys(record):
        raise UnsafeText(
            f"{where}: key {key_path!r} may not appear in a public record",
            field=key_path,
            code="forbidden_public_key",
        )


def unsafe_strings(record: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(key path, class) of every string in ``record`` the detector rejects (used by audit)."""
    if isinstance(record, Mapping):
        for key, value in record.items():
            yield from unsafe_strings(value, f"{path}.{key}" if path else str(key))
    elif isinstance(record, list):
        for index, value in enumerate(record):
            yield from unsafe_strings(value, f"{path}[{index}]")
    elif isinstance(record, str):
        problem = unsafe_class(record)
        if problem:
            yield path, problem
