"""Families ``structured-loop``, ``enumeration``, ``markdown-table`` and ``repetitive-code``.

Lists, tables and code repeat by nature. The loop family puts a verbatim loop inside
them; the three negative families are the healthy versions, with long shared prefixes.
"""

from __future__ import annotations

from collections.abc import Callable

from ._common import Case, Message, Run
from ._loops import emit_text_loop, opening
from ._tools import healthy_steps
from ._words import COMPANIES, FIRST_NAMES, LAST_NAMES, WORDS, hex_id, iso_time, prose_sentence

__all__ = ["enumeration", "markdown_table", "repetitive_code", "structured_loop"]

_IMPERATIVES = (
    "Update",
    "Check",
    "Migrate",
    "Review",
    "Deploy",
    "Test",
    "Document",
    "Remove",
    "Rename",
    "Backfill",
    "Monitor",
    "Rotate",
)
_OBJECTS = (
    "the {w} config",
    "the {w} service",
    "the {w} tables",
    "the {w} dashboards",
    "the {w} API keys",
    "the {w} cron job",
)
_TAILS = (
    "for the {w} team",
    "in staging first",
    "before Friday",
    "and note the result",
    "behind a feature flag",
    "with a rollback plan",
    "in all regions",
    "",
)


def _item(run: Run) -> str:
    obj = run.choice(_OBJECTS).format(w=run.choice(WORDS))
    tail = run.choice(_TAILS).format(w=run.choice(WORDS))
    return f"{run.choice(_IMPERATIVES)} {obj}{' ' + tail if tail else ''}"


def _items(run: Run, n: int, avoid: set[str] | None = None) -> list[str]:
    seen = set(avoid or ())
    out: list[str] = []
    while len(out) < n:
        item = _item(run)
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


# Templates with one slot: long shared prefixes, distinct items.
_SHARED_PREFIX = (
    "Update the configuration of the {x} service to use the new endpoint",
    "Check that the {x} job finished without errors in the last 24 hours",
    "Verify the {x} dashboard shows data for the new region",
    "Confirm that {x} has been migrated to the new database cluster",
    "Ask the owner of {x} to review the access policy",
    "Make sure the {x} alerts route to the on-call channel",
)


def _table_row(run: Run, lead: str) -> str:
    status = run.choice(("✅", "✅", "❌", "⚠️", "ok", "failing"))
    version = f"v{run.randint(1, 9)}.{run.randint(0, 30)}"
    return f"| {lead} | {status} | {run.randint(3, 900)} ms | {version} |"


_TABLE_HEADER = "| Service | Status | p95 latency | Version |\n|---|---|---|---|\n"


def _code_lines(run: Run, n: int) -> tuple[str, str, list[str]]:
    """(fence language, opening lines, n distinct body lines) of a repetitive snippet."""
    lang = run.choice(("python", "python", "sql", "typescript", "yaml", "css"))
    words = run.sample(WORDS, min(n, len(WORDS)))
    while len(words) < n:
        words.append(f"{run.choice(WORDS)}{len(words)}")
    if lang == "python":
        head = f"def check_{run.choice(WORDS)}(data):\n"
        body = [f"    assert parse({w!r}) == {run.randint(0, 999)}\n" for w in words]
    elif lang == "sql":
        head = "BEGIN;\n"
        body = [
            "INSERT INTO products (id, name, price) "
            f"VALUES ({i + 1}, '{w}', {run.randint(1, 500)}.00);\n"
            for i, w in enumerate(words)
        ]
    elif lang == "typescript":
        head = "switch (kind) {\n"
        body = [f'  case "{w}": return handle{w.title()}(req);\n' for w in words]
    elif lang == "yaml":
        head = "services:\n"
        body = [f"  - name: {w}\n    replicas: {run.randint(1, 6)}\n" for w in words]
    else:
        head = ""
        body = [
            f".btn-{w} {{ color: #{hex_id(run, 6)}; margin: {run.randint(0, 24)}px; }}\n"
            for w in words
        ]
    return lang, head, body


_CODE_LOOPS: dict[str, tuple[str, ...]] = {
    "python": (
        "    retry(request)\n",
        "    result = process(result)\n",
        "    if not ok:\n        continue\n",
        "    return None\n",
        '    log.debug("retrying")\n',
        "    data = normalise(data)\n    data = validate(data)\n",
    ),
    "sql": ("SELECT * FROM orders WHERE id = 1;\n", "ROLLBACK;\n", "COMMIT;\nBEGIN;\n"),
    "typescript": ("  await sleep(100);\n", "  default: return null;\n", "  // TODO\n"),
    "yaml": ("  - name: worker-1\n    replicas: 1\n", "    image: registry/app:latest\n"),
    "css": (".btn { color: red; }\n", "  margin: 0;\n", "@media print {\n"),
}


def _context(run: Run) -> list[Message]:
    domain, msgs = opening(run)
    msgs += healthy_steps(run, domain, run.randint(0, 2), set())
    return msgs


def structured_loop(seed: int, index: int) -> list[Case]:
    """Loops inside lists, markdown tables and code blocks.

    Varies: the container (bullet, numbered, checklist list; table; code block in
    Python, SQL, TypeScript, YAML or CSS), 2-10 healthy lines first (themselves
    repetitive: shared prefixes, same shape), the looping unit (1-3 lines, a numbered
    item whose number keeps counting, a table row, a code line or block), 3-30 repeats,
    an unclosed code fence, bot or reasoning.

    Why hard: the healthy part already looks repetitive (the guard's enumeration
    exemption may spare the loop too); numbered loops carry an incrementing counter;
    code fences are skipped by some detectors.

    Targets the streaming repetition guard (and its structural exemption) and
    ``hasRepeatedTextRun`` (newlines split units). Onset: ``char`` = the start of the
    line where the first occurrence of the repeated unit begins.
    """
    run = Run("structured-loop", seed, index)
    ctx = _context(run)
    type_ = "bot" if run.chance(0.85) else "reasoning"
    container = run.choice(("list", "list", "table", "code", "code"))
    intro = prose_sentence(run) + "\n\n" if run.chance(0.7) else ""
    tags: list[str] = [container if container != "code" else "code-block"]
    unit: str | Callable[[int], str]
    if container == "list":
        style = run.choice(("- ", "* ", "- [ ] ", "numbered"))
        healthy = _items(run, run.randint(2, 8))
        size = 1 if run.chance(0.7) else run.randint(2, 3)
        looped = _items(run, size, set(healthy))
        if style == "numbered":
            prefix = intro + "".join(f"{i + 1}. {t}\n" for i, t in enumerate(healthy))
            start = len(healthy) + 1

            def unit(i: int) -> str:
                return "".join(f"{start + i * size + j}. {t}\n" for j, t in enumerate(looped))

            tags.append("counter")
        else:
            prefix = intro + "".join(f"{style}{t}\n" for t in healthy)
            unit = "".join(f"{style}{t}\n" for t in looped)
        tags.append("numbered" if style == "numbered" else "bulleted")
        reps = run.randint(4, 20) if size == 1 else run.randint(3, 8)
        min_reps = 4 if size == 1 else 3
    elif container == "table":
        leads = run.sample(WORDS, run.randint(3, 9))
        healthy_rows = [_table_row(run, lead) for lead in leads[:-1]]
        size = 1 if run.chance(0.75) else 2
        looped_rows = [_table_row(run, leads[-1])]
        while len(looped_rows) < size:
            row = _table_row(run, leads[-1])
            if row not in looped_rows:
                looped_rows.append(row)
        prefix = intro + _TABLE_HEADER + "".join(r + "\n" for r in healthy_rows)
        unit = "".join(r + "\n" for r in looped_rows)
        reps = run.randint(4, 20) if size == 1 else run.randint(3, 10)
        min_reps = 4 if size == 1 else 3
    else:
        lang, head, body = _code_lines(run, run.randint(2, 10))
        loops = _CODE_LOOPS[lang]
        unit = run.choice(loops)
        prefix = intro + f"```{lang}\n{head}" + "".join(body)
        reps = run.randint(5, 30)
        min_reps = 5
        tags.append(f"lang-{lang}")
        tags.append("unclosed-fence")
    tags += ["in-reasoning"] if type_ == "reasoning" else []
    emit_text_loop(
        run,
        ctx,
        type_,
        prefix,
        unit,
        reps,
        min_reps=min_reps,
        kind="text-run",
        note=f"a {container} line or block repeats {{n}} times to the end of the message",
        tags=tags,
    )
    return run.cases


def _wrap(run: Run, body: str) -> str:
    before = prose_sentence(run) + "\n\n" if run.chance(0.8) else ""
    after = "\n\n" + prose_sentence(run) if run.chance(0.6) else ""
    return before + body + after


def enumeration(seed: int, index: int) -> list[Case]:
    """Numbered plans and lists with long shared prefixes (negatives only).

    Varies: numbered, bulleted or checklist style; items from a one-slot template with
    a long shared prefix ("Update the configuration of the X service to use the new
    endpoint") or free imperative items; 5-30 items; plain status lines ("Checking X...
    OK"); sometimes in reasoning; surrounding prose.

    Why hard: most of every line is the same, so n-gram counts and low word
    diversity look like a loop; each line still names a new item.

    Targets false positives of the streaming guard (its enumeration exemption) and
    ``hasRepeatedTextRun`` (every line is a unit, units are distinct). Label
    ``enumeration``, not looping.
    """
    run = Run("enumeration", seed, index)
    ctx = _context(run)
    n = run.randint(5, 30)
    shape = run.choice(("shared-prefix", "shared-prefix", "free-items", "status-lines", "people"))
    slots = run.sample(WORDS, min(n, len(WORDS)))
    while len(slots) < n:
        slots.append(f"{run.choice(WORDS)}-{len(slots)}")
    if shape == "shared-prefix":
        template = run.choice(_SHARED_PREFIX)
        items = [template.format(x=x) for x in slots]
    elif shape == "free-items":
        items = _items(run, n)
    elif shape == "status-lines":
        items = [
            f"Checking {x}... {run.choice(('OK', 'OK', 'OK', 'skipped', 'updated'))}" for x in slots
        ]
    else:
        items = [
            f"Send the onboarding pack to {run.choice(FIRST_NAMES)} {run.choice(LAST_NAMES)} "
            f"at {run.choice(COMPANIES)}"
            for _ in range(n)
        ]
    style = run.choice(("numbered", "- ", "* ", "- [ ] ", "plain"))
    if style == "numbered":
        lines = [f"{i + 1}. {t}" for i, t in enumerate(items)]
    elif style == "plain":
        lines = items
    else:
        lines = [f"{style}{t}" for t in items]
    text = _wrap(run, "\n".join(lines))
    type_ = "bot" if run.chance(0.8) else "reasoning"
    run.add_case(
        "full",
        [*ctx, run.message(type_, text)],
        looping=False,
        kind="enumeration",
        note=f"{n} list items that share most of their words but each name a new item",
        tags=[shape, "list", "numbered" if style == "numbered" else "bulleted"],
        hard_negative=True,
    )
    return run.cases


def markdown_table(seed: int, index: int) -> list[Case]:
    """Markdown tables with repeated cells (negatives only).

    Varies: a status matrix (one row per service, repeated status cells), a daily
    check per environment with only two alternating row leads, each date on two rows
    and mostly identical cells (the guard's known near-duplicate-table gap), a price
    table; 5-40 rows; prose around the table.

    Why hard: cells like ``✅``, ``ok``, ``ms`` and the pipes repeat on every row; the
    two-lead variant has only two distinct line starts.

    Targets false positives of the streaming guard and of chanting detectors that reset
    on tables. Label ``table``, not looping.
    """
    run = Run("markdown-table", seed, index)
    ctx = _context(run)
    rows = run.randint(5, 40)
    shape = run.choice(("status", "status", "two-leads", "prices"))
    if shape == "status":
        leads = run.sample(WORDS, min(rows, len(WORDS)))
        body = _TABLE_HEADER + "\n".join(_table_row(run, lead) for lead in leads)
    elif shape == "two-leads":
        # A daily check per environment: two row leads, the same date on both rows and
        # mostly identical cells, the shape of the guard's known near-duplicate-table gap.
        base = run.randint(0, 300) * 86400
        lines = []
        for i in range(rows):
            env = ("prod", "staging")[i % 2]
            healthy = run.chance(0.85)
            status = "healthy" if healthy else "degraded"
            failed = run.randint(1, 3)
            checks = (
                "all checks passed" if healthy else f"{failed} check{'s' * (failed > 1)} failed"
            )
            day = iso_time(base + (i // 2) * 86400)[:10]
            lines.append(f"| {env} | {status} | {checks} | {day} |")
        body = "| Env | Status | Checks | Date |\n|---|---|---|---|\n" + "\n".join(lines)
    else:
        body = "| Plan | Seats | Monthly | Yearly |\n|---|---|---|---|\n" + "\n".join(
            f"| {run.choice(('Starter', 'Team', 'Business'))} | {s} | €{9 * s} | €{90 * s} |"
            for s in range(1, rows + 1)
        )
    text = _wrap(run, body)
    run.add_case(
        "full",
        [*ctx, run.bot(text)],
        looping=False,
        kind="table",
        note=f"a markdown table of {rows} rows with repeated cells",
        tags=[shape, "table"],
        hard_negative=True,
    )
    return run.cases


def repetitive_code(seed: int, index: int) -> list[Case]:
    """Repetitive but correct code (negatives only).

    Varies: assert lists in Python, SQL inserts, TypeScript switch cases, YAML lists, CSS
    rules; 5-40 lines; closed fences, prose around; occasionally two code blocks.

    Why hard: lines share their structure and most tokens; only identifiers and numbers
    change, as in a runaway code loop.

    Targets false positives of the streaming guard and of text-run checks that see each
    line as a unit. Label ``code``, not looping.
    """
    run = Run("repetitive-code", seed, index)
    ctx = _context(run)
    blocks = []
    for _ in range(2 if run.chance(0.2) else 1):
        lang, head, body = _code_lines(run, run.randint(5, 40))
        tail = "}\n" if lang == "typescript" else "COMMIT;\n" if lang == "sql" else ""
        blocks.append(f"```{lang}\n{head}{''.join(body)}{tail}```")
    text = _wrap(run, "\n\n".join(blocks))
    run.add_case(
        "full",
        [*ctx, run.bot(text)],
        looping=False,
        kind="code",
        note="structurally repetitive code with distinct identifiers and values",
        tags=["code-block"],
        hard_negative=True,
    )
    return run.cases
