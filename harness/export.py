"""Export a sweep's tuned values back into ``loopguard/defaults.json``.

:func:`plan_export` reads a sweep run folder, picks the best trial (or the one
asked for), and works out the change to the defaults document and how the
tuned configuration compares with the *current* defaults on the study's test
split. :func:`write_export` replaces the file atomically, with a provenance
block, and refuses a configuration that is worse than the current defaults
on the primary objective unless forced.

Examples
--------
>>> plan = plan_export("runs/sweeps/guard")  # doctest: +SKIP
>>> print(plan.summary())  # doctest: +SKIP
>>> write_export(plan, defaults_path="/tmp/defaults.json")  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopguard import defaults_path as library_defaults_path

from ._atomic import atomic_write_text
from ._errors import ExportError, ExportRefused
from ._manifest import code_version

__all__ = ["Change", "ExportError", "ExportPlan", "ExportRefused", "plan_export", "write_export"]

csv.field_size_limit(sys.maxsize)


@dataclass(frozen=True)
class Change:
    """One option whose default changes."""

    detector: str
    option: str
    old: Any
    new: Any


@dataclass
class ExportPlan:
    """What an export would do, and the evidence for it.

    Attributes
    ----------
    run_dir : Path
        The sweep run folder.
    trial : int
        The exported trial.
    tuned : dict
        ``{detector: {option: value}}`` of that trial (complete options).
    changes : list of Change
        The options whose value differs from the current defaults document.
    metric : str
        The study's primary objective (display name, e.g. ``"F1"``).
    tuned_score, defaults_score : dict
        ``{"value", "ci"}`` of the tuned configuration and of the current
        defaults on the test split.
    better : bool
        Whether the tuned configuration's interval of the difference lies above 0.
    worse : bool
        Whether the tuned configuration scores below the current defaults.
    comparison : dict
        The comparison document the numbers come from.
    """

    run_dir: Path
    trial: int
    tuned: dict[str, dict[str, Any]]
    changes: list[Change]
    metric: str
    tuned_score: dict[str, Any]
    defaults_score: dict[str, Any]
    better: bool
    worse: bool
    comparison: dict[str, Any]
    current: dict[str, Any] = field(repr=False)
    manifest: dict[str, Any] = field(repr=False)

    def diff(self) -> str:
        """The change as ``detector.option: old -> new`` lines (or a note that nothing changes)."""
        if not self.changes:
            return "no change: the tuned values equal the current defaults"
        return "\n".join(
            f"{c.detector}.{c.option}: {json.dumps(c.old)} -> {json.dumps(c.new)}"
            for c in self.changes
        )

    def summary(self) -> str:
        """The diff and the test-split evidence, for the console."""
        return (
            f"{self.diff()}\n\n{self.metric} on the test split ({self.run_dir}): "
            f"tuned (trial {self.trial}) {_score(self.tuned_score)} vs current defaults "
            f"{_score(self.defaults_score)}; "
            + ("better" if self.better else "worse" if self.worse else "not better")
        )

    def document(self) -> dict[str, Any]:
        """The new defaults document: the current one with the tuned values and provenance."""
        new = json.loads(json.dumps(self.current))
        for change in self.changes:
            new["detectors"][change.detector][change.option] = change.new
        manifest = self.manifest
        previous = self.current.get("provenance")
        new["provenance"] = {
            "kind": "tuned",
            "description": "Tuned by `harness sweep`, exported by `harness export`.",
            "run": str(self.run_dir),
            "study": self.comparison.get("study") or manifest.get("experiment", {}).get("name"),
            "trial": self.trial,
            "corpora": [
                {"name": c.get("name"), "sha256": c.get("sha256")}
                for c in manifest.get("corpora", [])
            ],
            "split": manifest.get("split"),
            "objective": {
                "name": self.metric,
                "definition": self.comparison.get("objective"),
                "test_split": {"tuned": self.tuned_score, "previous_defaults": self.defaults_score},
                "bootstrap": self.comparison.get("bootstrap"),
            },
            "changes": [
                {"detector": c.detector, "option": c.option, "old": c.old, "new": c.new}
                for c in self.changes
            ],
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "code_version": code_version(),
            "sweep_code_version": manifest.get("code_version"),
            "previous": previous,
        }
        return new


def _score(score: Mapping[str, Any]) -> str:
    value, ci = score.get("value"), score.get("ci") or [None, None]
    if value is None:
        return "undefined"
    low, high = ci
    interval = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}{interval}"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ExportError(
            f"{path.parent}: not a finished sweep run folder: no {path.name}"
        ) from None
    except ValueError as exc:
        raise ExportError(f"{path}: not valid JSON: {exc}") from None


def _trial_params(run_dir: Path, trial: int) -> dict[str, dict[str, Any]]:
    """The complete parameters a trial ran with (the ``params`` user attribute)."""
    path = run_dir / "trials.csv"
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                if row.get("number") == str(trial):
                    if row.get("state") != "COMPLETE":
                        raise ExportError(f"trial {trial} of {run_dir} is {row.get('state')}")
                    params: dict[str, dict[str, Any]] = json.loads(row["user_attrs_params"])
                    return params
    except FileNotFoundError:
        raise ExportError(f"{run_dir}: no trials.csv") from None
    raise ExportError(f"{run_dir}: no trial {trial} in trials.csv")


def _changes(current: Mapping[str, Any], tuned: Mapping[str, Mapping[str, Any]]) -> list[Change]:
    detectors = current.get("detectors", {})
    out: list[Change] = []
    for detector, options in tuned.items():
        block = detectors.get(detector)
        if block is None:
            raise ExportError(
                f"the defaults document has no block {detector!r}: this detector's defaults do "
                "not live in loopguard/defaults.json (peers keep their own data file)"
            )
        for option, value in options.items():
            if option not in block:
                raise ExportError(f"defaults.json has no option {detector}.{option}")
            if block[option] != value:
                out.append(Change(detector, option, block[option], value))
    return out


def _rescore(
    run_dir: Path, tuned: dict[str, dict[str, Any]], defaults: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Score ``tuned`` against ``defaults`` on the run's test split (files in RUN_DIR/export)."""
    from .corpus import iter_cases
    from .evaluate import CorpusInput
    from .sweep import SweepCase, load_experiment
    from .sweep._compare import compare_single, score_on_test
    from .sweep._experiment import FBetaObjective

    experiment = load_experiment(run_dir / "experiment.toml")
    if experiment.objective.kind == "multi":
        # A Pareto study has no single primary objective; F1 decides the export.
        experiment = experiment.model_copy(update={"objective": FBetaObjective(kind="fbeta")})
    manifest = _read_json(run_dir / "manifest.json")
    names = [c["name"] for c in manifest.get("corpora", [])]
    inputs: list[CorpusInput] = []
    cases: dict[tuple[str, str], Any] = {}
    for path in sorted((run_dir / "splits" / "test").glob("*.jsonl")):
        number = int(path.name.split("-", 1)[0])
        name = names[number] if number < len(names) else path.stem
        inputs.append(CorpusInput(name, path))
        for case in iter_cases(path):
            cases[(name, case.id)] = SweepCase(name, case)
    if not inputs:
        raise ExportError(f"{run_dir}: no test split files under splits/test/")
    out = run_dir / "export"
    scored_tuned = score_on_test(
        "tuned", tuned, experiment=experiment, inputs=inputs, cases=cases, out=out / "tuned"
    )
    scored_defaults = score_on_test(
        "defaults",
        defaults,
        experiment=experiment,
        inputs=inputs,
        cases=cases,
        out=out / "current-defaults",
    )
    document: dict[str, Any] = compare_single(
        experiment, scored_tuned, scored_defaults, best={}, same_as_defaults=False
    )
    return document


def plan_export(
    run_dir: str | os.PathLike[str],
    *,
    trial: int | None = None,
    defaults_path: str | os.PathLike[str] | None = None,
) -> ExportPlan:
    """Work out what exporting ``run_dir`` (its best trial, or ``trial``) would change.

    The comparison with the current defaults reuses the sweep's own
    ``comparison.json`` when it scored exactly this trial against exactly the
    current default values; otherwise both are scored again on the run's test
    split (written under ``RUN_DIR/export/``).

    Raises
    ------
    ExportError
        Not a finished sweep folder, an unknown or unfinished trial, or a
        detector whose defaults are not in the defaults document.
    """
    folder = Path(run_dir)
    best = _read_json(folder / "best.json")
    manifest = _read_json(folder / "manifest.json")
    comparison = _read_json(folder / "comparison.json")
    target = Path(defaults_path) if defaults_path is not None else Path(library_defaults_path())
    current = json.loads(target.read_text(encoding="utf-8"))
    if trial is None:
        chosen = best.get("best") if best.get("kind") == "single" else None
        if chosen is None:
            raise ExportError(
                f"{folder}: a multi-objective study has no single best trial; pick one of its "
                "Pareto trials with --trial N (see best.json)"
            )
        trial = int(chosen["trial"])
        tuned = {d: dict(p) for d, p in chosen["params"].items()}
    else:
        tuned = _trial_params(folder, trial)
    changes = _changes(current, tuned)
    defaults_now = {d: {k: current["detectors"][d][k] for k in p} for d, p in tuned.items()}
    scored = comparison.get("tuned") or {}
    reusable = (
        scored.get("trial") == trial
        and (comparison.get("defaults") or {}).get("params") == defaults_now
    )
    if not reusable:
        comparison = _rescore(folder, tuned, defaults_now)
    tuned_block = comparison.get("tuned") or {}
    defaults_block = comparison.get("defaults") or {}
    tuned_score = {"value": tuned_block.get("value"), "ci": tuned_block.get("ci")}
    defaults_score = {"value": defaults_block.get("value"), "ci": defaults_block.get("ci")}
    worse = (
        tuned_score["value"] is not None
        and defaults_score["value"] is not None
        and tuned_score["value"] < defaults_score["value"]
    )
    return ExportPlan(
        run_dir=folder,
        trial=trial,
        tuned=tuned,
        changes=changes,
        metric=str(comparison.get("primary_metric", "objective")),
        tuned_score=tuned_score,
        defaults_score=defaults_score,
        better=bool(comparison.get("better")),
        worse=worse,
        comparison=comparison,
        current=current,
        manifest=manifest,
    )


def write_export(
    plan: ExportPlan,
    *,
    defaults_path: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> Path:
    """Write the tuned defaults (atomically) to ``defaults_path`` (default: the library's file).

    Raises
    ------
    ExportRefused
        The tuned configuration is worse than the current defaults on the test
        split's primary objective and ``force`` is false; the message gives both.
    """
    if plan.worse and not force:
        raise ExportRefused(
            f"refusing to export: on the test split the tuned configuration scores {plan.metric} "
            f"{_score(plan.tuned_score)}, below the current defaults' "
            f"{_score(plan.defaults_score)} (use --force to export anyway)"
        )
    target = Path(defaults_path) if defaults_path is not None else Path(library_defaults_path())
    atomic_write_text(target, json.dumps(plan.document(), indent=2, ensure_ascii=False) + "\n")
    return target
