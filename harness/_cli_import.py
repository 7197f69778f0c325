"""``import``: convert a raw public dataset into a labelled corpus under ``corpora/real``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ._errors import HarnessError
from .importers import DATASETS, write_provenance

__all__ = ["import_command"]


@click.command("import")
@click.argument("dataset", type=click.Choice(sorted(DATASETS)))
@click.argument("raw_path", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Corpus to write (.jsonl or .jsonl.gz). Default: the dataset's file under corpora/real/.",
)
@click.option(
    "--provenance/--no-provenance",
    default=True,
    show_default=True,
    help="Copy SOURCE.md and LICENSE from the raw folder next to the corpus.",
)
def import_command(dataset: str, raw_path: Path, out: Path | None, provenance: bool) -> None:
    """Convert RAW_PATH of DATASET (who-and-when: the folder; tau-bench, thoughtology:
    the JSON file) into a labelled corpus, and print a JSON summary.

    \b
    Example:
      harness corpora import tau-bench ../shared/corpora/raw/tau-bench/gpt-4o-airline.json
    """
    importer, default_out = DATASETS[dataset]
    target = out if out is not None else Path(default_out)
    try:
        summary = importer(raw_path, target)
        if provenance:
            raw_dir = raw_path if raw_path.is_dir() else raw_path.parent
            write_provenance(raw_dir, target)
    except HarnessError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(json.dumps(summary.as_dict(), indent=2, ensure_ascii=False))
