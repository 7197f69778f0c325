"""The search space of a sweep: the registry's bounds, narrowed or fixed by the experiment.

Every parameter of every selected detector is either a **dimension** (searched)
or **fixed** (an experiment value, a ``tune = false`` parameter, or, with
``unlisted = "default"``, a parameter the experiment does not list). Optuna
names a dimension ``DETECTOR.PARAM``.

* ``int`` and ``float`` parameters are ranges (the registry's bounds, or the
  experiment's narrower ``low``/``high``, ``step``, ``log``); ``bool`` and
  ``categorical`` ones are categorical; ``values = [...]`` makes any parameter
  categorical over those values.
* A nullable parameter searched as a range gets a companion categorical
  ``DETECTOR.PARAM.is_null``; the value is suggested only when it is false.
  As a categorical (``values`` or the grid), ``None`` is one of the choices.
* With the grid sampler every dimension is categorical over its grid: all the
  values of an int range (or ``low..high`` by ``step``), the choices of a
  categorical or bool, and, for floats, an explicit ``values`` list or a ``step``.

The **baseline** is the library defaults (``loopguard/defaults.json``, via the
registry), optionally overlaid by ``baseline_presets``; it is trial 0 of every
study. A baseline value outside the searched space (a narrowed range, a fixed
value) is not sent to Optuna: that trial then lacks the parameter, and its
complete parameters are always in the trial's ``params`` user attribute.

Examples
--------
>>> from harness.sweep._experiment import parse_experiment
>>> experiment = parse_experiment('''
... name = "demo"
... corpora = ["x.jsonl"]
... detectors = ["repetition_guard"]
... unlisted = "default"
... [space.repetition_guard]
... ngram = {low = 3, high = 5}
... max_repeats = {values = [3, 4]}
... ''')
>>> space = build_space(experiment)
>>> [d.name for d in space.dimensions]
['repetition_guard.ngram', 'repetition_guard.max_repeats']
>>> space.enqueue_params()
{'repetition_guard.ngram': 4, 'repetition_guard.max_repeats': 4}
>>> build_space(experiment, grid=True).grid_size()
6
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from ..detectors import ParameterError, get_detector
from ..detectors._base import DetectorError, Param
from ._experiment import Experiment, ParamRange, SweepError

__all__ = ["MAX_GRID", "Dimension", "SearchSpace", "build_space"]

#: The largest grid the grid sampler accepts (a bigger one is refused with its size).
MAX_GRID = 100_000
# Values of one dimension's grid, at most.
_MAX_VALUES = 10_000

DimKind = Literal["int", "float", "categorical"]


@dataclass(frozen=True)
class Dimension:
    """One searched parameter."""

    detector: str
    param: str
    kind: DimKind
    low: float | None = None
    high: float | None = None
    step: float | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()
    null_flag: bool = False

    @property
    def name(self) -> str:
        """The Optuna parameter name, ``DETECTOR.PARAM``."""
        return f"{self.detector}.{self.param}"

    @property
    def flag_name(self) -> str:
        """The companion ``is_null`` parameter of a nullable range."""
        return f"{self.name}.is_null"

    def distribution(self) -> BaseDistribution:
        """The Optuna distribution of the value."""
        if self.kind == "categorical":
            return CategoricalDistribution(list(self.choices))
        assert self.low is not None and self.high is not None
        if self.kind == "int":
            return IntDistribution(
                int(self.low), int(self.high), log=self.log, step=int(self.step or 1)
            )
        return FloatDistribution(self.low, self.high, log=self.log, step=self.step)

    def suggest(self, trial: Any) -> Any:
        """Ask ``trial`` for this parameter's value (None when the null flag says so)."""
        if self.null_flag and trial.suggest_categorical(self.flag_name, [False, True]):
            return None
        if self.kind == "categorical":
            return trial.suggest_categorical(self.name, list(self.choices))
        assert self.low is not None and self.high is not None
        if self.kind == "int":
            return trial.suggest_int(
                self.name, int(self.low), int(self.high), step=int(self.step or 1), log=self.log
            )
        return trial.suggest_float(self.name, self.low, self.high, step=self.step, log=self.log)

    def encode(self, value: Any) -> dict[str, Any] | None:
        """Optuna params that make ``suggest`` return ``value``; None when it cannot."""
        if value is None:
            if self.null_flag:
                return {self.flag_name: True}
            if self.kind == "categorical" and any(c is None for c in self.choices):
                return {self.name: None}
            return None
        prefix = {self.flag_name: False} if self.null_flag else {}
        if self.kind == "categorical":
            for choice in self.choices:
                if choice == value and type(choice) is type(value):
                    return {**prefix, self.name: choice}
            return None
        assert self.low is not None and self.high is not None
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        if not self.low <= value <= self.high:
            return None
        if self.step is not None:
            steps = (value - self.low) / self.step
            if not math.isclose(steps, round(steps), abs_tol=1e-9):
                return None
        return {**prefix, self.name: int(value) if self.kind == "int" else float(value)}

    def grid_values(self) -> list[Any]:
        """The values of this dimension's grid (it must be categorical already)."""
        return list(self.choices)

    def describe(self) -> dict[str, Any]:
        """JSON description for ``study.json``."""
        out: dict[str, Any] = {"name": self.name, "detector": self.detector, "param": self.param}
        out["type"] = self.kind
        if self.kind == "categorical":
            out["choices"] = list(self.choices)
        else:
            out.update(low=self.low, high=self.high, step=self.step, log=self.log)
        out["nullable"] = self.null_flag or any(c is None for c in self.choices)
        if self.null_flag:
            out["null_flag"] = self.flag_name
        return out


@dataclass
class SearchSpace:
    """The dimensions, fixed values and baseline of a sweep."""

    detectors: list[str]
    dimensions: list[Dimension]
    fixed: dict[str, dict[str, Any]]
    baseline: dict[str, dict[str, Any]]
    grid: bool = False
    notes: list[str] = field(default_factory=list)

    def params_for(self, trial: Any, *, baseline: bool = False) -> dict[str, dict[str, Any]]:
        """The complete parameters of every detector for ``trial``.

        The baseline trial gets the baseline values; its representable
        dimensions are still suggested (they return the enqueued values) so
        that Optuna records them.
        """
        if baseline:
            out = {d: dict(p) for d, p in self.baseline.items()}
            for dim in self.dimensions:
                if dim.encode(self.baseline[dim.detector][dim.param]) is not None:
                    dim.suggest(trial)
            return out
        out = {d: dict(self.fixed[d]) for d in self.detectors}
        for dim in self.dimensions:
            out[dim.detector][dim.param] = dim.suggest(trial)
        return out

    def enqueue_params(self) -> dict[str, Any]:
        """Optuna params of the baseline trial (representable dimensions only)."""
        out: dict[str, Any] = {}
        for dim in self.dimensions:
            encoded = dim.encode(self.baseline[dim.detector][dim.param])
            if encoded is not None:
                out.update(encoded)
        return out

    def unrepresentable(self) -> list[str]:
        """Dimensions whose baseline value lies outside the searched space."""
        return [
            dim.name
            for dim in self.dimensions
            if dim.encode(self.baseline[dim.detector][dim.param]) is None
        ]

    def grid_search_space(self) -> dict[str, list[Any]]:
        """``{name: values}`` for Optuna's GridSampler."""
        return {dim.name: dim.grid_values() for dim in self.dimensions}

    def grid_size(self) -> int:
        """Number of points of the grid (1 when nothing is searched)."""
        return math.prod(len(dim.choices) for dim in self.dimensions) if self.grid else 0

    def grid_points(self) -> list[dict[str, dict[str, Any]]]:
        """Every grid point as complete parameters per detector (grid order)."""
        names = [dim for dim in self.dimensions]
        points = []
        for combo in itertools.product(*(dim.choices for dim in names)):
            params = {d: dict(self.fixed[d]) for d in self.detectors}
            for dim, value in zip(names, combo, strict=True):
                params[dim.detector][dim.param] = value
            points.append(params)
        return points

    def describe(self) -> dict[str, Any]:
        """JSON description for ``study.json``."""
        return {
            "grid": self.grid,
            "dimensions": [d.describe() for d in self.dimensions],
            "fixed": {d: dict(v) for d, v in self.fixed.items()},
            "baseline": {d: dict(v) for d, v in self.baseline.items()},
            "baseline_outside_space": self.unrepresentable(),
            "grid_size": self.grid_size() if self.grid else None,
            "notes": list(self.notes),
        }


def _num(value: float) -> str:
    return f"{value:g}"


def _range_values(
    param: Param, low: float, high: float, step: float | None, where: str
) -> list[Any]:
    if param.type == "int":
        stride = int(step or 1)
        count = (int(high) - int(low)) // stride + 1
        if count > _MAX_VALUES:
            raise SweepError(f"{where}: {count} grid values; narrow the range or give a step")
        return list(range(int(low), int(high) + 1, stride))
    if step is None:
        raise SweepError(
            f"{where}: the grid sampler needs explicit values for a float parameter: "
            "give values = [...] or a step"
        )
    count = math.floor((high - low) / step + 1e-9) + 1
    if count > _MAX_VALUES:
        raise SweepError(f"{where}: {count} grid values; narrow the range or give a larger step")
    return [round(low + i * step, 12) for i in range(count)]


def _check_value(param: Param, value: Any, where: str) -> Any:
    try:
        return param.check(value, where.rsplit(".", 1)[0])
    except ParameterError as exc:
        raise SweepError(f"{exc}") from None


def _dimension(
    detector: str, param: Param, override: ParamRange | None, *, grid: bool, where: str
) -> Dimension | Any:
    """A Dimension, or ``_Fixed(value)`` when the range collapses to one value."""
    nullable = param.nullable
    if override is not None and override.nullable is not None:
        if override.nullable and not param.nullable:
            raise SweepError(f"{where}: nullable = true, but {param.name} cannot be null")
        nullable = override.nullable
    if override is not None and override.values is not None:
        if override.low is not None or override.high is not None or override.step is not None:
            raise SweepError(f"{where}: give either values or low/high/step, not both")
        values = [_check_value(param, v, where) for v in override.values]
        choices = list(dict.fromkeys(values))
        if nullable and None not in choices:
            choices.append(None)
        return _categorical(detector, param, choices)
    if param.type in ("categorical", "bool"):
        if override is not None and (
            override.low is not None or override.high is not None or override.step is not None
        ):
            raise SweepError(f"{where}: a {param.type} parameter takes values = [...], not a range")
        choices = list(param.choices) if param.type == "categorical" else [False, True]
        if nullable:
            choices.append(None)
        return _categorical(detector, param, choices)
    assert param.low is not None and param.high is not None
    low = param.low if override is None or override.low is None else override.low
    high = param.high if override is None or override.high is None else override.high
    for label, value in (("low", low), ("high", high)):
        if not param.low <= value <= param.high:
            raise SweepError(
                f"{where}: {label} = {_num(value)} is outside the registry's bounds "
                f"[{_num(param.low)}, {_num(param.high)}]; an experiment may only narrow them"
            )
    if low > high:
        raise SweepError(f"{where}: low = {_num(low)} is above high = {_num(high)}")
    if param.type == "int" and (low != int(low) or high != int(high)):
        raise SweepError(f"{where}: the bounds of an int parameter must be integers")
    step = None if override is None else override.step
    if step is not None and param.type == "int" and step != int(step):
        raise SweepError(f"{where}: the step of an int parameter must be an integer")
    log = param.log if override is None or override.log is None else override.log
    if log and step is not None and not grid:
        raise SweepError(f"{where}: a log-scale range cannot have a step")
    if log and low <= 0:
        raise SweepError(f"{where}: a log-scale range needs low > 0")
    if grid:
        choices = _range_values(param, low, high, step, where)
        if nullable:
            choices.append(None)
        return _categorical(detector, param, choices)
    if low == high and not nullable:
        return _Fixed(int(low) if param.type == "int" else float(low))
    return Dimension(
        detector,
        param.name,
        "int" if param.type == "int" else "float",
        low=float(low) if param.type == "float" else int(low),
        high=float(high) if param.type == "float" else int(high),
        step=step,
        log=log,
        null_flag=nullable,
    )


@dataclass(frozen=True)
class _Fixed:
    value: Any


def _categorical(detector: str, param: Param, choices: Sequence[Any]) -> Dimension | _Fixed:
    if len(choices) == 1:
        return _Fixed(choices[0])
    return Dimension(detector, param.name, "categorical", choices=tuple(choices))


def build_space(experiment: Experiment, *, grid: bool | None = None) -> SearchSpace:
    """The search space of ``experiment`` (``grid`` defaults to its sampler being ``grid``).

    Raises
    ------
    SweepError
        An unknown detector or parameter (the allowed ones listed), a range
        outside the registry's bounds, a value a parameter does not take, a
        float grid without values, or a grid larger than :data:`MAX_GRID`.
    """
    grid = experiment.sampler.kind == "grid" if grid is None else grid
    try:
        detectors = [get_detector(name) for name in experiment.detectors]
    except DetectorError as exc:
        raise SweepError(f"detectors: {exc}") from None
    names = [d.name for d in detectors]
    for name in list(experiment.space) + list(experiment.baseline_presets):
        if name not in names:
            raise SweepError(
                f"the experiment configures detector {name!r}, which is not in detectors "
                f"({', '.join(names)})"
            )
    dimensions: list[Dimension] = []
    fixed: dict[str, dict[str, Any]] = {}
    baseline: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for detector in detectors:
        try:
            baseline[detector.name] = detector.resolve(
                None, preset=experiment.baseline_presets.get(detector.name)
            )
        except ParameterError as exc:
            raise SweepError(f"baseline_presets: {exc}") from None
        overrides = experiment.space.get(detector.name, {})
        for key in overrides:
            if key not in detector.param_names:
                raise SweepError(
                    f"space.{detector.name}: unknown parameter {key!r}; allowed: "
                    f"{', '.join(detector.param_names)}"
                )
        fixed[detector.name] = {}
        for param in detector.params:
            where = f"space.{detector.name}.{param.name}"
            entry = overrides.get(param.name)
            if entry is not None and not isinstance(entry, ParamRange):
                fixed[detector.name][param.name] = _check_value(param, entry, where)
                continue
            if isinstance(entry, ParamRange) and entry.null:
                if not param.nullable:
                    raise SweepError(f"{where}: null = true, but {param.name} cannot be null")
                fixed[detector.name][param.name] = None
                continue
            if entry is None and (not param.tune or experiment.unlisted == "default"):
                fixed[detector.name][param.name] = baseline[detector.name][param.name]
                continue
            if entry is not None and not param.tune:
                notes.append(f"{where}: searched although the registry marks it tune = false")
            made = _dimension(detector.name, param, entry, grid=grid, where=where)
            if isinstance(made, _Fixed):
                fixed[detector.name][param.name] = made.value
            else:
                dimensions.append(made)
    space = SearchSpace(names, dimensions, fixed, baseline, grid=grid, notes=notes)
    if grid:
        size = math.prod(len(d.choices) for d in dimensions)
        if size > MAX_GRID:
            raise SweepError(
                f"the grid has {size:,} points (more than {MAX_GRID:,}); narrow the space or "
                "use the tpe sampler"
            )
    if not dimensions:
        notes.append("nothing is searched: every parameter is fixed")
    return space


def resolve_all(params: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Validate complete parameters per detector against the registry (ParameterError if not)."""
    return {name: get_detector(name).resolve(values) for name, values in params.items()}
