"""Print the demo's short story from an evidence packet (JSON on stdin)."""

import json
import sys

evidence = json.load(sys.stdin)
print(f"- {len(evidence['changed_facts'])} changed facts read from the authority documents")
n = len(evidence["recalled_claims"])
print(
    f"- {n} recalled claim{'' if n == 1 else 's'} accepted: the current authority text confirms {'it' if n == 1 else 'them'}"
)
for claim in evidence["stale_or_rejected_claims"]:
    print(
        f"- {claim['claim_id']} demoted as {claim['reason_code']}: the runbook moved after it was indexed"
    )
