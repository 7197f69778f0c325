"""Family ``requested-repetition``: repetition the user asked for."""

from __future__ import annotations

from ._common import Case, Run
from ._words import WORDS, prose_sentence, stuck_sentence

__all__ = ["requested_repetition"]

_LYRIC_LINES = (
    "We ship it on a Friday night",
    "The pager sings until the light",
    "Another build, another try",
    "The logs scroll by, the hours fly",
    "We merged the branch, we crossed the line",
    "The tests are green, the world is fine",
    "A coffee cup, a failing job",
    "The server hums, the fans still throb",
    "We rolled it back and rolled it on",
    "The bug we chased all night is gone",
    "The queue is long, the night is deep",
    "The cluster counts our sheep to sleep",
    "One more deploy before we rest",
    "The cache is warm, we did our best",
    "The on-call phone is on the shelf",
    "The script will fix itself by itself",
)
_CHORUS_LINES = (
    "Oh {w}, {w}, don't let me down",
    "Keep it running all over town",
    "Deploy, deploy, and turn it round",
    "Sing it loud, {w} is the sound",
    "Green lights all the way",
    "We will ship it anyway",
)


def _song(run: Run) -> tuple[str, str, int]:
    word = run.choice(WORDS)
    chorus = "\n".join(run.sample(_CHORUS_LINES, run.randint(2, 4))).format(w=word)
    verses = run.randint(2, 4)
    lines = run.sample(
        _LYRIC_LINES, verses * 4 if verses * 4 <= len(_LYRIC_LINES) else len(_LYRIC_LINES)
    )
    parts = [f"**{word.title()} Blues**"]
    for v in range(verses):
        verse = "\n".join(lines[v * 4 : v * 4 + 4]) or lines[0]
        parts.append(f"*Verse {v + 1}*\n{verse}")
        parts.append(f"*Chorus*\n{chorus}")
    if run.chance(0.5):
        parts.append(f"*Chorus*\n{chorus}")
    ask = f"Write a short song about {word} with a chorus."
    return ask, "\n\n".join(parts), verses


def requested_repetition(seed: int, index: int) -> list[Case]:
    """Repetition the user asked for (negatives only).

    Varies: "print this line N times" (5-60, plain or in a code block), "write this
    sentence N times", a song whose chorus returns after every verse, "a string of N
    copies of one character", "count from 1 to N", "repeat after me", an ASCII grid.

    Why hard: the answer *is* a verbatim runaway repetition (identical lines, a
    chanted phrase, a glued string); only the user's request says it is wanted.

    Targets false positives of every text detector (guard, text run, chant). Label
    ``requested-repetition``, not looping.
    """
    run = Run("requested-repetition", seed, index)
    shape = run.choice(("lines", "sentence", "song", "song", "chars", "count", "echo", "grid"))
    n = run.randint(5, 60)
    if shape == "lines":
        line = run.choice(
            (
                f'print("{run.choice(WORDS)}")',
                "Hello, world!",
                f"{run.choice(WORDS)} = True",
                "All work and no play makes Jack a dull boy.",
            )
        )
        ask = f"Print this line {n} times: {line}"
        body = "\n".join([line] * n)
        answer = f"```\n{body}\n```" if run.chance(0.5) else body
    elif shape == "sentence":
        sentence = run.choice(
            (
                "I will not push to main on Fridays.",
                "I will write tests first.",
                stuck_sentence(run),
            )
        )
        ask = f"Write '{sentence}' {n} times, one per line."
        answer = "\n".join([sentence] * n) if run.chance(0.7) else " ".join([sentence] * n)
    elif shape == "song":
        ask, answer, n = _song(run)
    elif shape == "chars":
        char = run.choice(("a", "x", "=", "0", "ab", "🎉"))
        ask = f"Give me a string of exactly {n} copies of '{char}' for my test fixture."
        answer = f"Here it is:\n\n{char * n}"
    elif shape == "count":
        ask = f"Count from 1 to {n}."
        answer = (
            ", ".join(str(i) for i in range(1, n + 1))
            if run.chance(0.5)
            else "\n".join(str(i) for i in range(1, n + 1))
        )
    elif shape == "echo":
        phrase = run.choice(("ship it", "hello", "left, right", "one more time", "la"))
        ask = f"Repeat after me, {n} times: {phrase}"
        answer = ", ".join([phrase] * n) if run.chance(0.6) else " ".join([phrase] * n)
    else:
        width = run.randint(5, 20)
        ask = f"Draw a {width} by {n % 15 + 3} grid of # characters."
        answer = "\n".join(["#" * width] * (n % 15 + 3))
    if run.chance(0.4):
        answer = f"{run.choice(('Sure!', 'Here you go:', 'Of course.'))}\n\n{answer}"
    if run.chance(0.2):
        answer += f"\n\n{prose_sentence(run)}"
    run.add_case(
        "full",
        [run.user(ask), run.bot(answer)],
        looping=False,
        kind="requested-repetition",
        note=f"the user asked for the repetition ({shape})",
        tags=[f"requested-{shape}", "requested"],
        hard_negative=True,
    )
    return run.cases
