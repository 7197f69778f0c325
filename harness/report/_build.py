"""Assemble the report of saved runs: provenance, leaderboard, detectors, studies, galleries."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import pandas as pd

from .._atomic import atomic_write_text
from .._errors import HarnessError
from ._doc import Block, Code, Details, FigureBlock, Gallery, Heading, Para, Table, slug
from ._figures import (
    breakdown_figure,
    config_colors,
    confusion_figure,
    history_figure,
    importance_figure,
    latency_figure,
    pareto_figure,
    precision_recall_figure,
    save_figure,
    slice_figure,
    tokens_figure,
)
from ._gallery import CONTEXT_CHARS, case_contexts, gallery_rows
from ._html import render_html
from ._load import Config, EvalRun, StudyRun, configs_of, load_any, unique_labels
from ._markdown import render_markdown
from ._study import param_importances, param_name, pareto_mask
from ._tables import BASIS_VERDICTS, breakdown_frame, corpus_label, leaderboard

__all__ = ["DEFAULT_GALLERY_SIZE", "build_report"]

#: Cases per gallery (false positives, false negatives) per detector and configuration.
DEFAULT_GALLERY_SIZE = 6
# Breakdown rows listed in report.md before pointing to index.html for the rest.
_MD_SLICE_ROWS = 25
# Trials listed per study (the best ones).
_TOP_TRIALS = 10


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.{digits}f}"
    return str(value)


def _ci(row: Mapping[str, Any], rate: str) -> str:
    value, low, high = row.get(rate), row.get(f"{rate}_lo"), row.get(f"{rate}_hi")
    text = _fmt(value)
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return text
    return f"{text} [{low:.2f}, {high:.2f}]"


def _int(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{int(value):,}"


# -- provenance ------------------------------------------------------------------------------


def _code_version(manifest: Mapping[str, Any]) -> str:
    code = manifest.get("code_version") or {}
    sha = code.get("git_sha")
    if not sha:
        return "unknown (not run from a git work tree)"
    dirty = code.get("dirty")
    return f"{sha}" + (
        " (uncommitted changes)" if dirty else "" if dirty is False else " (dirty: ?)"
    )


def _provenance(run: EvalRun, heading_level: int) -> list[Block]:
    manifest = run.manifest
    blocks: list[Block] = [Heading(heading_level, f"Run {run.label}", "run-" + slug(run.label))]
    packages = manifest.get("packages") or {}
    boot = manifest.get("bootstrap") or (run.metrics.get("bootstrap") or {})
    facts = [
        ["folder", str(run.path)],
        ["code version (git)", _code_version(manifest)],
        ["packages", ", ".join(f"{k} {v}" for k, v in packages.items() if v)],
        ["command", " ".join(str(a) for a in manifest.get("argv") or []) or "-"],
        ["detectors", ", ".join(run.detectors)],
        ["label sources", ", ".join(run.label_sources) or "-"],
        ["chunking, seed", f"{manifest.get('chunking', '-')}, seed {manifest.get('seed', '-')}"],
        [
            "bootstrap",
            f"{boot.get('resamples', '-')} resamples of {boot.get('unit', 'group')}s, "
            f"{boot.get('confidence', '-')} intervals",
        ],
        [
            "cases, verdicts, errors",
            f"{manifest.get('cases', '-')}, {manifest.get('verdicts', '-')}, "
            f"{manifest.get('errors', run.metrics.get('errors', '-'))}",
        ],
        [
            "started, finished (UTC)",
            f"{manifest.get('started', '-')}, {manifest.get('finished', '-')}",
        ],
    ]
    blocks.append(Table(["", "value"], facts))
    corpora = [
        [
            str(c.get("name")),
            str(c.get("path")),
            _int(c.get("cases")),
            _int(c.get("skipped_invalid")),
            str(c.get("sha256", "-")),
        ]
        for c in run.corpora
    ]
    blocks.append(
        Table(["corpus", "file", "cases", "skipped invalid", "sha256"], corpora, "Corpora", "llrrl")
    )
    if run.mixed_sources:
        blocks.append(
            Para(
                f"The cases of this run mix label sources ({', '.join(run.label_sources)}): "
                "the leaderboard gives a row per source; pooled figures say so.",
                "warning",
            )
        )
    if (manifest.get("code_version") or {}).get("dirty"):
        blocks.append(
            Para("The run was made from a work tree with uncommitted changes.", "warning")
        )
    errors = manifest.get("errors", run.metrics.get("errors", 0)) or 0
    if errors:
        blocks.append(
            Para(f"{errors} verdicts are void: a detector raised (see verdicts.jsonl).", "warning")
        )
    params = json.dumps(manifest.get("detectors", {}), indent=2, ensure_ascii=False)
    blocks.append(Details("Parameters of every detector (manifest.json)", [Code(params, "json")]))
    return blocks


def _study_provenance(study: StudyRun) -> list[Block]:
    blocks: list[Block] = [Heading(3, f"Study {study.label}", "run-" + slug(study.label))]
    complete = study.complete_trials()
    facts = [
        ["folder", str(study.path)],
        ["study name", study.name],
        [
            "objectives",
            ", ".join(
                f"{o} ({d})" for o, d in zip(study.objectives, study.directions, strict=False)
            ),
        ],
        ["trials", f"{len(complete)} complete of {len(study.trials)}"],
        ["test evaluations", ", ".join(study.tests) or "none"],
    ]
    if study.manifest:
        facts.insert(1, ["code version (git)", _code_version(study.manifest)])
    blocks.append(Table(["", "value"], facts))
    blocks.append(
        Details("study.json", [Code(json.dumps(study.info, indent=2, ensure_ascii=False), "json")])
    )
    toml = study.path / "experiment.toml"
    if toml.is_file():
        blocks.append(Details("experiment.toml", [Code(toml.read_text(encoding="utf-8"), "toml")]))
    if study.manifest:
        blocks.append(
            Details(
                "manifest.json of the study",
                [Code(json.dumps(study.manifest, indent=2, ensure_ascii=False), "json")],
            )
        )
    for config in study.configurations():
        blocks.extend(_provenance(config.run, 4))
    return blocks


# -- leaderboard -----------------------------------------------------------------------------


def _leaderboard_blocks(board: pd.DataFrame) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Leaderboard", "leaderboard")]
    if board.empty:
        return [*blocks, Para("No detector results.", "note")]
    blocks.append(
        Para(
            "Every detector on every corpus of every run, best F1 first within each corpus and "
            "label source. Intervals: 95% percentile bootstrap over groups of cases. "
            "Rows marked * are recomputed from verdicts.jsonl per label source (the corpus mixes "
            "sources); the others are read from metrics.json.",
            "note",
        )
    )
    ordered = board.assign(_f1=board["f1"].fillna(-1.0)).sort_values(
        ["corpus", "source", "_f1"], ascending=[True, True, False], kind="stable"
    )
    rows = []
    for row in ordered.to_dict("records"):
        rows.append(
            [
                corpus_label(str(row["corpus"])),
                str(row["source"] or "-"),
                str(row["detector"]),
                str(row["config"]) + (" *" if row["basis"] == BASIS_VERDICTS else ""),
                _int(row["cases"]),
                _int(row["tp"]),
                _int(row["fp"]),
                _int(row["tn"]),
                _int(row["fn"]),
                _ci(row, "precision"),
                _ci(row, "recall"),
                _ci(row, "f1"),
                _ci(row, "mcc"),
            ]
        )
    blocks.append(
        Table(
            [
                "corpus",
                "labels",
                "detector",
                "configuration",
                "cases",
                "TP",
                "FP",
                "TN",
                "FN",
                "precision",
                "recall",
                "F1",
                "MCC",
            ],
            rows,
            align="llllrrrrrrrrr",
        )
    )
    return blocks


# -- detectors -------------------------------------------------------------------------------


class _Figures:
    """Saves figures under ``out/figures`` and remembers what it wrote."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.written: set[Path] = set()

    def add(self, stem: str, caption: str, draw: Callable[[], Any]) -> FigureBlock:
        figure = draw()
        try:
            self.written.update(save_figure(figure, self.folder / stem))
        finally:
            figure.clear()
        return FigureBlock(stem, caption)

    def prune(self) -> None:
        """Remove figures of earlier reports that this one did not write."""
        for path in self.folder.glob("*"):
            if path.suffix in (".png", ".svg") and path not in self.written:
                path.unlink()


def _params_table(configs: Sequence[Config], detector: str) -> Table:
    mine = [c for c in configs if detector in c.run.detectors]
    names: list[str] = []
    for config in mine:
        names += [n for n in config.run.params(detector) if n not in names]
    rows = [[name, *(json.dumps(c.run.params(detector).get(name)) for c in mine)] for name in names]
    return Table(["parameter", *(c.label for c in mine)], rows, "Parameters (from each manifest)")


def _detector_table(board: pd.DataFrame, detector: str) -> Table:
    rows = []
    for row in board[board["detector"] == detector].to_dict("records"):
        rows.append(
            [
                str(row["config"]),
                corpus_label(str(row["corpus"])),
                str(row["source"] or "-"),
                _ci(row, "f0_5"),
                _ci(row, "specificity"),
                _ci(row, "accuracy"),
                _int(row["early_fires"]),
                _fmt(row["latency_messages_median"], 1),
                _fmt(row["latency_tokens_median"], 0),
                _int(row["tokens_saved_total"]),
                _int(row["tokens_lost_total"]),
                _int(row["errors"]),
            ]
        )
    return Table(
        [
            "configuration",
            "corpus",
            "labels",
            "F0.5",
            "specificity",
            "accuracy",
            "early fires",
            "latency median (messages)",
            "latency median (tokens)",
            "tokens saved",
            "tokens lost",
            "errors",
        ],
        rows,
        "More figures (same rows as the leaderboard)",
        "lllrrrrrrrrr",
    )


def _breakdown_table(
    configs: Sequence[Config], detector: str, dimension: str, limit: int | None
) -> Table:
    frame = breakdown_frame(configs, detector, dimension)
    if limit is not None:
        top = frame.groupby("slice")["cases"].max().sort_values(ascending=False, kind="stable")
        frame = frame[frame["slice"].isin(top.index[:limit])]
    rows = []
    for row in frame.to_dict("records"):
        rows.append(
            [
                str(row["slice"]),
                str(row["config"]),
                _int(row["cases"]),
                _int(row["tp"]),
                _int(row["fp"]),
                _int(row["tn"]),
                _int(row["fn"]),
                _ci(row, "recall") if row["positives"] else "-",
                _ci(row, "fpr") if row["negatives"] else "-",
                _fmt(row["precision"]),
            ]
        )
    return Table(
        [
            dimension,
            "configuration",
            "cases",
            "TP",
            "FP",
            "TN",
            "FN",
            "recall",
            "false-positive rate",
            "precision",
        ],
        rows,
        align="llrrrrrrrr",
    )


def _detector_blocks(
    detector: str,
    configs: Sequence[Config],
    board: pd.DataFrame,
    figures: _Figures,
    colors: Mapping[str, str],
) -> tuple[list[Block], list[Block]]:
    """``(blocks for index.html, blocks for report.md)``: Markdown lists fewer breakdown rows."""
    mine = [c for c in configs if detector in c.run.detectors]
    stem = "detector-" + slug(detector)
    head: list[Block] = [Heading(3, detector, stem)]
    if any(c.run.mixed_sources for c in mine):
        head.append(
            Para(
                "Some runs mix label sources: the leaderboard rows, the precision-recall, "
                "confusion, latency and token figures are per source; the breakdowns by kind and "
                "tag pool the sources of a run (the breakdown by source separates them).",
                "warning",
            )
        )
    head.append(
        figures.add(
            f"{stem}-precision-recall",
            f"{detector}: precision, recall and F1 with 95% bootstrap intervals",
            lambda: precision_recall_figure(board, detector, colors),
        )
    )
    head.append(
        figures.add(
            f"{stem}-confusion",
            f"{detector}: confusion matrices",
            lambda: confusion_figure(board, detector),
        )
    )
    head.append(
        figures.add(
            f"{stem}-latency",
            f"{detector}: latency of true positives, in messages and estimated tokens",
            lambda: latency_figure(mine, detector, colors),
        )
    )
    head.append(
        figures.add(
            f"{stem}-tokens",
            f"{detector}: estimated model tokens saved and lost",
            lambda: tokens_figure(board, detector),
        )
    )
    head.append(_detector_table(board, detector))
    head.append(_params_table(mine, detector))
    html_blocks = list(head)
    md_blocks = list(head)
    for dimension in ("kind", "tag", "source"):
        figure = figures.add(
            f"{stem}-by-{dimension}",
            f"{detector}: recall and false-positive rate by {dimension}",
            partial(breakdown_figure, mine, detector, dimension, colors),
        )
        full = _breakdown_table(mine, detector, dimension, None)
        html_blocks += [figure, Details(f"Table by {dimension} ({len(full.rows)} rows)", [full])]
        if len(full.rows) > _MD_SLICE_ROWS:
            short = _breakdown_table(mine, detector, dimension, _MD_SLICE_ROWS)
            note = Para(
                f"The {dimension}s with the most cases; the full table ({len(full.rows)} rows) is "
                "in index.html and in each run's metrics.json.",
                "note",
            )
            md_blocks += [figure, Details(f"Table by {dimension}", [note, short])]
        else:
            md_blocks += [figure, Details(f"Table by {dimension} ({len(full.rows)} rows)", [full])]
    return html_blocks, md_blocks


# -- studies ---------------------------------------------------------------------------------


def _comparison_blocks(study: StudyRun) -> list[Block]:
    comparison = study.comparison
    if not isinstance(comparison, Mapping):
        return [Para("No comparison.json: the study has no test-split comparison.", "note")]
    blocks: list[Block] = []
    verdict = comparison.get("verdict")
    if isinstance(verdict, str) and verdict:
        blocks.append(Para(f"Verdict on the test split: {verdict}"))
    blocks.append(
        Details(
            "comparison.json",
            [Code(json.dumps(comparison, indent=2, ensure_ascii=False), "json")],
        )
    )
    return blocks


def _trials_table(study: StudyRun) -> Table:
    trials = study.complete_trials()
    columns = study.value_columns
    if not columns or trials.empty:
        return Table(["trial"], [], "No complete trial")
    values = trials[columns].to_numpy(dtype=float)
    if study.multi_objective:
        chosen = trials[pareto_mask(values, study.directions)]
        caption = f"Pareto-optimal trials ({len(chosen)})"
    else:
        ascending = study.directions[0] == "minimize"
        chosen = trials.sort_values(columns[0], ascending=ascending, kind="stable").head(
            _TOP_TRIALS
        )
        caption = f"Best {len(chosen)} trials"
    params = study.param_columns
    rows = []
    for row in chosen.to_dict("records"):
        rows.append(
            [
                _int(row.get("number")),
                *(_fmt(row[c], 4) for c in columns),
                *(_fmt(row[p], 4) if isinstance(row[p], float) else str(row[p]) for p in params),
            ]
        )
    return Table(
        ["trial", *study.objectives, *(param_name(p) for p in params)],
        rows,
        caption,
        "r" * (1 + len(columns) + len(params)),
    )


def _study_blocks(study: StudyRun, figures: _Figures) -> list[Block]:
    stem = "study-" + slug(study.label)
    blocks: list[Block] = [Heading(3, f"Study {study.label}", stem)]
    blocks += _comparison_blocks(study)
    if study.best is not None:
        blocks.append(
            Details(
                "best.json", [Code(json.dumps(study.best, indent=2, ensure_ascii=False), "json")]
            )
        )
    blocks.append(_trials_table(study))
    blocks.append(
        figures.add(
            f"{stem}-history",
            f"study {study.label}: optimisation history",
            lambda: history_figure(study),
        )
    )
    if study.multi_objective:
        blocks.append(
            figures.add(
                f"{stem}-pareto",
                f"study {study.label}: Pareto front",
                lambda: pareto_figure(study),
            )
        )
    else:
        blocks.append(Para("Single objective: no Pareto front.", "note"))
    importances, note = param_importances(study)
    if note:
        blocks.append(Para(f"Parameter importances: {note}.", "note"))
    if not importances.empty:
        blocks.append(
            figures.add(
                f"{stem}-importances",
                f"study {study.label}: parameter importances (fANOVA)",
                lambda: importance_figure(importances, study.label),
            )
        )
    blocks.append(
        figures.add(
            f"{stem}-slices",
            f"study {study.label}: slice plots of the tuned parameters",
            lambda: slice_figure(study),
        )
    )
    return blocks


# -- galleries -------------------------------------------------------------------------------


def _gallery_blocks(configs: Sequence[Config], size: int, width: int) -> list[Block]:
    blocks: list[Block] = [Heading(2, "Galleries", "galleries")]
    blocks.append(
        Para(
            f"Up to {size} false positives and {size} false negatives per detector and "
            "configuration, spread over kinds of cases. Each shows the case's text around the fire "
            f"(about {width} characters, \u25b2 where the detector fired; for a miss, from the "
            "labelled onset) with the phrase from the detector's reason highlighted. Texts are "
            "read from the corpus files named in each run's manifest.",
            "note",
        )
    )
    for config in configs:
        blocks.append(Heading(3, f"Galleries of {config.label}", "gallery-" + slug(config.label)))
        for detector in config.run.detectors:
            chosen = []
            for outcome in ("fp", "fn"):
                chosen.append(gallery_rows(config.run, detector, outcome, size))
            contexts = case_contexts(config.run, pd.concat(chosen), width)
            fps = [c for c in contexts if c.outcome == "fp"]
            fns = [c for c in contexts if c.outcome == "fn"]
            counts = config.run.metrics["detectors"][detector]
            blocks.append(
                Gallery(
                    f"{detector}: false positives ({len(fps)} of {counts.get('fp', 0)})",
                    fps,
                    "no false positive",
                )
            )
            blocks.append(
                Gallery(
                    f"{detector}: false negatives ({len(fns)} of {counts.get('fn', 0)})",
                    fns,
                    "no false negative",
                )
            )
    return blocks


# -- the report ------------------------------------------------------------------------------


def build_report(
    run_dirs: Sequence[str | os.PathLike[str]] | str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    title: str = "Loop detector report",
    gallery_size: int = DEFAULT_GALLERY_SIZE,
    context_chars: int = CONTEXT_CHARS,
) -> Path:
    """Build ``index.html`` and ``report.md`` (and ``figures/``) from saved runs.

    Parameters
    ----------
    run_dirs : path or list of paths
        ``harness eval --out`` folders and ``harness sweep`` folders, in any mix.
    out_dir : path
        Where the report goes; figures under ``out_dir/figures`` (PNG and SVG).
    gallery_size : int
        False positives and false negatives shown per detector and configuration.
    context_chars : int
        Characters of case text shown around each fire.

    Returns
    -------
    Path
        The ``index.html`` written.

    Raises
    ------
    HarnessError
        A folder is neither kind of run, or a file of it cannot be read.

    Examples
    --------
    >>> build_report(["runs/baseline", "runs/sweep-guard"], "reports/latest")  # doctest: +SKIP
    PosixPath('reports/latest/index.html')
    """
    if isinstance(run_dirs, str | os.PathLike):
        run_dirs = [run_dirs]
    paths = [Path(p) for p in run_dirs]
    if not paths:
        raise HarnessError("no run folder given")
    if not isinstance(gallery_size, int) or gallery_size < 0:
        raise HarnessError(f"gallery_size must be an integer >= 0; got {gallery_size!r}")
    if not isinstance(context_chars, int) or context_chars < 40:
        raise HarnessError(f"context_chars must be an integer >= 40; got {context_chars!r}")
    labels = unique_labels(paths)
    runs = [load_any(p, label) for p, label in zip(paths, labels, strict=True)]
    configs = configs_of(runs)
    out = Path(out_dir)
    figures = _Figures(out / "figures")
    colors = config_colors(configs)
    board = leaderboard(configs)

    common: list[Block] = [Heading(2, "Runs", "runs")]
    common.append(
        Para(
            "Everything below is read from these folders; no detector was run to make this "
            "report. Each run's code version, corpora (with their sha256) and parameters are "
            "listed so that every number can be traced and reproduced.",
            "note",
        )
    )
    for run in runs:
        common += _study_provenance(run) if isinstance(run, StudyRun) else _provenance(run, 3)
    common += _leaderboard_blocks(board)

    html_blocks = list(common)
    md_blocks = list(common)
    detectors = list(dict.fromkeys(d for c in configs for d in c.run.detectors))
    section: list[Block] = [Heading(2, "Detectors", "detectors")]
    html_blocks += section
    md_blocks += section
    for detector in detectors:
        for_html, for_md = _detector_blocks(detector, configs, board, figures, colors)
        html_blocks += for_html
        md_blocks += for_md

    studies = [r for r in runs if isinstance(r, StudyRun)]
    nav = [("runs", "Runs"), ("leaderboard", "Leaderboard"), ("detectors", "Detectors")]
    if studies:
        section = [Heading(2, "Studies", "studies")]
        for study in studies:
            section += _study_blocks(study, figures)
        html_blocks += section
        md_blocks += section
        nav.append(("studies", "Studies"))
    galleries = _gallery_blocks(configs, gallery_size, context_chars)
    html_blocks += galleries
    md_blocks += galleries
    nav.append(("galleries", "Galleries"))

    figures.prune()
    atomic_write_text(out / "index.html", render_html(title, html_blocks, nav))
    atomic_write_text(out / "report.md", render_markdown(title, md_blocks))
    with_csv = board.drop(columns=["run"])
    atomic_write_text(out / "leaderboard.csv", with_csv.to_csv(index=False))
    return out / "index.html"
