"""``dcx sources``: the public manifest of the source registry; ``--write`` stores it."""

from __future__ import annotations

from dcx.core.result import Result
from dcx.core.workspace import Workspace
from dcx.evidence.builders import build_manifest
from dcx.ops._common import packet_context
from dcx.packets import manifest
from dcx.state.profile import load_registry
from dcx.state.statements import signed
from dcx.state.store import Store


@signed("sources")  # one signed statement of what it wrote (SPEC §18)
def sources(*, ws: Workspace, write: bool) -> Result:
    registry = load_registry(ws)
    packet = build_manifest(packet_context(ws), registry)
    if write:
        Store(ws).put_built(manifest.SPEC, packet)
    return Result("sources", {"manifest": packet, "written": write})
