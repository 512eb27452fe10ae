#!/usr/bin/env python3
"""Regenerate fixtures/report/: the decision history `dcx report` is tested on.

    .venv/bin/python scripts/report_fixture.py          # rewrite fixtures/report/
    .venv/bin/python scripts/report_fixture.py --check  # exit 1 if it would differ

Everything is made by running dcx itself (real subprocesses, a fixed clock
through DCX_NOW, a fixed key), so the same run gives the same bytes. Two goals:

- ``catalog``  (goal catalog-cache-ttl): two agents on two hosts — agent-a in
  the goal repository, agent-b in a git clone with the goal's key imported —
  whose branches are merged with git (the union driver merges events.jsonl);
- ``checkout`` (goal checkout-latency): a second domain, recalled by bm25 and
  by an extension provider whose recalls never match the authority.

Only public files are kept (workspace.toml, packets, decision indexes,
events), as a fresh clone would hold them. The story of each decision and the
values it must give are written out in tests/cli/test_report.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "fixtures" / "report"
DC = ".decision-context"
KEY = "5c" * 32  # the fixture goals' key: fixed so every ref is reproducible
PUBLIC = (
    "workspace.toml",
    "README.md",
    ".gitignore",
    ".gitattributes",
    "events.jsonl",
    "packets",
    "decisions",
)

CATALOG_QUERY = "when do we roll back the catalog cache TTL change origin p99 latency"
PURGE_QUERY = "purge queue backlog stale prices incident"
WARMUP_QUERY = "origin rate limit partner rps"
CHECKOUT_QUERY = "checkout payment timeout retry budget"
POOL_QUERY = "database connection pool size checkout"


class Host:
    """One agent on one host: runs dcx in a workspace with a fixed clock."""

    def __init__(self, root: Path, agent: str, home: Path) -> None:
        self.root, self.agent, self.home = root, agent, home

    def __call__(self, at: str, *args: str, ok: bool = True) -> dict:
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(self.home),
            "DCX_NOW": at,
            "DCX_AGENT_ID": self.agent,
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
        }
        proc = subprocess.run(
            [sys.executable, "-m", "dcx", "-C", str(self.root), *args, "--format", "json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if ok and proc.returncode != 0:
            raise SystemExit(
                f"dcx {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return json.loads(proc.stdout) if proc.stdout.strip() else {}

    def write(self, name: str, value: dict) -> str:
        path = self.root / f"{name}.json"
        path.write_text(json.dumps(value))
        return str(path)

    def edit(self, rel: str, old: str, new: str) -> None:
        path = self.root / "docs" / rel
        text = path.read_text()
        assert old in text, (rel, old)
        path.write_text(text.replace(old, new))

    def profile(self, goal: str, provider: str, config: str = "") -> None:
        (self.root / DC / "profile.toml").write_text(
            'schema_version = "decision_context_profile_v0"\n'
            f'goal_id = "{goal}"\nenabled = true\nenabled_agents = ["agent-a", "agent-b"]\n\n'
            f'[context_provider]\nprovider = "{provider}"\nnamespace = "decision-context"\n'
            f"max_results = 2\ntimeout_seconds = 10\n{config}\n"
            "[commit]\nallow_self_confirmation = false\n"
        )

    # -- one decision, step by step ------------------------------------------
    def prepare(
        self, at: str, decision: str, query: str | None = None, *, rebase: bool = True
    ) -> None:
        args = ["prepare", "--decision-id", decision]
        if rebase:
            args.append("--auto-rebase")
        if query:
            args += ["--query", query, "--query-summary", "Fixture question"]
        self(at, *args)

    def propose(
        self, at: str, decision: str, option: str, confidence: float, alternative: str
    ) -> None:
        body = {
            "objective_scores": [
                {"objective_id": "quality", "score": 0.7, "rationale": "Fixture objective."}
            ],
            "recommended_decision": {
                "option_id": option,
                "summary": f"Choose {option}",
                "rationale": "The evidence supports it.",
                "confidence": confidence,
            },
            "alternatives": [
                {
                    "alternative_id": alternative,
                    "summary": f"Choose {alternative}",
                    "tradeoff": "The other way.",
                    "rank": 1,
                }
            ],
            "next_actions": [
                {
                    "action_id": "watch",
                    "owner_ref": "owner-team",
                    "summary": "Watch the metric",
                    "acceptance": "metric holds",
                    "stop_condition": "metric breaks",
                    "rank": 1,
                }
            ],
            "stop_list": [
                {"stop_id": "no-rush", "summary": "Do not rush", "condition": "no sign-off"}
            ],
            "review_at": "2026-12-20T09:00:00Z",
        }
        self(at, "propose", "--decision-id", decision, "--from", self.write("proposal", body))

    def outcome(
        self,
        at: str,
        decision: str,
        option: str,
        status: str,
        *,
        observed: str | None = None,
        assumption: str | None = None,
    ) -> None:
        body = {
            "accepted_decision": {
                "option_id": option,
                "summary": f"Choose {option}",
                "accepted_by": "owner-lead",
                "accepted_at": at,
            },
            "resulting_transitions": [
                {"transition_id": "todo-done", "summary": "Todo closed", "status": "done"}
            ],
            "observed_outcomes": []
            if observed is None
            else [
                {
                    "outcome_id": "metric-check",
                    "summary": "The metric was checked",
                    "evidence_ref": "dashboard-1",
                    "status": observed,
                    "observed_at": at,
                }
            ],
            "invalidated_assumptions": []
            if assumption is None
            else [
                {
                    "assumption_id": assumption,
                    "summary": "The assumption did not hold",
                    "evidence_ref": "dashboard-2",
                    "invalidated_at": at,
                }
            ],
            "verification_status": status,
            "review_at": "2026-12-20T09:00:00Z",
        }
        self(at, "outcome", "--decision-id", decision, "--from", self.write("outcome", body))

    def settle(self, at: str, decision: str) -> None:
        """writeback + commit: the sources the decision absorbed advance."""
        event = self(
            at,
            "writeback",
            "--decision-id",
            decision,
            "--kind",
            "validation",
            "--summary",
            f"{decision} written back",
        )["data"]["event"]["event_id"]
        self(at, "commit", "--decision-id", decision, "--event-id", event)


def git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_DATE": "2026-11-30T12:00:00Z",
        "GIT_COMMITTER_DATE": "2026-11-30T12:00:00Z",
        "HOME": str(cwd),
    }
    subprocess.run(
        ["git", "-c", "user.name=fixture", "-c", "user.email=fixture@agents.invalid", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        timeout=60,
    )


def init(root: Path, goal: str, docs: dict[str, str] | Path, home: Path, keyfile: Path) -> Host:
    docs_dir = root / "docs"
    if isinstance(docs, Path):
        shutil.copytree(docs, docs_dir)
    else:
        docs_dir.mkdir(parents=True)
        for name, text in docs.items():
            (docs_dir / name).write_text(text)
    host = Host(root, "agent-a", home)
    host("2026-11-01T08:00:00Z", "init", "--goal-id", goal, "--agent-id", "agent-a")
    host("2026-11-01T08:00:00Z", "key", "import", str(keyfile), "--force")
    (root / DC / "sources.toml").write_text(
        'schema_version = "decision_source_registry_v0"\n\n[[bindings]]\nprovider_id = "files"\n'
        'adapter = "local-file"\n\n[[sources]]\nsource_id = "source:authority:docs"\nprovider_id = "files"\n'
        'source_kind = "document"\npriority = "p0"\nevidence_level = "s1"\nobjectives = ["quality"]\n'
        'scan_mode = "incremental"\nexact_read_policy = "always"\nfreshness_seconds = 31536000\n'
        'locator = { path = "docs", include = ["**/*.md"] }\nconflict_rule = "canonical_revision_wins"\n'
    )
    host.profile(goal, "bm25")
    return host


CHECKOUT_DOCS = {
    "payment-timeouts.md": (
        "# Payment provider timeouts\n\nThe checkout service calls the payment provider with a timeout of 4 seconds\n"
        "and retries once after 200 ms when the provider answers with a 503 status.\n\n"
        "The retry budget is 10 percent of requests per minute; above it, retries stop.\n"
    ),
    "connection-pool.md": (
        "# Database connection pool\n\nEach checkout pod keeps a pool of 20 connections to the orders database;\n"
        "the database accepts at most 800 connections across all pods in the region.\n"
    ),
    "incident-2026-10.md": (
        "# Incident 2026-10: checkout latency\n\nCheckout p99 latency reached 2.4 seconds for 18 minutes when the\n"
        "payment provider slowed down and every pod retried at the same moment.\n"
    ),
}


def build_catalog(work: Path, home: Path, keyfile: Path) -> Path:
    origin = work / "catalog"
    a = init(origin, "catalog-cache-ttl", REPO / ".dcx-example" / "docs", home, keyfile)
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "catalog goal")

    # the second host: a clone, its private config handed over, the goal's key imported
    clone = work / "catalog-b"
    git(work, "clone", "-q", str(origin), str(clone))
    b = Host(clone, "agent-b", home)
    for private in ("profile.toml", "sources.toml"):
        shutil.copy2(origin / DC / private, clone / DC / private)
    b("2026-11-01T08:00:00Z", "key", "import", str(keyfile))
    git(origin, "switch", "-q", "-c", "agent-a")
    git(clone, "switch", "-q", "-c", "agent-b")

    # A1 ttl-keep: the runbook moves after indexing -> one recalled claim stale; verified, linked
    a("2026-11-02T09:00:00Z", "index")
    a.edit("runbook-ttl-rollback.md", "stays above 400 ms", "stays above 350 ms")
    a.prepare("2026-11-02T09:05:00Z", "ttl-keep", CATALOG_QUERY)
    a.propose("2026-11-02T10:00:00Z", "ttl-keep", "keep-90s-ttl", 0.8, "roll-back-900s")
    a.outcome("2026-11-02T11:00:00Z", "ttl-keep", "keep-90s-ttl", "pending")
    a.settle("2026-11-02T11:05:00Z", "ttl-keep")
    a.outcome("2026-11-05T10:00:00Z", "ttl-keep", "keep-90s-ttl", "verified", observed="verified")

    # A2 purge-retry: recommendation changes when new evidence arrives; refuted, one assumption invalidated
    a("2026-11-06T09:00:00Z", "index")
    a.edit("postmortem-stale-prices.md", "purge", "cache purge")
    a.prepare("2026-11-06T09:05:00Z", "purge-retry", PURGE_QUERY)
    a.propose("2026-11-06T10:00:00Z", "purge-retry", "retry-3x", 0.6, "retry-5x")
    a.edit("origin-rate-limits.md", "600 rps", "450 rps")
    # the ADR's context moves too: the claim recalled from it (accepted at 09:05) is stale at 12:00
    a.edit("adr-0007-catalog-cache-ttl.md", "with a 15 minute TTL", "with a fifteen minute TTL")
    a.prepare("2026-11-06T12:00:00Z", "purge-retry", PURGE_QUERY)
    a.propose("2026-11-06T13:00:00Z", "purge-retry", "retry-5x", 0.7, "retry-3x")
    a.outcome(
        "2026-11-08T13:00:00Z",
        "purge-retry",
        "retry-5x",
        "refuted",
        observed="refuted",
        assumption="purges-idempotent",
    )
    a.settle("2026-11-08T13:05:00Z", "purge-retry")

    a("2026-11-08T14:00:00Z", "index")  # the index catches up with the edits

    # A3 warmup: recall through OpenViking, whose binary is not installed -> unavailable, fail-open
    a.profile(
        "catalog-cache-ttl",
        "openviking",
        '\n[context_provider.config]\nbinary = "ov-not-installed"\n',
    )
    a.prepare("2026-11-09T09:00:00Z", "warmup", WARMUP_QUERY)
    a.propose("2026-11-09T10:00:00Z", "warmup", "warm-on-deploy", 0.4, "no-warmup")
    a.outcome("2026-11-09T11:00:00Z", "warmup", "warm-on-deploy", "pending")
    a.profile("catalog-cache-ttl", "bm25")

    # A4 edge-tiering: proposed, never accepted (no outcome)
    a.prepare("2026-11-10T09:00:00Z", "edge-tiering", CATALOG_QUERY)
    a.propose("2026-11-10T10:00:00Z", "edge-tiering", "two-tier", 0.55, "one-tier")

    # agent-b, on its own host and index: three decisions
    b("2026-11-03T09:00:00Z", "index")
    b.prepare("2026-11-03T09:05:00Z", "ttl-jitter", CATALOG_QUERY)
    b.propose("2026-11-03T10:00:00Z", "ttl-jitter", "add-jitter", 0.65, "no-jitter")
    b.outcome("2026-11-04T10:00:00Z", "ttl-jitter", "add-jitter", "verified", observed="verified")
    b.settle("2026-11-04T10:05:00Z", "ttl-jitter")
    b.prepare("2026-11-07T09:00:00Z", "stampede-lock", PURGE_QUERY)
    b.propose("2026-11-07T10:00:00Z", "stampede-lock", "request-coalescing", 0.2, "mutex")
    b.outcome(
        "2026-11-09T10:00:00Z", "stampede-lock", "request-coalescing", "refuted", observed="refuted"
    )
    b.prepare("2026-11-11T09:00:00Z", "purge-batching", PURGE_QUERY)
    b.propose("2026-11-11T10:00:00Z", "purge-batching", "batch-100", 0.9, "batch-10")
    b.outcome(
        "2026-11-12T10:00:00Z",
        "purge-batching",
        "batch-100",
        "inconclusive",
        observed="inconclusive",
    )

    # the two hosts' histories meet in git
    for host, name in ((origin, "agent-a"), (clone, "agent-b")):
        for scratch in ("proposal.json", "outcome.json"):
            (host / scratch).unlink(missing_ok=True)
        git(host, "add", DC)
        git(host, "commit", "-q", "-m", f"decisions of {name}")
    git(origin, "fetch", "-q", str(clone), "agent-b")
    git(origin, "merge", "-q", "--no-edit", "FETCH_HEAD")
    return origin


def build_checkout(work: Path, home: Path, keyfile: Path) -> Path:
    root = work / "checkout"
    a = init(root, "checkout-latency", CHECKOUT_DOCS, home, keyfile)
    manifest = work / "ext" / "fixture-recall" / "extension.toml"
    manifest.parent.mkdir(parents=True)
    shutil.copy2(REPO / "fixtures" / "extensions" / "good.py", manifest.parent / "good.py")
    manifest.write_text(
        'schema_version = "dcx_extension_manifest_v0"\nid = "fixture-recall"\nversion = "1.0.0"\n'
        'permissions = ["decision_context.read"]\n\n[runtime]\n'
        'protocol = "decision_context_advisory_provider_v0"\nentrypoint = "./good.py"\nargs = []\n'
        'doctor_args = ["--doctor"]\nrequired_permissions = ["decision_context.read"]\ntimeout_seconds = 10\n'
        'env = []\n\n[[implements]]\ncapability_id = "decision-context"\n'
        'protocol = "decision_context_advisory_provider_v0"\n'
    )
    a("2026-11-01T08:30:00Z", "ext", "install", str(manifest))
    extension = '\n[context_provider.config]\nextension_id = "fixture-recall"\n'

    # B1 retry-budget: the timeouts page moves after indexing -> stale claim; verified, linked
    a("2026-11-02T09:00:00Z", "index")
    a.edit("payment-timeouts.md", "timeout of 4 seconds", "timeout of 3 seconds")
    a.prepare("2026-11-02T09:05:00Z", "retry-budget", CHECKOUT_QUERY)
    a.propose("2026-11-02T10:00:00Z", "retry-budget", "cap-retries", 0.9, "no-cap")
    a.outcome(
        "2026-11-03T10:00:00Z", "retry-budget", "cap-retries", "verified", observed="verified"
    )
    a.settle("2026-11-03T10:05:00Z", "retry-budget")

    # B2..B4 through the extension provider: volume that never matches the authority
    a.profile("checkout-latency", "extension", extension)
    a.prepare("2026-11-04T09:00:00Z", "pool-size", POOL_QUERY)
    a.propose("2026-11-04T10:00:00Z", "pool-size", "pool-30", 0.3, "pool-20")
    a.outcome(
        "2026-11-06T10:00:00Z",
        "pool-size",
        "pool-30",
        "refuted",
        observed="refuted",
        assumption="db-has-headroom",
    )
    a.prepare("2026-11-07T09:00:00Z", "jitter-retries", CHECKOUT_QUERY)
    a.propose("2026-11-07T10:00:00Z", "jitter-retries", "full-jitter", 0.7, "fixed-backoff")
    a.outcome("2026-11-07T11:00:00Z", "jitter-retries", "full-jitter", "pending")
    a.prepare("2026-11-08T09:00:00Z", "provider-failover", CHECKOUT_QUERY)
    a.propose(
        "2026-11-08T10:00:00Z", "provider-failover", "second-provider", 0.5, "single-provider"
    )
    a.outcome(
        "2026-11-10T10:00:00Z",
        "provider-failover",
        "second-provider",
        "verified",
        observed="verified",
    )
    a.profile("checkout-latency", "bm25")

    # B5 pool-alerts: a preview only (no rebase, no proposal)
    a.prepare("2026-11-11T09:00:00Z", "pool-alerts", None, rebase=False)
    return root


def public_copy(root: Path, target: Path) -> None:
    dest = target / DC
    dest.mkdir(parents=True)
    for name in PUBLIC:
        source = root / DC / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns("*.lock", "*.tmp"))
        elif source.exists():
            shutil.copy2(source, dest / name)
    for path in dest.rglob("*"):
        if path.is_file():
            path.chmod(0o644)


def build(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="dcx-report-fixture-") as tmp:
        work = Path(tmp)
        home = work / "home"
        home.mkdir()
        keyfile = work / "goal.key"
        keyfile.write_text(KEY)
        catalog = build_catalog(work, home, keyfile)
        checkout = build_checkout(work, home, keyfile)
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        public_copy(catalog, out / "catalog")
        public_copy(checkout, out / "checkout")
        (out / "README.md").write_text(README)


README = """# fixtures/report

Two goals' public decision history, as a fresh clone holds it (no key, no
profile, no private state), made by `scripts/report_fixture.py` running dcx
with a fixed clock and key. Do not edit by hand: rerun the script.

- `catalog/`: goal `catalog-cache-ttl`, seven decisions by two agents on two
  hosts, merged with git (agent-a: ttl-keep, purge-retry, warmup,
  edge-tiering; agent-b: ttl-jitter, stampede-lock, purge-batching).
- `checkout/`: goal `checkout-latency`, five decisions (retry-budget,
  pool-size, jitter-retries, provider-failover, pool-alerts).

tests/cli/test_report.py tells each decision's story and the report
values it must give.
"""


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def main(argv: list[str]) -> int:
    if "--check" in argv:
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp) / "report")
            same = _tree(Path(tmp) / "report") == _tree(OUT)
        print(
            "fixtures/report is up to date" if same else "fixtures/report differs: rerun the script"
        )
        return 0 if same else 1
    build(OUT)
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
