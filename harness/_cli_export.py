"""``harness export``: show, check and write a sweep's tuned values as the library defaults."""

from __future__ import annotations

from pathlib import Path

import click

from ._errors import HarnessError
from ._export_formats import FORMATS, render_options
from .export import ExportRefused, plan_export, write_export


@click.command("export")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--trial", type=int, default=None, help="Export this trial instead of the best one.")
@click.option("--write", is_flag=True, help="Replace the defaults file (atomically).")
@click.option("--force", is_flag=True, help="Write even when the tuned values score worse.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Print the tuned options for an upstream library instead of the diff.",
)
@click.option(
    "--defaults",
    "defaults_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The defaults file to compare with and write (default: loopguard/defaults.json).",
)
def export_command(
    run_dir: Path,
    trial: int | None,
    write: bool,
    force: bool,
    fmt: str | None,
    defaults_path: Path | None,
) -> None:
    """Show the change RUN_DIR's tuned values make to the defaults, and write it with --write.

    The tuned configuration is compared with the current defaults on the
    sweep's test split; a configuration that scores worse is refused unless
    --force. --format go|ts|json|toml prints the options ready to paste into
    the upstream Go or TypeScript library.
    """
    try:
        plan = plan_export(run_dir, trial=trial, defaults_path=defaults_path)
    except HarnessError as exc:
        raise click.ClickException(str(exc)) from None
    if fmt is not None:
        click.echo(render_options(plan.tuned, fmt))
        return
    click.echo(plan.summary())
    if not write:
        click.echo("\n(dry run: add --write to replace the defaults file)")
        return
    try:
        target = write_export(plan, defaults_path=defaults_path, force=force)
    except ExportRefused as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"\nwrote {target}")
