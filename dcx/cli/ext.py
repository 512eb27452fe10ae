from __future__ import annotations

from typing import Annotated

import typer

from dcx.cli._boundary import run
from dcx.cli._options import FormatOpt, OutputFormat, WaitOpt
from dcx.core.result import Result

app = typer.Typer(
    help=(
        "Install and manage advisory provider extensions (decision_context_advisory_provider_v0).\n\n"
        "Example: dcx ext install packages/dcx-obelisk/extension.toml"
    ),
    no_args_is_help=True,
)

DryRunOpt = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Only read and report what would happen: creates no file, not even a lock.",
    ),
]
NoDoctorOpt = Annotated[
    bool,
    typer.Option(
        "--no-doctor", help="Do not run the doctor afterwards (the extension stays not ready)."
    ),
]
IdArg = Annotated[str, typer.Argument(metavar="ID", help="The extension id (see `dcx ext list`).")]
PathArg = Annotated[
    str, typer.Argument(metavar="PATH", help="An extension.toml, or the folder that holds it.")
]


def render(console, result: Result) -> None:
    data = result.data
    if "results" in data:
        for one in data["results"]:
            _render_one(console, one)
        return
    _render_one(console, data)


def _render_one(console, data: dict) -> None:
    ext_id = data["extension_id"]
    prefix = "would " if data["dry_run"] else ""
    if data["action"] == "none":
        console.print(f"{ext_id}: nothing to do", markup=False)
    elif data["action"] == "doctor" and data["dry_run"]:
        console.print(
            f"{ext_id}: would run the doctor on revision {data['revision']}", markup=False
        )
    elif data["action"] != "doctor":
        console.print(
            f"{ext_id}: {prefix}{data['action']} revision {data['revision']}", markup=False
        )
    doctor = data["doctor"]
    if doctor is not None:
        verdict = "passed" if doctor["passed"] else f"failed ({doctor['reason_code']})"
        console.print(f"{ext_id}: doctor {verdict} on revision {doctor['revision']}", markup=False)
    ext = data["extension"]
    if ext is not None:
        ready = ext["readiness"]
        line = f"{ext_id} {ext['version']}: {ready['status']}"
        if ready["next_action"]:
            line += f" (next: {ready['next_action']})"
        console.print(line, markup=False)


@app.command("install")
def install(
    ctx: typer.Context,
    path: PathArg,
    disabled: Annotated[
        bool, typer.Option("--disabled", help="Install without enabling it.")
    ] = False,
    no_doctor: NoDoctorOpt = False,
    dry_run: DryRunOpt = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Validate a manifest, pin its entrypoint, store the revision, enable it and run its doctor.

    A good extension is ready afterwards. Installing the same revision again
    does nothing; a different revision of an installed id needs `upgrade`.
    A failed doctor leaves it installed but not ready and exits 1.

    Example: dcx ext install packages/dcx-obelisk/extension.toml
    """

    def call(g) -> Result:
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

    run(ctx, fmt, call, render)


@app.command("upgrade")
def upgrade(
    ctx: typer.Context,
    path: PathArg,
    no_doctor: NoDoctorOpt = False,
    dry_run: DryRunOpt = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Install a new revision of an installed extension and run its doctor.

    The previous revision becomes the rollback target; at most 5 revisions are kept.

    Example: dcx ext upgrade packages/dcx-obelisk/extension.toml
    """

    def call(g) -> Result:
        from dcx.ops.ext import upgrade as op

        return op(
            clock=g.clock(), ws=g.ws(), path=path, doctor=not no_doctor, dry_run=dry_run, wait=wait
        )

    run(ctx, fmt, call, render)


@app.command("enable")
def enable(
    ctx: typer.Context,
    ext_id: IdArg,
    dry_run: DryRunOpt = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Allow recall to use an installed extension (its doctor proof is kept).

    Example: dcx ext enable dcx-obelisk
    """

    def call(g) -> Result:
        from dcx.ops.ext import set_enabled

        return set_enabled(ws=g.ws(), ext_id=ext_id, enabled=True, dry_run=dry_run, wait=wait)

    run(ctx, fmt, call, render)


@app.command("disable")
def disable(
    ctx: typer.Context,
    ext_id: IdArg,
    dry_run: DryRunOpt = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Stop recall from using an extension; recall reports extension_disabled.

    Example: dcx ext disable dcx-obelisk
    """

    def call(g) -> Result:
        from dcx.ops.ext import set_enabled

        return set_enabled(ws=g.ws(), ext_id=ext_id, enabled=False, dry_run=dry_run, wait=wait)

    run(ctx, fmt, call, render)


@app.command("doctor")
def doctor(
    ctx: typer.Context,
    ext_id: Annotated[str | None, typer.Argument(metavar="[ID]", help="The extension id.")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Doctor every installed extension.")] = False,
    dry_run: DryRunOpt = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Run an extension's doctor_args on its pinned revision and record the proof.

    The proof holds while the active revision and the entrypoint's bytes stay
    the same. A failed doctor clears it and exits 1.

    Example: dcx ext doctor dcx-obelisk
    """

    def call(g) -> Result:
        from dcx.ops.ext import doctor as op

        return op(ws=g.ws(), ext_id=ext_id, all_=all_, dry_run=dry_run, wait=wait)

    run(ctx, fmt, call, render)


@app.command("rollback")
def rollback(
    ctx: typer.Context,
    ext_id: IdArg,
    no_doctor: NoDoctorOpt = False,
    dry_run: DryRunOpt = False,
    wait: WaitOpt = 5.0,
    fmt: FormatOpt = OutputFormat.text,
) -> None:
    """Make the rollback revision active again (the current one becomes the rollback target).

    Example: dcx ext rollback dcx-obelisk
    """

    def call(g) -> Result:
        from dcx.ops.ext import rollback as op

        return op(ws=g.ws(), ext_id=ext_id, doctor=not no_doctor, dry_run=dry_run, wait=wait)

    run(ctx, fmt, call, render)


@app.command("list")
def list_(
    ctx: typer.Context, dry_run: DryRunOpt = False, fmt: FormatOpt = OutputFormat.text
) -> None:
    """List installed extensions, their revisions and readiness, and which one recall would use.

    Example: dcx ext list --format json
    """

    def call(g) -> Result:
        from dcx.ops.ext import list_ as op

        return op(ws=g.ws())

    run(ctx, fmt, call, render_list)


def render_list(console, result: Result) -> None:
    from dcx.cli.views.common import grid

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
        grid(console, ("extension", "version", "enabled", "revision", "doctor", "readiness"), rows)
    else:
        console.print("no extensions installed", markup=False)
    resolution = result.data["resolution"]
    chosen = resolution["extension_id"] if resolution["status"] == "ready" else None
    line = f"recall without extension_id: {resolution['status']}"
    line += f" → {chosen}" if chosen else ""
    if resolution["next_action"]:
        line += f" (next: {resolution['next_action']})"
    console.print(line, markup=False)
