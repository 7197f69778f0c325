"""Evaluate detectors on labelled corpora: replay, verdicts, metrics and the run manifest.

:func:`evaluate` is the notebook entry point; ``harness eval`` (``harness/_cli_eval.py``)
runs the same :func:`run_evaluation` and writes ``verdicts.jsonl``,
``metrics.json`` and ``manifest.json``.

Cases stream through the replay one at a time (or in small batches to worker
processes with ``jobs > 1``): no corpus is held in memory. What is kept per case
and detector is the verdict's few numbers the metrics need (and, for
:func:`evaluate`, the verdict itself, to return it as a DataFrame).

Examples
--------
>>> from harness.evaluate import evaluate
>>> result = evaluate("synthetic/default", ["repetition_guard", "thread_cycle"])  # doctest: +SKIP
>>> result.metrics.query("by == 'all'")[["detector", "precision", "recall", "f1"]]  # doctest: +SKIP
"""

from __future__ import annotations

import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd

from ._atomic import atomic_open, atomic_write_json
from ._corpus_reader import Case, iter_cases, validate_corpus
from ._corpus_registry import corpora_dir, corpus_name_of, resolve_corpus
from ._errors import CorpusError, HarnessError
from ._manifest import now_iso, run_manifest
from .chunking import SENSITIVITY_POLICIES, parse_policy
from .detectors import detector_names, get_detector, resolve_params
from .metrics import COUNT_NAMES, metrics_frame, rates, summarize
from .replay import Replayer, TokenIndex, verdict_record

__all__ = [
    "CorpusInput",
    "EvaluationResult",
    "evaluate",
    "load_params_file",
    "resolve_corpora",
    "run_evaluation",
]

# Cases per batch sent to a worker process: big enough to amortise pickling,
# small enough to keep every worker busy and the output order cheap to restore.
_BATCH_CASES = 16
# Batches in flight per worker (bounds memory while keeping workers fed).
_IN_FLIGHT = 4
# A progress display appears only once a run has taken this long.
_PROGRESS_AFTER_S = 2.0

# The verdict fields the metrics read (kept per case and detector in memory).
_COMPACT = (
    "corpus",
    "case",
    "detector",
    "label",
    "fired",
    "error",
    "group",
    "kind",
    "source",
    "tags",
    "early",
    "latency_messages",
    "latency_tokens",
    "tokens_saved",
    "tokens_lost",
    "extra",
)


@dataclass(frozen=True)
class CorpusInput:
    """One corpus of a run: ``name`` (for breakdowns and verdicts) and its file."""

    name: str
    path: Path


@dataclass
class EvaluationResult:
    """What :func:`evaluate` returns.

    Attributes
    ----------
    verdicts : DataFrame
        One row per case and detector (the fields of ``verdicts.jsonl``; the
        compact subset when the run wrote them to a file instead).
    metrics : DataFrame
        One row per detector and slice (``by`` = ``all``, ``kind``, ``tag``,
        ``source``, ``corpus``); see :func:`harness.metrics.metrics_frame`.
    metrics_json : dict
        The ``metrics.json`` document.
    manifest : dict
        The ``manifest.json`` document.
    errors : int
        Verdicts voided because the detector raised.
    sensitivity : dict or None
        The chunking-sensitivity report, when asked for.
    """

    verdicts: pd.DataFrame
    metrics: pd.DataFrame
    metrics_json: dict[str, Any]
    manifest: dict[str, Any]
    errors: int = 0
    sensitivity: dict[str, Any] | None = None
    skipped: int = 0
    out: Path | None = field(default=None)


def _corpus_name(path: Path, given: str) -> str:
    try:
        relative = path.resolve().relative_to(corpora_dir().resolve())
    except (ValueError, CorpusError):
        return given
    return corpus_name_of(relative)


def resolve_corpora(corpora: str | os.PathLike[str] | Iterable[Any]) -> list[CorpusInput]:
    """Resolve corpus names or paths (one or many) to :class:`CorpusInput` objects.

    Raises
    ------
    CorpusNotFoundError
        A name or path designates no corpus (the message lists the known names).
    """
    items: list[Any] = [corpora] if isinstance(corpora, str | os.PathLike) else list(corpora)
    if not items:
        raise CorpusError("no corpus given; pass at least one corpus name or path")
    out: list[CorpusInput] = []
    for item in items:
        if isinstance(item, CorpusInput):
            out.append(item)
            continue
        path = resolve_corpus(item)
        out.append(CorpusInput(_corpus_name(path, os.fspath(item)), path))
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise CorpusError(f"a corpus is listed twice: {', '.join(names)}")
    return out


def load_params_file(path: str | os.PathLike[str]) -> dict[str, dict[str, Any]]:
    """Read ``{detector: {param: value}}`` from a JSON or TOML file.

    A ``.toml`` name is read as TOML, anything else as JSON. A top-level
    ``detectors`` table, when present, is used (the shape of ``defaults.json``
    and of tuned exports).

    Raises
    ------
    HarnessError
        The file cannot be read or parsed, or has the wrong shape.
    """
    import json
    import tomllib

    target = Path(path)
    try:
        if target.suffix.lower() == ".toml":
            with target.open("rb") as handle:
                data: Any = tomllib.load(handle)
        else:
            data = json.loads(target.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HarnessError(
            f"{target}: cannot read the parameters file: {exc.strerror or exc}"
        ) from None
    except ValueError as exc:  # JSONDecodeError and TOMLDecodeError
        raise HarnessError(
            f"{target}: not valid {'TOML' if target.suffix == '.toml' else 'JSON'}: {exc}"
        ) from None
    if isinstance(data, dict) and isinstance(data.get("detectors"), dict):
        data = data["detectors"]
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise HarnessError(
            f"{target}: expected {{detector: {{parameter: value}}}} (JSON object or TOML tables)"
        )
    return {str(k): dict(v) for k, v in data.items()}


# -- worker side --------------------------------------------------------------------------

_WORKER: dict[str, Replayer] = {}

Job = tuple[str, dict[str, Any], str, int]  # corpus name, raw case, path, line


def _make_replayer(config: Mapping[str, Any]) -> Replayer:
    return Replayer(
        config["detectors"],
        config["params"],
        chunking=config["chunking"],
        seed=config["seed"],
    )


def _worker_init(config: Mapping[str, Any]) -> None:
    _WORKER["replayer"] = _make_replayer(config)


def _verdicts_of(replayer: Replayer, job: Job) -> list[dict[str, Any]]:
    corpus, raw, path, line = job
    case = Case(raw, path, line)
    outcomes = replayer.replay(case.id, case.messages)
    tokens = TokenIndex(case.messages)
    return [verdict_record(case, o, corpus=corpus, tokens=tokens) for o in outcomes]


def _replay_batch(batch: list[Job]) -> list[list[dict[str, Any]]]:
    replayer = _WORKER["replayer"]
    return [_verdicts_of(replayer, job) for job in batch]


def _batches(jobs: Iterator[Job], size: int) -> Iterator[list[Job]]:
    batch: list[Job] = []
    for job in jobs:
        batch.append(job)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# -- progress -----------------------------------------------------------------------------


class _Progress:
    """A progress bar (cases, cases/s) on stderr that appears once the run is slow."""

    def __init__(self, enabled: bool, total: int | None, label: str) -> None:
        self.enabled = enabled
        self.total = total
        self.label = label
        self.done = 0
        self._start = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        if self._bar is None:
            if time.monotonic() - self._start < _PROGRESS_AFTER_S:
                return
            self._open()
        self._bar.update(self._task, completed=self.done)

    def _open(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class _Rate(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("" if speed is None else f"{speed:,.0f} cases/s")

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            _Rate(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=Console(file=sys.stderr),
            speed_estimate_period=10.0,
        )
        self._bar.start()
        self._task = self._bar.add_task(self.label, total=self.total, completed=0)
        # Seed the rate with what was done before the bar appeared.
        self._bar.update(self._task, completed=self.done)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done)
            self._bar.stop()
            self._bar = None


# -- the run ------------------------------------------------------------------------------


def _jobs_of(corpora: Sequence[CorpusInput], skip_invalid: bool) -> Iterator[Job]:
    for corpus in corpora:
        for case in iter_cases(corpus.path, skip_invalid=skip_invalid):
            yield corpus.name, case.raw, case.path, case.line


def _run_cases(
    config: Mapping[str, Any],
    corpora: Sequence[CorpusInput],
    *,
    skip_invalid: bool,
    jobs: int,
    on_case: Callable[[list[dict[str, Any]]], None],
    progress: _Progress,
) -> None:
    """Replay every case of ``corpora``; call ``on_case`` with its verdicts, in corpus order."""
    stream = _jobs_of(corpora, skip_invalid)
    if jobs <= 1:
        replayer = _make_replayer(config)
        for job in stream:
            on_case(_verdicts_of(replayer, job))
            progress.advance()
        return
    with ProcessPoolExecutor(
        max_workers=jobs, initializer=_worker_init, initargs=(dict(config),)
    ) as pool:
        pending: deque[Future[list[list[dict[str, Any]]]]] = deque()
        for batch in _batches(stream, _BATCH_CASES):
            pending.append(pool.submit(_replay_batch, batch))
            while len(pending) >= jobs * _IN_FLIGHT:
                _drain(pending.popleft(), on_case, progress)
        while pending:
            _drain(pending.popleft(), on_case, progress)


def _drain(
    future: Future[list[list[dict[str, Any]]]],
    on_case: Callable[[list[dict[str, Any]]], None],
    progress: _Progress,
) -> None:
    batch = future.result()
    for verdicts in batch:
        on_case(verdicts)
    progress.advance(len(batch))


def _write_line(handle: IO[bytes], record: Mapping[str, Any]) -> None:
    import json

    handle.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    handle.write(b"\n")


def _precheck(corpora: Sequence[CorpusInput], skip_invalid: bool) -> list[dict[str, Any]]:
    """Validate every corpus before the run; refuse an invalid one with the loader's errors."""
    from ._corpus_reader import _corpus_error

    facts: list[dict[str, Any]] = []
    for corpus in corpora:
        report = validate_corpus(corpus.path)
        if not report.complete or (report.issues and not skip_invalid):
            raise _corpus_error(report, skipped=skip_invalid)
        facts.append(
            {
                "name": corpus.name,
                "path": str(corpus.path),
                "cases": report.valid,
                "skipped_invalid": report.invalid,
            }
        )
    return facts


def _select(detectors: str | Iterable[str] | None) -> list[str]:
    if detectors is None:
        return detector_names()
    names = [detectors] if isinstance(detectors, str) else list(detectors)
    if "all" in names:
        names = [n for n in names if n != "all"]
        names += [n for n in detector_names() if n not in names]
    for name in names:
        get_detector(name)
    if not names:
        raise HarnessError(f"no detector selected; known: {', '.join(detector_names())}")
    return list(dict.fromkeys(names))


def run_evaluation(
    corpora: str | os.PathLike[str] | Iterable[Any],
    detectors: str | Iterable[str] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    presets: Mapping[str, str] | None = None,
    chunking: str = "provider",
    seed: int = 0,
    jobs: int = 1,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    skip_invalid: bool = False,
    sensitivity: Sequence[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    keep_verdicts: bool = True,
    progress: bool = False,
) -> EvaluationResult:
    """Replay ``detectors`` over ``corpora`` and score them; see :func:`evaluate`.

    With ``out`` the verdicts stream to ``out/verdicts.jsonl`` and
    ``metrics.json``, ``manifest.json`` (and ``chunking_sensitivity.json``)
    are written there; every file is written atomically.
    """
    started = now_iso()
    names = _select(detectors)
    resolved = resolve_params(names, params, presets)
    policy = parse_policy(chunking)
    if not isinstance(jobs, int) or jobs < 1:
        raise HarnessError(f"jobs must be an integer >= 1; got {jobs!r}")
    if not isinstance(bootstrap, int) or bootstrap < 0:
        raise HarnessError(f"bootstrap must be an integer >= 0; got {bootstrap!r}")
    alternatives = [parse_policy(p).name for p in (sensitivity or ())]
    inputs = resolve_corpora(corpora)
    facts = _precheck(inputs, skip_invalid)
    total = sum(f["cases"] for f in facts)
    config = {"detectors": names, "params": resolved, "chunking": policy.name, "seed": int(seed)}

    compact: dict[str, list[Any]] = {key: [] for key in _COMPACT}
    full: list[dict[str, Any]] = []
    errors = 0
    out_dir = Path(out) if out is not None else None
    bar = _Progress(progress, total, "replay")

    def collect(verdicts: list[dict[str, Any]]) -> None:
        nonlocal errors
        for record in verdicts:
            if record["error"] is not None:
                errors += 1
            for key in _COMPACT:
                compact[key].append(record[key])
            if keep_verdicts:
                full.append(record)

    try:
        if out_dir is not None:
            with atomic_open(out_dir / "verdicts.jsonl", "wb") as handle:

                def write(verdicts: list[dict[str, Any]]) -> None:
                    for record in verdicts:
                        _write_line(handle, record)
                    collect(verdicts)

                _run_cases(
                    config,
                    inputs,
                    skip_invalid=skip_invalid,
                    jobs=jobs,
                    on_case=write,
                    progress=bar,
                )
        else:
            _run_cases(
                config, inputs, skip_invalid=skip_invalid, jobs=jobs, on_case=collect, progress=bar
            )
    finally:
        bar.close()

    table = pd.DataFrame(compact, columns=list(_COMPACT))
    document = summarize(
        table, detectors=names, resamples=bootstrap, seed=int(seed), confidence=confidence
    )
    document["errors"] = errors
    document["chunking"] = policy.name
    document["seed"] = int(seed)

    report = None
    stream_names = [n for n in names if get_detector(n).kind == "stream"]
    others = [p for p in dict.fromkeys(alternatives) if p != policy.name]
    if sensitivity is not None:
        report = _sensitivity(
            config,
            inputs,
            table,
            stream_names,
            [policy.name, *others],
            skip_invalid=skip_invalid,
            jobs=jobs,
            progress=progress,
        )

    finished = now_iso()
    manifest = run_manifest(
        corpora=facts,
        detectors=resolved,
        chunking=policy.name,
        seed=int(seed),
        started=started,
        finished=finished,
        settings={
            "detector_kinds": {n: get_detector(n).kind for n in names},
            "presets": dict(presets or {}),
            "jobs": jobs,
            "bootstrap": {"resamples": bootstrap, "confidence": confidence, "unit": "group"},
            "skip_invalid": skip_invalid,
            "cases": total,
            "verdicts": len(table),
            "errors": errors,
            "chunking_sensitivity": [policy.name, *others] if sensitivity is not None else None,
        },
    )
    if out_dir is not None:
        atomic_write_json(out_dir / "metrics.json", document)
        if report is not None:
            atomic_write_json(out_dir / "chunking_sensitivity.json", report)
        atomic_write_json(out_dir / "manifest.json", manifest)
    verdict_frame = pd.DataFrame(full) if keep_verdicts else table
    if keep_verdicts and verdict_frame.empty:
        verdict_frame = table
    return EvaluationResult(
        verdicts=verdict_frame,
        metrics=metrics_frame(document),
        metrics_json=document,
        manifest=manifest,
        errors=errors,
        sensitivity=report,
        skipped=sum(f["skipped_invalid"] for f in facts),
        out=out_dir,
    )


def _sensitivity(
    config: Mapping[str, Any],
    inputs: Sequence[CorpusInput],
    table: pd.DataFrame,
    stream_names: list[str],
    policies: list[str],
    *,
    skip_invalid: bool,
    jobs: int,
    progress: bool,
) -> dict[str, Any]:
    """Replay the streaming detectors under each policy; list the cases whose verdict changes."""
    main = policies[0]
    fired: dict[str, dict[tuple[str, str, str], bool]] = {}
    rows = table[table["detector"].isin(stream_names) & table["error"].isna()]
    fired[main] = {
        (c, k, d): bool(f)
        for c, k, d, f in zip(
            rows["corpus"], rows["case"], rows["detector"], rows["fired"], strict=True
        )
    }
    labels = {
        (c, k): bool(v) for c, k, v in zip(rows["corpus"], rows["case"], rows["label"], strict=True)
    }
    for name in policies[1:]:
        got: dict[tuple[str, str, str], bool] = {}
        if stream_names:
            sub = {**config, "detectors": stream_names, "chunking": name}
            sub["params"] = {n: config["params"][n] for n in stream_names}
            bar = _Progress(progress, None, f"chunking {name}")

            def note(
                verdicts: list[dict[str, Any]], got: dict[tuple[str, str, str], bool] = got
            ) -> None:
                for v in verdicts:
                    if v["error"] is None:
                        got[(v["corpus"], v["case"], v["detector"])] = bool(v["fired"])

            try:
                _run_cases(
                    sub, inputs, skip_invalid=skip_invalid, jobs=jobs, on_case=note, progress=bar
                )
            finally:
                bar.close()
        fired[name] = got
    changed: list[dict[str, Any]] = []
    per_detector: dict[str, dict[str, Any]] = {
        n: {"cases_changed": 0, "by_policy": {}} for n in stream_names
    }
    for key in fired[main]:
        seen = {p: fired[p].get(key) for p in policies}
        values = {v for v in seen.values() if v is not None}
        if len(values) > 1:
            corpus, case, detector = key
            per_detector[detector]["cases_changed"] += 1
            changed.append(
                {
                    "corpus": corpus,
                    "case": case,
                    "detector": detector,
                    "label": labels.get((corpus, case)),
                    "fired": seen,
                }
            )
    for detector in stream_names:
        for policy in policies:
            counts = dict.fromkeys(COUNT_NAMES, 0)
            for (corpus, case, name), value in fired[policy].items():
                if name != detector:
                    continue
                label = labels.get((corpus, case), False)
                outcome = ("tp" if value else "fn") if label else ("fp" if value else "tn")
                counts[outcome] += 1
            scores = rates(counts["tp"], counts["fp"], counts["tn"], counts["fn"])
            per_detector[detector]["by_policy"][policy] = {
                **counts,
                **{k: _nan_none(float(scores[k])) for k in ("precision", "recall", "f1")},
            }
    return {
        "policies": policies,
        "main": main,
        "detectors": per_detector,
        "changed": changed,
        "note": "only streaming detectors depend on chunking; messages with recorded chunks "
        "are replayed as recorded under every policy",
    }


def _nan_none(value: float) -> float | None:
    return None if value != value else value


def evaluate(
    corpora: str | os.PathLike[str] | Iterable[Any],
    detectors: str | Iterable[str] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    presets: Mapping[str, str] | None = None,
    chunking: str = "provider",
    seed: int = 0,
    jobs: int = 1,
    bootstrap: int = 1000,
    confidence: float = 0.95,
    skip_invalid: bool = False,
    sensitivity: Sequence[str] | bool | None = None,
    out: str | os.PathLike[str] | None = None,
    progress: bool = False,
) -> EvaluationResult:
    """Evaluate detectors on corpora, for notebooks: verdicts and metrics as DataFrames.

    Parameters
    ----------
    corpora : str, path or list of them
        Corpus names (``synthetic/default``) or ``.jsonl``/``.jsonl.gz`` paths.
    detectors : str or list of str, optional
        Registry names (``"all"`` or None: every registered detector).
    params : dict, optional
        ``{detector: {param: value}}``; everything else is the ``defaults.json`` value.
    presets : dict, optional
        ``{detector: preset}``, e.g. ``{"repetition_guard": "production"}``.
    chunking : str
        ``provider`` (seeded 1-9 characters), ``word``, ``sentence``, ``fixed:N``
        or ``whole``: how messages without ``chunks`` are cut.
    seed : int
        Seed of the ``provider`` chunking and of the bootstrap.
    jobs : int
        Worker processes for the replay.
    bootstrap : int
        Bootstrap resamples (groups) for the intervals; 0 skips them.
    sensitivity : bool or list of str, optional
        Also replay the streaming detectors under these policies (True: the
        default set) and report the cases whose verdict changes.
    out : path, optional
        Also write ``verdicts.jsonl``, ``metrics.json`` and ``manifest.json`` there.

    Returns
    -------
    EvaluationResult
        ``.verdicts`` and ``.metrics`` (DataFrames), ``.metrics_json``, ``.manifest``.

    Raises
    ------
    UnknownDetectorError, ParameterError, ChunkingError, CorpusError
        Before any case is replayed, naming what is wrong and what is allowed.
    """
    if sensitivity is True:
        sensitivity = list(SENSITIVITY_POLICIES)
    elif sensitivity is False:
        sensitivity = None
    return run_evaluation(
        corpora,
        detectors,
        params,
        presets=presets,
        chunking=chunking,
        seed=seed,
        jobs=jobs,
        bootstrap=bootstrap,
        confidence=confidence,
        skip_invalid=skip_invalid,
        sensitivity=sensitivity,
        out=out,
        keep_verdicts=True,
        progress=progress,
    )
