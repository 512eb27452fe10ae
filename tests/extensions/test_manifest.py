from __future__ import annotations

from pathlib import Path

import pytest

from dcx.core.errors import InvalidInput
from dcx.extensions.manifest import SCHEMA, load_manifest, normalise
from tests.support.extensions import manifest_text


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "extension.toml"
    path.write_text(text)
    return path


def _good(**kw: object) -> str:
    return manifest_text("demo-ext", "./good.py", **kw)  # type: ignore[arg-type]


def test_valid_manifest_is_normalised(tmp_path: Path) -> None:
    manifest = load_manifest(_write(tmp_path, _good(env=("ZED", "ALPHA"))))
    assert manifest.id == "demo-ext" and manifest.version == "1.0.0"
    assert manifest.runtime["env"] == ["ALPHA", "ZED"]
    assert manifest.runtime["args"] == [] and manifest.runtime["timeout_seconds"] == 10
    assert len(manifest.revision) == 16 and int(manifest.revision, 16) >= 0
    assert (
        normalise(manifest.normalised) == manifest.normalised
    )  # idempotent: a snapshot re-verifies


def test_revision_ignores_comments_and_key_order_but_not_meaning(tmp_path: Path) -> None:
    base = load_manifest(_write(tmp_path, _good())).revision
    lines = _good().splitlines()
    shuffled = "\n".join([lines[2], lines[1], lines[0], "# a comment", *lines[3:]]) + "\n"
    assert load_manifest(_write(tmp_path, shuffled)).revision == base
    assert load_manifest(_write(tmp_path, _good(timeout=11))).revision != base
    assert load_manifest(_write(tmp_path, _good(args=("--fast",)))).revision != base


def test_loopx_manifest_is_read_and_its_own_keys_ignored(tmp_path: Path) -> None:
    dcx_rev = load_manifest(_write(tmp_path, _good())).revision
    loopx = _good(schema="loopx_extension_manifest_v0", extra_top='requires_loopx_api = ">=1,<2"\n')
    manifest = load_manifest(_write(tmp_path, loopx))
    assert manifest.normalised["schema_version"] == SCHEMA
    assert "requires_loopx_api" not in manifest.normalised
    assert manifest.revision == dcx_rev


def test_loopx_keys_are_unknown_in_a_dcx_manifest(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as err:
        load_manifest(_write(tmp_path, _good(extra_top='requires_loopx_api = ">=1"\n')))
    assert "requires_loopx_api, line 4" in err.value.message


def test_python_module_runtime(tmp_path: Path) -> None:
    text = _good().replace('entrypoint = "./good.py"', 'python_module = "dcx_fake.provider"')
    manifest = load_manifest(_write(tmp_path, text))
    assert (
        manifest.runtime["python_module"] == "dcx_fake.provider"
        and "entrypoint" not in manifest.runtime
    )


def test_a_folder_means_its_extension_toml(tmp_path: Path) -> None:
    _write(tmp_path, _good())
    assert load_manifest(tmp_path).id == "demo-ext"


def test_missing_file_and_invalid_toml(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such manifest"):
        load_manifest(tmp_path / "nope.toml")
    with pytest.raises(InvalidInput, match="invalid TOML"):
        load_manifest(_write(tmp_path, "id = \n"))


def _swap(old: str, new: str) -> str:
    text = _good()
    assert old in text
    return text.replace(old, new, 1)


BAD = {
    "unknown top key": (_good(extra_top='homepage = "x"\n'), "homepage"),
    "unknown runtime key": (
        _swap("timeout_seconds = 10\n", "timeout_seconds = 10\nshell = true\n"),
        "runtime.shell",
    ),
    "id upper case": (_swap('id = "demo-ext"', 'id = "Demo-Ext"'), "id"),
    "id too long": (_swap('id = "demo-ext"', f'id = "{"a" * 49}"'), "id"),
    "id double hyphen": (_swap('id = "demo-ext"', 'id = "demo--ext"'), "id"),
    "id leading digit": (_swap('id = "demo-ext"', 'id = "9demo"'), "id"),
    "missing permission": (
        _swap('permissions = ["decision_context.read"]', 'permissions = ["other.read"]'),
        "permissions",
    ),
    "required permission missing": (
        _swap(
            'required_permissions = ["decision_context.read"]', 'required_permissions = ["x.read"]'
        ),
        "runtime.required_permissions",
    ),
    "required not declared": (
        _swap(
            'required_permissions = ["decision_context.read"]',
            'required_permissions = ["decision_context.read", "net.write"]',
        ),
        "runtime.required_permissions",
    ),
    "runtime protocol": (
        _swap(
            f'protocol = "{"decision_context_advisory_provider_v0"}"\nentrypoint',
            'protocol = "other_v1"\nentrypoint',
        ),
        "runtime.protocol",
    ),
    "implements protocol": (
        _good()[: _good().rindex("protocol")] + 'protocol = "other_v1"\n',
        "implements[0].protocol",
    ),
    "implements capability": (
        _swap('capability_id = "decision-context"', 'capability_id = "semantic"'),
        "implements[0].capability_id",
    ),
    "two implements": (
        _good() + '\n[[implements]]\ncapability_id = "decision-context"\n'
        'protocol = "decision_context_advisory_provider_v0"\n',
        "implements",
    ),
    "timeout 0": (_good(timeout=0), "runtime.timeout_seconds"),
    "timeout 121": (_good(timeout=121), "runtime.timeout_seconds"),
    "timeout true": (_good(timeout=True), "runtime.timeout_seconds"),
    "timeout fraction": (_good(timeout=1.5), "runtime.timeout_seconds"),
    "doctor_args empty": (
        _swap('doctor_args = ["--doctor"]', "doctor_args = []"),
        "runtime.doctor_args",
    ),
    "doctor_args missing": (_swap('doctor_args = ["--doctor"]\n', ""), "runtime"),
    "both entrypoints": (
        _swap('entrypoint = "./good.py"', 'entrypoint = "./good.py"\npython_module = "m"'),
        "runtime",
    ),
    "no entrypoint": (_swap('entrypoint = "./good.py"\n', ""), "runtime"),
    "bad env name": (_good(env=("NOT VALID",)), "runtime.env[0]"),
    "wrong schema": (
        _swap('schema_version = "dcx_extension_manifest_v0"', 'schema_version = "v9"'),
        "schema_version",
    ),
}


@pytest.mark.parametrize("case", list(BAD), ids=list(BAD))
def test_bad_manifest_names_the_key_and_its_line(tmp_path: Path, case: str) -> None:
    text, key = BAD[case]
    with pytest.raises(InvalidInput) as err:
        load_manifest(_write(tmp_path, text))
    assert err.value.exit_code == 2
    assert f"extension.toml: {key}, line " in err.value.message, err.value.message
