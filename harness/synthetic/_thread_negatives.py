"""Families ``same-empty-result``, ``batch`` and ``user-repeat``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._common import Case, Message, Run, fingerprint, periodic_start
from ._loops import emit_loop, opening
from ._tools import DOMAINS, TOOLS, Domain, fresh_args, healthy_steps, intent, signature
from ._words import COMPANIES, FIRST_NAMES, LAST_NAMES, WORDS, hex_id, prose, prose_sentence, unique

__all__ = ["batch", "same_empty_result", "user_repeat"]

_EMPTY_THOUGHTS = (
    "Nothing for that. Let me broaden the search.",
    "No results. Maybe a different spelling works.",
    "Empty again; trying another angle.",
    "That returned nothing. Let me try a related term.",
    "Still nothing. I'll look somewhere else.",
    "No hits. Perhaps the data lives under another name.",
    "Zero results. Let me narrow it differently.",
    "Hmm, empty. Trying the next candidate.",
)


def same_empty_result(seed: int, index: int) -> list[Case]:
    """Different calls that all return the same empty result (negatives only).

    Varies: one tool with a new query each time (its own empty shape), or several tools
    of the domain that all return ``[]``, ``null``, ``{}`` or ``""``; 3-8 empty calls;
    reasoning between calls (70%); how the run ends (gives up and reports, or finally
    finds something).

    Why hard: the results repeat exactly (``{"records": []}``, ``[]``, ``null``), so a
    detector that compares results, or results by tool, sees a run of identical
    outputs; only the arguments show the agent is exploring.

    Targets false positives of ``repeated_result_run`` variants and result-only
    hashing. Label: ``same-empty-result``, not looping.
    """
    run = Run("same-empty-result", seed, index)
    candidates = [d for d in DOMAINS if any(TOOLS[n].empty is not None for n in d.tools)]
    domain, msgs = opening(run, run.choice(candidates))
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 4), used)
    empties = [TOOLS[n] for n in domain.tools if TOOLS[n].empty is not None]
    single = len(empties) == 1 or run.chance(0.6)
    first = run.choice(empties)
    think = run.chance(0.7)
    thoughts = unique(run, lambda: run.choice(_EMPTY_THOUGHTS), min(len(_EMPTY_THOUGHTS), 8))
    count = run.randint(3, 8)
    # Several tools share one empty shape, as tools returning [] or null do.
    shared: Any = run.choice(([], None, {}, "")) if not single else None
    for i in range(count):
        tool = first if single else run.choice(empties)
        args = fresh_args(run, tool, used)
        if think:
            lead = intent(run, tool, args) if i == 0 else thoughts[i % len(thoughts)]
            msgs.append(run.reasoning(lead))
        msgs += run.call(tool.name, args, tool.empty if single else shared)
    found = run.chance(0.4)
    if found:
        args = fresh_args(run, first, used)
        msgs += run.call(first.name, args, first.ok(run, args))
        msgs.append(run.bot(f"Found it on the {count + 1}th attempt. {prose_sentence(run)}"))
    else:
        msgs.append(
            run.bot(
                f"I tried {count} different searches and none returned anything. "
                "Could you check the name?"
            )
        )
    tags = ["single-tool" if single else "several-tools"] + (
        ["interleaved-reasoning"] if think else []
    )
    tags.append("found" if found else "gave-up")
    run.add_case(
        "full",
        msgs,
        looping=False,
        kind="same-empty-result",
        note=f"{count} calls with different arguments all return the same empty result",
        tags=tags,
        hard_negative=True,
    )
    return run.cases


_BATCH: tuple[tuple[str, Callable[[Run, int], dict[str, Any]], Any, str, str], ...] = (
    (
        "delete_file",
        lambda run, i: {"path": f"tmp/cache/{hex_id(run, 12)}.bin"},
        {"deleted": True},
        "cache files",
        "Clear out the stale cache files under tmp/cache.",
    ),
    (
        "add_label",
        lambda run, i: {
            "repo": "acme/web",
            "number": 1000 + i * run.randint(1, 9),
            "label": "triaged",
        },
        {"ok": True},
        "issues",
        "Label every issue from this week's triage as triaged.",
    ),
    (
        "update_record",
        lambda run, i: {
            "table": "contacts",
            "id": run.randint(1, 99999),
            "fields": {"owner": "Dana Weber"},
        },
        {"ok": True, "updated": 1},
        "contacts",
        "Dana Weber takes over Ivan's accounts. Reassign all his contacts to her.",
    ),
    (
        "resize_image",
        lambda run, i: {"src": f"img/{run.choice(WORDS)}_{i:03d}.png", "width": 800},
        {"status": "ok"},
        "images",
        "Resize all product images in img/ to 800 px wide.",
    ),
    (
        "set_feature_flag",
        lambda run, i: {
            "tenant": f"t-{run.randint(100, 999)}",
            "flag": "new_checkout",
            "enabled": True,
        },
        {"ok": True},
        "tenants",
        "Turn on new_checkout for every tenant in the beta list.",
    ),
    (
        "send_invite",
        lambda run, i: {
            "email": f"{run.choice(FIRST_NAMES).lower()}.{run.choice(LAST_NAMES).lower()}{i}"
            "@example.com",
            "role": "viewer",
        },
        None,
        "users",
        "Invite everyone on the attached list as viewers.",
    ),
    (
        "archive_ticket",
        lambda run, i: {"ticket": f"SUP-{run.randint(1000, 9999)}", "reason": "resolved"},
        {"archived": True},
        "tickets",
        "Archive all resolved support tickets older than 30 days.",
    ),
    (
        "tag_customer",
        lambda run, i: {"customer": run.choice(COMPANIES), "tag": "q3-renewal", "seq": i},
        {"ok": True},
        "customers",
        "Tag every customer up for renewal this quarter with q3-renewal.",
    ),
)


def batch(seed: int, index: int) -> list[Case]:
    """Batch operations over many items with the same acknowledgement (negatives only).

    Varies: the operation (delete, label, update, resize, flag, invite, archive, tag),
    5-16 items, the result (identical ``{"ok": true}`` style acks, ``null``, or acks that
    echo the item: 20%), narration every few items, a plan in reasoning first.

    Why hard: the same tool is called back to back with results that are byte-identical;
    only one argument field (the item) differs, exactly the shape of a
    ``drifting-args`` loop.

    Targets false positives of result-run checks and of detectors that normalise
    arguments (the counterpart of ``drifting-args``). Label ``batch``, not looping.
    """
    run = Run("batch", seed, index)
    name, make_args, ack, noun, task = run.choice(_BATCH)
    domain = run.choice(DOMAINS)
    msgs: list[Message] = [run.user(task)]
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 2), used)
    items = run.randint(5, 16)
    echo = run.chance(0.2)
    if run.chance(0.6):
        msgs.append(
            run.reasoning(f"There are {items} {noun} to process. I'll go through them one by one.")
        )
    narrate_every = run.choice((0, 0, 3, 5, 8))
    seen: set[str] = set()
    for i in range(items):
        args = make_args(run, i)
        while signature(name, args) in seen:
            args = make_args(run, i)
        seen.add(signature(name, args))
        result = {"ok": True, "item": next(iter(args.values()))} if echo else ack
        msgs += run.call(name, args, result)
        if narrate_every and (i + 1) % narrate_every == 0 and i + 1 < items:
            msgs.append(run.bot(f"{i + 1} of {items} {noun} done."))
    msgs.append(run.bot(f"All {items} {noun} are processed."))
    tags = ["batch-" + name] + (["echo-result"] if echo else ["identical-results"])
    run.add_case(
        "full",
        msgs,
        looping=False,
        kind="batch",
        note=f"{items} calls of {name}, one per item, with the same acknowledgement",
        tags=tags,
        hard_negative=True,
    )
    return run.cases


_REPEATS = (
    "continue",
    "next",
    "keep going",
    "more",
    "go on",
    "and then?",
    "Next one, please.",
)
_QUESTIONS = (
    "Why is the build still failing?",
    "Is it done yet?",
    "Can you check again?",
    "What about the invoices?",
)


def _progress_reply(run: Run, domain: Domain, used: set[str], part: int) -> list[Message]:
    if run.chance(0.5):
        return [
            *healthy_steps(run, domain, run.randint(1, 2), used),
            run.bot(f"Part {part}: {prose_sentence(run)}"),
        ]
    return [run.bot(" ".join(prose(run, run.randint(1, 3))))]


def user_repeat(seed: int, index: int) -> list[Case]:
    """Users repeating themselves: "continue" or the same question, 3-6 times.

    Varies: the repeated user text (nudges or a question), whether the agent answers with
    new content or new tool work each time (negatives: ``user-repeat``) or with the
    identical answer every time (positives: ``suffix``), the amount of earlier progress.

    Why hard: half of every exchange is identical in the negatives; in the positives
    the loop starts only where the answers start repeating, after several identical user
    turns with different answers.

    Targets ``repeated_suffix`` (positives) and its false positives (negatives).
    Onset: the user message that opens the first identical exchange.
    """
    run = Run("user-repeat", seed, index)
    domain, msgs = opening(run)
    used: set[str] = set()
    msgs += healthy_steps(run, domain, run.randint(0, 4), used)
    msgs.append(run.bot(prose_sentence(run)))
    nudge = run.choice(_REPEATS) if run.chance(0.7) else run.choice(_QUESTIONS)
    tags = ["repeated-question" if nudge in _QUESTIONS else "repeated-nudge"]
    positive = run.chance(0.5)
    for part in range(run.randint(0, 2) if positive else run.randint(3, 6)):
        msgs.append(run.user(nudge))
        msgs += _progress_reply(run, domain, used, part + 2)
    if not positive:
        run.add_case(
            "full",
            msgs,
            looping=False,
            kind="user-repeat",
            note="the user repeats the same message; each answer is new",
            tags=tags,
            hard_negative=True,
        )
        return run.cases
    answer = " ".join(unique(run, lambda: prose_sentence(run), run.randint(1, 2)))
    block = [run.user(nudge), run.bot(answer)]
    reps = run.randint(2, 5)
    units = [[run.again(m) for m in block] for _ in range(reps)]
    full = msgs + [m for u in units for m in u]
    onset = periodic_start([fingerprint(m) for m in full], len(msgs), 2)
    emit_loop(
        run,
        msgs,
        units,
        onset=onset,
        first_len=2,
        min_units=2,
        kind="suffix",
        note="the user repeats the same message and the agent gives the identical answer {n} times",
        tags=[*tags, "user-in-loop"],
    )
    return run.cases
