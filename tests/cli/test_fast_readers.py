"""The fast paths of `dcx log|show|verify|sources` against their typer commands (issue 18).

The oracle is the typer app itself: for every argv shape, one process runs
``dcx.cli.main`` (which answers understood shapes without importing typer)
and another runs the typer app directly; stdout, stderr and the exit code
must be byte-identical, and the fast process must have taken the fast path
(typer never imported; rich only for text) or, for shapes it must not
answer (``--help``, ``--reveal``, ``--repair``, usage errors), fallen
through to typer.

Each side is one Python process that forks once per argv shape, its stdout
and stderr real files (not a terminal, as when piped); the typer side builds
the app once, as `dcx` does per call. That keeps ~40 shapes to a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import run_dcx
from tests.support.cycle import D
from tests.support.workspace import REPO

HARNESS = r"""
import json, os, sys
side, cases_file, out_dir = sys.argv[1:4]
cases = json.loads(open(cases_file).read())
if side == "typer":
    from dcx.cli.app import build_app
    app = build_app()
else:
    import dcx.cli
for i, case in enumerate(cases):
    pid = os.fork()
    if pid == 0:
        os.environ.update(case["env"])
        for name in case.get("unset", []):
            os.environ.pop(name, None)
        out = os.open(f"{out_dir}/{side}-{i}.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        err = os.open(f"{out_dir}/{side}-{i}.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(err, 2)
        code = 0
        try:
            if side == "typer":
                app(args=case["args"], prog_name="dcx")
            else:
                dcx.cli.main(case["args"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        mods = sorted({m.split(".")[0] for m in sys.modules} & {"typer", "rich"})
        with open(f"{out_dir}/{side}-{i}.rc", "w") as handle:
            json.dump({"code": code, "mods": mods}, handle)
        os._exit(0)
    os.waitpid(pid, 0)
"""

FAST, TYPER = "fast", "typer"
# `dcx show` of these, piped at the width the tests pin, prints without rich (dcx/cli/_plain.py)
PLAIN_SHOWS = ("show-evidence", "show-assembly", "show-receipt")


def _cases(root: Path, other: Path) -> list[tuple[str, list[str], dict[str, str], str]]:
    """(id, argv, env, expected path: 'fast' or 'typer')."""
    c = ["-C", str(root)]
    nowhere = ["-C", str(other)]
    shapes: list[tuple[str, list[str], dict[str, str], str]] = [
        ("log", [*c, "log"], {}, FAST),
        ("log-json", [*c, "log", "--format", "json"], {}, FAST),
        ("log-JSON=", [*c, "log", "--format=JSON"], {}, FAST),
        ("log-limit", [*c, "log", "--limit", "1"], {}, FAST),
        ("log-decision", [*c, "log", "--decision-id", D, "--format", "text"], {}, FAST),
        ("log-decision=-json", [*c, "log", f"--decision-id={D}", "--format=json"], {}, FAST),
        ("log-unknown-decision", [*c, "log", "--decision-id", "nope"], {}, FAST),
        (
            "log-unknown-decision-json",
            [*c, "log", "--decision-id", "nope", "--format", "json"],
            {},
            FAST,
        ),
        ("log-env-json", [*c, "log"], {"DCX_FORMAT": "json"}, FAST),
        ("log-no-color-verbose", ["--no-color", "-v", *c, "log"], {}, FAST),
        ("log-narrow", [*c, "log"], {"COLUMNS": "40"}, FAST),
        ("log-no-workspace", [*nowhere, "log"], {}, FAST),
        ("log-no-workspace-json", [*nowhere, "log", "--format", "json"], {}, FAST),
        ("show-evidence", [*c, "show", "decision-evidence"], {}, FAST),
        ("show-evidence-json", [*c, "show", "--format", "json", "decision-evidence"], {}, FAST),
        ("show-proposal", [*c, "show", "decision-proposal"], {}, FAST),
        ("show-assembly", [*c, "show", "decision-context-assembly"], {}, FAST),
        ("show-receipt", [*c, "show", "decision-commit-receipt"], {}, FAST),
        ("show-unknown", [*c, "show", "nope"], {}, FAST),
        ("show-unknown-json", [*c, "show", "nope", "--format", "json"], {}, FAST),
        ("show-ambiguous", [*c, "show", "decision-"], {}, FAST),
        ("show-no-workspace", [*nowhere, "show", "decision-evidence"], {}, FAST),
        ("verify", [*c, "verify"], {}, FAST),
        ("verify-json", [*c, "verify", "--format", "json"], {}, FAST),
        ("verify-wait", [*c, "verify", "--wait", "0.5"], {}, FAST),
        ("verify-wait=", [*c, "verify", "--wait=2"], {}, FAST),
        ("verify-no-workspace-json", [*nowhere, "verify", "--format", "json"], {}, FAST),
        ("sources", [*c, "sources"], {}, FAST),
        ("sources-json", [*c, "sources", "--format", "json"], {}, FAST),
        ("sources-workspace=", [f"--workspace={root}", "sources"], {}, FAST),
        ("sources-narrow", [*c, "sources"], {"COLUMNS": "40"}, FAST),
        # shapes the fast path leaves to typer
        ("log-help", [*c, "log", "--help"], {}, TYPER),
        ("log-limit-0", [*c, "log", "--limit", "0"], {}, TYPER),
        ("log-limit-word-json", [*c, "log", "--limit", "many", "--format", "json"], {}, TYPER),
        ("log-unknown-flag", [*c, "log", "--bogus"], {}, TYPER),
        ("log-format-yaml", [*c, "log", "--format", "yaml"], {}, TYPER),
        ("log-env-yaml", [*c, "log"], {"DCX_FORMAT": "yaml"}, TYPER),
        ("show-reveal", [*c, "show", "decision-evidence", "--reveal"], {}, TYPER),
        ("show-no-ref", [*c, "show"], {}, TYPER),
        ("show-two-refs", [*c, "show", "a", "b"], {}, TYPER),
        ("verify-repair", [*c, "verify", "--repair"], {}, TYPER),
        ("verify-wait-negative", [*c, "verify", "--wait", "-1"], {}, TYPER),
        ("sources-extra", [*c, "sources", "extra"], {}, TYPER),
    ]
    return shapes


def _run_side(side: str, cases: list[dict], tmp: Path) -> list[dict]:
    out = tmp / "out"
    out.mkdir(exist_ok=True)
    script = tmp / "harness.py"
    script.write_text(HARNESS)
    spec = tmp / "cases.json"
    spec.write_text(json.dumps(cases))
    proc = subprocess.run(
        [sys.executable, str(script), side, str(spec), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    rows = []
    for i in range(len(cases)):
        meta = json.loads((out / f"{side}-{i}.rc").read_text())
        rows.append(
            {
                **meta,
                "stdout": (out / f"{side}-{i}.out").read_bytes(),
                "stderr": (out / f"{side}-{i}.err").read_bytes(),
            }
        )
    return rows


@pytest.fixture
def compared(cycled: Path, tmp_path: Path) -> list[tuple[tuple, dict, dict]]:
    other = tmp_path / "not-a-goal"
    other.mkdir()
    shapes = _cases(cycled, other)
    cases = [
        {"args": args, "env": env, "unset": [] if "DCX_FORMAT" in env else ["DCX_FORMAT"]}
        for _, args, env, _ in shapes
    ]
    fast = _run_side("fast", cases, tmp_path)
    typer_rows = _run_side("typer", cases, tmp_path)
    return list(zip(shapes, fast, typer_rows, strict=True))


def test_fast_and_typer_paths_print_the_same_bytes(compared) -> None:
    seen_codes = set()
    for (name, args, _env, path), fast, slow in compared:
        assert (fast["stdout"], fast["stderr"], fast["code"]) == (
            slow["stdout"],
            slow["stderr"],
            slow["code"],
        ), name
        assert "typer" in slow["mods"]
        if path == FAST:
            assert "typer" not in fast["mods"], f"{name}: fell through to typer"
            text = (
                not any(a in ("json", "--format=json", "--format=JSON") for a in args)
                and name != "log-env-json"
            )
            if not (text and fast["code"] in (0, 1)):
                assert "rich" not in fast["mods"], f"{name}: rich {fast['mods']}"
            else:
                # piped: printed without rich when the plain console can (tests/cli/test_plain_console.py
                # compares it with rich); a grid wider than COLUMNS is rich's to fold
                if name in ("log", "verify", "verify-ok", "sources", *PLAIN_SHOWS):
                    assert "rich" not in fast["mods"], f"{name}: rich {fast['mods']}"
        else:
            assert "typer" in fast["mods"], f"{name}: answered by the fast path"
        assert b"Traceback" not in fast["stderr"], name
        seen_codes.add(fast["code"])
    assert {
        0,
        2,
        3,
    } <= seen_codes  # success, refused input, no workspace: the error boundary is exercised
    # guard the oracle: a shape that printed nothing on either stream would compare equal for free
    for (name, _args, _env, _path), fast, _slow in compared:
        assert fast["stdout"] or fast["stderr"], name
    by_name = {shape[0]: fast for shape, fast, _ in compared}
    assert b"error:" in by_name["show-unknown"]["stderr"] and by_name["show-unknown"]["code"] != 0
    assert json.loads(by_name["show-unknown-json"]["stdout"])["schema_version"] == "dcx_error_v0"
    assert json.loads(by_name["log-env-json"]["stdout"])["command"] == "log"
    assert by_name["log"]["stdout"].startswith(f"* {D}".encode())


def test_a_tampered_packet_fails_verify_the_same_on_both_paths(
    cycled: Path, tmp_path: Path
) -> None:
    packet = next((cycled / ".decision-context" / "packets").glob("*/*.json"))
    doc = json.loads(packet.read_text())
    doc["goal_id"] = "tampered"
    packet.write_text(json.dumps(doc))
    shapes = [["-C", str(cycled), "verify"], ["-C", str(cycled), "verify", "--format", "json"]]
    cases = [{"args": a, "env": {}, "unset": ["DCX_FORMAT"]} for a in shapes]
    fast = _run_side("fast", cases, tmp_path)
    slow = _run_side("typer", cases, tmp_path)
    for f, s in zip(fast, slow, strict=True):
        assert f["code"] == s["code"] == 1
        assert (f["stdout"], f["stderr"]) == (s["stdout"], s["stderr"])
        assert "typer" not in f["mods"]
    assert b"bad " in fast[0]["stdout"]


def test_installed_script_takes_the_fast_path(cycled: Path) -> None:
    """The console script itself (not the harness): same bytes as the typer fixture's runs."""
    out = run_dcx("-C", str(cycled), "log", "--format", "json")
    assert out.exit_code == 0 and json.loads(out.stdout)["data"]["decisions"][0]["decision_id"] == D
    code = (
        "import sys\nfrom dcx.cli import main\ntry:\n"
        f"    main({['-C', str(cycled), 'sources', '--format', 'json']!r})\n"
        "except SystemExit:\n    pass\nprint(sorted(m for m in sys.modules if m.startswith(('typer', 'rich'))),"
        " file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, env={**os.environ}
    )
    assert proc.stderr.strip().endswith("[]"), proc.stderr


def test_the_script_s_quick_exit_prints_and_exits_as_a_normal_exit(cycled: Path) -> None:
    """The installed script ends a fast answer with os._exit after flushing (dcx.cli): the same
    bytes and exit code as ``main(argv)``, which exits through the interpreter's teardown."""
    nowhere = cycled.parent / "not-a-goal"
    nowhere.mkdir()
    exe = str(Path(sys.executable).parent / "dcx")
    shapes = [
        ["-C", str(cycled), "log"],
        ["-C", str(cycled), "verify", "--format", "json"],
        ["-C", str(cycled), "show", "nope"],
        ["-C", str(cycled), "show", "decision-evidence"],
        ["-C", str(nowhere), "status"],
        ["--version"],
    ]
    env = {k: v for k, v in os.environ.items() if k != "DCX_FORMAT"}
    codes = set()
    for args in shapes:
        script = subprocess.run([exe, *args], capture_output=True, env=env, timeout=60)
        normal = subprocess.run(
            [sys.executable, "-c", f"from dcx.cli import main; main({args!r})"],
            capture_output=True,
            env=env,
            timeout=60,
        )
        assert (script.stdout, script.stderr, script.returncode) == (
            normal.stdout,
            normal.stderr,
            normal.returncode,
        ), args
        assert script.stdout or script.stderr, args
        codes.add(script.returncode)
    assert 0 in codes and len(codes) > 1  # success and at least one refusal


def test_the_collector_is_on_again_after_a_fast_answer() -> None:
    import gc

    from dcx.cli import main

    with pytest.raises(SystemExit):
        main(["--version"])
    assert gc.isenabled()
