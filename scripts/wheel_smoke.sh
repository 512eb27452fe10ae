#!/usr/bin/env bash
# dcx as a user installs it: build the wheel and the sdist, check their metadata,
# install the wheel into a fresh venv OUTSIDE the checkout, and run a first hour's
# commands (init, enable, source add, status, index, recall) on a goal made there.
# Then the same through `pipx install .` and `uv tool install .` when asked
# (WHEEL_SMOKE_TOOLS=1; CI sets it). Everything lands in one temp folder, removed
# at the end. Called by `make wheel-check` (and so by .ci/run).
set -euo pipefail
checkout="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/dcx-wheel.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

say() { printf '== %s\n' "$*"; }

say "build the wheel and the sdist (python -m build)"
"$python" -m venv "$tmp/build-env"
"$tmp/build-env/bin/python" -m pip install --quiet --disable-pip-version-check build twine
"$tmp/build-env/bin/python" -m build --outdir "$tmp/dist" "$checkout" > "$tmp/build.log" 2>&1 \
  || { cat "$tmp/build.log"; exit 1; }
if grep -i -E "deprecat|SetuptoolsWarning" "$tmp/build.log"; then
  echo "wheel-check: the build printed a deprecation warning (above)" >&2
  exit 1
fi
"$tmp/build-env/bin/twine" check --strict "$tmp/dist"/*

wheel=$(ls "$tmp/dist"/dcx-*.whl)
say "the wheel holds the package and nothing else of the checkout"
"$tmp/build-env/bin/python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
tops = sorted({name.split("/")[0] for name in names})
stray = [top for top in tops if top != "dcx" and not top.endswith(".dist-info")]
assert not stray, f"the wheel carries {stray}"
assert "dcx/web/page.py" in names, "the workbench page is missing from the wheel"
print(f"{len(names)} files: {', '.join(tops)}")
PY

# a first hour on a goal outside the checkout, with the dcx on PATH given as $1
first_hour() {
  local bin="$1" goal="$2"
  mkdir -p "$goal/docs"
  printf '# Cache TTL\n\nRoll the catalog cache TTL back when origin p99 stays above 350 ms.\n' \
    > "$goal/docs/ttl.md"
  (
    cd "$goal"
    unset DCX_WORKSPACE
    export DCX_NOW=2026-12-01T12:00:00Z PATH="$bin:$PATH"
    test "$(command -v dcx)" = "$bin/dcx"
    dcx --version
    dcx init --goal-id smoke --agent-id agent-a
    dcx enable
    dcx source add source:authority:docs --path docs --include '**/*.md'
    dcx provider set bm25 --max-results 4
    dcx status
    dcx index
    dcx recall --scope source:source:authority:docs --query "when do we roll back the TTL" \
      --query-summary "TTL rollback" --format json > recall.json
    "$python" - recall.json <<'PY'
import json, sys
answer = json.load(open(sys.argv[1]))
recall = answer["data"]["recall"] if "recall" in answer["data"] else answer["data"]
assert answer["ok"] and recall["status"] == "completed", answer
assert recall["results"], "the first recall found nothing"
print(f"recall: {recall['status']}, {len(recall['results'])} result(s)")
PY
  )
}

say "pip install the wheel into a fresh venv outside the checkout"
"$python" -m venv "$tmp/user-env"
"$tmp/user-env/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
(cd "$tmp" && "$tmp/user-env/bin/python" -c 'import dcx, sys; assert "'"$checkout"'" not in dcx.__file__, dcx.__file__')
first_hour "$tmp/user-env/bin" "$tmp/goal-wheel"

if [ "${WHEEL_SMOKE_TOOLS:-0}" = 1 ]; then
  "$tmp/build-env/bin/python" -m pip install --quiet --disable-pip-version-check pipx uv
  say "pipx install . (its own home)"
  PIPX_HOME="$tmp/pipx" PIPX_BIN_DIR="$tmp/pipx-bin" "$tmp/build-env/bin/pipx" install --quiet "$checkout"
  first_hour "$tmp/pipx-bin" "$tmp/goal-pipx"
  say "uv tool install . (its own home)"
  UV_TOOL_DIR="$tmp/uv-tools" UV_TOOL_BIN_DIR="$tmp/uv-bin" UV_CACHE_DIR="$tmp/uv-cache" \
    "$tmp/build-env/bin/uv" tool install --quiet "$checkout"
  first_hour "$tmp/uv-bin" "$tmp/goal-uv"
fi
say "wheel-check: ok"
