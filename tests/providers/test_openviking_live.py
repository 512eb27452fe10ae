"""Opt-in: the OpenViking adapter against a real ``openviking-server`` on loopback.

Runs only with ``DCX_LIVE_OPENVIKING=1`` and OpenViking ≥ 0.5 installed outside
the project (``pip install openviking`` in any venv; never a dcx dependency):
``ov`` and ``openviking-server`` are taken from ``DCX_LIVE_OV_BIN`` (a folder)
or PATH. Embeddings and summaries come from the recorded fixtures' stdlib stub
server, so nothing leaves the machine. Asserts the contract (levels, limits,
scope, content, error mapping), never relevance: the stub's vectors are
lexical hashes.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from dcx.evidence.recall import make_provider
from dcx.state.profile import load_profile
from tests.support.recall import enable, request
from tests.support.workspace import REPO

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(
        os.environ.get("DCX_LIVE_OPENVIKING") != "1", reason="set DCX_LIVE_OPENVIKING=1 to run"
    ),
]

FIXTURES = REPO / "fixtures" / "openviking-0.5.2"
SCOPE = "viking://resources/catalog-ttl"


def _tool(name: str) -> str:
    folder = os.environ.get("DCX_LIVE_OV_BIN")
    found = str(Path(folder) / name) if folder else shutil.which(name)
    if not found or not Path(found).exists():
        pytest.skip(f"{name} not found (set DCX_LIVE_OV_BIN)")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _fill(template: Path, values: dict[str, str]) -> str:
    text = template.read_text()
    for key, value in values.items():
        text = text.replace(f'"{{{{{key}}}}}"', value if key == "SERVER_PORT" else f'"{value}"')
        text = text.replace(f"{{{{{key}}}}}", value)
    return text


def _wait_http(url: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{url} did not answer within {seconds} s")


@pytest.fixture(scope="module")
def live(tmp_path_factory) -> Iterator[dict[str, object]]:
    ov, server = _tool("ov"), _tool("openviking-server")
    tmp = tmp_path_factory.mktemp("ov-live")
    home = tmp / "home"
    home.mkdir()
    stub_port, server_port = _free_port(), _free_port()
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "HOME": str(home)}
    values = {
        "WORKSPACE": str(tmp / "workspace"),
        "STUB_PORT": str(stub_port),
        "SERVER_PORT": str(server_port),
    }
    (tmp / "ov.conf").write_text(_fill(FIXTURES / "ov.conf.template.json", values))
    (tmp / "ovcli.conf").write_text(_fill(FIXTURES / "ovcli.conf.template.json", values))
    procs: list[subprocess.Popen] = []
    try:
        stub = subprocess.Popen(
            [sys.executable, str(FIXTURES / "stub_embedding_server.py"), str(stub_port)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        procs.append(stub)
        assert "stub ready" in (stub.stdout.readline() if stub.stdout else "")
        srv = subprocess.Popen(
            [
                server,
                "--config",
                str(tmp / "ov.conf"),
                "--host",
                "127.0.0.1",
                "--port",
                str(server_port),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
        procs.append(srv)
        _wait_http(f"http://127.0.0.1:{server_port}/health", 90)
        cli_env = {**env, "OPENVIKING_CLI_CONFIG_FILE": str(tmp / "ovcli.conf")}
        subprocess.run(
            [ov, "language", "en"], env=cli_env, check=True, capture_output=True, timeout=30
        )
        subprocess.run(
            [ov, "add-resource", str(FIXTURES / "corpus"), "--to", SCOPE, "--wait", "-o", "json"],
            env=cli_env,
            check=True,
            capture_output=True,
            timeout=180,
        )
        yield {"ov": ov, "home": home, "port": server_port, "server": srv}
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def _provider(root: Path, live: dict[str, object], monkeypatch, **config: object):
    monkeypatch.setenv("HOME", str(live["home"]))  # where `ov language en` ran
    ws = enable(
        root,
        provider="openviking",
        config={
            "binary": str(live["ov"]),
            "url": f"http://127.0.0.1:{live['port']}",
            "account": "default",
            "user": "default",
            **config,
        },
    )
    return make_provider(ws, load_profile(ws).context_provider)


def test_live_l2_recall_keeps_the_contract(fresh_ws: Path, live, monkeypatch) -> None:
    provider = _provider(fresh_ws, live, monkeypatch, result_levels=[2])
    result = provider.retrieve(
        request(scope_ref=SCOPE, max_results=3), deadline=time.monotonic() + 30
    )
    assert result.status == "completed", result.reason_code
    assert 1 <= len(result.items) <= 3 and result.provider_version.startswith("0.")
    corpus = {p.read_text() for p in (FIXTURES / "corpus").glob("*.md")}
    for item in result.items:
        assert item.resource_ref.startswith(SCOPE + "/") and item.resource_ref.endswith(".md")
        assert not item.resource_ref.endswith((".abstract.md", ".overview.md"))
        assert item.content in corpus  # L2 content is the file text, verbatim
        json.dumps(item)


def test_live_missing_scope_is_completed_empty(fresh_ws: Path, live, monkeypatch) -> None:
    provider = _provider(fresh_ws, live, monkeypatch, result_levels=[2])
    result = provider.retrieve(
        request(scope_ref="viking://resources/does-not-exist"), deadline=time.monotonic() + 30
    )
    assert (result.status, result.items) == ("completed", ())


def test_live_fresh_home_is_cli_not_configured(
    fresh_ws: Path, live, monkeypatch, tmp_path: Path
) -> None:
    provider = _provider(fresh_ws, live, monkeypatch)
    monkeypatch.setenv("HOME", str(tmp_path / "fresh-home"))
    result = provider.retrieve(request(scope_ref=SCOPE), deadline=time.monotonic() + 30)
    assert result.reason_code == "provider_cli_not_configured"


def test_live_server_down_is_service_unavailable(fresh_ws: Path, live, monkeypatch) -> None:
    provider = _provider(fresh_ws, live, monkeypatch)
    provider.config = {
        **provider.config,
        "url": f"http://127.0.0.1:{_free_port()}",
    }  # nothing listens there
    result = provider.retrieve(request(scope_ref=SCOPE), deadline=time.monotonic() + 30)
    assert result.reason_code == "provider_service_unavailable"


def test_live_leading_dash_query_is_a_query_not_an_option(
    fresh_ws: Path, live, monkeypatch
) -> None:
    provider = _provider(fresh_ws, live, monkeypatch, result_levels=[2])
    result = provider.retrieve(
        request(scope_ref=SCOPE, query="-n 99 roll back the TTL", max_results=2),
        deadline=time.monotonic() + 30,
    )
    assert result.status == "completed", result.reason_code
    assert 1 <= len(result.items) <= 2


# -- SPEC §6.4 v4 against the real server -----------------------------------------------------


def _counting_ov(live: dict[str, object], tmp_path: Path) -> tuple[Path, Path]:
    """A wrapper that logs each `ov` subcommand, then execs the real one."""
    log = tmp_path / "ov-calls.txt"
    wrapper = tmp_path / "ov"
    wrapper.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\nexec "{live["ov"]}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper, log


def test_live_server_version_is_the_one_health_reports(fresh_ws: Path, live, monkeypatch) -> None:
    provider = _provider(fresh_ws, live, monkeypatch, result_levels=[2])
    result = provider.retrieve(request(scope_ref=SCOPE), deadline=time.monotonic() + 30)
    with urllib.request.urlopen(f"http://127.0.0.1:{live['port']}/health", timeout=5) as answer:
        health = json.loads(answer.read())
    health = health.get("result", health)  # `ov health -o json` shows it inside the envelope
    assert result.provider_version == health["version"]  # the server's own word, another route


def test_live_status_check_probes_a_find(fresh_ws: Path, live, monkeypatch, tmp_path) -> None:
    wrapper, log = _counting_ov(live, tmp_path)
    provider = _provider(fresh_ws, live, monkeypatch, binary=str(wrapper))
    assert provider.check(10, SCOPE) is None
    assert log.read_text().split() == ["version", "status", "find"]


def test_live_checks_are_remembered_across_providers(fresh_ws: Path, live, monkeypatch, tmp_path):
    wrapper, log = _counting_ov(live, tmp_path)
    for _ in range(2):
        provider = _provider(fresh_ws, live, monkeypatch, binary=str(wrapper), result_levels=[2])
        result = provider.retrieve(request(scope_ref=SCOPE), deadline=time.monotonic() + 30)
        assert result.status == "completed", result.reason_code
    assert log.read_text().split() == ["version", "status", "find", "find"]


def test_live_default_levels_never_answer_empty_while_files_match(
    fresh_ws: Path, live, monkeypatch
) -> None:
    provider = _provider(fresh_ws, live, monkeypatch)  # no result_levels
    for limit in (1, 2, 3):
        result = provider.retrieve(
            request(scope_ref=SCOPE, max_results=limit), deadline=time.monotonic() + 30
        )
        assert result.status == "completed" and result.items, (limit, result)
        assert not any(
            i.resource_ref.endswith((".abstract.md", ".overview.md")) for i in result.items
        )


def test_live_min_score_empties_an_unrelated_query(fresh_ws: Path, live, monkeypatch) -> None:
    provider = _provider(fresh_ws, live, monkeypatch, result_levels=[2], min_score=0.55)
    result = provider.retrieve(
        request(scope_ref=SCOPE, query="zebra xylophone quokka"), deadline=time.monotonic() + 30
    )
    assert (result.status, result.items) == ("completed", ())  # the stub scores it exactly 0.5
