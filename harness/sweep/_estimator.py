"""Detectors as scikit-learn estimators: cases in, verdicts out.

:class:`DetectorClassifier` wraps one registered detector. ``X`` is a sequence
of cases (:class:`harness.corpus.Case` objects, :class:`~harness.sweep.SweepCase`
objects or raw case dicts); ``predict`` replays the detector on each case
(through ``harness.fastpath`` when it has the detector, exactly as a sweep
does) and returns 1 where it fired. ``fit`` learns nothing (a detector has no
fitted state); it validates the parameters and sets ``classes_``. Every
parameter of the detector is an estimator parameter, so ``GridSearchCV``,
``cross_validate`` and ``TunedThresholdClassifierCV`` work on corpora, with
group-aware splitters (``GroupKFold``, ``StratifiedGroupKFold``,
``PredefinedSplit``) over :func:`corpus_arrays`'s ``groups``.

``decision_function`` exists for detectors with a count threshold that makes
them fire less as it grows (:data:`SCORE_PARAMS`): the score of a case is the
largest value of that parameter, within its bounds, at which the detector
still fires on it (one below the lower bound when it never fires), so
``predict`` is ``decision_function >= threshold`` and a tuned decision
threshold is a tuned parameter. Computing it replays the cases once per value
of the range. The other detectors have no continuous score and no
``decision_function``.

Examples
--------
>>> from harness.sweep import DetectorClassifier
>>> clf = DetectorClassifier("repetition_guard", chunking="word", max_repeats=3)
>>> case = {"id": "c", "messages": [{"type": "bot", "text": "again and again " * 20}],
...         "label": {"looping": True, "source": "synthetic"}}
>>> clf.fit([case], [1]).predict([case]).tolist()
[1]
>>> clf.get_params()["max_repeats"], clf.get_params()["ngram"]
(3, 4)
>>> int(clf.decision_function([case])[0]) >= 3
True
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.metaestimators import available_if

from .._corpus_reader import Case, iter_cases
from ..detectors import get_detector
from ..evaluate import resolve_corpora
from ._objective import DetectorRunner
from ._split import SweepCase

__all__ = ["SCORE_PARAMS", "DetectorClassifier", "as_cases", "corpus_arrays"]

#: Detectors with a continuous score: the count threshold it is read from
#: (larger values fire on fewer cases; checked on the synthetic corpus by the tests).
SCORE_PARAMS: dict[str, str] = {
    "repetition_guard": "max_repeats",
    "overthinking": "max_doubt_markers",
    "alm": "max_repeated_tool_calls",
    "repeated_result_run": "min_result_repetitions",
    "repeated_suffix": "min_repetitions",
    "text_run": "min_units",
    "error_retry": "min_errors",
}

_OWN = ("detector", "chunking", "seed")
_MAX_RUNNERS = 4
_RUNNERS: OrderedDict[tuple[Any, ...], DetectorRunner] = OrderedDict()


def as_cases(X: Any) -> list[Case]:
    """``X`` as a list of :class:`~harness.corpus.Case` (from cases, sweep cases or dicts).

    Raises
    ------
    TypeError
        An item is none of those, or a dict lacks ``id`` or ``messages``.
    """
    items = X.tolist() if isinstance(X, np.ndarray) else list(X)
    out: list[Case] = []
    for number, item in enumerate(items):
        if isinstance(item, SweepCase):
            out.append(item.case)
        elif isinstance(item, Case):
            out.append(item)
        elif isinstance(item, Mapping) and "id" in item and "messages" in item:
            out.append(Case(dict(item), "<memory>", number + 1))
        else:
            raise TypeError(
                f"X[{number}]: expected a Case, a SweepCase or a case dict with id and messages; "
                f"got {type(item).__name__}"
            )
    return out


def corpus_arrays(corpora: str | Iterable[str]) -> tuple[list[Case], Any, Any]:
    """``(X, y, groups)`` of corpora: the cases, their labels (0/1), their ``corpus:group``.

    Examples
    --------
    >>> X, y, groups = corpus_arrays("synthetic/default")  # doctest: +SKIP
    """
    X: list[Case] = []
    groups: list[str] = []
    for corpus in resolve_corpora(corpora):
        for case in iter_cases(corpus.path):
            X.append(case)
            groups.append(f"{corpus.name}\x1f{case.group}")
    y = np.array([int(c.looping) for c in X], dtype=int)
    return X, y, np.array(groups, dtype=object)


class DetectorClassifier(ClassifierMixin, BaseEstimator):  # type: ignore[misc]
    """A registered detector as a scikit-learn binary classifier (1: it fires on the case).

    Parameters
    ----------
    detector : str
        Registry name.
    chunking : str
        The replay's chunking policy (as ``harness eval --chunking``).
    seed : int
        Seed of the ``provider`` chunking.
    **params
        The detector's parameters; those not given are its ``defaults.json``
        values. ``get_params`` lists all of them.
    """

    def __init__(
        self,
        detector: str = "repetition_guard",
        chunking: str = "provider",
        seed: int = 0,
        **params: Any,
    ) -> None:
        self.detector = detector
        self.chunking = chunking
        self.seed = seed
        for name, value in params.items():
            setattr(self, name, value)
        self._given = tuple(params)

    def _param_names(self) -> tuple[str, ...]:
        names = get_detector(self.detector).param_names
        clash = set(names) & set(_OWN)
        if clash:
            raise ValueError(f"detector parameter names clash with estimator ones: {clash}")
        return names

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """``detector``, ``chunking``, ``seed`` and every parameter of the detector."""
        defaults = get_detector(self.detector).defaults
        out: dict[str, Any] = {name: getattr(self, name) for name in _OWN}
        for name in self._param_names():
            out[name] = getattr(self, name) if hasattr(self, name) else defaults[name]
        return out

    def set_params(self, **params: Any) -> DetectorClassifier:
        """Set estimator or detector parameters (unknown names raise ValueError, listing them)."""
        if "detector" in params:
            self.detector = params.pop("detector")
        allowed = set(_OWN) | set(self._param_names())
        for name, value in params.items():
            if name not in allowed:
                raise ValueError(
                    f"invalid parameter {name!r} for DetectorClassifier({self.detector!r}); "
                    f"allowed: {', '.join(sorted(allowed))}"
                )
            setattr(self, name, value)
        return self

    def detector_params(self) -> dict[str, Any]:
        """The detector's complete, validated parameters (ParameterError when out of bounds)."""
        params = {k: v for k, v in self.get_params().items() if k not in _OWN}
        return get_detector(self.detector).resolve(params)

    def fit(self, X: Any, y: Any = None) -> DetectorClassifier:
        """Validate the parameters; set ``classes_`` (a detector learns nothing)."""
        self.detector_params()
        self.classes_ = np.array([0, 1])
        return self

    def _runner(self, X: Any) -> DetectorRunner:
        cases = as_cases(X)
        # Grid searches predict the same folds once per candidate: keep the prepared
        # runner (and its fast path). The key is the identity of the case dicts, which
        # the cached runner keeps alive, so an id cannot be reused while it is cached.
        key = (self.detector, self.chunking, self.seed, tuple(id(c.raw) for c in cases))
        found = _RUNNERS.get(key)
        if found is not None:
            _RUNNERS.move_to_end(key)
            return found
        runner = DetectorRunner(self.detector, cases, chunking=self.chunking, seed=self.seed)
        _RUNNERS[key] = runner
        if len(_RUNNERS) > _MAX_RUNNERS:
            _RUNNERS.popitem(last=False)
        return runner

    def predict(self, X: Any) -> Any:
        """1 where the detector fires on the case, else 0 (an error counts as 0)."""
        runner = self._runner(X)
        outcomes = runner.outcomes(self.detector_params())
        return np.array([int(o.fired) for o in outcomes], dtype=int)

    def _has_score(self) -> bool:
        return self.detector in SCORE_PARAMS

    @available_if(_has_score)
    def decision_function(self, X: Any) -> Any:
        """The largest value of the score parameter at which the detector fires on each case."""
        name = SCORE_PARAMS[self.detector]
        param = get_detector(self.detector).param(name)
        assert param.low is not None and param.high is not None
        runner = self._runner(X)
        base = self.detector_params()
        low, high = int(param.low), int(param.high)
        scores = np.full(len(runner.cases), low - 1, dtype=float)
        for value in range(low, high + 1):
            outcomes = runner.outcomes({**base, name: value})
            fired = np.array([o.fired for o in outcomes], dtype=bool)
            scores[fired] = value
        return scores

    def score_param(self) -> str | None:
        """The parameter ``decision_function`` reads, or None."""
        return SCORE_PARAMS.get(self.detector)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.non_deterministic = False
        tags.input_tags.two_d_array = False
        tags.input_tags.categorical = False
        tags.requires_fit = True
        return tags
