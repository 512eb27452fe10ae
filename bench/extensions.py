"""What the extension provider costs per call, next to the bare process it runs.

Run on demand: `.venv/bin/python bench/extensions.py [runs]`. In a temp goal it
installs fixtures/extensions/good.py and prints medians of:
- resolve(): reading state, re-hashing the entrypoint and its interpreter,
  checking manifest drift (done on every retrieve);
- ExtensionProvider.retrieve(): resolve + request + process + validation;
- the same script run bare with subprocess.run (the floor);
and the overhead ratio retrieve / bare. The machine is shared and noisy:
compare ratios, not absolute times.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

MANIFEST = """schema_version = "dcx_extension_manifest_v0"
id = "bench-good"
version = "1.0.0"
permissions = ["decision_context.read"]
[runtime]
protocol = "decision_context_advisory_provider_v0"
entrypoint = "./good.py"
doctor_args = ["--doctor"]
required_permissions = ["decision_context.read"]
timeout_seconds = 10
[[implements]]
capability_id = "decision-context"
protocol = "decision_context_advisory_provider_v0"
"""


def median_ms(fn, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    from dcx.core.clock import clock_from_env
    from dcx.core.workspace import Workspace
    from dcx.extensions.resolve import resolve
    from dcx.ops.ext import install
    from dcx.ops.init import init
    from dcx.providers.base import RetrievalRequest
    from dcx.providers.extension import ExtensionProvider

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "goal"
        root.mkdir()
        init(root=root, goal_id="bench", agent_id="agent-a")
        ext = Path(tmp) / "ext"
        ext.mkdir()
        shutil.copy2(REPO / "fixtures" / "extensions" / "good.py", ext / "good.py")
        (ext / "extension.toml").write_text(MANIFEST)
        ws = Workspace(root)
        assert (
            install(clock=clock_from_env(), ws=ws, path=str(ext / "extension.toml")).exit_code == 0
        )
        provider = ExtensionProvider(ws, {}, resolve=resolve)
        request = RetrievalRequest(
            "decision-context",
            "host-session:codex:x",
            "cache ttl",
            "Cache TTL",
            4,
            10,
            "2026-11-29T18:00:00Z",
        )
        body = (
            b'{"schema_version": "decision_context_advisory_retrieve_request_v0", "max_results": 4}'
        )

        resolve_ms = median_ms(lambda: resolve(ws, None), runs)
        retrieve_ms = median_ms(
            lambda: provider.retrieve(request, deadline=time.monotonic() + 10), runs
        )
        bare_ms = median_ms(
            lambda: subprocess.run([str(ext / "good.py")], input=body, capture_output=True), runs
        )
    print(f"runs per figure: {runs}")
    print(f"resolve (state + identity + drift): {resolve_ms:7.2f} ms")
    print(f"ExtensionProvider.retrieve:         {retrieve_ms:7.2f} ms")
    print(f"bare subprocess of the same script: {bare_ms:7.2f} ms")
    print(f"retrieve / bare:                    {retrieve_ms / bare_ms:7.2f}x")


if __name__ == "__main__":
    main()
