"""Helpers shared by dcx's tests, imported as ``from tests.support.<module> import ...``.

Fixtures live in ``tests/conftest.py``; everything here is plain functions and constants.

- ``workspace``: the fixed test environment (REPO, EXAMPLE, FIXED_NOW, FIXED_KEY), building and
  copying goal folders, and snapshots of a tree (bytes, listings, cursors, stored packets).
- ``cli``: running dcx: the console script in a subprocess (``run_dcx``), the typer app in-process
  (``Runner``, and ``invoker`` built once for the tests that run thousands of commands).
- ``cycle``: the example's decision stories (prepare, propose, outcome, writeback, commit, feedback;
  the gated review story) and the proposal, outcome and evidence inputs they use.
- ``sources``: profiles and source registries of the source plane; the example source plugin.
- ``git``: real git repositories made with the git CLI.
- ``links``: goal repositories that commit symbolic links, cloned with real git; snapshots of a tree
  taken without following links (the attack tests of SPEC §3.5).
- ``recall``: enabled recall workspaces, retrieval requests and scripted providers.
- ``extensions``: extension folders built from ``fixtures/extensions/`` executables.
- ``compare``: a tiny comparison plan whose metrics can be computed by hand.
- ``mcp``: the real ``dcx mcp`` server driven by the MCP SDK's stdio client.
- ``mcp_server``: a small real MCP server (the SDK's) whose resources are files in a folder, with
  pagination, versions and failure modes; ``mcpsource`` registers it as an ``mcp`` source and
  holds the SPEC's model of such a source (URI → blake3 of the bytes).
- ``workbench``: a real ``dcx workbench`` process on 127.0.0.1 and a small HTTP client.
- ``pty``: reading everything a process writes to a real pseudo-terminal.
- ``fuzz``: hypothesis strategies (arbitrary JSON, mutations of a valid document).
- ``reliability``: the reliability tests' cycle template, subprocess runners and canary checks;
  ``forkrun`` is the warm fork server it starts (run as a script, not imported).
- ``hosts``: several hosts of one goal: a bare origin and clones in a temp dir, real git and the
  ``dcx`` console script with a fixed clock and agent per host (SPEC §16).
- ``signing``: SPEC §18 computed with rfc8785, cryptography and blake3 themselves (the oracle of
  the signature tests), and an attacker's tools: statements and signer files signed with any seed.
- ``figures``: figures the reliability and fuzz tests measured, for ``bench/reliability.py``.
"""
