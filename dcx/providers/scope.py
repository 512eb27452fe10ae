"""Host scope normalisation (SPEC §6.6): dcx is the host, providers never parse deep links.

``codex://threads/<id>`` becomes ``host-session:codex:<id>`` before the provider
boundary. Scheme and host are case-insensitive; a query, a fragment, ``%``, an
extra segment, an empty id or the placeholder ``new`` are refused, and so is
any other text that starts with the ``codex:`` scheme. The refusal never echoes
the link (it may identify a private conversation). Every other scope passes
through unchanged: a scope is never a goal identity or an authority grant.
"""

from __future__ import annotations

import re

from dcx.core.errors import InvalidInput

SCOPE_MAX = 2048
CODEX_PREFIX = "codex://threads/"
HOST_SESSION_PREFIX = "host-session:codex:"
THREAD_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def normalise_scope(value: str, *, field: str = "scope_ref") -> str:
    """The provider-neutral scope for ``value``; ``InvalidInput`` (exit 2) for a bad link."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field}: expected text", field=field, code="invalid_type")
    if len(value) > SCOPE_MAX:
        raise InvalidInput(
            f"{field}: {len(value)} characters is over the limit of {SCOPE_MAX}",
            field=field,
            code="text_too_long",
        )
    if value[:6].lower() != "codex:":
        return value
    ident = value[len(CODEX_PREFIX) :]
    if (
        value[: len(CODEX_PREFIX)].lower() != CODEX_PREFIX
        or not THREAD_ID_RE.fullmatch(ident)
        or ident.lower() == "new"
    ):
        raise InvalidInput(
            f"{field}: not a valid Codex thread link",
            field=field,
            code="invalid_scope",
            hint="expected codex://threads/<id> with an id of [A-Za-z0-9][A-Za-z0-9._-]*, at most 128 characters",
        )
    return HOST_SESSION_PREFIX + ident
