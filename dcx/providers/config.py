"""Choosing the context provider (STYLE rule 10): an explicit table, strict config.

``[context_provider] provider`` picks one of ``bm25`` (the default), ``openviking``,
``extension`` or ``none``; its private ``[context_provider.config]`` table is
validated strictly for that provider (an unknown or bad key is exit 2 naming
``context_provider.config.<key>``). Provider modules are imported only here,
lazily, so ``dcx status`` never loads one.

The ``extension`` provider lives in ``dcx.providers.extension`` (the extension
lifecycle owns it). When that module is not installed in this build, choosing
it yields ``unavailable/provider_unavailable`` rather than an error: recall
fails open.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from dcx.core.errors import DcxError, InvalidInput
from dcx.core.workspace import Workspace
from dcx.profile import ContextProviderConfig
from dcx.providers.base import ContextProvider, Retrieval, RetrievalRequest, unavailable

CONFIG_FIELD = "context_provider.config"


class UnavailableProvider:
    """A provider that cannot run here: every retrieval is ``unavailable/<reason>``."""

    def __init__(self, name: str, reason_code: str) -> None:
        self.name = name
        self.version = ""
        self.reason_code = reason_code

    def retrieve(self, request: RetrievalRequest, *, deadline: float) -> Retrieval:
        return unavailable(request, self.name, self.reason_code)


def reject_unknown(config: dict[str, Any], allowed: tuple[str, ...], provider: str) -> None:
    for key in sorted(config):
        if key not in allowed:
            raise InvalidInput(
                f"{CONFIG_FIELD}.{key}: unknown key for provider {provider}"
                + (f" (allowed: {', '.join(allowed)})" if allowed else " (it takes no configuration)"),
                field=f"{CONFIG_FIELD}.{key}",
                code="unknown_field",
            )


def validate_config(cp: ContextProviderConfig) -> dict[str, Any]:
    """The provider's config, checked strictly; ``InvalidInput`` (exit 2) otherwise."""
    config = dict(cp.config)
    if cp.provider in ("bm25", "none"):
        reject_unknown(config, (), cp.provider)
        return config
    if cp.provider == "openviking":
        from dcx.providers.openviking_config import validate_config as ov_validate

        return ov_validate(config, namespace=cp.namespace)
    module = _extension_module()
    if module is None:
        return config  # nothing to check against: the provider reports itself unavailable
    return module.validate_config(config)


def _extension_module() -> Any:
    try:
        return import_module("dcx.providers.extension")
    except ModuleNotFoundError as exc:
        if exc.name != "dcx.providers.extension":
            raise
        return None


def make_provider(ws: Workspace, cp: ContextProviderConfig, *, transient: bool = False) -> ContextProvider:
    """The provider the profile selects, ready to ``retrieve``.

    ``transient`` (``dcx recall``): the provider must persist nothing in the
    workspace, so OpenViking writes its CLI config to a temp directory that is
    removed after the call instead of ``private/openviking/``.
    """
    config = validate_config(cp)
    if cp.provider == "none":
        return UnavailableProvider("none", "context_provider_disabled")
    if cp.provider == "bm25":
        from dcx.providers.bm25 import Bm25Provider

        return Bm25Provider(ws)
    if cp.provider == "openviking":
        from dcx.providers.openviking import OpenVikingProvider

        return OpenVikingProvider(ws, config, transient=transient)
    module = _extension_module()
    if module is None:
        return UnavailableProvider("extension", "provider_unavailable")
    try:
        return module.ExtensionProvider(ws, config)
    except DcxError:
        raise
    except Exception:  # a provider that cannot even start fails open
        return UnavailableProvider("extension", "provider_unavailable")
