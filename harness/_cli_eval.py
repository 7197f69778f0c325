"""``harness eval``: replay detectors over labelled corpora and score them."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from ._errors import HarnessError
from .chunking import POLICY_NAMES, SENSITIVITY_POLICIES, ChunkingError, parse_policy
from .detectors import REGISTRY, get_detector
from .detectors._base import DetectorError, ParameterError
from .evaluate import EvaluationResult, load_params_file, run_evaluation

__all__ = ["eval_command", "print_metrics"]

# Changed cases listed on the console by --chunking-sensitivity (all are in the JSON).
_SHOWN_CHANGES = 20


# Width of the table when the output is not a terminal (a log file, CI): wide
# enough for every column with its interval, instead of rich's 80.
_PLAIN_WIDTH = 180


def _console(stderr: bool = False) -> Console:
    console = Console(highlight=False, soft_wrap=False, stderr=stderr)
    if not console.is_terminal:
        console.width = _PLAIN_WIDTH
    return console


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _with_ci(block: Mapping[str, Any], name: str) -> str:
    low, high = block.get(f"{name}_ci") or (None, None)
    text = _fmt(block.get(name))
    if low is None or high is None:
        return text
    return f"{text} [{low:.2f}, {high:.2f}]"


def _row(label: str, block: Mapping[str, Any]) -> list[str]:
    latency = block.get("latency_messages") or {}
    return [
        label,
        str(block["cases"]),
        str(block["tp"]),
        str(block["fp"]),
        str(block["tn"]),
        str(block["fn"]),
        _with_ci(block, "precision"),
        _with_ci(block, "recall"),
        _with_ci(block, "f1"),
        _with_ci(block, "mcc"),
        str(block.get("early_fires", 0)),
        _fmt(latency.get("median"), 1),
        str(block.get("errors", 0)),
    ]


def print_metrics(document: Mapping[str, Any], console: Console | None = None) -> None:
    """Print the metrics table of a ``metrics.json`` document (with per-source rows if mixed)."""
    out = console or _console()
    table = Table(
        title="Detector metrics (95% bootstrap intervals over groups)", title_justify="left"
    )
    for header in (
        "detector",
        "cases",
        "TP",
        "FP",
        "TN",
        "FN",
        "precision",
        "recall",
        "F1",
        "MCC",
        "early",
        "lat. msgs",
        "errors",
    ):
        table.add_column(header, justify="left" if header == "detector" else "right")
    mixed = bool(document.get("mixed_label_sources"))
    for name, block in document["detectors"].items():
        table.add_row(*_row(name, block))
        if mixed:
            for source, part in block.get("breakdown", {}).get("source", {}).items():
                table.add_row(*_row(f"  source={source}", part), style="dim")
    out.print(table)
    if mixed:
        sources = ", ".join(document.get("label_sources", []))
        out.print(
            f"[yellow]warning:[/] the corpora mix label sources ({sources}); the top rows pool "
            "them, the source= rows separate them."
        )


def _print_sensitivity(report: Mapping[str, Any], console: Console) -> None:
    table = Table(title="Chunking sensitivity (streaming detectors)", title_justify="left")
    table.add_column("detector")
    table.add_column("cases changed", justify="right")
    for policy in report["policies"]:
        table.add_column(f"F1 {policy}", justify="right")
    for name, block in report["detectors"].items():
        table.add_row(
            name,
            str(block["cases_changed"]),
            *(_fmt(block["by_policy"][p]["f1"]) for p in report["policies"]),
        )
    console.print(table)
    changed = report["changed"]
    for item in changed[:_SHOWN_CHANGES]:
        fired = ", ".join(f"{p}={'fire' if v else '-'}" for p, v in item["fired"].items())
        console.print(f"  {item['detector']}  {item['corpus']}:{item['case']}  {fired}")
    if len(changed) > _SHOWN_CHANGES:
        console.print(
            f"  ... and {len(changed) - _SHOWN_CHANGES} more in chunking_sensitivity.json"
        )


def _list_detectors(console: Console) -> None:
    for detector in REGISTRY.values():
        console.print(f"[bold]{detector.name}[/] ({detector.kind}): {detector.description}")
        for param in detector.params:
            default = json.dumps(detector.defaults[param.name])
            tuned = "" if param.tune else " (not tuned)"
            console.print(f"    {param.name} = {default}: {param.allowed()}{tuned}")
        for preset, overlay in (detector.presets or {}).items():
            console.print(f"    preset {preset}: {json.dumps(dict(overlay))}")


def _parse_presets(values: tuple[str, ...]) -> dict[str, str]:
    presets: dict[str, str] = {}
    for value in values:
        detector, sep, name = value.partition("=")
        if not sep or not detector or not name:
            raise click.BadParameter(
                f"{value!r}: expected DETECTOR=PRESET, e.g. repetition_guard=production",
                param_hint="--preset",
            )
        presets[detector.strip()] = name.strip()
    return presets


def _sensitivity_policies(value: str | None) -> list[str] | None:
    if value is None:
        return None
    if value in ("", "default"):
        return list(SENSITIVITY_POLICIES)
    names = [v.strip() for v in value.split(",") if v.strip()]
    for name in names:
        parse_policy(name)
    return names


@click.command("eval")
@click.option(
    "--corpus",
    "corpora",
    multiple=True,
    metavar="PATH",
    help="Corpus file (.jsonl/.jsonl.gz) or name under corpora/ (repeatable).",
)
@click.option(
    "--detector",
    "detectors",
    multiple=True,
    metavar="NAME",
    help="Detector to run (repeatable; 'all' or none given: every registered detector).",
)
@click.option(
    "--params",
    "params_file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON or TOML file {detector: {param: value}}; unset values come from defaults.json.",
)
@click.option(
    "--preset",
    "presets",
    multiple=True,
    metavar="DETECTOR=NAME",
    help="Named preset, e.g. repetition_guard=production (applied before --params).",
)
@click.option(
    "--chunking",
    default="provider",
    show_default=True,
    metavar="POLICY",
    help=f"How text without recorded chunks is cut: {', '.join(POLICY_NAMES)}.",
)
@click.option(
    "--chunking-sensitivity",
    "sensitivity",
    default=None,
    is_flag=False,
    flag_value="default",
    metavar="POLICIES",
    help="Also replay streaming detectors under these comma-separated policies "
    f"(alone: {','.join(SENSITIVITY_POLICIES)}) and report cases whose verdict changes.",
)
@click.option("--seed", default=0, show_default=True, type=int, help="Chunking and bootstrap seed.")
@click.option("--jobs", default=1, show_default=True, type=click.IntRange(min=1), help="Processes.")
@click.option(
    "--bootstrap",
    default=1000,
    show_default=True,
    type=click.IntRange(min=0),
    help="Bootstrap resamples of groups for the 95% intervals (0: none).",
)
@click.option("--skip-invalid", is_flag=True, help="Leave invalid cases out instead of refusing.")
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    help="Output folder: verdicts.jsonl, metrics.json, manifest.json.",
)
@click.option("--no-progress", is_flag=True, help="Never show the progress bar.")
@click.option("--list-detectors", is_flag=True, help="List detectors, parameters, bounds; exit.")
def eval_command(
    corpora: tuple[str, ...],
    detectors: tuple[str, ...],
    params_file: Path | None,
    presets: tuple[str, ...],
    chunking: str,
    sensitivity: str | None,
    seed: int,
    jobs: int,
    bootstrap: int,
    skip_invalid: bool,
    out: Path | None,
    no_progress: bool,
    list_detectors: bool,
) -> None:
    """Replay detectors online over labelled corpora and score them against the labels.

    \b
    Writes OUT/verdicts.jsonl (one line per case and detector), OUT/metrics.json
    (TP/FP/TN/FN, precision, recall, F1, F0.5, MCC, specificity with bootstrap
    intervals, latency, tokens, breakdowns) and OUT/manifest.json, and prints a
    table. Exits 1 when a detector raised on some case (recorded, run goes on).

    \b
    Example:
      harness eval --corpus synthetic/default --detector repetition_guard \\
          --detector thread_cycle --out runs/baseline
    """
    console = _console()
    if list_detectors:
        _list_detectors(console)
        return
    if not corpora:
        raise click.UsageError("give at least one --corpus PATH")
    if out is None:
        raise click.UsageError("give --out DIR (where verdicts, metrics and manifest go)")
    try:
        for name in detectors:
            if name != "all":
                get_detector(name)
    except DetectorError as exc:
        raise click.BadParameter(str(exc), param_hint="--detector") from None
    try:
        policies = _sensitivity_policies(sensitivity)
        parse_policy(chunking)
    except ChunkingError as exc:
        raise click.BadParameter(str(exc), param_hint="--chunking") from None
    params = None
    if params_file is not None:
        try:
            params = load_params_file(params_file)
        except HarnessError as exc:
            raise click.BadParameter(str(exc), param_hint="--params") from None
    preset_map = _parse_presets(presets)
    try:
        result = run_evaluation(
            list(corpora),
            list(detectors) or None,
            params,
            presets=preset_map,
            chunking=chunking,
            seed=seed,
            jobs=jobs,
            bootstrap=bootstrap,
            skip_invalid=skip_invalid,
            sensitivity=policies,
            out=out,
            keep_verdicts=False,
            progress=not no_progress,
        )
    except (ParameterError, DetectorError) as exc:
        raise click.BadParameter(str(exc), param_hint="--params/--preset") from None
    except HarnessError as exc:
        raise click.ClickException(str(exc)) from None
    _report(result, console, out)


def _report(result: EvaluationResult, console: Console, out: Path) -> None:
    print_metrics(result.metrics_json, console)
    if result.sensitivity is not None:
        _print_sensitivity(result.sensitivity, console)
    if result.skipped:
        console.print(f"{result.skipped} invalid case(s) skipped (--skip-invalid)")
    console.print(f"wrote {out}/verdicts.jsonl, metrics.json, manifest.json")
    if result.errors:
        noun = "error" if result.errors == 1 else "errors"
        _console(stderr=True).print(
            f'[red]{result.errors} detector {noun}[/]: see the verdicts with an "error" field '
            f"in {out}/verdicts.jsonl"
        )
        raise SystemExit(1)
