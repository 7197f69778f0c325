"""Read saved runs: ``harness eval`` output folders and ``harness sweep`` study folders.

Nothing here re-runs a detector: every figure and table of a report is built
from the files a run wrote (``metrics.json``, ``verdicts.jsonl``,
``manifest.json``; for a study ``study.json``, ``journal.log``, ``trials.csv``,
``best.json``, ``comparison.json`` and the ``test/*`` evaluation folders).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .._errors import HarnessError

__all__ = [
    "Config",
    "EvalRun",
    "StudyRun",
    "configs_of",
    "load_any",
    "load_run",
    "load_study",
]

# The files that make a folder an evaluation run, and a study run.
EVAL_FILES = ("metrics.json", "manifest.json", "verdicts.jsonl")
STUDY_FILE = "study.json"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HarnessError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise HarnessError(f"{path}: not valid JSON: {exc}") from None


def _optional_json(path: Path) -> Any:
    return _read_json(path) if path.is_file() else None


#: The ensemble scoring a multi-detector sweep writes beside each test evaluation.
ENSEMBLE_FILE = "ensemble.json"
ENSEMBLE_VERDICTS = "ensemble_verdicts.jsonl"


@dataclass
class EvalRun:
    """One ``harness eval`` output folder.

    Attributes
    ----------
    path : Path
        The folder.
    label : str
        A short name for tables and legends (the folder name unless told).
    manifest, metrics : dict
        ``manifest.json`` and ``metrics.json`` as read.
    """

    path: Path
    label: str
    manifest: dict[str, Any]
    metrics: dict[str, Any]
    _verdicts: pd.DataFrame | None = field(default=None, repr=False)

    @property
    def detectors(self) -> list[str]:
        """The detectors of the run, in run order."""
        return list(self.metrics.get("detectors", {}))

    @property
    def corpora(self) -> list[dict[str, Any]]:
        """The manifest's corpora: ``name``, ``path``, ``cases``, ``sha256`` ..."""
        return list(self.manifest.get("corpora", []))

    @property
    def label_sources(self) -> list[str]:
        """The label sources of the run's cases (``metrics.json``)."""
        return list(self.metrics.get("label_sources", []))

    @property
    def mixed_sources(self) -> bool:
        """Whether the run pools cases of more than one label source."""
        return len(self.label_sources) > 1

    @property
    def verdicts(self) -> pd.DataFrame:
        """``verdicts.jsonl`` as a DataFrame (read once, on first use)."""
        if self._verdicts is None:
            frame = read_verdicts(self.path / "verdicts.jsonl")
            ensemble = self.path / ENSEMBLE_VERDICTS
            if ensemble.is_file():
                frame = pd.concat([frame, read_verdicts(ensemble)], ignore_index=True)
            self._verdicts = frame
        return self._verdicts

    def metrics_frame(self) -> pd.DataFrame:
        """The long metrics table (one row per detector and slice) of ``metrics.json``."""
        from ..metrics import metrics_frame

        return metrics_frame(self.metrics)

    def params(self, detector: str) -> dict[str, Any]:
        """The complete parameters ``detector`` ran with (from the manifest)."""
        return dict(self.manifest.get("detectors", {}).get(detector, {}))


def read_verdicts(path: Path) -> pd.DataFrame:
    """Read a ``verdicts.jsonl`` file; each line one verdict (see ``docs/evaluation.md``)."""
    records: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except ValueError as exc:
                    raise HarnessError(f"{path}:{number}: not valid JSON: {exc}") from None
    except OSError as exc:
        raise HarnessError(f"{path}: cannot read: {exc.strerror or exc}") from None
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        frame = pd.DataFrame(columns=["corpus", "case", "detector", "fired", "label", "outcome"])
    return frame


def load_run(path: str | os.PathLike[str], label: str | None = None) -> EvalRun:
    """Load a ``harness eval --out`` folder (``metrics.json``, ``manifest.json``, verdicts).

    The verdicts are read lazily, the first time :attr:`EvalRun.verdicts` is used.

    Raises
    ------
    HarnessError
        The folder is missing, or one of the three files is missing or unreadable.

    Examples
    --------
    >>> run = load_run("runs/baseline")  # doctest: +SKIP
    >>> run.detectors, run.metrics["detectors"]["thread_cycle"]["f1"]  # doctest: +SKIP
    """
    folder = Path(path)
    if not folder.is_dir():
        raise HarnessError(f"{folder}: no such run folder")
    missing = [name for name in EVAL_FILES if not (folder / name).is_file()]
    if missing:
        raise HarnessError(
            f"{folder}: not a `harness eval` output folder: missing {', '.join(missing)} "
            f"(expected {', '.join(EVAL_FILES)})"
        )
    metrics = _read_json(folder / "metrics.json")
    manifest = _read_json(folder / "manifest.json")
    if not isinstance(metrics, dict) or not isinstance(metrics.get("detectors"), dict):
        raise HarnessError(f"{folder / 'metrics.json'}: expected an object with 'detectors'")
    if not isinstance(manifest, dict):
        raise HarnessError(f"{folder / 'manifest.json'}: expected a JSON object")
    ensemble = folder / ENSEMBLE_FILE
    if ensemble.is_file():
        # A sweep over several detectors also scores them as one ensemble ("fires if any
        # fires"); it is reported as one more detector of the run.
        document = _read_json(ensemble)
        if isinstance(document, dict) and isinstance(document.get("detectors"), dict):
            metrics = {**metrics, "detectors": {**metrics["detectors"], **document["detectors"]}}
    return EvalRun(folder, label or folder.name, manifest, metrics)


@dataclass
class StudyRun:
    """One ``harness sweep`` folder: an Optuna study and its evaluations on the test split.

    Attributes
    ----------
    path : Path
        The folder.
    label : str
        A short name (the folder name unless told).
    info : dict
        ``study.json``: study name, directions, objective, parameter space, storage.
    trials : DataFrame
        ``trials.csv`` (``study.trials_dataframe()``), or built from the journal.
    tests : dict
        ``{"tuned": EvalRun, "defaults": EvalRun, "pareto-N": EvalRun, ...}`` from ``test/``.
    best, comparison, experiment, manifest : dict or None
        ``best.json``, ``comparison.json``, ``experiment.toml``, ``manifest.json``.
    """

    path: Path
    label: str
    info: dict[str, Any]
    trials: pd.DataFrame
    tests: dict[str, EvalRun]
    best: Any = None
    comparison: Any = None
    experiment: dict[str, Any] | None = None
    manifest: dict[str, Any] | None = None
    _study: Any = field(default=None, repr=False)
    _study_error: str | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """The Optuna study name."""
        return str(self.info.get("study_name") or self.info.get("name") or self.path.name)

    @property
    def directions(self) -> list[str]:
        """``minimize``/``maximize`` per objective."""
        given = self.info.get("directions") or self.info.get("direction")
        if isinstance(given, str):
            return [given.lower()]
        if isinstance(given, list) and given:
            return [str(d).lower().split(".")[-1] for d in given]
        study = self.study
        if study is not None:
            return [d.name.lower() for d in study.directions]
        return ["maximize"] * max(1, len(self.value_columns))

    @property
    def objectives(self) -> list[str]:
        """A name per objective (``metric_names`` or ``objective(s)`` of ``study.json``)."""
        given = self.info.get("metric_names") or self.info.get(
            "objectives", self.info.get("objective", self.info.get("metric"))
        )
        names: list[str] = []
        if isinstance(given, str):
            names = [given]
        elif isinstance(given, list):
            names = [str(g.get("name", g)) if isinstance(g, dict) else str(g) for g in given]
        elif isinstance(given, dict):
            names = [str(given.get("name") or given.get("metric") or "objective")]
        count = len(self.directions)
        if len(names) != count:
            names = names[:count] + [f"value {i}" for i in range(len(names), count)]
        return names

    @property
    def multi_objective(self) -> bool:
        """Whether the study has more than one objective."""
        return len(self.directions) > 1

    @property
    def value_columns(self) -> list[str]:
        """The objective columns of :attr:`trials`, in objective order.

        Optuna names them ``value`` / ``values_0``, ``values_1`` ..., or, when the
        study has metric names, ``value_NAME`` / ``values_NAME`` in their order.
        """
        columns = list(self.trials.columns)
        if "value" in columns:
            return ["value"]
        names = self.info.get("metric_names")
        if isinstance(names, list) and names:
            for prefix in ("values_", "value_"):
                named = [f"{prefix}{n}" for n in names]
                if all(c in columns for c in named):
                    return named
        numbered = [c for c in columns if re.fullmatch(r"values_\d+", c)]
        if numbered:
            return sorted(numbered, key=lambda c: int(c.split("_")[1]))
        # Named columns in the file's order (Optuna writes them in metric order).
        return [c for c in columns if c.startswith(("values_", "value_"))]

    @property
    def param_columns(self) -> list[str]:
        """The ``params_*`` columns of :attr:`trials`."""
        return [c for c in self.trials.columns if c.startswith("params_")]

    def complete_trials(self) -> pd.DataFrame:
        """The trials whose state is COMPLETE, with every objective value present."""
        frame = self.trials
        if "state" in frame.columns:
            frame = frame[frame["state"].astype(str).str.upper().str.endswith("COMPLETE")]
        columns = self.value_columns
        if columns:
            frame = frame.dropna(subset=columns)
        return frame

    @property
    def study(self) -> Any:
        """The ``optuna.Study`` from ``journal.log`` (None when it cannot be loaded)."""
        if self._study is None and self._study_error is None:
            self._study, self._study_error = _open_study(self)
        return self._study

    @property
    def study_error(self) -> str | None:
        """Why :attr:`study` is None, if it is."""
        _ = self.study
        return self._study_error

    def configurations(self) -> list[Config]:
        """The study's evaluations on the test split, defaults first."""
        order = sorted(self.tests, key=lambda k: (k != "defaults", k != "tuned", k))
        return [Config(f"{self.label}: {key}", self.tests[key], key, self) for key in order]


def _storage_path(run: StudyRun) -> Path:
    # The folder's own journal first: the folder may have been moved since the sweep.
    if (run.path / "journal.log").is_file():
        return run.path / "journal.log"
    storage = run.info.get("storage")
    given: Any = None
    if isinstance(storage, dict):
        given = storage.get("path") or storage.get("file")
    elif isinstance(storage, str) and not storage.startswith(("sqlite:", "postgres", "mysql")):
        given = storage
    candidate = Path(given) if given else run.path / "journal.log"
    if not candidate.is_absolute() and not candidate.exists():
        candidate = run.path / candidate
    return candidate if candidate.exists() else run.path / "journal.log"


def _open_study(run: StudyRun) -> tuple[Any, str | None]:
    storage_info = run.info.get("storage")
    if isinstance(storage_info, dict) and storage_info.get("kind") not in (None, "journal"):
        # The study is in a database whose URL is stored without its password.
        return None, (
            f"the study is in {storage_info.get('kind')} storage "
            f"({storage_info.get('url', '?')}), not in a journal file of the folder"
        )
    journal = _storage_path(run)
    if not journal.is_file():
        return None, f"{journal}: no journal file"
    try:
        import optuna
        from optuna.storages import JournalStorage
        from optuna.storages.journal import JournalFileBackend
    except ImportError as exc:
        return None, f"optuna is not installed ({exc})"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        storage = JournalStorage(JournalFileBackend(str(journal)))
        names = [s.study_name for s in optuna.get_all_study_summaries(storage)]
        name = run.info.get("study_name") or run.info.get("name")
        if name not in names:
            if len(names) != 1:
                return None, f"{journal}: study {name!r} not found (studies: {names})"
            name = names[0]
        return optuna.load_study(study_name=name, storage=storage), None
    except Exception as exc:  # a damaged journal must not stop the report
        return None, f"{journal}: cannot load the study: {exc}"


def _trials_from(run: StudyRun) -> pd.DataFrame:
    csv = run.path / "trials.csv"
    if csv.is_file():
        try:
            return pd.read_csv(csv)
        except (OSError, ValueError) as exc:
            raise HarnessError(f"{csv}: cannot read: {exc}") from None
    study = run.study
    if study is None:
        raise HarnessError(
            f"{run.path}: neither trials.csv nor a loadable journal ({run.study_error})"
        )
    frame: pd.DataFrame = study.trials_dataframe()
    return frame


def load_study(path: str | os.PathLike[str], label: str | None = None) -> StudyRun:
    """Load a ``harness sweep`` folder: ``study.json``, trials, best, comparison, test runs.

    The Optuna study itself (from ``journal.log``) is opened lazily, on first use
    of :attr:`StudyRun.study` (parameter importances need it).

    Raises
    ------
    HarnessError
        The folder or ``study.json`` is missing, or the trials cannot be read.

    Examples
    --------
    >>> study = load_study("runs/sweep-guard")  # doctest: +SKIP
    >>> study.objectives, study.tests["tuned"].metrics["detectors"]  # doctest: +SKIP
    """
    folder = Path(path)
    if not folder.is_dir():
        raise HarnessError(f"{folder}: no such study folder")
    if not (folder / STUDY_FILE).is_file():
        raise HarnessError(f"{folder}: not a `harness sweep` folder: no {STUDY_FILE}")
    info = _read_json(folder / STUDY_FILE)
    if not isinstance(info, dict):
        raise HarnessError(f"{folder / STUDY_FILE}: expected a JSON object")
    name = label or folder.name
    tests: dict[str, EvalRun] = {}
    test_dir = folder / "test"
    if test_dir.is_dir():
        for sub in sorted(test_dir.iterdir()):
            if sub.is_dir() and (sub / "metrics.json").is_file():
                tests[sub.name] = load_run(sub, f"{name}: {sub.name}")
    experiment = None
    toml = folder / "experiment.toml"
    if toml.is_file():
        try:
            experiment = tomllib.loads(toml.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise HarnessError(f"{toml}: cannot read: {exc}") from None
    run = StudyRun(
        path=folder,
        label=name,
        info=info,
        trials=pd.DataFrame(),
        tests=tests,
        best=_optional_json(folder / "best.json"),
        comparison=_optional_json(folder / "comparison.json"),
        experiment=experiment,
        manifest=_optional_json(folder / "manifest.json"),
    )
    run.trials = _trials_from(run)
    return run


def load_any(path: str | os.PathLike[str], label: str | None = None) -> EvalRun | StudyRun:
    """Load a study folder (has ``study.json``) or an evaluation folder."""
    folder = Path(path)
    if (folder / STUDY_FILE).is_file():
        return load_study(folder, label)
    if not folder.is_dir():
        raise HarnessError(f"{folder}: no such run folder")
    if not (folder / "metrics.json").is_file():
        raise HarnessError(
            f"{folder}: neither a `harness eval` folder ({', '.join(EVAL_FILES)}) "
            f"nor a `harness sweep` folder ({STUDY_FILE})"
        )
    return load_run(folder, label)


@dataclass(frozen=True)
class Config:
    """One evaluated configuration: a run's label, the run, and its role.

    ``role`` is ``run`` for a plain evaluation; ``tuned``, ``defaults`` or
    ``pareto-N`` for a study's evaluations on the test split.
    """

    label: str
    run: EvalRun
    role: str = "run"
    study: StudyRun | None = None


def unique_labels(paths: Sequence[Path]) -> list[str]:
    """Short distinct labels for folders: the name, or more of the path when names clash."""
    parts = [p.resolve().parts for p in paths]
    depth = 1
    while True:
        labels = ["/".join(p[-depth:]) for p in parts]
        if len(set(labels)) == len(labels) or depth > max((len(p) for p in parts), default=1):
            return labels
        depth += 1


def configs_of(runs: Iterable[EvalRun | StudyRun]) -> list[Config]:
    """Every evaluated configuration of some runs, in order (a study gives several)."""
    out: list[Config] = []
    for run in runs:
        if isinstance(run, StudyRun):
            out.extend(run.configurations())
        else:
            out.append(Config(run.label, run))
    return out
