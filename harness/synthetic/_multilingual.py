"""Family ``multilingual``: text loops (and healthy text) in other languages and scripts."""

from __future__ import annotations

from ._common import Case, Run
from ._loops import emit_text_loop
from ._words import LANGUAGES, language_sentence, unique

__all__ = ["multilingual"]

_ASKS = {
    "es": "¿Puedes resumir el estado de la migración?",
    "fr": "Peux-tu résumer l'état de la migration ?",
    "de": "Kannst du den Stand der Migration zusammenfassen?",
    "pt": "Você pode resumir o estado da migração?",
    "ru": "Можешь кратко описать состояние миграции?",
    "zh": "你能总结一下迁移的进展吗？",
    "ja": "移行の状況をまとめてもらえますか？",
    "ko": "마이그레이션 진행 상황을 요약해 줄 수 있나요?",
}


def multilingual(seed: int, index: int) -> list[Case]:
    """Loops and healthy answers in Spanish, French, German, Portuguese, Russian,
    Chinese, Japanese and Korean.

    Varies: the language and script, sentences joined by spaces, newlines or (Chinese,
    Japanese) nothing at all, a healthy lead of 0-6 sentences, a unit of one or two
    sentences repeated 4-30 times, bot or reasoning. Negatives (30%): healthy answers of
    distinct sentences; plus the prefix-only cuts.

    Why hard: the text-run check keeps only ASCII letters, so Cyrillic, Hangul and CJK
    sentences become empty units; Chinese and Japanese without spaces have no
    whitespace for the guard to split words (``exact-heuristics-miss``); accented Latin
    letters are split inside words.

    Targets the streaming repetition guard and ``hasRepeatedTextRun``. Onset: ``char`` =
    the first character of the first occurrence of the unit.
    """
    run = Run("multilingual", seed, index)
    lang = run.choice(tuple(LANGUAGES))
    spec = LANGUAGES[lang]
    ctx = [run.user(_ASKS[lang])]
    type_ = "bot" if run.chance(0.8) else "reasoning"
    sep = str(spec["sep"]) if run.chance(0.7) else "\n"
    base_tags = [f"lang-{lang}", *spec["tags"]]  # type: ignore[misc]
    if sep == "\n":
        base_tags.append("newline-separated")
    glued = sep == "" and lang in ("zh", "ja")
    if run.chance(0.3):
        n = run.randint(3, 10)
        sentences = unique(run, lambda: language_sentence(run, lang), n)
        text = (sep if sep else "").join(sentences)
        run.add_case(
            "full",
            [*ctx, run.message(type_, text)],
            looping=False,
            kind="progress",
            note=f"a healthy answer of {n} distinct sentences ({lang})",
            tags=base_tags,
            hard_negative=True,
        )
        return run.cases
    size = 1 if run.chance(0.7) else 2
    unit_sentences = unique(run, lambda: language_sentence(run, lang), size)
    lead = unique(
        run, lambda: language_sentence(run, lang), run.randint(0, 6), avoid=set(unit_sentences)
    )
    prefix = "".join(s + sep for s in lead)
    unit = "".join(s + sep for s in unit_sentences)
    reps = run.randint(4, 30)
    tags = [*base_tags, f"unit-{size}-sentences"]
    if glued:
        tags += ["no-whitespace", "exact-heuristics-miss"]
    emit_text_loop(
        run,
        ctx,
        type_,
        prefix,
        unit,
        reps,
        min_reps=4,
        kind="text-run",
        note=f"a unit of {size} {lang} sentence(s) repeats {{n}} times to the end of the message",
        tags=tags,
    )
    return run.cases
