"""A model-based test of the whole decision cycle (SPEC §5, §6.3, §8): hypothesis drives random steps.

The reference model below is written from SPEC, not from dcx's code: it never
imports ``dcx``. It keeps the goal's files, the registry it wrote, what the
bm25 index held when ``dcx index`` last ran, and what each decision's
``prepare`` saw, and from those it predicts what dcx must do. dcx is driven
only through its command line (in-process, ``tests.support.cli.invoker``; the console
script in a real process where a step must be killed) and read back through
the JSON it prints and the files SPEC names: ``private/cursors/<agent-id>.json`` and the
``private/trees/<hash>.json`` maps behind local-file cursors (§5.3).

Two agents share the goal's one host (SPEC §16): every cycle step acts as
``agent-a`` or ``agent-b``, each with its own committed cursors and its own
chain of a decision id both may prepare; the model keeps what each agent
committed and each agent's chain apart.

Named invariants, checked after every step (``docs/reliability.md``):

- ``no_internal_error``: no command exits 5; every refusal is exit 1-4 with a
  reason code in its JSON error;
- ``cursor_absorbed_only``: each agent's committed tree of each source is
  exactly what one of *that agent's* committed decisions' prepare saw of it
  (or nothing) — never content no committed decision of it read or absorbed,
  never another agent's commit;
- ``own_chain``: an agent's writeback names its own evidence, proposal and
  outcome, whatever the other agent prepared of the same decision id since;
- ``stale_recall_rejected``: a recalled claim whose authority text changed
  after indexing is never accepted; one that the current authority confirms is;
- ``verify_audit_clean``: ``dcx verify`` and ``dcx audit`` exit 0, and no
  public file holds a planted canary;
- ``coverage_partial_iff_p0_failed``: coverage is ``partial`` exactly when a
  p0 source failed or was not selected, or a baseline adopted a p0 source's
  changes without reading them;
- ``commit_all_or_nothing``: a commit advances every ready source or none; a
  re-run or a commit killed at a fault point and re-run ends with the same
  cursors, written once.

Knobs: ``DCX_HYPOTHESIS_PROFILE=deep`` (``make deep-test``) runs 20x the
examples; ``DCX_MODEL_EXAMPLES`` / ``DCX_MODEL_STEPS`` set them directly.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from blake3 import blake3
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.support import git as gitkit
from tests.support.cli import invoker
from tests.support.figures import record

REPO = Path(__file__).resolve().parents[2]
PROPOSAL = json.loads((REPO / "fixtures" / "cycle" / "proposal.json").read_text())
OUTCOME = json.loads((REPO / "fixtures" / "cycle" / "outcome.json").read_text())
DEEP = os.environ.get("DCX_HYPOTHESIS_PROFILE") == "deep"
EXAMPLES = int(os.environ.get("DCX_MODEL_EXAMPLES", 150 if DEEP else 6))
STEPS = int(os.environ.get("DCX_MODEL_STEPS", 40 if DEEP else 25))
MAX_READ = 3000  # [bounds] max_read_bytes: bigger files are `oversize` on exact read, not indexed
MAX_SCAN = 6000  # [bounds] max_scan_bytes: bigger files are skipped by the scan, unhashed
CANARIES = ("CNRYMODELBODY7f3a", "cnrymodelname2b9c", "CNRYMODELQUERY5d1e")
WORDS = (
    "catalog",
    "ttl",
    "origin",
    "latency",
    "purge",
    "queue",
    "rollback",
    "partner",
    "limit",
    "cache",
    "storefront",
    "drill",
    "backlog",
    "edge",
    "peak",
)
FAULT_STEPS = (
    "commit.before_cursor_write",
    "atomic_write.before_replace",
    "atomic_write.after_replace",
    "commit.after_cursor_write",
    "atomic_write.before_replace@2",
    "atomic_write.after_replace@2",
    "commit.after_receipt",
    "commit.after_index",
)

# the sources (SPEC §4): (id, priority, scan_mode, locator folder or file); AUTH is a git source (§15):
# a bare repository at ref `main`, committed to and force-pushed by steps
DOCS, NOTES, EXTRA, VANISH, AUTH = "docs", "notes", "extra", "vanish", "auth"
SOURCES = (DOCS, NOTES, EXTRA, VANISH, AUTH)
AGENTS = ("agent-a", "agent-b")
AGENT = st.sampled_from(AGENTS)
GLOBS = {  # docs' locator variants: (include, exclude) — the model matches them itself
    "plain": (None, None),
    "include": (["**/*.md"], None),
    "exclude": (None, ["drafts/**"]),
    "both": (["**/*.md"], ["drafts/**"]),
}


def revision(data: bytes) -> str:
    return blake3(data).hexdigest()


def blob_id(data: bytes) -> str:
    """git's object id of a blob (SPEC §15: a git source's revisions are blob ids)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def normalised(text: str) -> str:
    """SPEC §8.2's comparison: line endings and trailing spaces normalised."""
    return "\n".join(
        line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    )


class Model:
    """What SPEC says the goal holds: files, registry, committed trees, the index, decisions."""

    def __init__(self, globs: str) -> None:
        self.files: dict[str, bytes] = {}  # goal-root-relative path -> bytes
        self.globs = globs
        self.registry_version = 0
        self.committed: dict[str, dict[str, dict[str, str]]] = {
            a: {} for a in AGENTS
        }  # agent -> source -> tree
        self.indexed: dict[tuple[str, str], str] | None = (
            None  # (source, rel) -> text at `dcx index`
        )
        self.decisions: dict[
            tuple[str, str], dict[str, Any]
        ] = {}  # (agent, decision id) -> its chain
        self.dirs: set[str] = set()  # top-level folders that exist (a folder locator's root)
        self.serial = 0
        self.git: dict[str, bytes] = {}  # the files of the bare repository at `main`
        self.git_chain: list[str] = []  # main's commits, oldest first
        self.git_files: dict[str, dict[str, bytes]] = {}  # commit -> its files

    # -- sources ----------------------------------------------------------------------------------
    def members(self, sid: str) -> dict[str, bytes] | None:
        """The files a source covers now (rel -> bytes); None when its locator is missing."""
        if sid == NOTES:
            data = self.files.get("notes/log.md")
            return None if data is None else {"log.md": data}
        if sid == AUTH:
            return dict(self.git)
        if sid not in self.dirs:
            return None
        prefix = f"{sid}/"
        inside = {p[len(prefix) :]: b for p, b in self.files.items() if p.startswith(prefix)}
        if sid == DOCS:
            include, exclude = GLOBS[self.globs]
            inside = {
                p: b
                for p, b in inside.items()
                if (include is None or p.endswith(".md"))
                and not (exclude and p.startswith("drafts/"))
            }
        return inside

    def tree(self, sid: str) -> dict[str, str] | None:
        members = self.members(sid)
        if members is None:
            return None
        if sid == AUTH:  # every regular file, whatever its size: git has the ids already
            return {rel: blob_id(b) for rel, b in members.items()}
        return {rel: revision(b) for rel, b in members.items() if len(b) <= MAX_SCAN}

    def git_tree(self, commit: str) -> dict[str, str]:
        return {rel: blob_id(b) for rel, b in self.git_files[commit].items()}

    def selected(self, named: list[str] | None) -> list[str]:
        return named if named else [DOCS, NOTES, VANISH, AUTH]  # enabled, not on-demand

    def readable_text(self, sid: str, rel: str) -> str | None:
        """The current authority text of a file, as an exact read gets it (None: cannot confirm)."""
        members = self.members(sid) or {}
        data = members.get(rel)
        if data is None or len(data) > MAX_READ:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None


DECISIONS = st.sampled_from(["d0", "d1", "d2"])


class CycleMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="dcx-model-"))
        self.root = self.tmp / "goal"
        self.root.mkdir()
        self.bare = self.tmp / "authority.git"  # the git source's repository (outside the goal)
        self.work = self.tmp / "authority-work"  # where the steps commit, then push to it
        self.dcx = CLI
        self.model: Model | None = None
        self.last: list[tuple[str, int, str]] = []

    def teardown(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)

    # -- running dcx ------------------------------------------------------------------------------
    def run(
        self, *args: str, ok: tuple[int, ...] = (0,), label: str = "", agent: str = "agent-a"
    ) -> tuple[int, Any]:
        COUNTS["commands"] += 1
        COUNTS[f"cmd:{args[0]}"] += 1
        out = self.dcx("-C", str(self.root), *args, "--format", "json", env={"DCX_AGENT_ID": agent})
        return self._checked(args, out.exit_code, out.stdout, out.stderr, ok)

    def script(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        ok: tuple[int, ...] = (0,),
        agent: str = "agent-a",
    ) -> tuple[int, Any]:
        COUNTS["commands"] += 1
        COUNTS[f"killed:{args[0]}"] += 1
        exe = shutil.which("dcx", path=str(Path(sys.executable).parent)) or "dcx"
        proc = subprocess.run(
            [exe, "-C", str(self.root), *args, "--format", "json"],
            capture_output=True,
            text=True,
            env={**os.environ, "DCX_AGENT_ID": agent, **(env or {})},
            timeout=120,
        )
        return self._checked(args, proc.returncode, proc.stdout, proc.stderr, ok)

    def _checked(
        self, args: tuple[str, ...], code: int, stdout: str, stderr: str, ok: tuple[int, ...]
    ) -> tuple[int, Any]:
        # invariant no_internal_error
        assert code != 5, ("no_internal_error", args, stdout[-1500:], stderr[-1500:])
        if code == -9:  # killed by the fault hook: nothing printed
            return code, None
        doc = json.loads(stdout) if stdout.strip() else None
        if code != 0:
            assert code in (1, 2, 3, 4), ("no_internal_error", args, code, stderr[-800:])
            assert doc and doc["ok"] is False and doc["error"]["code"], (
                "no_internal_error: reason code",
                args,
                stdout,
            )
        assert code in ok, (args, code, stdout[-1500:], stderr[-800:])
        return code, doc

    # -- files on disk and in the model -------------------------------------------------------------
    def put(self, path: str, data: bytes) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self.model.files[path] = data
        self.model.dirs.add(path.split("/")[0])

    def drop(self, path: str) -> None:
        (self.root / path).unlink()
        del self.model.files[path]

    def text(self, tag: str, words: list[str]) -> bytes:
        self.model.serial += 1
        body = " ".join(words) or "catalog"
        return (
            f"# Note {tag}u{self.model.serial}\n\nThe {body} rule holds for storefront {tag} "
            f"at peak, {CANARIES[0]} recorded.\n"
        ).encode()

    def write_registry(self) -> None:
        include, exclude = GLOBS[self.model.globs]
        docs = (
            '"docs"'
            if include is None and exclude is None
            else (
                '{ path = "docs"'
                + (f", include = {json.dumps(include)}" if include else "")
                + (f", exclude = {json.dumps(exclude)}" if exclude else "")
                + " }"
            )
        )
        rows = [
            (DOCS, "p0", "incremental", docs),
            (NOTES, "p1", "incremental", '"notes/log.md"'),
            (EXTRA, "p2", "on_demand", '"extra"'),
            (VANISH, "p0", "incremental", '"vanish"'),
            (AUTH, "p1", "incremental", f'{{ repo = "{self.bare}", ref = "main" }}'),
        ]
        out = [
            'schema_version = "decision_source_registry_v0"',
            '[[bindings]]\nprovider_id = "files"\nadapter = "local-file"',
            '[[bindings]]\nprovider_id = "repo"\nadapter = "git"',
        ]
        for sid, priority, mode, locator in rows:
            provider = "repo" if sid == AUTH else "files"
            out.append(
                f'[[sources]]\nsource_id = "{sid}"\nprovider_id = "{provider}"\nsource_kind = "document"\n'
                f'priority = "{priority}"\nevidence_level = "s1"\nobjectives = ["latency"]\n'
                f'scan_mode = "{mode}"\nexact_read_policy = "always"\nfreshness_seconds = 86400\n'
                f"locator = {locator}"
            )
        (self.root / ".decision-context" / "sources.toml").write_text("\n".join(out) + "\n")
        self.model.registry_version += 1

    # -- the goal ---------------------------------------------------------------------------------
    @initialize(globs=st.sampled_from(sorted(GLOBS)), seed_files=st.integers(1, 3))
    def init_goal(self, globs: str, seed_files: int) -> None:
        self.model = Model(globs)
        self.run("init", "--goal-id", "goal-model", "--agent-id", "agent-a")
        (self.root / ".decision-context" / "profile.toml").write_text(
            'schema_version = "decision_context_profile_v0"\ngoal_id = "goal-model"\nenabled = true\n'
            'enabled_agents = ["agent-a", "agent-b"]\n[context_provider]\nprovider = "bm25"\nmax_results = 4\n'
            f"[bounds]\nmax_read_bytes = {MAX_READ}\nmax_scan_bytes = {MAX_SCAN}\n"
        )
        self.write_registry()
        for i in range(seed_files):
            self.put(f"docs/seed{i}.md", self.text(f"seed{i}", list(WORDS[i::3])))
        self.put("notes/log.md", self.text("log", ["partner", "limit"]))
        self.put("vanish/keep.md", self.text("vanish", ["drill", "backlog"]))
        self.put("extra/on-demand.md", self.text("extra", ["edge", "cache"]))
        gitkit.init(self.bare, bare=True)
        gitkit.init(self.work)
        gitkit.git(self.work, "remote", "add", "origin", str(self.bare))
        self._git_commit(
            {
                "runbook.md": self.text("git", ["rollback", "purge"]),
                "sub/limits.md": self.text("git-sub", ["limit", "queue"]),
            }
        )
        COUNTS["runs"] += 1
        self.index()  # a first index; later edits make it stale until the next `index` step

    # -- file steps -------------------------------------------------------------------------------
    def _docs_paths(self) -> list[str]:
        return sorted(p for p in self.model.files if p.startswith("docs/"))

    @rule(
        name=st.sampled_from(
            [
                "a.md",
                "sub/b.md",
                "sub/deep/c.md",
                "drafts/d.md",
                "e.txt",
                f"{CANARIES[1]}.md",
                "binary",
                "non_utf8",
                "empty",
                "oversize",
                "over_scan",
            ]
        ),
        words=st.lists(st.sampled_from(WORDS), max_size=4),
    )
    def add_file(self, name: str, words: list[str]) -> None:
        """Text files in nested folders, in and out of the globs; a binary, a non-UTF-8, an empty, oversize files."""
        odd = {
            "binary": b"\x00\x01\x02binary\x00" * 8,
            "non_utf8": b"caf\xe9 \xff\xfe latin-1 text\n",
            "empty": b"",
            "oversize": b"catalog ttl " * (MAX_READ // 12 + 10),
            "over_scan": b"origin latency " * (MAX_SCAN // 15 + 10),
        }
        if name in odd:
            self.put(f"docs/odd/{name}.md", odd[name])
        else:
            self.put(f"docs/{name}", self.text(name.replace("/", "-").replace(".", "-"), words))

    @precondition(lambda self: self._docs_paths())
    @rule(
        pick=st.integers(0, 99),
        mode=st.sampled_from(["replace", "append"]),
        words=st.lists(st.sampled_from(WORDS), max_size=3),
    )
    def edit_file(self, pick: int, mode: str, words: list[str]) -> None:
        paths = self._docs_paths()
        path = paths[pick % len(paths)]
        old = self.model.files[path]
        new = self.text("edit", words)
        self.put(path, old + b"\n" + new if mode == "append" and len(old) < MAX_READ // 2 else new)

    @precondition(lambda self: self._docs_paths())
    @rule(
        pick=st.integers(0, 99),
        to=st.sampled_from([None, "moved.md", "sub/moved.md", "moved.txt", "drafts/moved.md"]),
    )
    def delete_or_rename_file(self, pick: int, to: str | None) -> None:
        """Deletions, and renames — some out of (and later back into) the include or exclude glob."""
        paths = self._docs_paths()
        path = paths[pick % len(paths)]
        if to is None:
            self.drop(path)
            return
        target = f"docs/{to}"
        if target == path or target in self.model.files:
            return
        data = self.model.files[path]
        self.drop(path)
        self.put(target, data)

    @rule()
    def vanish_or_restore(self) -> None:
        """The p0 source `vanish` loses its folder (or gets it back)."""
        if (self.root / "vanish").exists():
            shutil.rmtree(self.root / "vanish")
            self.model.files = {
                p: b for p, b in self.model.files.items() if not p.startswith("vanish/")
            }
            self.model.dirs.discard("vanish")
        else:
            self.put("vanish/keep.md", self.text("vanish", ["drill"]))

    @rule(globs=st.sampled_from(sorted(GLOBS)))
    def reconfigure_docs(self, globs: str) -> None:
        """A semantic registry edit: every prepared, uncommitted decision must be refused `profile_changed`."""
        if globs == self.model.globs:
            return
        self.model.globs = globs
        self.write_registry()

    # -- git source steps ------------------------------------------------------------------------
    def _git_commit(self, files: dict[str, bytes | None], *, force: bool = False) -> None:
        self.model.serial += 1
        commit = gitkit.commit(self.work, files, f"change {self.model.serial}")
        gitkit.git(self.work, "push", "-q", *(["--force"] if force else []), "origin", "main")
        state = {rel: data for rel, data in self.model.git.items() if rel not in files}
        state.update({rel: data for rel, data in files.items() if data is not None})
        self.model.git = state
        self.model.git_chain.append(commit)
        self.model.git_files[commit] = dict(state)

    @rule(
        changes=st.lists(
            st.tuples(
                st.sampled_from(
                    [
                        "runbook.md",
                        "sub/limits.md",
                        "new.md",
                        "deep/x/y.md",
                        "notes.txt",
                        "blob.bin",
                        "big.md",
                    ]
                ),
                st.sampled_from(["write", "write", "delete"]),
            ),
            min_size=1,
            max_size=3,
        ),
        words=st.lists(st.sampled_from(WORDS), max_size=3),
    )
    def git_commit(self, changes: list[tuple[str, str]], words: list[str]) -> None:
        """A commit pushed to the git source's ref: edits, additions, deletions, a binary and an oversize blob."""
        files: dict[str, bytes | None] = {}
        for name, op in changes:
            if op == "delete":
                if name in self.model.git:
                    files[name] = None
            elif name == "blob.bin":
                files[name] = b"\x00\x01git binary\x00" * 4
            elif name == "big.md":
                files[name] = b"rollback purge " * (MAX_READ // 15 + 10)  # exact read: oversize
            else:
                files[name] = self.text(f"git-{name.replace('/', '-')}", words)
        self._git_commit(files)

    @precondition(lambda self: self.model is not None and len(self.model.git_chain) > 1)
    @rule(words=st.lists(st.sampled_from(WORDS), max_size=2))
    def git_force_push(self, words: list[str]) -> None:
        """The ref is rewound (reset to the commit before) and a rewritten commit force-pushed: cursor_rewound."""
        self.model.git_chain.pop()
        gitkit.git(self.work, "reset", "-q", "--hard", self.model.git_chain[-1])
        self.model.git = dict(self.model.git_files[self.model.git_chain[-1]])
        self._git_commit({"runbook.md": self.text("git-rewritten", words)}, force=True)
        COUNTS["git_force_push"] += 1

    # -- recall -----------------------------------------------------------------------------------
    @rule()
    def index(self) -> None:
        self.run("index")
        # a source whose locator is missing fails open: what the index held of it may stay
        indexed = {
            k: v for k, v in (self.model.indexed or {}).items() if self.model.members(k[0]) is None
        }
        for sid in SOURCES:
            for rel in self.model.members(sid) or {}:
                text = self.model.readable_text(sid, rel)
                if text is not None:
                    indexed[(sid, rel)] = text
        self.model.indexed = indexed

    # -- the cycle --------------------------------------------------------------------------------
    def _expect_prepare(
        self,
        decision: str,
        mode: str,
        named: list[str] | None,
        cites: set[tuple[str, str]] | None = None,
        agent: str = "agent-a",
    ) -> dict[str, Any]:
        """The checkpoint SPEC §8.2 predicts: per selected source, ready (expected, proposed) or preserve."""
        ready, preserve, unread = {}, set(), set()
        for sid in self.model.selected(named):
            now = self.model.tree(sid)
            before = self.model.committed[agent].get(
                sid, {}
            )  # this agent's cursors only (SPEC §16)
            if now is None:
                preserve.add(sid)
                continue
            changed = {rel for rel in set(now) | set(before) if now.get(rel) != before.get(rel)}
            if changed and mode == "baseline":
                unread.add(sid)  # a baseline adopts its changes without reading them (SPEC §5.5)
            if changed and (
                mode == "none" or (mode == "agent" and not {(sid, r) for r in changed} <= cites)
            ):
                preserve.add(sid)
            else:
                ready[sid] = (before, now)
        selected = self.model.selected(named)
        partial = any(
            s not in selected or self.model.tree(s) is None or s in unread for s in (DOCS, VANISH)
        )  # the p0 sources
        return {
            "ready": ready,
            "preserve": preserve,
            "partial": partial,
            "registry": self.model.registry_version,
        }

    def _check_prepare(
        self, decision: str, doc: Any, expect: dict[str, Any], agent: str = "agent-a"
    ) -> None:
        assembly = doc["data"]["assembly"]
        rows = {r["source_id"]: r for r in assembly["checkpoint"]["rows"]}
        ready = {s for s, r in rows.items() if r["disposition"] == "ready_after_writeback"}
        assert ready == set(expect["ready"]), ("checkpoint", rows, expect)
        # invariant coverage_partial_iff_p0_failed
        assert (assembly["coverage"]["status"] == "partial") == expect["partial"], (
            "coverage_partial_iff_p0_failed",
            assembly["coverage"],
            expect,
        )
        assert assembly["agent_id"] == agent and assembly["evidence"]["agent_id"] == agent, (
            "agent_id",
            agent,
        )
        state = self.model.decisions.setdefault((agent, decision), {})
        state.update(phase="prepared", evidence=assembly["evidence"]["packet_ref"], **expect)

    @rule(
        decision=DECISIONS,
        mode=st.sampled_from(["none", "auto", "baseline"]),
        named=st.sampled_from([None, [EXTRA], [DOCS, EXTRA], [NOTES]]),
        agent=AGENT,
    )
    def prepare(
        self, decision: str, mode: str, named: list[str] | None, agent: str = "agent-a"
    ) -> None:
        flags = {"none": [], "auto": ["--auto-rebase"], "baseline": ["--baseline"]}[mode]
        sources = [a for sid in (named or []) for a in ("--source", sid)]
        expect = self._expect_prepare(decision, mode, named, agent=agent)
        _, doc = self.run("prepare", "--decision-id", decision, *flags, *sources, agent=agent)
        self._check_prepare(decision, doc, expect, agent)

    @rule(
        decision=DECISIONS,
        share=st.floats(0, 1),
        scope=st.sampled_from(["", "source:docs", "source:notes"]),
        agent=AGENT,
    )
    def prepare_agent_rebase(
        self, decision: str, share: float, scope: str, agent: str = "agent-a"
    ) -> None:
        """--rebase with agent input citing {source_id, path}: ready only where every change is cited."""
        query = (
            "--query",
            f"catalog ttl rollback {CANARIES[2]}",
            "--query-summary",
            "TTL rollback rule",
            "--scope",
            scope,
        )
        _, shown = self.run(
            "prepare", "--decision-id", decision, "--show-content", *query, agent=agent
        )
        items = shown["data"]["content"]["exact_reads"]
        cited = sorted({(i["source_id"], i["path"]) for i in items})
        cited = cited[: round(len(cited) * share)]
        rebase = {
            "changed_facts": [
                {
                    "fact_id": f"fact-{n}",
                    "summary": f"Authority document {n} changed",
                    "change_ref": {"source_id": sid, "path": rel},
                }
                for n, (sid, rel) in enumerate(cited)
            ]
        }
        if not cited:
            rebase = {"semantic_no_change": False}
        path = self.tmp / "rebase.json"
        path.write_text(json.dumps(rebase))
        expect = self._expect_prepare(decision, "agent", None, set(cited), agent=agent)
        _, doc = self.run(
            "prepare", "--decision-id", decision, "--rebase", str(path), *query, agent=agent
        )
        self._check_prepare(decision, doc, expect, agent)

    @precondition(lambda self: self.model.indexed is not None)
    @rule(
        decision=DECISIONS,
        words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        scope=st.sampled_from(["", "source:docs", "source:notes"]),
        agent=AGENT,
    )
    def prepare_auto_with_recall(
        self, decision: str, words: list[str], scope: str, agent: str = "agent-a"
    ) -> None:
        """invariant stale_recall_rejected: accepted exactly when the current authority confirms the chunk."""
        query = ("--query", " ".join(words), "--query-summary", "Recall check", "--scope", scope)
        _, shown = self.run(
            "prepare", "--decision-id", decision, "--show-content", *query, agent=agent
        )
        results = shown["data"]["content"]["recall_results"]
        expect = self._expect_prepare(decision, "auto", None, agent=agent)
        _, doc = self.run(
            "prepare", "--decision-id", decision, "--auto-rebase", *query, agent=agent
        )
        self._check_prepare(decision, doc, expect, agent)
        evidence = doc["data"]["assembly"]["evidence"]
        accepted = {c["provider_ref"] for c in evidence["recalled_claims"]}
        for result in results:
            sid, rel = self._indexed_file(result["content"])
            assert not scope or scope == f"source:{sid}", ("recall outside its scope", scope, sid)
            text = self.model.readable_text(sid, rel)
            chunk = normalised(result["content"])
            confirms = (
                text is not None
                and chunk in normalised(text)
                and sum(not c.isspace() for c in result["content"]) >= 40
            )
            COUNTS["recall_checked"] += 1
            COUNTS["recall_accepted" if confirms else "recall_stale_or_rejected"] += 1
            assert (result["provider_ref"] in accepted) == confirms, (
                "stale_recall_rejected",
                sid,
                rel,
                confirms,
                evidence["stale_or_rejected_claims"],
            )

    def _indexed_file(self, content: str) -> tuple[str, str]:
        hits = [
            key
            for key, text in self.model.indexed.items()
            if normalised(content) in normalised(text)
        ]
        assert hits, ("recall returned text the index never held", content[:200])
        return hits[0]

    @precondition(
        lambda self: any(d.get("phase") == "prepared" for d in self.model.decisions.values())
    )
    @rule(decision=DECISIONS, agent=AGENT)
    def decide(self, decision: str, agent: str = "agent-a") -> None:
        """propose, outcome (pending), writeback: the chain a commit reads from its event."""
        state = self.model.decisions.get((agent, decision), {})
        if state.get("phase") != "prepared":
            return
        (self.tmp / "proposal.json").write_text(json.dumps(PROPOSAL))
        (self.tmp / "outcome.json").write_text(json.dumps(OUTCOME))
        _, prop = self.run(
            "propose",
            "--decision-id",
            decision,
            "--from",
            str(self.tmp / "proposal.json"),
            agent=agent,
        )
        _, out = self.run(
            "outcome",
            "--decision-id",
            decision,
            "--from",
            str(self.tmp / "outcome.json"),
            agent=agent,
        )
        _, doc = self.run(
            "writeback",
            "--decision-id",
            decision,
            "--kind",
            "validation",
            "--summary",
            f"Decision {decision} recorded",
            agent=agent,
        )
        # invariant own_chain: bound to this agent's own evidence, whatever the other agent prepared since
        prop, out = prop["data"]["proposal"], out["data"]["outcome"]
        assert prop["evidence_packet_ref"] == state["evidence"] and prop["agent_id"] == agent, (
            "own_chain",
            prop,
        )
        assert out["proposal_packet_ref"] == prop["packet_ref"], ("own_chain", out)
        event = doc["data"]["event"]
        assert set(event["artifact_refs"]) == {
            state["evidence"],
            prop["packet_ref"],
            out["packet_ref"],
        }, ("own_chain", event["artifact_refs"])
        COUNTS["own_chain_checked"] += 1
        if any(
            a != agent and d.get("phase")
            for (a, dd), d in self.model.decisions.items()
            if dd == decision
        ):
            COUNTS["own_chain_with_other_agent"] += 1
        state.update(phase="written", event=event["event_id"])

    def _expect_commit(self, state: dict[str, Any], agent: str = "agent-a") -> str | None:
        """None if the commit must succeed, else the refusal SPEC §8.6 gives first."""
        if state.get("committed_event") == state["event"]:
            return None  # a re-run: replayed
        if not state["ready"]:
            return "nothing_to_commit"
        if state["registry"] != self.model.registry_version:
            return "profile_changed"
        for sid, (before, after) in state["ready"].items():
            if self.model.committed[agent].get(sid, {}) not in (before, after):
                return "cursor_moved"
        return None

    def _commit(self, decision: str, fault: str | None = None, agent: str = "agent-a") -> None:
        state = self.model.decisions[(agent, decision)]
        refusal = self._expect_commit(state, agent)
        args = ("commit", "--decision-id", decision, "--event-id", state["event"])
        if fault is not None:
            code, _ = self.script(*args, env={"DCX_FAULT_POINT": fault}, ok=(-9, 0, 1), agent=agent)
            if refusal is not None:
                assert code == 1
        code, doc = self.run(*args, ok=(0,) if refusal is None else (1,), agent=agent)
        if refusal is not None:
            COUNTS["commit_refused"] += 1
            COUNTS[f"refused:{refusal}"] += 1
            assert doc["error"]["code"] == refusal, ("commit refusal", refusal, doc["error"])
            return
        COUNTS[
            "commit_advanced"
            if any(b != a for b, a in state["ready"].values())
            else "commit_no_advance"
        ] += 1
        receipt = doc["data"]["receipt"]
        if state.get("committed_event") == state["event"] or fault is not None:
            assert receipt["status"] in ("committed", "replayed")
        assert receipt["agent_id"] == agent, ("agent_id", receipt)
        for sid, (_, after) in state["ready"].items():
            self.model.committed[agent][sid] = after
        state.update(committed_event=state["event"])

    @precondition(
        lambda self: any(d.get("phase") == "written" for d in self.model.decisions.values())
    )
    @rule(decision=DECISIONS, agent=AGENT)
    def commit(self, decision: str, agent: str = "agent-a") -> None:
        if self.model.decisions.get((agent, decision), {}).get("phase") == "written":
            self._commit(decision, agent=agent)

    @precondition(
        lambda self: any(d.get("phase") == "written" for d in self.model.decisions.values())
    )
    @rule(decision=DECISIONS, fault=st.sampled_from(FAULT_STEPS), agent=AGENT)
    def commit_killed_then_rerun(self, decision: str, fault: str, agent: str = "agent-a") -> None:
        if self.model.decisions.get((agent, decision), {}).get("phase") == "written":
            self._commit(decision, fault, agent=agent)

    @rule(
        decision=DECISIONS,
        mode=st.sampled_from(["auto", "baseline", "none"]),
        fault=st.one_of(st.none(), st.sampled_from(FAULT_STEPS)),
        agent=AGENT,
    )
    def full_cycle(
        self, decision: str, mode: str, fault: str | None, agent: str = "agent-a"
    ) -> None:
        """prepare, decide and commit (maybe killed, then re-run) in one step, so short runs reach commits."""
        self.prepare(decision=decision, mode=mode, named=None, agent=agent)
        self.decide(decision=decision, agent=agent)
        self._commit(decision, fault, agent=agent)

    @rule(agent=AGENT)
    def scan(self, agent: str = "agent-a") -> None:
        """`dcx scan` writes receipts and never moves a cursor (checked by cursor_absorbed_only)."""
        self.run("scan", agent=agent)

    # -- invariants -------------------------------------------------------------------------------
    @invariant()
    def cursor_absorbed_only(self) -> None:
        if self.model is None:
            return
        COUNTS["checked_states"] += 1
        assert not (
            self.root / ".decision-context" / "private" / "cursors.json"
        ).exists()  # never the shared file
        for agent in AGENTS:  # each agent's cursors: its own commits only (SPEC §16)
            cursors_file = self.root / ".decision-context" / "private" / "cursors" / f"{agent}.json"
            cursors = json.loads(cursors_file.read_text()) if cursors_file.exists() else {}
            cursors = cursors.get("cursors", cursors)
            for sid in SOURCES:
                want = self.model.committed[agent].get(sid)
                value = cursors.get(sid)
                if value is None:
                    assert not want, (
                        "cursor_absorbed_only",
                        agent,
                        sid,
                        "no cursor, model has",
                        want,
                    )
                    continue
                if sid == AUTH:  # git:<commit>:<filter> — the files of that commit (SPEC §15)
                    commit = value.split(":")[1]
                    assert self.model.git_tree(commit) == (want or {}), (
                        "cursor_absorbed_only",
                        agent,
                        sid,
                        commit,
                        want,
                    )
                    COUNTS["git_cursor_checked"] += 1
                    continue
                digest = value.split(":", 1)[1]
                tree = json.loads(
                    (
                        self.root / ".decision-context" / "private" / "trees" / f"{digest}.json"
                    ).read_text()
                )
                assert dict(tree["entries"]) == (want or {}), (
                    "cursor_absorbed_only",
                    agent,
                    sid,
                    tree["entries"],
                    want,
                )

    @invariant()
    def verify_audit_clean(self) -> None:
        if self.model is None:
            return
        self.run("verify")
        self.run("audit")
        dc = self.root / ".decision-context"
        for path in dc.rglob("*"):
            if (
                path.is_file()
                and "private" not in path.relative_to(dc).parts
                and path.suffix in (".json", ".jsonl")
            ):
                data = path.read_bytes()
                for canary in CANARIES:
                    assert canary.encode().lower() not in data.lower(), (
                        "canary in public file",
                        canary,
                        path.name,
                    )


CLI = None
COUNTS: Counter[str] = Counter()


def test_decision_cycle_model() -> None:
    global CLI
    CLI = invoker()
    COUNTS.clear()
    CycleMachine.TestCase.settings = settings(
        max_examples=EXAMPLES,
        stateful_step_count=STEPS,
        deadline=None,
        database=None,
        derandomize=not DEEP,
        phases=[p for p in Phase if p != Phase.shrink or not os.environ.get("DCX_MODEL_NOSHRINK")],
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.filter_too_much,
            HealthCheck.data_too_large,
        ],
    )
    try:
        CycleMachine.TestCase().runTest()
    finally:
        record("model", "cycle", {"examples": EXAMPLES, "max_steps": STEPS, **dict(COUNTS)})
    # the run reached every part of the cycle (a model that never commits proves little); CI runs
    # are derandomized, so this holds or fails the same way on every machine
    for seen in ("cmd:commit", "commit_advanced"):
        assert COUNTS[seen] > 0, dict(COUNTS)
    # killed commits, recall checks and refusals are counted in .reliability/model.json
