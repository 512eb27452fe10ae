from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from dcx.core.errors import InvalidInput
from dcx.extensions import runtime
from tests.support.extensions import FIXTURES


def _rev(entrypoint_path: str, manifest_runtime: dict | None = None, **extra: str) -> dict:
    spec = {
        "protocol": "p",
        "entrypoint": "x",
        "args": ["--a"],
        "doctor_args": ["--doctor"],
        "env": ["E"],
    }
    spec.update(manifest_runtime or {})
    return {"manifest": {"runtime": spec}, "entrypoint_path": entrypoint_path, **extra}


def _script(path: Path, shebang: str, body: str = "print('hi')\n") -> Path:
    path.write_text(f"{shebang}\n{body}")
    path.chmod(0o755)
    return path


def test_pin_relative_path_is_taken_from_the_manifest_folder(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    script = _script(tmp_path / "bin" / "tool.py", "#!/usr/bin/env python3")
    pinned = runtime.pin({"entrypoint": "bin/tool.py"}, tmp_path)
    assert pinned == {"entrypoint_path": str(script)}


def test_pin_command_is_looked_up_on_path_once(tmp_path: Path, monkeypatch) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    tool = _script(bindir / "my-provider", "#!/bin/sh", "exit 0\n")
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    assert runtime.pin({"entrypoint": "my-provider"}, tmp_path / "elsewhere") == {
        "entrypoint_path": str(tool)
    }


@pytest.mark.parametrize("entry", ["no-such-command-xyz", "./missing.py", "./not-exec.txt"])
def test_pin_refuses_what_cannot_run(tmp_path: Path, entry: str) -> None:
    (tmp_path / "not-exec.txt").write_text("x")
    with pytest.raises(InvalidInput) as err:
        runtime.pin({"entrypoint": entry}, tmp_path)
    assert err.value.code == "entrypoint_not_found" and err.value.field == "runtime.entrypoint"
    assert str(tmp_path) not in err.value.message


def test_pin_python_module_records_interpreter_and_module_file(tmp_path: Path) -> None:
    pinned = runtime.pin({"python_module": "json.tool", "env": []}, tmp_path)
    assert pinned["entrypoint_path"] == os.path.abspath(sys.executable)
    assert pinned["module_path"].endswith(os.path.join("json", "tool.py"))
    with pytest.raises(InvalidInput, match="not importable"):
        runtime.pin({"python_module": "no_such_module_xyz", "env": []}, tmp_path)


def test_identity_follows_the_entrypoint_bytes(tmp_path: Path) -> None:
    script = _script(tmp_path / "p.py", "#!/usr/bin/env python3")
    rev = _rev(str(script))
    first = runtime.identity(rev)
    assert first is not None and first == runtime.identity(rev)
    script.write_text(script.read_text() + "# changed\n")
    assert runtime.identity(rev) not in (None, first)
    script.unlink()
    assert runtime.identity(rev) is None


def test_identity_includes_the_shebang_interpreter(tmp_path: Path) -> None:
    fake_python = tmp_path / "python-x"
    shutil.copy2(sys.executable, fake_python)
    script = _script(tmp_path / "p.py", f"#!{fake_python}")
    rev = _rev(str(script))
    first = runtime.identity(rev)
    with open(fake_python, "ab") as handle:
        handle.write(b"\0")
    assert runtime.identity(rev) not in (None, first)
    fake_python.unlink()
    assert runtime.identity(rev) is None  # a script whose interpreter is gone cannot run


def test_shebang_forms(tmp_path: Path) -> None:
    assert runtime.shebang_interpreter(str(_script(tmp_path / "a", "#!/bin/sh -e"))) == "/bin/sh"
    assert runtime.shebang_interpreter(
        str(_script(tmp_path / "b", "#!/usr/bin/env -S python3 -u"))
    ) == shutil.which("python3")
    assert runtime.shebang_interpreter(str(_script(tmp_path / "c", "no shebang"))) is None


def test_identity_of_a_python_module_binds_module_file_and_interpreter(tmp_path: Path) -> None:
    module = tmp_path / "mod.py"
    module.write_text("x = 1\n")
    rev = _rev(sys.executable, {"python_module": "mod"}, module_path=str(module))
    del rev["manifest"]["runtime"]["entrypoint"]
    first = runtime.identity(rev)
    module.write_text("x = 2\n")
    assert runtime.identity(rev) not in (None, first)
    assert runtime.argv(rev) == [sys.executable, "-P", "-m", "mod", "--a"]


def test_argv_uses_only_pinned_values() -> None:
    rev = _rev(str(FIXTURES / "good.py"))
    assert runtime.argv(rev) == [str(FIXTURES / "good.py"), "--a"]
    assert runtime.doctor_argv(rev) == [str(FIXTURES / "good.py"), "--a", "--doctor"]
    assert runtime.env_names(rev) == ["E"]


def test_identity_of_a_python_package_covers_its_main(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text("print(1)\n")
    rev = _rev(sys.executable, {"python_module": "pkg"}, module_path=str(package / "__init__.py"))
    first = runtime.identity(rev)
    (package / "__main__.py").write_text("print(2)\n")
    assert runtime.identity(rev) not in (None, first)
