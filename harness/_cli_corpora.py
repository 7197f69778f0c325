"""``harness corpora``: list the named corpora, validate corpus files, describe them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ._corpus_reader import CorpusReader, validate_corpus
from ._corpus_registry import (
    CORPORA_DIR_ENV,
    corpora_dir,
    corpus_name_of,
    list_corpora,
    resolve_corpus,
)
from ._corpus_stats import corpus_stats
from ._errors import CorpusError

__all__ = ["corpora"]


def _display(path: Path) -> str:
    """Show a path relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _targets(paths: tuple[str, ...], every: bool) -> list[str]:
    """Resolve PATH arguments (files or corpus names) to display paths; usage errors exit 2."""
    if every and paths:
        raise click.UsageError("give PATH arguments or --all, not both")
    if every:
        try:
            return [_display(c.path) for c in list_corpora()]
        except CorpusError as exc:
            raise click.UsageError(str(exc)) from None
    if not paths:
        raise click.UsageError("give at least one PATH (a corpus file or name), or --all")
    resolved: list[str] = []
    for item in paths:
        try:
            resolved.append(_display(resolve_corpus(item)))
        except CorpusError as exc:
            raise click.BadParameter(str(exc), param_hint="PATH") from None
    return resolved


def _label(file: str) -> str:
    """A short column title: the corpus name for a named corpus, else the path."""
    try:
        relative = Path(file).resolve().relative_to(corpora_dir().resolve())
    except (ValueError, CorpusError):
        return file
    return corpus_name_of(relative)


def _console() -> Console:
    # highlight=False: numbers and paths are data, not something to colourise.
    return Console(highlight=False, soft_wrap=False)


@click.group("corpora")
def corpora() -> None:
    """Labelled corpora (format v1): list the named ones, validate and describe files.

    PATH is a .jsonl/.jsonl.gz file or the name of a corpus under corpora/
    (e.g. synthetic/default); LOOPGUARD_CORPORA_DIR overrides that folder.
    """


@corpora.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def list_command(as_json: bool) -> None:
    """List the named corpora with their case counts (reads every corpus)."""
    try:
        root = corpora_dir()
        named = list_corpora()
    except CorpusError as exc:
        raise click.ClickException(str(exc)) from None
    rows: list[dict[str, Any]] = []
    for entry in named:
        reader = CorpusReader(entry.path, skip_invalid=True)
        positives = 0
        problem = ""
        try:
            for case in reader:
                positives += case.looping
        except CorpusError:
            problem = "read-error"
        report = reader.report
        rows.append(
            {
                "name": entry.name,
                "path": entry.path.relative_to(root).as_posix(),
                "cases": report.valid,
                "positives": positives,
                "negatives": report.valid - positives,
                "invalid": report.invalid,
                "readable": not problem,
            }
        )
    if as_json:
        click.echo(json.dumps({"corpora_dir": str(root), "corpora": rows}, indent=2))
        return
    console = _console()
    if not rows:
        console.print(Text(f"no corpora under {root} (set {CORPORA_DIR_ENV} to look elsewhere)"))
        return
    table = Table(title=Text(f"corpora under {root}"), title_justify="left")
    table.add_column("name", overflow="fold")
    for column in ("cases", "positives", "negatives", "invalid"):
        table.add_column(column, justify="right")
    for row in rows:
        invalid = str(row["invalid"]) + ("" if row["readable"] else " + read-error")
        table.add_row(
            Text(row["name"]),
            str(row["cases"]),
            str(row["positives"]),
            str(row["negatives"]),
            Text(invalid, style="red" if invalid != "0" else ""),
        )
    console.print(table)


@corpora.command("validate")
@click.argument("paths", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Validate every named corpus.")
@click.option(
    "--skip-invalid",
    is_flag=True,
    help="Treat invalid cases as skipped: report them, exit 0 (a read-error still fails).",
)
def validate_command(paths: tuple[str, ...], every: bool, skip_invalid: bool) -> None:
    """Check corpus files against every rule of the format.

    Prints one line per error (FILE:LINE: [case ID] RULE: message), then a
    summary line per file. Exit status 1 when any file is invalid.
    """
    failed = False
    files = _targets(paths, every)
    total_cases = total_invalid = 0
    for file in files:
        try:
            report = validate_corpus(file)
        except CorpusError as exc:
            click.echo(str(exc))
            failed = True
            continue
        for issue in report.issues:
            click.echo(str(issue))
        click.echo(report.summary(skipped=skip_invalid))
        total_cases += report.cases
        total_invalid += report.invalid
        failed = failed or not (report.complete if skip_invalid else report.ok)
    if len(files) > 1:
        word = "skipped" if skip_invalid else "invalid"
        click.echo(f"total: {len(files)} files, {total_cases} cases, {total_invalid} {word}")
    if failed:
        click.get_current_context().exit(1)


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:g}" if value.is_integer() else f"{value:.1f}"
    return str(value)


def _spread(summary: dict[str, Any]) -> str:
    return " / ".join(_fmt(summary[k]) for k in ("min", "median", "mean", "max"))


@corpora.command("stats")
@click.argument("paths", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Describe every named corpus.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("--skip-invalid", is_flag=True, help="Leave invalid cases out instead of failing.")
def stats_command(paths: tuple[str, ...], every: bool, as_json: bool, skip_invalid: bool) -> None:
    """Describe corpora: balance, kinds, sources, tags, sizes; per file and in total."""
    files = _targets(paths, every)
    try:
        stats = corpus_stats(files, skip_invalid=skip_invalid)
    except CorpusError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(stats, indent=2, ensure_ascii=False))
        return
    columns: list[tuple[str, dict[str, Any]]] = [(_label(f["file"]), f) for f in stats["files"]]
    if len(columns) > 1:
        columns.append(("total", stats["total"]))
    console = _console()

    table = Table(title="corpus stats", title_justify="left")
    table.add_column("", overflow="fold")
    for name, _ in columns:
        table.add_column(Text(name), justify="right", overflow="fold")
    scalar_rows = [
        ("cases", "cases"),
        ("positives", "positives"),
        ("negatives", "negatives"),
        ("with onset", "with_onset"),
        ("groups", "groups"),
        ("messages", "messages"),
        ("chunked messages", "chunked_messages"),
        ("skipped (invalid)", "skipped"),
    ]
    for title, key in scalar_rows:
        table.add_row(title, *(_fmt(block[key]) for _, block in columns))
    table.add_row(
        "messages/case min/med/mean/max", *(_spread(b["messages_per_case"]) for _, b in columns)
    )
    table.add_row(
        "text chars/case min/med/mean/max", *(_spread(b["text_chars_per_case"]) for _, b in columns)
    )
    console.print(table)

    for title, key in (
        ("by kind", "by_kind"),
        ("by label source", "by_source"),
        ("by tag", "by_tag"),
        ("by message type", "by_message_type"),
        ("skipped by rule", "skipped_by_rule"),
    ):
        keys = list(stats["total"][key])
        if not keys:
            continue
        breakdown = Table(title=title, title_justify="left")
        breakdown.add_column(key.removeprefix("by_").replace("_", " "), overflow="fold")
        for name, _ in columns:
            breakdown.add_column(Text(name), justify="right", overflow="fold")
        for item in keys:
            breakdown.add_row(Text(item), *(str(block[key].get(item, 0)) for _, block in columns))
        console.print(breakdown)
