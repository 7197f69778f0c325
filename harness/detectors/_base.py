"""The detector registry's types: parameters, detectors, adapters, fires.

A :class:`Detector` describes one detector the harness can replay: its name,
its kind (``"thread"``: evaluated after each appended message; ``"stream"``:
fed the chunks of each model message, with a fresh instance per message), its
typed parameters with the bounds the tuner searches, its defaults (always read
from ``loopguard/defaults.json``), its named presets, and ``build``, which
turns a validated parameter dict into a zero-argument factory of adapters.

* A thread adapter is made once per case; the replay calls
  ``append(message)`` for every message in order and it returns a
  :class:`Fire` when the detector fires on the thread so far (the prefix
  ending with that message). The replay stops calling an adapter once it
  fired, unless its class sets ``follow_after_fire = True`` (the
  Anti-Looping Monitor does, to report every ladder step); ``finish()`` is
  called at the end of the case and may return extra facts for the verdict.
* A stream adapter is made once per model message it reads; the replay calls
  ``push(chunk)`` for each chunk and the first :class:`Fire` returned fixes
  the fire position at the end of that chunk.

This API is stable: detectors added by other modules depend on it. See
``docs/evaluation.md``, "How to add a detector".

Examples
--------
>>> import loopguard
>>> from harness.detectors._base import Detector, Param, prefix_check
>>> demo = Detector(
...     name="demo_suffix",
...     kind="thread",
...     description="has_repeated_suffix, for the docstring",
...     defaults_key="repeated_suffix",
...     params=(Param("min_repetitions", "int", low=1, high=6),
...             Param("min_pattern_length", "int", low=1, high=6),
...             Param("max_pattern_length", "int", low=1, high=20, nullable=True)),
...     build=prefix_check(loopguard.has_repeated_suffix),
... )
>>> demo.validate({"min_repetitions": 3})["min_repetitions"]
3
>>> adapter = demo.make({})()
>>> a, b = {"type": "user", "text": "again?"}, {"type": "bot", "text": "same"}
>>> [adapter.append(m) is not None for m in (a, b, a, b)]
[False, False, False, True]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from loopguard import load_defaults

from .._errors import DetectorError, ParameterError, UnknownDetectorError

__all__ = [
    "MODEL_TEXT_EXCLUDED",
    "PARAM_TYPES",
    "REGISTRY",
    "CheckAdapter",
    "Detector",
    "DetectorError",
    "Fire",
    "Param",
    "ParameterError",
    "PrefixAdapter",
    "StreamAdapter",
    "ThreadAdapter",
    "UnknownDetectorError",
    "detector_names",
    "get_detector",
    "incremental_check",
    "is_model_text",
    "prefix_check",
    "reads_types",
    "register",
    "resolve_params",
]

#: Message types that are never the model's own text (streaming detectors skip them).
MODEL_TEXT_EXCLUDED = frozenset({"user", "system", "activity"})

#: The parameter types a :class:`Param` may have.
PARAM_TYPES = ("int", "float", "categorical", "bool")

ParamType = Literal["int", "float", "categorical", "bool"]
Kind = Literal["thread", "stream"]


@dataclass(frozen=True)
class Fire:
    """A detector fired.

    Attributes
    ----------
    reason : dict or str
        Why, JSON-able (a guard's ``GuardReason.as_dict()``, a heuristic's name...).
    extra : dict, optional
        More JSON-able facts for the verdict line.
    """

    reason: Any
    extra: Mapping[str, Any] | None = None


@runtime_checkable
class ThreadAdapter(Protocol):
    """A per-case thread detector: ``append`` each message, get a :class:`Fire` or None."""

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        """Take the next message; return a fire when the thread so far is judged stuck."""
        ...

    def finish(self) -> Mapping[str, Any] | None:
        """Called once after the last message; extra facts for the verdict, or None."""
        ...


@runtime_checkable
class StreamAdapter(Protocol):
    """A per-message streaming detector: ``push`` each chunk, get a :class:`Fire` or None."""

    def push(self, chunk: str) -> Fire | None:
        """Feed the next chunk; return a fire when the text so far trips the detector."""
        ...


AdapterFactory = Callable[[], ThreadAdapter] | Callable[[], StreamAdapter]


class PrefixAdapter:
    """A thread adapter that calls a pure check on every prefix of the thread.

    Subclasses (or :func:`prefix_check`) provide ``check(prefix) -> reason or
    None``; ``prefix`` is the list of messages so far (do not keep or mutate it).
    """

    follow_after_fire: ClassVar[bool] = False

    def __init__(self, check: Callable[[list[Mapping[str, Any]]], Any]) -> None:
        self._check = check
        self._messages: list[Mapping[str, Any]] = []

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        self._messages.append(message)
        reason = self._check(self._messages)
        return None if reason is None else Fire(reason)

    def finish(self) -> Mapping[str, Any] | None:
        return None


def prefix_check(
    function: Callable[..., bool], reason: Any = None
) -> Callable[[Mapping[str, Any]], Callable[[], ThreadAdapter]]:
    """Build a thread detector's ``build`` from a library predicate ``f(messages, **params)``.

    The detector fires on the first prefix for which ``function`` is true; its
    reason is ``reason`` (default: the function's name).
    """
    why = function.__name__ if reason is None else reason

    def build(params: Mapping[str, Any]) -> Callable[[], ThreadAdapter]:
        options = dict(params)

        def check(prefix: list[Mapping[str, Any]]) -> Any:
            return why if function(prefix, **options) else None

        return lambda: PrefixAdapter(check)

    return build


class CheckAdapter:
    """A thread adapter over an incremental check: ``check.add(message) -> bool``."""

    follow_after_fire: ClassVar[bool] = False

    def __init__(self, check: Any, reason: Any) -> None:
        self._add = check.add
        self._reason = reason

    def append(self, message: Mapping[str, Any]) -> Fire | None:
        return Fire(self._reason) if self._add(message) else None

    def finish(self) -> Mapping[str, Any] | None:
        return None


def incremental_check(
    make_check: Callable[[Mapping[str, Any]], Any], reason: Any
) -> Callable[[Mapping[str, Any]], Callable[[], ThreadAdapter]]:
    """Build a thread detector's ``build`` from ``make_check(params)``, an object whose
    ``add(message) -> bool`` gives the verdict on the thread so far (stateful, fast)."""

    def build(params: Mapping[str, Any]) -> Callable[[], ThreadAdapter]:
        options = dict(params)
        return lambda: CheckAdapter(make_check(options), reason)

    return build


def is_model_text(message: Mapping[str, Any]) -> bool:
    """Whether a streaming detector reads ``message``: the model's own, non-empty text."""
    text = message.get("text")
    return isinstance(text, str) and bool(text) and message.get("type") not in MODEL_TEXT_EXCLUDED


def reads_types(*types: str) -> Callable[[Mapping[str, Any]], bool]:
    """A ``reads`` filter for streaming detectors limited to some message types."""
    wanted = frozenset(types)

    def reads(message: Mapping[str, Any]) -> bool:
        return message.get("type") in wanted and is_model_text(message)

    return reads


_UNSET: Any = object()


@dataclass(frozen=True)
class Param:
    """One parameter of a detector, with the range the tuner searches.

    Parameters
    ----------
    name : str
        The option name, as the library takes it.
    type : {"int", "float", "categorical", "bool"}
        Integers must be integral (``3.0`` is accepted as 3); floats accept ints.
    low, high : float, optional
        Inclusive bounds of ``int`` and ``float`` parameters (required for them).
    choices : tuple, optional
        The allowed values of a ``categorical`` parameter.
    log : bool
        Search the range on a log scale.
    nullable : bool
        ``None`` is an allowed value (it means "off" or "derived", per the library).
    tune : bool
        Whether the tuner searches this parameter (False for presentation-only
        options that cannot change a verdict).
    description : str
        One line for ``--list-detectors`` and the docs.
    block : str, optional
        The ``defaults.json`` block the default is read from, when it is not the
        detector's ``defaults_key`` (``thread_cycle`` reads four blocks).
    """

    name: str
    type: ParamType
    low: float | None = None
    high: float | None = None
    choices: tuple[Any, ...] = ()
    log: bool = False
    nullable: bool = False
    tune: bool = True
    description: str = ""
    block: str | None = None

    def __post_init__(self) -> None:
        if self.type not in PARAM_TYPES:
            raise DetectorError(f"parameter {self.name}: type must be one of {PARAM_TYPES}")
        numeric = self.type in ("int", "float")
        if numeric and (self.low is None or self.high is None or not self.low <= self.high):
            raise DetectorError(f"parameter {self.name}: needs bounds low <= high")
        if self.type == "categorical" and not self.choices:
            raise DetectorError(f"parameter {self.name}: a categorical parameter needs choices")

    def allowed(self) -> str:
        """The allowed values, in words (used in error messages)."""
        if self.type == "int":
            text = f"an integer in [{_num(self.low)}, {_num(self.high)}]"
        elif self.type == "float":
            text = f"a number in [{_num(self.low)}, {_num(self.high)}]"
        elif self.type == "bool":
            text = "true or false"
        else:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        return text + (" or null" if self.nullable else "")

    def check(self, value: Any, where: str) -> Any:
        """Return ``value`` normalised (ints as int, floats as float), or raise ParameterError."""
        if value is None:
            if self.nullable:
                return None
            raise ParameterError(f"{where}.{self.name} must be {self.allowed()}; got null")
        if self.type == "bool":
            if isinstance(value, bool):
                return value
        elif self.type == "categorical":
            if any(value == c and type(value) is type(c) for c in self.choices):
                return value
        elif isinstance(value, bool) or not isinstance(value, int | float):
            pass
        elif self.type == "int":
            if isinstance(value, float) and not value.is_integer():
                pass
            elif self.low is not None and self.high is not None and self.low <= value <= self.high:
                return int(value)
        elif (
            math.isfinite(value)
            and self.low is not None
            and self.high is not None
            and self.low <= value <= self.high
        ):
            return float(value)
        raise ParameterError(f"{where}.{self.name} must be {self.allowed()}; got {value!r}")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready description (for manifests, docs and the tuner)."""
        out: dict[str, Any] = {"name": self.name, "type": self.type}
        if self.type in ("int", "float"):
            out.update(low=self.low, high=self.high, log=self.log)
        if self.type == "categorical":
            out["choices"] = list(self.choices)
        out.update(nullable=self.nullable, tune=self.tune, description=self.description)
        return out


def _num(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


@dataclass(frozen=True)
class Detector:
    """A detector the harness can replay, with its parameter space.

    Parameters
    ----------
    name : str
        Registry name (``--detector NAME``).
    kind : {"thread", "stream"}
        Thread-level (evaluated after each appended message) or streaming (fed
        each model message's chunks, fresh instance per message).
    description : str
        One line for listings.
    defaults_key : str
        The ``defaults.json`` block holding the defaults (and presets).
    params : tuple of Param
        Every parameter ``build`` accepts; each must have a default in
        ``defaults.json`` within its bounds (checked at registration).
    build : callable
        ``build(params) -> factory``; ``params`` is complete and validated;
        ``factory()`` returns a fresh :class:`ThreadAdapter` (per case) or
        :class:`StreamAdapter` (per message).
    reads : callable, optional
        Streaming detectors: which messages get an instance (default
        :func:`is_model_text`). Ignored for thread detectors.
    presets : dict, optional
        Named parameter overlays; by default the detector's block of the
        ``presets`` object of ``defaults.json``.
    defaults_document : dict, optional
        A document shaped like ``loopguard/defaults.json`` (``detectors`` and
        ``presets`` objects) to read defaults and presets from instead, for
        detectors that are not part of the library (the peers).
    """

    name: str
    kind: Kind
    description: str
    defaults_key: str
    params: tuple[Param, ...]
    build: Callable[[Mapping[str, Any]], AdapterFactory]
    reads: Callable[[Mapping[str, Any]], bool] = is_model_text
    presets: Mapping[str, Mapping[str, Any]] | None = None
    defaults_document: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    defaults: Mapping[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.kind not in ("thread", "stream"):
            raise DetectorError(f"detector {self.name}: kind must be 'thread' or 'stream'")
        names = [p.name for p in self.params]
        if len(set(names)) != len(names):
            raise DetectorError(f"detector {self.name}: duplicate parameter names")
        document = load_defaults() if self.defaults_document is None else self.defaults_document
        source = "loopguard/defaults.json" if self.defaults_document is None else "its defaults"
        blocks = document.get("detectors", {})
        defaults: dict[str, Any] = {}
        for param in self.params:
            key = param.block or self.defaults_key
            if key not in blocks or param.name not in blocks[key]:
                raise DetectorError(
                    f"detector {self.name}: {source} has no default for {key}.{param.name}"
                )
            try:
                defaults[param.name] = param.check(blocks[key][param.name], f"defaults.json {key}")
            except ParameterError as exc:
                raise DetectorError(
                    f"detector {self.name}: the default is out of the search bounds: {exc}"
                ) from None
        object.__setattr__(self, "defaults", defaults)
        if self.presets is None:
            found = document.get("presets", {}).get(self.defaults_key, {})
            object.__setattr__(self, "presets", {k: dict(v) for k, v in found.items()})
        for preset_name, overlay in (self.presets or {}).items():
            self.validate(overlay, where=f"{self.name} preset {preset_name!r}")

    @property
    def param_names(self) -> tuple[str, ...]:
        """The parameter names, in declaration order."""
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> Param:
        """The :class:`Param` called ``name`` (ParameterError listing the allowed ones)."""
        for param in self.params:
            if param.name == name:
                return param
        raise ParameterError(
            f"detector {self.name} has no parameter {name!r}; "
            f"allowed: {', '.join(self.param_names) or '(none)'}"
        )

    def validate(
        self, params: Mapping[str, Any] | None, *, where: str | None = None
    ) -> dict[str, Any]:
        """Check ``params`` (a partial dict) and return it normalised, defaults NOT filled in.

        Raises
        ------
        ParameterError
            An unknown name (the message lists the allowed ones), a wrong type
            or a value out of bounds (the message gives the allowed range).
        """
        if params is None:
            return {}
        if not isinstance(params, Mapping):
            raise ParameterError(
                f"parameters of {self.name} must be a mapping of name to value; "
                f"got {type(params).__name__}"
            )
        label = where or self.name
        out: dict[str, Any] = {}
        for name, value in params.items():
            param = self.param(str(name))
            out[param.name] = param.check(value, label)
        return out

    def resolve(
        self, params: Mapping[str, Any] | None = None, *, preset: str | None = None
    ) -> dict[str, Any]:
        """The complete parameters: defaults, then ``preset``, then ``params``, validated."""
        full = dict(self.defaults)
        if preset is not None:
            presets = self.presets or {}
            if preset not in presets:
                known = ", ".join(sorted(presets)) or "(none)"
                raise ParameterError(
                    f"detector {self.name} has no preset {preset!r}; known: {known}"
                )
            full.update(self.validate(presets[preset]))
        full.update(self.validate(params))
        return full

    def make(
        self, params: Mapping[str, Any] | None = None, *, preset: str | None = None
    ) -> AdapterFactory:
        """Resolve and validate ``params``; return the adapter factory."""
        return self.build(self.resolve(params, preset=preset))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready description: name, kind, description, params with bounds, defaults."""
        return {
            "name": self.name,
            "kind": self.kind,
            "description": self.description,
            "defaults_key": self.defaults_key,
            "params": [p.as_dict() for p in self.params],
            "defaults": dict(self.defaults),
            "presets": {k: dict(v) for k, v in (self.presets or {}).items()},
        }


#: Every registered detector, by name, in registration order.
REGISTRY: dict[str, Detector] = {}


def register(detector: Detector, *, replace: bool = False) -> Detector:
    """Add ``detector`` to :data:`REGISTRY` and return it.

    Raises
    ------
    DetectorError
        The name is taken (pass ``replace=True`` to override on purpose).
    """
    if not isinstance(detector, Detector):
        raise DetectorError(f"register() takes a Detector; got {type(detector).__name__}")
    if detector.name in REGISTRY and not replace:
        raise DetectorError(f"a detector named {detector.name!r} is already registered")
    REGISTRY[detector.name] = detector
    return detector


def detector_names() -> list[str]:
    """The registered detector names, in registration order."""
    return list(REGISTRY)


def get_detector(name: str) -> Detector:
    """The registered detector ``name``.

    Raises
    ------
    UnknownDetectorError
        The name is unknown; the message lists the registered ones.
    """
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise UnknownDetectorError(
            f"unknown detector {name!r}; known: {', '.join(REGISTRY) or '(none)'}"
        ) from None


def resolve_params(
    detectors: Iterable[str],
    params: Mapping[str, Mapping[str, Any]] | None = None,
    presets: Mapping[str, str] | None = None,
    *,
    strict: bool = False,
) -> dict[str, dict[str, Any]]:
    """Complete, validated parameters for each named detector.

    Parameters
    ----------
    detectors : iterable of str
        Detector names (unknown ones raise :class:`UnknownDetectorError`).
    params : mapping, optional
        ``{detector: {param: value}}`` overrides. Entries for registered
        detectors that are not selected are ignored unless ``strict``.
    presets : mapping, optional
        ``{detector: preset name}``, applied before ``params``.
    strict : bool
        Refuse overrides for detectors that are not selected.
    """
    names = list(detectors)
    chosen = [get_detector(n) for n in names]
    params = params or {}
    presets = presets or {}
    if not isinstance(params, Mapping):
        raise ParameterError(
            "params must map detector names to {parameter: value} tables; "
            f"got {type(params).__name__}"
        )
    for name in list(params) + list(presets):
        get_detector(name)
        if strict and name not in names:
            raise ParameterError(
                f"parameters given for detector {name!r}, which is not selected "
                f"(selected: {', '.join(names)})"
            )
    return {d.name: d.resolve(params.get(d.name), preset=presets.get(d.name)) for d in chosen}
