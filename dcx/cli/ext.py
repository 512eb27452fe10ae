from __future__ import annotations

from dcx.cli._declare import Argument, Group, Option
from dcx.cli._globals import Globals
from dcx.cli._options import FORMAT, WAIT
from dcx.core.result import Result

group = Group(
    help=(
        "Install and manage advisory provider extensions (decision_context_advisory_provider_v0).\n\n"
        "Example: dcx ext install packages/dcx-obelisk/extension.toml"
    )
)

DRY_RUN = Option(
    "--dry-run",
    type=bool,
    help="Only read and report what would happen: creates no file, not even a lock.",
)
NO_DOCTOR = Option(
    "--no-doctor",
    type=bool,
    help="Do not run the doctor afterwards (the extension stays not ready).",
)
EXT_ID = Argument(metavar="ID", help="The extension id (see `dcx ext list`).")
PATH = Argument(metavar="PATH", help="An extension.toml, or the folder that holds it.")


def render(page, result: Result) -> None:
    data = result.data
    if "results" in data:
        for one in data["results"]:
            _render_one(page, one)
        return
    _render_one(page, data)


def _render_one(page, data: dict) -> None:
    ext_id = data["extension_id"]
    prefix = "would " if data["dry_run"] else ""
    if data["action"] == "none":
        page.line(f"{ext_id}: nothing to do")
    elif data["action"] == "doctor" and data["dry_run"]:
        page.line(f"{ext_id}: would run the doctor on revision {data['revision']}")
    elif data["action"] != "doctor":
        page.line(f"{ext_id}: {prefix}{data['action']} revision {data['revision']}")
    doctor = data["doctor"]
    if doctor is not None:
        verdict = "passed" if doctor["passed"] else f"failed ({doctor['reason_code']})"
        page.line(f"{ext_id}: doctor {verdict} on revision {doctor['revision']}")
    ext = data["extension"]
    if ext is not None:
        ready = ext["readiness"]
        line = f"{ext_id} {ext['version']}: {ready['status']}"
        if ready["next_action"]:
            line += f" (next: {ready['next_action']})"
        page.line(line)


@group.command(
    "install",
    render=render,
    path=PATH,
    disabled=Option("--disabled", type=bool, help="Install without enabling it."),
    no_doctor=NO_DOCTOR,
    dry_run=DRY_RUN,
    wait=WAIT,
    fmt=FORMAT,
)
def install(
    g: Globals, *, path: str, disabled: bool, no_doctor: bool, dry_run: bool, wait: float, fmt: str
) -> Result:
    """Validate a manifest, pin its entrypoint, store the revision, enable it and run its doctor.

    A good extension is ready afterwards. Installing the same revision again
    does nothing; a different revision of an installed id needs `upgrade`.
    A failed doctor leaves it installed but not ready and exits 1.

    Example: dcx ext install packages/dcx-obelisk/extension.toml
    """
    from dcx.ops.ext import install as op

    return op(
        clock=g.clock(),
        ws=g.ws(),
        path=path,
        enable=not disabled,
        doctor=not no_doctor,
        dry_run=dry_run,
        wait=wait,
    )


@group.command(
    "upgrade",
    render=render,
    path=PATH,
    no_doctor=NO_DOCTOR,
    dry_run=DRY_RUN,
    wait=WAIT,
    fmt=FORMAT,
)
def upgrade(
    g: Globals, *, path: str, no_doctor: bool, dry_run: bool, wait: float, fmt: str
) -> Result:
    """Install a new revision of an installed extension and run its doctor.

    The previous revision becomes the rollback target; at most 5 revisions are kept.

    Example: dcx ext upgrade packages/dcx-obelisk/extension.toml
    """
    from dcx.ops.ext import upgrade as op

    return op(
        clock=g.clock(), ws=g.ws(), path=path, doctor=not no_doctor, dry_run=dry_run, wait=wait
    )


@group.command("enable", render=render, ext_id=EXT_ID, dry_run=DRY_RUN, wait=WAIT, fmt=FORMAT)
def enable(g: Globals, *, ext_id: str, dry_run: bool, wait: float, fmt: str) -> Result:
    """Allow recall to use an installed extension (its doctor proof is kept).

    Example: dcx ext enable dcx-obelisk
    """
    from dcx.ops.ext import set_enabled

    return set_enabled(ws=g.ws(), ext_id=ext_id, enabled=True, dry_run=dry_run, wait=wait)


@group.command("disable", render=render, ext_id=EXT_ID, dry_run=DRY_RUN, wait=WAIT, fmt=FORMAT)
def disable(g: Globals, *, ext_id: str, dry_run: bool, wait: float, fmt: str) -> Result:
    """Stop recall from using an extension; recall reports extension_disabled.

    Example: dcx ext disable dcx-obelisk
    """
    from dcx.ops.ext import set_enabled

    return set_enabled(ws=g.ws(), ext_id=ext_id, enabled=False, dry_run=dry_run, wait=wait)


@group.command(
    "doctor",
    render=render,
    ext_id=Argument(metavar="[ID]", required=False, help="The extension id."),
    all_=Option("--all", type=bool, help="Doctor every installed extension."),
    dry_run=DRY_RUN,
    wait=WAIT,
    fmt=FORMAT,
)
def doctor(
    g: Globals, *, ext_id: str | None, all_: bool, dry_run: bool, wait: float, fmt: str
) -> Result:
    """Run an extension's doctor_args on its pinned revision and record the proof.

    The proof holds while the active revision and the entrypoint's bytes stay
    the same. A failed doctor clears it and exits 1.

    Example: dcx ext doctor dcx-obelisk
    """
    from dcx.ops.ext import doctor as op

    return op(ws=g.ws(), ext_id=ext_id, all_=all_, dry_run=dry_run, wait=wait)


@group.command(
    "rollback",
    render=render,
    ext_id=EXT_ID,
    no_doctor=NO_DOCTOR,
    dry_run=DRY_RUN,
    wait=WAIT,
    fmt=FORMAT,
)
def rollback(
    g: Globals, *, ext_id: str, no_doctor: bool, dry_run: bool, wait: float, fmt: str
) -> Result:
    """Make the rollback revision active again (the current one becomes the rollback target).

    Example: dcx ext rollback dcx-obelisk
    """
    from dcx.ops.ext import rollback as op

    return op(ws=g.ws(), ext_id=ext_id, doctor=not no_doctor, dry_run=dry_run, wait=wait)


def render_list(page, result: Result) -> None:

    rows = [
        [
            ext["extension_id"],
            ext["version"],
            "yes" if ext["enabled"] else "no",
            ext["active_revision"] + (" (manifest changed)" if ext["manifest_changed"] else ""),
            "verified" if ext["doctor_verified"] else "stale",
            ext["readiness"]["status"],
        ]
        for ext in result.data["extensions"]
    ]
    if rows:
        page.table(("extension", "version", "enabled", "revision", "doctor", "readiness"), rows)
    else:
        page.line("no extensions installed")
    resolution = result.data["resolution"]
    chosen = resolution["extension_id"] if resolution["status"] == "ready" else None
    line = f"recall without extension_id: {resolution['status']}"
    line += f" → {chosen}" if chosen else ""
    if resolution["next_action"]:
        line += f" (next: {resolution['next_action']})"
    page.line(line)


@group.command("list", render=render_list, dry_run=DRY_RUN, fmt=FORMAT)
def list_(g: Globals, *, dry_run: bool, fmt: str) -> Result:
    """List installed extensions, their revisions and readiness, and which one recall would use.

    Example: dcx ext list --format json
    """
    from dcx.ops.ext import list_ as op

    return op(ws=g.ws())
