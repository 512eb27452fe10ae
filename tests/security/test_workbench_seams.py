"""The workbench at its seams (SPEC §12 v4, §3.7): raw sockets to a real `dcx workbench`.

- two ``Host`` headers are 421, whichever comes first;
- an idle connection and a request that trickles in a byte at a time are both
  dropped (the deadline covers the whole request, not each read);
- every error answer — a request line http.server cannot parse, an unknown
  method, a header too long — is dcx's own: JSON with the same CSP and
  ``nosniff`` as every other answer, never http.server's HTML page;
- a client that vanishes mid-answer leaves no traceback on stderr;
- a posted profile may not choose an executable (``binary``, ``path_prepend``,
  a command): 400 naming the key, and the program it names never runs (a
  marker file it would create is the oracle).
"""

from __future__ import annotations

import json
import socket
import stat
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.workbench import Workbench, profile_text, running


@pytest.fixture
def bench(example: Path) -> Iterator[Workbench]:
    with running(example) as wb:
        yield wb


def raw(bench: Workbench, data: bytes, *, timeout: float = 30) -> bytes:
    """Send ``data`` on a fresh connection; every byte the server answers until it closes."""
    with socket.create_connection(("127.0.0.1", bench.port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, TimeoutError):
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                length = [
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ]
                if length and len(body) >= length[0]:
                    break
        return b"".join(chunks)


def parse(answer: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


def test_a_second_host_header_is_421(bench: Workbench) -> None:
    good, evil = f"127.0.0.1:{bench.port}", "evil.example"
    for first, second in ((good, evil), (evil, good), (good, good)):
        answer = raw(
            bench,
            f"GET /?token={bench.token} HTTP/1.1\r\nHost: {first}\r\nHost: {second}\r\n"
            "Connection: close\r\n\r\n".encode(),
        )
        status, _headers, body = parse(answer)
        assert status == 421, (first, second, answer[:200])
        assert json.loads(body)["error"]["code"] == "host_refused"


def test_idle_and_trickling_requests_are_dropped(bench: Workbench) -> None:
    """Both connections are closed by the server; meanwhile it answers others."""
    closed: dict[str, float] = {}

    def idle() -> None:
        with socket.create_connection(("127.0.0.1", bench.port), timeout=120) as sock:
            start = time.monotonic()
            assert sock.recv(1) == b""
            closed["idle"] = time.monotonic() - start

    def trickle() -> None:
        request = f"GET /?token={bench.token} HTTP/1.1\r\nHost: 127.0.0.1:{bench.port}\r\n"
        padding = "".join(f"X-Pad-{i}: {i}\r\n" for i in range(200))
        data = (request + padding + "\r\n").encode()
        start = time.monotonic()
        with socket.create_connection(("127.0.0.1", bench.port), timeout=120) as sock:
            for byte in data:
                try:
                    sock.send(bytes([byte]))
                except (BrokenPipeError, ConnectionResetError):
                    break
                time.sleep(0.05)  # a byte per 50 ms: no single read ever waits long
            else:
                pytest.fail("the server read a request that took minutes to arrive")
            closed["trickle"] = time.monotonic() - start

    threads = [threading.Thread(target=f) for f in (idle, trickle)]
    for thread in threads:
        thread.start()
    status, _, _ = bench.request("GET", f"/?token={bench.token}")
    assert status == 200, "the server answers while two connections hang"
    for thread in threads:
        thread.join(timeout=300)
    assert set(closed) == {"idle", "trickle"}, closed


@pytest.mark.parametrize(
    "request_bytes,expected",
    [
        (b"GARBAGE\r\n\r\n", 400),
        (b"BREW /?token=T HTTP/1.1\r\nHost: H\r\n\r\n", 501),
        (b"GET / HTTP/2.0\r\nHost: H\r\n\r\n", 505),
        (b"GET / HTTP/1.1\r\nHost: H\r\nX-Long: " + b"a" * 70000 + b"\r\n\r\n", 431),
        (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n", 431),
    ],
    ids=["bad_request_line", "unknown_method", "http2", "long_header", "many_headers"],
)
def test_every_error_is_dcx_s_own_page(
    bench: Workbench, request_bytes: bytes, expected: int
) -> None:
    data = request_bytes.replace(b"token=T", f"token={bench.token}".encode()).replace(
        b"Host: H", f"Host: 127.0.0.1:{bench.port}".encode()
    )
    status, headers, body = parse(raw(bench, data))
    assert status == expected
    assert headers.get("x-content-type-options") == "nosniff", headers
    assert "default-src 'none'" in headers.get("content-security-policy", ""), headers
    assert headers["content-type"].startswith(("application/json", "text/plain")), headers
    assert b"<html" not in body.lower() and b"<!doctype" not in body.lower()
    if headers["content-type"].startswith("application/json"):
        assert json.loads(body)["ok"] is False
    _code, err = bench.stop()
    assert "Traceback" not in err, err


def test_a_vanishing_client_leaves_no_traceback(example: Path) -> None:
    with running(example) as wb:
        body = json.dumps(
            {
                "profile_toml": profile_text(example),
                "scope_ref": "",
                "query": "catalog cache rollback",
                "query_summary": "rollback",
            }
        ).encode()
        head = (
            f"POST /api/recall HTTP/1.1\r\nHost: 127.0.0.1:{wb.port}\r\nOrigin: {wb.origin}\r\n"
            f"X-DCX-Token: {wb.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode()
        for _ in range(5):
            sock = socket.create_connection(("127.0.0.1", wb.port))
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.sendall(head + body)
            sock.close()  # an RST: the answer has nowhere to go
        time.sleep(1)
        assert wb.request("GET", f"/?token={wb.token}")[0] == 200
        _, err = wb.stop()
    assert "Traceback" not in err, err
    assert all(line.startswith("workbench") for line in err.splitlines()), err  # one line each


MARKER_SCRIPT = '#!/bin/sh\ntouch "$(dirname "$0")/RAN"\necho \'ov 0.5.2\'\n'


@pytest.mark.parametrize(
    "config_line,key",
    [
        ('binary = "{script}"', "binary"),
        ('path_prepend = ["{folder}"]', "path_prepend"),
        ('command = "{script}"', "command"),
    ],
    ids=["binary", "path_prepend", "command"],
)
def test_a_posted_profile_never_chooses_a_program(
    example: Path, tmp_path: Path, config_line: str, key: str
) -> None:
    folder = tmp_path / "evil"
    folder.mkdir()
    script = folder / "ov"
    script.write_text(MARKER_SCRIPT)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    own = profile_text(example)
    posted = own.replace('provider = "bm25"', 'provider = "openviking"') + (
        "\n[context_provider.config]\n" + config_line.format(script=script, folder=folder) + "\n"
    )
    with running(example) as wb:
        for path, extra in (
            ("/api/inspect", {}),
            ("/api/recall", {"scope_ref": "", "query": "rollback", "query_summary": "rollback"}),
        ):
            status, answer = wb.post(path, {"profile_toml": posted, **extra})
            assert status == 400, (path, answer)
            assert answer["error"]["code"] == "executable_not_allowed", answer
            assert answer["error"]["field"].endswith(f"context_provider.config.{key}"), answer
            assert key in answer["error"]["message"]
            status, answer = wb.post(
                path,
                {
                    "profile": {
                        "schema_version": "decision_context_profile_v0",
                        "goal_id": "catalog-cache-ttl",
                        "enabled": True,
                        "enabled_agents": ["agent-a"],
                        "context_provider": {
                            "provider": "openviking",
                            "config": {
                                key: str(script) if key != "path_prepend" else [str(folder)]
                            },
                        },
                    },
                    **extra,
                },
            )
            assert status == 400 and answer["error"]["code"] == "executable_not_allowed", answer
    assert not (folder / "RAN").exists(), "the workbench ran a program a request chose"
