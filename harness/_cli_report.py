"""``harness report``: HTML and Markdown reports, with figures, of saved runs."""

from __future__ import annotations

from pathlib import Path

import click

from ._errors import HarnessError

__all__ = ["report"]


@click.command("report")
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="RUN_DIR...",
)
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder (default: RUN_DIR/report for one run, ./report for several).",
)
@click.option(
    "--gallery-size",
    default=None,
    type=click.IntRange(min=0),
    help="False positives and false negatives shown per detector and configuration [default: 6].",
)
@click.option(
    "--context-chars",
    default=None,
    type=click.IntRange(min=40),
    help="Characters of case text shown around each fire [default: 300].",
)
@click.option("--title", default="Loop detector report", show_default=True, help="Page title.")
def report(
    run_dirs: tuple[Path, ...],
    out: Path | None,
    gallery_size: int | None,
    context_chars: int | None,
    title: str,
) -> None:
    """Build OUT/index.html and OUT/report.md (figures in OUT/figures) from saved runs.

    \b
    RUN_DIR is a `harness eval --out` folder (metrics.json, manifest.json,
    verdicts.jsonl) or a `harness sweep` folder (study.json, trials, test/...).
    No detector is run: everything is read from the folders. The report lists
    each run's code version, corpora (sha256) and parameters; per detector:
    precision, recall and F1 with intervals, confusion matrices, latency,
    tokens saved, results by kind, tag and label source; per study: history,
    Pareto front, parameter importances, slice plots; a leaderboard; and
    galleries of false positives and negatives with the text around the fire.

    \b
    Example:
      harness report runs/baseline runs/sweep-guard --out reports/latest
    """
    from .report import CONTEXT_CHARS, DEFAULT_GALLERY_SIZE, build_report

    if out is None:
        out = run_dirs[0] / "report" if len(run_dirs) == 1 else Path("report")
    try:
        index = build_report(
            list(run_dirs),
            out,
            title=title,
            gallery_size=DEFAULT_GALLERY_SIZE if gallery_size is None else gallery_size,
            context_chars=CONTEXT_CHARS if context_chars is None else context_chars,
        )
    except HarnessError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {index}, {index.parent / 'report.md'} and {index.parent / 'figures'}/")
