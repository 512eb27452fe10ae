"""Pinning, content identity and argv of an extension runtime (SPEC §7).

At install the entrypoint is *pinned*: a bare command is looked up on PATH, a
path is taken relative to the manifest's folder; either way the absolute path
is stored with the revision. A ``python_module`` runtime pins dcx's own
interpreter and the module's file. Dispatch then runs only pinned paths — the
manifest on disk and PATH are never consulted again.

The *identity* is what the doctor proof binds to: blake3 of the entrypoint
file's bytes plus its shebang interpreter's bytes (scripts), or of the module
file plus the interpreter (``python_module``). It is recomputed from disk on
every resolution, so replacing an executable's bytes makes the proof stale.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

import blake3

from dcx.core.canonical import canonical_bytes
from dcx.core.errors import InvalidInput
from dcx.core.process import run_bounded

# -P: never put the working directory on sys.path, so a goal root cannot shadow the module.
MODULE_FLAGS = ("-P", "-m")
_FIND_MODULE = (
    "import importlib.util, json, sys\n"
    "try:\n    spec = importlib.util.find_spec(sys.argv[1])\nexcept Exception:\n    spec = None\n"
    "origin = getattr(spec, 'origin', None)\n"
    "print(json.dumps(origin if isinstance(origin, str) else None))\n"
)


def _not_found(field: str, what: str) -> InvalidInput:
    return InvalidInput(
        f"{field}: {what}",
        field=field,
        code="entrypoint_not_found",
        hint="install the package that provides it, or fix the manifest",
    )


def pin(runtime: dict[str, Any], manifest_dir: Path) -> dict[str, str]:
    """Resolve the runtime to absolute paths: ``{entrypoint_path[, module_path]}``."""
    if "python_module" in runtime:
        interpreter = os.path.abspath(sys.executable)  # keep the venv launcher, not its target
        origin = find_module(interpreter, runtime["python_module"], runtime.get("env", []))
        if origin is None:
            raise _not_found(
                "runtime.python_module", "the module is not importable by dcx's Python"
            )
        return {"entrypoint_path": interpreter, "module_path": origin}
    command = os.path.expanduser(runtime["entrypoint"])
    if os.sep in command or (os.altsep and os.altsep in command):
        candidate = Path(command) if os.path.isabs(command) else manifest_dir / command
    else:
        found = shutil.which(command)
        if found is None:
            raise _not_found("runtime.entrypoint", "no such command on PATH")
        candidate = Path(found)
    path = Path(os.path.abspath(candidate))
    if not path.is_file() or not os.access(path, os.X_OK):
        raise _not_found("runtime.entrypoint", "not an executable file")
    return {"entrypoint_path": str(path)}


def find_module(interpreter: str, module: str, env: list[str]) -> str | None:
    """Where ``interpreter`` would import ``module`` from, asked in a bounded child."""
    out = run_bounded([interpreter, "-P", "-c", _FIND_MODULE, module], timeout=15, env_allow=env)
    if not out.ok:
        return None
    try:
        origin = json.loads(out.stdout)
    except ValueError:
        return None
    return origin if isinstance(origin, str) and os.path.isfile(origin) else None


def _file_digest(path: str) -> str | None:
    try:
        if not os.path.isfile(path):
            return None
        hasher = blake3.blake3()
        hasher.update_mmap(path)
        return hasher.hexdigest()
    except (OSError, ValueError):
        return None


def _module_digest(origin: str) -> str | None:
    """A module file's digest; for a package (``__init__.py``), every ``.py`` file under it,
    since ``-m package`` runs ``__main__.py`` and whatever it imports from there."""
    if os.path.basename(origin) != "__init__.py":
        return _file_digest(origin)
    root = Path(origin).parent
    parts = []
    for path in sorted(root.rglob("*.py")):
        digest = _file_digest(str(path))
        if digest is None:
            return None
        parts.append([path.relative_to(root).as_posix(), digest])
    return blake3.blake3(canonical_bytes(parts)).hexdigest() if parts else None


def shebang_interpreter(path: str) -> str | None:
    """The interpreter a script's ``#!`` line selects (``env NAME`` looked up on PATH)."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline(4096)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    try:
        words = shlex.split(first[2:].decode("utf-8").strip())
    except (UnicodeDecodeError, ValueError):
        return None
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        names = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return shutil.which(names[0]) if names else None
    return words[0]


def identity(rev: dict[str, Any]) -> str | None:
    """The live content identity of a pinned revision, or None when a file is missing."""
    runtime = rev["manifest"]["runtime"]
    if "python_module" in runtime:
        module_file = _module_digest(rev.get("module_path", ""))
        interpreter = _file_digest(rev["entrypoint_path"])
        if module_file is None or interpreter is None:
            return None
        parts: dict[str, Any] = {
            "kind": "python_module",
            "module": runtime["python_module"],
            "module_file": module_file,
            "interpreter": interpreter,
        }
    else:
        entrypoint = _file_digest(rev["entrypoint_path"])
        if entrypoint is None:
            return None
        shebang = shebang_interpreter(rev["entrypoint_path"])
        interpreter = _file_digest(shebang) if shebang else None
        if shebang is not None and interpreter is None:
            return None  # a script whose interpreter is gone cannot run
        parts = {"kind": "entrypoint", "entrypoint": entrypoint, "interpreter": interpreter}
    return blake3.blake3(canonical_bytes(parts)).hexdigest()


def argv(rev: dict[str, Any]) -> list[str]:
    """The pinned command line of a revision (no shell)."""
    runtime = rev["manifest"]["runtime"]
    if "python_module" in runtime:
        return [rev["entrypoint_path"], *MODULE_FLAGS, runtime["python_module"], *runtime["args"]]
    return [rev["entrypoint_path"], *runtime["args"]]


def doctor_argv(rev: dict[str, Any]) -> list[str]:
    return [*argv(rev), *rev["manifest"]["runtime"]["doctor_args"]]


def env_names(rev: dict[str, Any]) -> list[str]:
    return list(rev["manifest"]["runtime"]["env"])
