"""Each context provider's private ``[context_provider.config]`` rules, on plain values.

``[context_provider] provider`` picks one of ``bm25`` (the default), ``openviking``,
``extension`` or ``none``; its private ``[context_provider.config]`` table is
validated strictly for that provider (an unknown or bad key is exit 2 naming
``context_provider.config.<key>``). The profile calls this when it reads a
config table; which provider then runs is chosen above the planes
(``dcx.evidence.recall.make_provider``).
"""

from __future__ import annotations

from typing import Any

from dcx.core.errors import InvalidInput

CONFIG_FIELD = "context_provider.config"


def reject_unknown(config: dict[str, Any], allowed: tuple[str, ...], provider: str) -> None:
    for key in sorted(config):
        if key not in allowed:
            raise InvalidInput(
                f"{CONFIG_FIELD}.{key}: unknown key for provider {provider}"
                + (f" (allowed: {', '.join(allowed)})" if allowed else " (it takes no configuration)"),
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
        from dcx.providers.openviking_config import validate_config as ov_validate

        return ov_validate(config, namespace=namespace)
    from dcx.providers.extension import validate_config as ext_validate

    return ext_validate(config)
