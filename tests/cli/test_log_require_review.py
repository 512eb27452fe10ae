"""`dcx log` reads ``[commit] require_review`` once a decision's next step depends on it (SPEC §10).

The oracle is the cycle written out by hand: before a proposal the next step is
``propose`` whatever the profile says; after one it is ``gate`` when the profile
requires review and ``outcome`` when it does not. An unusable profile makes
``log`` fall back to "no review required" and still list the decisions.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.cycle import D


def _next(dcx, root: Path) -> str:
    result = dcx("-C", str(root), "log", "--format", "json")
    assert result.exit_code == 0, result.stderr
    (row,) = result.json()["data"]["decisions"]
    return row["next_step"]


def _require_review(root: Path, value: bool) -> None:
    profile = root / ".decision-context" / "profile.toml"
    text = profile.read_text()
    if "[commit]" in text:
        text = text.replace("[commit]", f"[commit]\nrequire_review = {str(value).lower()}", 1)
    else:
        text += f"\n[commit]\nrequire_review = {str(value).lower()}\n"
    profile.write_text(text)


def test_the_next_step_follows_require_review_after_a_proposal(dcx, example: Path) -> None:
    _require_review(example, True)
    assert dcx("-C", str(example), "prepare", "--decision-id", D, "--auto-rebase").exit_code == 0
    assert _next(dcx, example) == "propose"
    proposal = example / "proposal.json"
    assert (
        dcx("-C", str(example), "propose", "--decision-id", D, "--from", str(proposal)).exit_code
        == 0
    )
    assert _next(dcx, example) == "gate"
    profile = example / ".decision-context" / "profile.toml"
    profile.write_text(
        profile.read_text().replace("require_review = true", "require_review = false")
    )
    assert _next(dcx, example) == "outcome"
    profile.write_text(profile.read_text() + "\nnot toml at all [\n")
    assert _next(dcx, example) == "outcome"
