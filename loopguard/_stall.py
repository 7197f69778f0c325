"""``StallDetector``: nothing new has come out of the last steps.

The Anti-Looping Monitor's drift check needs state snapshots, which most traces
do not have. This generalises its idea to what every trace has: a step is one
settled tool call (and, on request, one ``bot`` message), and a step is new
when it brings a tool never called before, or arguments, a result or a state
value with enough words never seen before in the same place. After
:func:`loopguard.normalize_text`, digits do not count: a counter, a page number
or a timestamp that moves is not progress. ``docs/neardup.md`` explains the
choices.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._neardup import _Options, settled_result
from ._similarity import field, iter_messages, normalize_text, token_set, value_text

__all__ = ["StallDetector", "has_stalled"]


class StallDetector:
    """No new tool, argument, result or state value in the last ``steps`` steps.

    A **step** is a settled tool response (see :func:`loopguard.settled_result`)
    and, with ``include_text``, a ``bot`` message with text. Each value is
    reduced to the word set of its normalised text, and each place keeps the
    words it has seen: arguments and results per tool, state values per key
    (``message["state"]``, on any message), bot text per ``meta.agent``. A
    value is **new** when at least one of its words, and at least
    ``min_novelty`` of them, were never seen in its place. A step is new when
    its tool was never called before or any of its values is new; a new state
    snapshot on a message that is not a step counts as progress too.

    The thread is stalled once ``steps`` steps in a row brought nothing new,
    and stays so until something new comes.

    Parameters
    ----------
    steps : int, optional
        Steps without anything new that make a stall (integer >= 1).
    min_novelty : float, optional
        Share in [0, 1] of a value's distinct words that must be unseen for it
        to be new (0: one unseen word is enough).
    include_text : bool, optional
        Count ``bot`` messages as steps too (their text is a value).

    Omitted options (and ``None``) take their default from ``defaults.json``
    (block ``stall``).

    Raises
    ------
    OptionError
        An option outside its range (named in the message).

    Examples
    --------
    >>> def resp(name, page, result):
    ...     fn = {"name": name, "arguments": {"page": page}, "result": result}
    ...     return {"type": "activity", "text": "",
    ...             "meta": {"activity": {"type": "response", "function": fn}}}
    >>> stall = StallDetector(steps=3, min_novelty=0.1, include_text=False)
    >>> pages = ["alpha beta", "gamma delta"] * 3  # the page counter moves, the pages repeat
    >>> [stall.append(resp("list", n, page)) for n, page in enumerate(pages)]
    [False, False, False, False, True, True]
    >>> stall.last_match["messages"]
    [3, 4, 5]
    """

    def __init__(
        self,
        *,
        steps: object = None,
        min_novelty: object = None,
        include_text: object = None,
    ) -> None:
        opts = _Options("stall")
        self._steps = opts.integer("steps", steps, 1)
        self._min_novelty = opts.number("min_novelty", min_novelty, 0.0, 1.0)
        self._include_text = opts.flag("include_text", include_text)
        self.reset()

    def reset(self) -> None:
        """Forget the thread."""
        self._index = -1
        self._tools: set[str] = set()
        self._seen: dict[tuple[str, str | None], set[str]] = {}
        self._since_new = 0
        self._stale: list[int] = []
        self._last_new: int | None = None
        self.last_match: dict[str, Any] | None = None

    @property
    def options(self) -> dict[str, object]:
        """The resolved options."""
        return {
            "steps": self._steps,
            "min_novelty": self._min_novelty,
            "include_text": self._include_text,
        }

    @property
    def steps_without_novelty(self) -> int:
        """Steps in a row that brought nothing new, up to now."""
        return self._since_new

    def _new(self, place: tuple[str, str | None], value: object) -> bool:
        words = token_set(normalize_text(value_text(value)))
        if not words:
            return False
        seen = self._seen.setdefault(place, set())
        unseen = len(words - seen) if seen else len(words)
        seen.update(words)
        return unseen > 0 and unseen / len(words) >= self._min_novelty

    def _state_new(self, state: object) -> bool:
        if isinstance(state, Mapping):
            # Every value is looked at (not any()): each must enter the vocabulary.
            found = [self._new(("state", str(key)), value) for key, value in state.items()]
            return any(found)
        return self._new(("state", None), state)

    def append(self, message: object) -> bool:
        """Take the next message; return whether the thread has stalled."""
        self._index += 1
        new = False
        is_step = False
        settled = settled_result(message)
        if settled is not None:
            is_step = True
            name, arguments, result = settled
            if name not in self._tools:
                self._tools.add(name)
                new = True
            new = self._new(("args", name), arguments) or new
            new = self._new(("result", name), result) or new
        elif self._include_text and field(message, "type") == "bot":
            text = field(message, "text")
            if isinstance(text, str) and text:
                is_step = True
                agent = field(field(message, "meta"), "agent")
                new = self._new(("text", agent if isinstance(agent, str) else None), text)
        if isinstance(message, Mapping) and "state" in message:
            new = self._state_new(message["state"]) or new
        if new:
            self._since_new = 0
            self._stale = []
            self._last_new = self._index
        elif is_step:
            self._since_new += 1
            self._stale.append(self._index)
            if len(self._stale) > self._steps:
                del self._stale[0]
        if self._since_new < self._steps:
            return False
        self.last_match = {
            "detector": "stall",
            "steps": self._since_new,
            "messages": list(self._stale),
            "last_new": self._last_new,
        }
        return True


def has_stalled(messages: object, **options: object) -> bool:
    """Whether a whole thread ends stalled (see :class:`StallDetector`).

    Examples
    --------
    >>> poll = {"type": "activity", "text": "", "meta": {"activity": {"type": "response",
    ...     "function": {"name": "status", "arguments": {}, "result": "pending (try 1)"}}}}
    >>> has_stalled([poll] * 4, steps=3, min_novelty=0.1, include_text=False)
    True
    """
    monitor = StallDetector(**options)
    verdict = False
    for message in iter_messages(messages):
        verdict = monitor.append(message)
    return verdict
