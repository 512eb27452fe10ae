#!/usr/bin/env bash
# The main job on the bundled example goal, run on a fresh copy so the
# committed example never changes.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .demo
cp -R .dcx-example .demo
export DCX_WORKSPACE="$PWD/.demo"
export DCX_AGENT_ID=agent-a

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "dcx status — is decision context active for this goal and agent?"
dcx status
step "dcx sources --write — the public manifest of the source registry"
dcx sources --write
step "dcx scan — what changed since the committed cursor (none yet: every file is new); moves no cursor"
dcx scan
step "dcx verify — every packet re-hashes"
dcx verify
