#!/usr/bin/env bash
# The main job on the bundled example goal: one whole decision cycle, run on a
# fresh copy (.demo/) so the committed example never changes; then the next
# decision settled the stronger way, by a person's gate and `dcx review`; then
# a re-run with nothing new: no_change, the commit replayed, and the quiet
# review path.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .demo
cp -R .dcx-example .demo
export DCX_WORKSPACE="$PWD/.demo"
export DCX_AGENT_ID=agent-a
DECISION=ttl-2026-12
QUERY="when do we roll back the catalog cache TTL change origin p99 latency"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
json() { python3 -c "import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1], {'d': d}))" "$1"; }

step "dcx status — is decision context active for this goal and agent?"
dcx status
step "dcx sources --write — the public manifest of the source registry (no locators)"
dcx sources --write
step "dcx index — build the bm25 recall index over the authority documents"
dcx index
step "Meanwhile the runbook changes: roll back above 350 ms, not 400 ms (the index is now stale)"
sed -i.bak 's/stays above 400 ms/stays above 350 ms/' .demo/docs/runbook-ttl-rollback.md && rm .demo/docs/runbook-ttl-rollback.md.bak
step "dcx prepare --auto-rebase — scan, exact read, recall; authority decides which recalled claims stand"
dcx prepare --decision-id "$DECISION" --auto-rebase --query "$QUERY" --query-summary "TTL rollback criteria"
step "dcx propose — the agent's advisory proposal, bound to that evidence"
dcx propose --decision-id "$DECISION" --from .demo/proposal.json
step "dcx outcome — what the owner accepted (pending verification)"
dcx outcome --decision-id "$DECISION" --from .demo/outcome.json
step "dcx writeback — the lifecycle event that lets the cursor advance"
EVENT=$(dcx writeback --decision-id "$DECISION" --kind validation --summary "TTL kept at 90 s" --format json | json "d['data']['event']['event_id']")
echo "event $EVENT"
step "dcx commit — verify the chain, then advance the private cursor (compare-and-swap, fsync, read back)"
dcx commit --decision-id "$DECISION" --event-id "$EVENT"
step "dcx feedback — retrieval telemetry; a memory candidate only after a verified outcome"
dcx feedback --decision-id "$DECISION"

GATED=ttl-2027-01
step "The next decision: the runbook changes again, and this time a person decides through a recorded gate"
printf '\nFrom January the purge backlog trigger is 40000 entries.\n' >> .demo/docs/runbook-ttl-rollback.md
dcx prepare --decision-id "$GATED" --auto-rebase --query "$QUERY" --query-summary "TTL rollback criteria" >/dev/null
dcx propose --decision-id "$GATED" --from .demo/proposal.json >/dev/null
echo "prepared and proposed $GATED"
step "dcx gate — the platform lead approves (a user-gate event in the LoopX shape; --by may not be the agent)"
GATE=$(dcx gate --decision-id "$GATED" --approve --by storefront-platform-lead --summary "Keep the 90 s TTL with the new purge trigger" --format json | json "d['data']['event']['event_id']")
echo "gate $GATE"
step "dcx review --dry-run — what settling would write; nothing is written"
dcx review --decision-id "$GATED" --gate-event "$GATE" --dry-run
step "dcx review — the review receipt, its validation event and the cursor commit, all or nothing"
dcx review --decision-id "$GATED" --gate-event "$GATE"
step "dcx status — approved, so an observed outcome is now due"
dcx status
step "dcx outcome — what was observed after the approve clears it"
GATED_EVIDENCE=$(dcx log --decision-id "$GATED" --format json | json "[r['ref'] for r in d['data']['decisions'][0]['chain'] if r['kind'] == 'evidence'][0]")
python3 - "$GATED_EVIDENCE" <<'PY' > .demo/outcome-observed.json
import json, sys
body = json.load(open(".demo/outcome.json"))
body["observed_outcomes"] = [{"outcome_id": "p99-first-week", "summary": "Origin p99 stayed under 350 ms in the first week",
                              "evidence_ref": sys.argv[1], "status": "pending", "observed_at": "2026-12-08T18:00:00Z"}]
print(json.dumps(body))
PY
dcx outcome --decision-id "$GATED" --from .demo/outcome-observed.json >/dev/null
dcx status --format json | json "'\\n'.join(r['decision_id'] + ': ' + ('next: dcx ' + r['next_step'] if r['next_step'] else 'nothing left to do') + (', an outcome is due' if r['outcome_due'] else ', no outcome due') for r in d['data']['workspace']['decisions'])"

step "Again, nothing new: prepare finds no change, commit is replayed"
dcx prepare --decision-id "$DECISION" --auto-rebase --format json | json "'prepare: ' + d['data']['assembly']['scan_receipts'][0]['status'] + ', checkpoint ' + d['data']['assembly']['checkpoint']['rows'][0]['reason_code']"
dcx commit --decision-id "$DECISION" --event-id "$EVENT" --format json | json "'commit: ' + ('replayed, nothing written' if d['data']['replayed'] else 'committed')"
step "The quiet path: nothing material changed, so no proposal and no gate — dcx review --no-change"
dcx prepare --decision-id "$GATED" --auto-rebase --format json | json "'prepare: rebase ' + d['data']['assembly']['rebase']['status']"
dcx review --decision-id "$GATED" --no-change
dcx review --decision-id "$GATED" --no-change --format json | json "'again: ' + ('replayed, nothing written' if d['data']['replayed'] else 'settled')"

step "dcx log — the decision and its chain, newest first"
dcx log
step "dcx verify and dcx audit — every packet re-hashes; no private value in any public file"
dcx verify
dcx audit

step "The story"
EVIDENCE=$(dcx log --decision-id "$DECISION" --format json | json "[r['ref'] for r in d['data']['decisions'][0]['chain'] if r['kind'] == 'evidence'][0]")
dcx show "$EVIDENCE" --format json | python3 scripts/demo_story.py
echo "- the source cursor advanced once, after writeback; the second commit was replayed"
echo "- $GATED was settled by a person's gate (approve): the review advanced the cursor, the outcome came after"
echo "- nothing new since: the quiet review settled it without a proposal or a gate, and replays when run again"
echo "Packets are in .demo/.decision-context/packets/ — try: .venv/bin/dcx -C .demo show <prefix>"
echo "(to type plain dcx: export PATH=\"\$PWD/.venv/bin:\$PATH\", or pipx install . — see README.md)"
