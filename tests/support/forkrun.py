"""A warm runner of `dcx` commands for the crash tests: one forked child per command.

Started once (``python forkrun.py``), it imports the dcx CLI and the commit
and verify code, then reads one JSON request per line on stdin:
``{"args": [...], "env": {...}, "cwd": str, "out": path, "err": path,
"kill_after": seconds | null, "timeout": seconds}``. For each it forks a child
that takes that environment and working directory, points stdout/stderr at
the two files and runs ``dcx.cli.main(args)`` — the same entry point as the
console script — then exits with its code. With ``kill_after`` the runner
sends the child SIGKILL after that many seconds (a no-op if it already
finished). It answers one JSON line: ``{"code", "killed", "elapsed"}``
(``code`` is negative for a signal, as in ``subprocess``).

Why: the console script spends ~150 ms importing before commit does any work,
so random kill times would mostly land in the imports; a warm fork spends its
whole life in the commit path. The tests still kill the console script too.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import tomllib  # noqa: F401

import portalocker  # noqa: F401
import rfc8785  # noqa: F401
import rich.console  # noqa: F401

import dcx.ops.commit
import dcx.ops.review
import dcx.ops.verify
import dcx.packets  # noqa: F401
from dcx.cli import main as dcx_main
from dcx.cli.app import build_app
from dcx.packets import KINDS, spec_for

build_app()  # imports every command module; builds nothing that outlives this call
for _kind in KINDS:
    spec_for(_kind)


def _child(request: dict) -> None:
    code = 70
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        for fd, path in ((1, request["out"]), (2, request["err"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        try:
            dcx_main(list(request["args"]))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _serve(request: dict) -> dict:
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        _child(request)
    kill_after = request.get("kill_after")
    limit = float(request.get("timeout") or 60)
    killed_by_us = False
    if kill_after is not None:
        time.sleep(max(0.0, float(kill_after)))
        os.kill(pid, signal.SIGKILL)  # a finished child is a zombie until reaped: harmless
        killed_by_us = True
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > limit:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            return {
                "code": None,
                "killed": False,
                "hung": True,
                "elapsed": time.monotonic() - started,
            }
        time.sleep(0.002)
    elapsed = time.monotonic() - started
    if os.WIFSIGNALED(status):
        signum = os.WTERMSIG(status)
        return {
            "code": -signum,
            "killed": killed_by_us and signum == signal.SIGKILL,
            "hung": False,
            "elapsed": elapsed,
        }
    return {"code": os.WEXITSTATUS(status), "killed": False, "hung": False, "elapsed": elapsed}


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        answer = _serve(json.loads(line))
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
