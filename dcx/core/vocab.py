"""The vocabulary: every closed set of words that more than one part of dcx speaks.

The profile and registry accept them (SPEC §4), the source plane reports them
(§5.2), the packets declare them (§5.4, §5.5), the builders count by them.
Declared once, here; everything else imports them.
"""

from __future__ import annotations

# the source registry (SPEC §4.2)
BUILTIN_ADAPTERS = ("local-file", "git", "mcp")
PROVIDERS = ("bm25", "openviking", "extension", "none")
SOURCE_KINDS = ("artifact", "conversation", "document", "external_signal", "person", "repository")
PRIORITIES = ("p0", "p1", "p2")
REQUIRED_PRIORITY = "p0"
EVIDENCE_LEVELS = ("s0", "s1", "s2", "s3", "s4")
SCAN_MODES = ("incremental", "on_demand", "snapshot")
READ_POLICIES = ("always", "material_change", "never")


def policy_reads(policy: str, *, deleted: bool) -> bool:
    """Whether ``exact_read_policy`` asks for an exact read of an item (SPEC §5.3), the one rule:
    ``always`` every item, ``material_change`` every item but deletions, ``never`` none."""
    if policy == "always":
        return True
    return policy == "material_change" and not deleted


# scans (SPEC §5.2)
COMPLETED = "completed"
NO_CHANGE = "no_change"
FAILED = "failed"
UNAVAILABLE = "unavailable"
SCAN_STATUSES = (COMPLETED, NO_CHANGE, FAILED, UNAVAILABLE)
CHANGE_KINDS = ("added", "modified", "deleted")
CONTENT_KINDS = ("text", "binary", "oversize", "deleted")

# exact-read outcomes: ``verified`` holds text content; binary, oversize and
# deleted are terminal (recorded and absorbable); ``failed`` is transient and
# keeps the cursor
VERIFIED = "verified"
READ_TERMINAL = ("binary", "oversize", "deleted")
READ_STATUSES = (VERIFIED, *READ_TERMINAL, "failed")

HEALTH_STATUSES = ("healthy", "degraded", "unavailable")

# a source's alerts (SPEC §5.5 v4): its last success is older than its
# ``freshness_seconds``; ``failure_alert_after`` consecutive failed attempts
SOURCE_STALE = "source_stale"
SOURCE_FAILING = "source_failing"
SOURCE_ALERTS = (SOURCE_FAILING, SOURCE_STALE)
