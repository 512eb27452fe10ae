"""A real `dcx workbench` process on 127.0.0.1 and a tiny HTTP client, for tests/web."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.support.cli import DCX_EXE, run_dcx

HOSTILE = (
    '# Hostile page\n\nThe rollback drill note says: <img src=x onerror="window.__pwned=1">'
    "<script>window.__pwned=2</script><b>bold?</b> then wait for the purge queue.\n"
)


class Workbench:
    def __init__(self, proc: subprocess.Popen[str], url: str, root: Path) -> None:
        self.proc = proc
        self.url = url
        self.root = root
        parts = urlsplit(url)
        self.port = int(parts.port or 0)
        self.token = parts.query.split("token=", 1)[1]
        self.origin = f"http://127.0.0.1:{self.port}"

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30,
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            base = {"Host": f"127.0.0.1:{self.port}"}
            conn.request(method, path, body=body, headers={**base, **(headers or {})})
            response = conn.getresponse()
            return (
                response.status,
                {k.lower(): v for k, v in response.getheaders()},
                response.read(),
            )
        finally:
            conn.close()

    def post(
        self,
        path: str,
        value: Any,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 30,
    ) -> tuple[int, Any]:
        body = json.dumps(value).encode()
        base = {
            "Content-Type": "application/json",
            "Origin": self.origin,
            "X-DCX-Token": self.token,
        }
        status, _, raw = self.request(
            "POST", path, body, {**base, **(headers or {})}, timeout=timeout
        )
        return status, json.loads(raw)

    def stop(self) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


def start_workbench(root: Path, *args: str, env: Mapping[str, str] | None = None) -> Workbench:
    proc = subprocess.Popen(
        [DCX_EXE, "-C", str(root), "workbench", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in iter(proc.stdout.readline, "")],  # type: ignore[union-attr]
        daemon=True,
    ).start()
    seen: list[str] = []
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            line = lines.get(timeout=0.2)
        except queue.Empty:
            continue
        seen.append(line)
        if line.startswith("http://"):
            return Workbench(proc, line.strip(), root)
    proc.kill()
    out, err = proc.communicate()
    raise AssertionError(f"the workbench did not start: {seen!r} {out!r} {err!r}")


def hostile_goal(example: Path) -> Path:
    """The example goal with one hostile document, indexed."""
    (example / "docs" / "hostile-note.md").write_text(HOSTILE)
    assert run_dcx("-C", str(example), "index").exit_code == 0
    return example


@contextlib.contextmanager
def running(root: Path, *args: str, env: Mapping[str, str] | None = None) -> Iterator[Workbench]:
    bench = start_workbench(root, *args, env=env)
    try:
        yield bench
    finally:
        bench.stop()


def profile_text(root: Path) -> str:
    return (root / ".decision-context" / "profile.toml").read_text()
