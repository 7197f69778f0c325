"""Experiment files: what a sweep tunes, on which data, for which objective.

An experiment is a TOML file (``experiments/*.toml``) read into the pydantic
model :class:`Experiment`. Unknown keys are refused (a typo must not silently
change a study), and every error names the file and the field. The reference
of every key is ``docs/tuning.md``.

Examples
--------
>>> text = '''
... name = "guard-demo"
... corpora = ["synthetic/default"]
... detectors = ["repetition_guard"]
... [objective]
... kind = "fbeta"
... beta = 0.5
... [space.repetition_guard]
... ngram = {low = 3, high = 6}
... min_chars = 0
... '''
>>> experiment = parse_experiment(text, source="demo.toml")
>>> experiment.objective.kind, experiment.objective.beta, experiment.sampler.kind
('fbeta', 0.5, 'tpe')
>>> experiment.space["repetition_guard"]["min_chars"]
0
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
)

from .._errors import SweepError

__all__ = [
    "METRICS",
    "Budget",
    "CrossValidation",
    "Experiment",
    "FBetaObjective",
    "MultiObjective",
    "Objective",
    "ParamRange",
    "RecallAtPrecisionObjective",
    "Sampler",
    "SplitConfig",
    "SweepError",
    "experiment_hash",
    "load_experiment",
    "parse_experiment",
    "to_toml",
]

#: The metrics a multi-objective study may optimise, with their direction.
METRICS: dict[str, Literal["maximize", "minimize"]] = {
    "precision": "maximize",
    "recall": "maximize",
    "f1": "maximize",
    "latency_tokens": "minimize",
}

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SplitConfig(_Strict):
    """How cases are split into training and test sides.

    ``auto`` uses the corpora's own ``split`` field when every case has one,
    else ``stratified-group``; ``corpus`` requires the field; ``stratified-group``
    always computes a split (scikit-learn ``StratifiedGroupKFold`` with
    ``round(1 / test_size)`` folds, the first fold is the test side).
    """

    method: Literal["auto", "corpus", "stratified-group"] = "auto"
    test_size: float = Field(default=0.3, gt=0.0, lt=1.0)
    seed: int | None = None


class FBetaObjective(_Strict):
    """Maximise F-beta of the training split (beta 1: F1; beta < 1 favours precision)."""

    kind: Literal["fbeta"] = "fbeta"
    beta: float = Field(default=1.0, gt=0.0, le=100.0)


class RecallAtPrecisionObjective(_Strict):
    """Maximise recall subject to precision >= ``min_precision`` (an Optuna constraint)."""

    kind: Literal["recall_at_precision"]
    min_precision: float = Field(gt=0.0, le=1.0)


MetricName = Literal["precision", "recall", "f1", "latency_tokens"]
_DEFAULT_METRICS: tuple[MetricName, ...] = ("precision", "recall", "latency_tokens")


class MultiObjective(_Strict):
    """Several metrics at once; the study keeps the Pareto front."""

    kind: Literal["multi"]
    metrics: list[MetricName] = Field(default_factory=lambda: list(_DEFAULT_METRICS), min_length=2)

    @field_validator("metrics")
    @classmethod
    def _unique(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a metric is listed twice")
        return value


Objective = Annotated[
    FBetaObjective | RecallAtPrecisionObjective | MultiObjective, Field(discriminator="kind")
]


class Sampler(_Strict):
    """The Optuna sampler: ``tpe`` (seeded, default), ``nsga2``, ``grid`` or ``random``."""

    kind: Literal["tpe", "nsga2", "grid", "random"] = "tpe"
    seed: int | None = None
    n_startup_trials: int = Field(default=10, ge=0)
    multivariate: bool = False
    population_size: int = Field(default=20, ge=2)


class Budget(_Strict):
    """How many trials the study should reach, and an optional wall-clock limit (seconds)."""

    trials: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)


class CrossValidation(_Strict):
    """k-fold cross-validation by group inside the training split (``folds`` < 2: off)."""

    folds: int = Field(default=0, ge=0, le=50)


class ParamRange(_Strict):
    """A narrowed range, an explicit list of values, or a fixed null, for one parameter."""

    low: int | float | None = None
    high: int | float | None = None
    step: int | float | None = Field(default=None, gt=0)
    log: bool | None = None
    values: list[bool | int | float | str] | None = Field(default=None, min_length=1)
    nullable: bool | None = None
    null: bool = False


def _entry_kind(value: Any) -> str:
    return "range" if isinstance(value, Mapping | ParamRange) else "fixed"


#: One ``[space.DETECTOR]`` entry: a table (a range, a list of values, a fixed null) or a
#: plain value (the parameter is fixed to it).
SpaceEntry = Annotated[
    Annotated[ParamRange, Tag("range")] | Annotated[bool | int | float | str, Tag("fixed")],
    Discriminator(_entry_kind),
]


class Experiment(_Strict):
    """One experiment file, validated (see ``docs/tuning.md`` for every key)."""

    name: str
    description: str = ""
    corpora: list[str] = Field(min_length=1)
    detectors: list[str] = Field(min_length=1)
    chunking: str = "provider"
    seed: int = 0
    sources: list[str] | None = None
    kinds: list[str] | None = None
    allow_mixed_sources: bool = False
    subsample: float = Field(default=1.0, gt=0.0, le=1.0)
    unlisted: Literal["search", "default"] = "search"
    baseline_presets: dict[str, str] = Field(default_factory=dict)
    bootstrap: int = Field(default=1000, ge=0)
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    max_pareto_test: int = Field(default=20, ge=1)
    split: SplitConfig = Field(default_factory=SplitConfig)
    objective: Objective = Field(default_factory=FBetaObjective)
    sampler: Sampler = Field(default_factory=Sampler)
    budget: Budget = Field(default_factory=Budget)
    cv: CrossValidation = Field(default_factory=CrossValidation)
    space: dict[str, dict[str, SpaceEntry]] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "must start with a letter or digit and use only letters, digits, '.', '_', '-'"
            )
        return value

    @field_validator("detectors")
    @classmethod
    def _unique_detectors(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("a detector is listed twice")
        return value

    @property
    def directions(self) -> list[Literal["maximize", "minimize"]]:
        """The study's directions, one per objective value."""
        if isinstance(self.objective, MultiObjective):
            return [METRICS[m] for m in self.objective.metrics]
        return ["maximize"]

    @property
    def metric_names(self) -> list[str]:
        """Names of the objective values (Optuna's metric names)."""
        objective = self.objective
        if isinstance(objective, MultiObjective):
            return list(objective.metrics)
        if isinstance(objective, RecallAtPrecisionObjective):
            return ["recall"]
        return ["f1" if objective.beta == 1.0 else f"f{_beta_text(objective.beta)}"]

    @property
    def is_multi(self) -> bool:
        """Whether the study is multi-objective."""
        return isinstance(self.objective, MultiObjective)

    def identity(self) -> dict[str, Any]:
        """The fields that define the study (budget and description excluded)."""
        data = self.model_dump(mode="json", exclude_none=True)
        data.pop("budget", None)
        data.pop("description", None)
        data.pop("max_pareto_test", None)
        data.pop("bootstrap", None)
        data.pop("confidence", None)
        return data


def _beta_text(beta: float) -> str:
    return f"{beta:g}".replace(".", "_")


def experiment_hash(experiment: Experiment) -> str:
    """SHA-256 of the study-defining fields (what must match to resume a study)."""
    canonical = json.dumps(experiment.identity(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _where(location: tuple[Any, ...]) -> str:
    parts = [str(p) for p in location if not _is_union_tag(p)]
    return ".".join(parts) or "(top level)"


def _is_union_tag(part: Any) -> bool:
    # pydantic puts the union member or discriminator value in error locations.
    return isinstance(part, str) and (
        part in ("fbeta", "recall_at_precision", "multi", "range", "fixed")
        or part.startswith(("function-", "literal["))
        or part in ("bool", "int", "float", "str")
    )


def parse_experiment(text: str, *, source: str = "<experiment>") -> Experiment:
    """Parse and validate the TOML text of an experiment.

    Raises
    ------
    SweepError
        Not TOML, or a key is unknown, missing or out of range (each named).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{source}: not valid TOML: {exc}") from None
    try:
        return Experiment.model_validate(data)
    except ValidationError as exc:
        found: dict[str, list[str]] = {}
        for error in exc.errors():
            messages = found.setdefault(_where(tuple(error["loc"])), [])
            if error["msg"] not in messages:
                messages.append(error["msg"])
        lines = [f"  {where}: {' or '.join(msgs)}" for where, msgs in found.items()]
        raise SweepError(f"{source}: invalid experiment:\n" + "\n".join(lines)) from None


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """Read an experiment file (TOML).

    Raises
    ------
    SweepError
        The file cannot be read or is not a valid experiment.
    """
    target = Path(path)
    try:
        text = target.read_text(encoding="utf-8")
    except OSError as exc:
        raise SweepError(f"{target}: cannot read the experiment: {exc.strerror or exc}") from None
    return parse_experiment(text, source=str(target))


# -- a small TOML writer, for the resolved copy in the run folder --------------------------


def _toml_key(key: str) -> str:
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else json.dumps(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise SweepError(f"cannot write {value!r} to TOML")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        inner = ", ".join(
            f"{_toml_key(str(k))} = {_toml_value(v)}" for k, v in value.items() if v is not None
        )
        return "{" + inner + "}" if inner else "{}"
    raise SweepError(f"cannot write a {type(value).__name__} to TOML")


def to_toml(data: Mapping[str, Any], *, header: str = "") -> str:
    """TOML text of ``data``: tables two levels deep, deeper tables inline; None left out.

    Examples
    --------
    >>> print(to_toml({"a": 1, "t": {"b": "x", "u": {"c": {"low": 1}}}}))
    a = 1
    <BLANKLINE>
    [t]
    b = "x"
    <BLANKLINE>
    [t.u]
    c = {low = 1}
    <BLANKLINE>
    """
    lines: list[str] = [f"# {line}".rstrip() for line in header.splitlines()]

    def emit(table: Mapping[str, Any], path: list[str]) -> None:
        plain = [(k, v) for k, v in table.items() if v is not None and not _is_section(v, path)]
        sections = [(k, v) for k, v in table.items() if v is not None and _is_section(v, path)]
        if path:
            if lines:
                lines.append("")
            lines.append("[" + ".".join(_toml_key(p) for p in path) + "]")
        for key, value in plain:
            lines.append(f"{_toml_key(str(key))} = {_toml_value(value)}")
        for key, value in sections:
            emit(value, [*path, str(key)])

    emit(data, [])
    return "\n".join(lines) + "\n"


def _is_section(value: Any, path: list[str]) -> bool:
    return isinstance(value, Mapping) and len(path) < 2
