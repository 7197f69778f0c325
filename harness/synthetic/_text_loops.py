"""Families ``text-run``, ``runaway-stream`` and ``chant``: loops inside one streamed text."""

from __future__ import annotations

from ._common import Case, Message, Run
from ._loops import emit_text_loop, opening
from ._tools import healthy_steps
from ._words import WORDS, prose, stuck_sentence, unique

__all__ = ["chant", "runaway_stream", "text_run"]


def _context(run: Run, max_steps: int = 3) -> list[Message]:
    domain, msgs = opening(run)
    msgs += healthy_steps(run, domain, run.randint(0, max_steps), set())
    return msgs


def text_run(seed: int, index: int) -> list[Case]:
    """Runaway sentences: 1-3 sentences repeated 3-30 times at the end of a message.

    Varies: the unit (one sentence, or a block of two or three), typical "stuck"
    sentences or plain technical prose, the separator (space, newline, blank line), a
    healthy lead-in of 0-8 sentences, bot answer or reasoning (30%), a cut-off partial
    last repeat, the preceding thread.

    Why hard: a four-times repeat has fewer than the eight units the text-run check
    needs; multi-sentence units raise the share of unique units; reasoning is skipped by
    the thread's text adapter; the prefix-only cuts are the same stream a little earlier.

    Targets ``hasRepeatedTextRun`` (and the thread's text adapter) and the streaming
    guard. Onset: ``char`` = the first character of the first occurrence of the unit.
    """
    run = Run("text-run", seed, index)
    ctx = _context(run)
    type_ = "bot" if run.chance(0.7) else "reasoning"
    sep = run.choice((" ", " ", " ", "\n", "\n\n"))
    size = 1 if run.chance(0.6) else run.randint(2, 3)
    unit_sentences = unique(run, lambda: stuck_sentence(run), size)
    lead = prose(run, run.randint(0, 8), avoid=set(unit_sentences))
    prefix = "".join(s + sep for s in lead)
    unit = "".join(s + sep for s in unit_sentences)
    reps = run.randint(4, 30) if size == 1 else run.randint(3, 15)
    tags = [f"unit-{size}-sentences"] + (["in-reasoning"] if type_ == "reasoning" else [])
    tags += ["newline-separated"] if "\n" in sep else []
    emit_text_loop(
        run,
        ctx,
        type_,
        prefix,
        unit,
        reps,
        min_reps=4 if size == 1 else 3,
        kind="text-run",
        note=f"a unit of {size} sentence(s) repeats {{n}} times to the end of the message",
        tags=tags,
    )
    return run.cases


_COUNTER_UNITS = (
    "Step {n}: I re-run the check and it still fails. ",
    "Attempt {n}: calling the linter again. ",
    "Iteration {n}. The value is still 0. ",
    "{n}. Check the configuration file again.\n",
    "Retry #{n} - the request timed out, trying again.\n",
    "Pass {n}: verifying the output once more. ",
)


def _article(run: Run, paragraphs: int) -> str:
    parts: list[str] = []
    if run.chance(0.5):
        parts.append(
            f"## {run.choice(WORDS).title()} "
            f"{run.choice(('overview', 'analysis', 'fix', 'plan', 'notes'))}"
        )
    for i in range(paragraphs):
        if i == 1 and run.chance(0.3):
            parts.append("\n".join(f"- {s}" for s in prose(run, run.randint(2, 5))))
        else:
            parts.append(" ".join(prose(run, run.randint(2, 5))))
    return "\n\n".join(parts) + "\n\n"


def runaway_stream(seed: int, index: int) -> list[Case]:
    """A long streamed answer that turns into a runaway loop after a healthy start.

    Varies: a healthy lead of 1-8 paragraphs (headings, bullet lists, prose), the loop
    unit (a paragraph, 1-3 sentences, or a sentence with a counter that increments:
    ``Step 14: ...``), the total length (2,000-5,000 characters), bot (80%) or reasoning,
    a cut-off partial last repeat.

    Why hard: the loop starts late, after up to 4,000 characters of good text, so a
    window-based detector has to forget the healthy part; counter units never repeat
    exactly; paragraph units are long (up to ~600 characters) compared with n-gram
    windows.

    Targets the streaming repetition guard (with the production ``minChars`` of 2,000)
    and ``hasRepeatedTextRun`` on the 4,000-character tail. Onset: ``char`` = the first
    character of the first occurrence of the unit.
    """
    run = Run("runaway-stream", seed, index)
    ctx = _context(run, 2)
    type_ = "bot" if run.chance(0.8) else "reasoning"
    prefix = _article(run, run.randint(1, 8))
    roll = run.rng.random()
    if roll < 0.2:
        template = run.choice(_COUNTER_UNITS)
        start = run.randint(2, 20)

        def unit(i: int) -> str:
            return template.format(n=start + i)

        shape = "counter"
        sample = unit(0)
    elif roll < 0.5:
        sentences = prose(run, run.randint(2, 4))
        sample = " ".join(sentences) + "\n\n"
        unit = sample  # type: ignore[assignment]
        shape = "paragraph"
    else:
        sentences = unique(run, lambda: stuck_sentence(run), run.randint(1, 3))
        sample = " ".join(sentences) + " "
        unit = sample  # type: ignore[assignment]
        shape = "sentences"
    target = run.randint(2000, 5000)
    reps = max(4, (target - len(prefix)) // len(sample))
    tags = [f"unit-{shape}"] + (["counter"] if shape == "counter" else [])
    tags += ["in-reasoning"] if type_ == "reasoning" else []
    emit_text_loop(
        run,
        ctx,
        type_,
        prefix,
        unit,
        reps,
        min_reps=4,
        kind="runaway-stream",
        note=f"after a healthy start, a {shape} unit repeats {{n}} times to the end of the stream",
        tags=tags,
    )
    return run.cases


_PHRASES = (
    "let me call lint",
    "I need to verify",
    "checking again",
    "the answer is",
    "please wait",
    "processing",
    "one more time",
    "I am sorry",
    "let me think",
    "run the tests",
    "okay",
    "hmm",
    "wait",
    "yes",
    "loading",
    "the the",
    "go go go",
    "I will fix it",
    "almost there",
    "retrying now",
)
_GLUED = ("lint", "ha", "na", "ok", "la", "yes", "hmm", "no", "哈", "对", "嗯", "的", "ab", "xo")
_SEPARATORS = {
    "period": ". ",
    "bang": "! ",
    "question": "? ",
    "newline": "\n",
    "space": " ",
    "comma": ", ",
    "ellipsis": "… ",
    "dash": " - ",
    "semicolon": "; ",
    "glued": "",
}
_TERMINATED = ("period", "bang", "question", "newline")
_EMPHASIS = (
    "Yes, yes, yes! That is exactly the bug.",
    "No, no, no: the cache is fine, the key is wrong.",
    "Go, go, go! The deploy is green.",
    "Ha ha ha, good catch.",
    "Thanks, thanks, thanks!",
    "Wait, wait, wait. Before we merge, the migration needs a backup.",
    "Very, very careful with that flag.",
    "Knock knock. Who's there? The build. The build who? The build that finally passes.",
)


def chant(seed: int, index: int) -> list[Case]:
    """A short phrase chanted 8-80 times, with and without sentence terminators.

    Varies: the phrase (1-4 words, some single tokens, some CJK), the separator (". ",
    "! ", "? ", newline, space, comma, ellipsis, dash, semicolon, or none at all), the
    capitalisation, a healthy lead-in of 0-3 sentences, bot or reasoning. Negatives:
    healthy messages with a phrase said two or three times for emphasis
    ("Yes, yes, yes!").

    Why hard: without terminators the whole chant is one text-run unit; with no
    whitespace at all (``lintlintlint``) the guard never sees a word
    (``exact-heuristics-miss``); emphasis repeats a phrase too, just not for long.

    Targets the streaming repetition guard and ``hasRepeatedTextRun``. Onset: ``char`` =
    the first character of the first occurrence of the phrase.
    """
    run = Run("chant", seed, index)
    ctx = _context(run, 2)
    type_ = "bot" if run.chance(0.75) else "reasoning"
    if run.chance(0.2):
        lead = prose(run, run.randint(1, 3))
        emphasis = run.choice(_EMPHASIS)
        text = " ".join([*lead[:1], emphasis, *lead[1:]])
        run.add_case(
            "full",
            [*ctx, run.message(type_, text)],
            looping=False,
            kind="progress",
            note="a phrase said two or three times for emphasis",
            tags=["emphasis"],
            hard_negative=True,
        )
        return run.cases
    mode = run.choice(tuple(_SEPARATORS))
    if mode == "glued":
        phrase = run.choice(_GLUED)
    else:
        phrase = run.choice(_PHRASES)
        if mode in _TERMINATED or run.chance(0.3):
            phrase = phrase[:1].upper() + phrase[1:]
    lead_sentences = prose(run, run.randint(0, 3))
    joiner = "\n" if "\n" in _SEPARATORS[mode] else " "
    prefix = "".join(s + joiner for s in lead_sentences)
    unit = phrase + _SEPARATORS[mode]
    reps = run.randint(8, 80)
    tags = [f"separator-{mode}"]
    if mode not in _TERMINATED:
        tags.append("no-terminators")
    if mode == "glued":
        tags += ["no-whitespace", "exact-heuristics-miss"]
    if any(ord(c) > 0x2E80 for c in phrase):
        tags.append("cjk")
    tags += ["in-reasoning"] if type_ == "reasoning" else []
    emit_text_loop(
        run,
        ctx,
        type_,
        prefix,
        unit,
        reps,
        min_reps=8,
        kind="chant",
        note=f"the phrase {phrase!r} is chanted {{n}} times",
        tags=tags,
    )
    return run.cases
