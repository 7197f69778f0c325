"""Family ``overthinking``: reasoning that spirals in doubt versus healthy reasoning."""

from __future__ import annotations

from dataclasses import dataclass

from ._common import Case, Run, cut_message
from ._words import prose

__all__ = ["CONCLUSIONS", "overthinking"]


@dataclass(frozen=True)
class _Problem:
    task: str
    facts: tuple[str, ...]
    hypotheses: tuple[tuple[str, ...], ...]  # each: paraphrases of one hypothesis
    concerns: tuple[str, ...]  # lower-case clauses, no final punctuation
    checks: tuple[tuple[str, str], ...]  # (question clause, resolution sentence)
    answer: str


_PROBLEMS: tuple[_Problem, ...] = (
    _Problem(
        "Is it safe to increment a shared request counter from several handlers "
        "in our Node.js 22 server?",
        (
            "The server is a single Node.js process.",
            "Request handlers run on the event loop, one callback at a time.",
            "The counter is a plain number in module scope.",
            "The increment is a single synchronous statement with no await in between.",
            "No worker threads are used in this service.",
        ),
        (
            (
                "a plain variable is enough because handlers never run in parallel",
                "the plain counter is safe since the event loop runs one callback at a time",
                "a module-level number works, nothing interleaves a synchronous increment",
            ),
            (
                "we should guard the counter with a mutex",
                "a lock around the increment would be safer",
                "maybe the increment needs a mutex after all",
            ),
            (
                "an Atomics counter on a SharedArrayBuffer would be the robust choice",
                "we could switch to Atomics.add to be safe",
            ),
        ),
        (
            "thread safety is broken here",
            "two requests interleave in the middle of the increment",
            "someone adds a worker thread later",
            "the increment is not atomic in V8",
            "a mutex introduces a potential deadlock",
            "the cluster module forks several processes",
        ),
        (
            (
                "the handler awaits between read and write",
                "It does not: the increment is one synchronous statement.",
            ),
            ("a worker thread touches the counter", "None does; the service starts no workers."),
            ("the counter overflows", "Number is safe up to 2^53, far beyond our traffic."),
        ),
        "Yes. A plain module-level counter is safe: Node.js runs the handlers one at a time "
        "on the event loop and the increment is synchronous.",
    ),
    _Problem(
        "What is 17 × 24?",
        (
            "This is a plain multiplication.",
            "17 × 24 = 17 × 20 + 17 × 4.",
            "17 × 20 = 340.",
            "17 × 4 = 68.",
        ),
        (
            ("the product is 340 + 68 = 408", "17 × 24 comes to 408", "adding the parts gives 408"),
            (
                "maybe I should compute 24 × 17 instead to be sure",
                "doing it the other way, 24 × 17, should confirm it",
            ),
            (
                "perhaps 17 × 25 − 17 is cleaner: 425 − 17",
                "using 25 as a base might be less error-prone",
            ),
        ),
        (
            "I multiplied wrong",
            "17 × 4 is not 68",
            "I mixed up the tens",
            "the question wants something else",
            "rounding matters here",
        ),
        (
            ("17 × 4 is wrong", "17 × 4 = 68 is right: 10 × 4 + 7 × 4 = 40 + 28."),
            ("the sum is off", "340 + 68 = 408, the tens carry correctly."),
        ),
        "17 × 24 = 408.",
    ),
    _Problem(
        "Should the cache key for product prices include the tenant id?",
        (
            "Prices are stored per tenant.",
            "The cache is shared by all tenants in one Redis instance.",
            "The current key is `price:<sku>`.",
            "Two tenants can sell the same SKU at different prices.",
        ),
        (
            (
                "the key must include the tenant id",
                "adding the tenant to the key, `price:<tenant>:<sku>`, fixes it",
                "the tenant id belongs in the key",
            ),
            (
                "a separate Redis database per tenant would isolate them better",
                "maybe one Redis db per tenant instead of a longer key",
            ),
            (
                "we could drop the price cache entirely",
                "perhaps caching prices is not worth it at all",
            ),
        ),
        (
            "the key gets too long",
            "Redis has a key length limit",
            "invalidation becomes harder",
            "a tenant is renamed",
            "memory doubles",
            "some prices are global",
        ),
        (
            ("keys get too long", "A tenant id adds about 10 bytes; Redis keys can be 512 MB."),
            ("invalidation breaks", "Invalidation already runs per tenant, so it gets simpler."),
        ),
        "Yes: make the key `price:<tenant_id>:<sku>`, otherwise tenants read each other's prices.",
    ),
    _Problem(
        "This query on orders is slow: SELECT * FROM orders WHERE customer_id = $1 "
        "ORDER BY created_at DESC LIMIT 20. What index should I add?",
        (
            "The table has about 40 million rows.",
            "The filter is an equality on customer_id.",
            "The sort is on created_at, descending, with a small limit.",
            "There is currently only a primary key index.",
        ),
        (
            (
                "a composite index on (customer_id, created_at DESC) fits exactly",
                "the index should be (customer_id, created_at desc)",
                "a two-column index on customer_id then created_at",
            ),
            ("an index on customer_id alone might be enough", "maybe just index customer_id"),
            (
                "a covering index with INCLUDE of all columns would avoid heap reads",
                "perhaps include every selected column in the index",
            ),
        ),
        (
            "the planner ignores the index",
            "the write load gets too high",
            "the sort direction matters",
            "customer_id has low selectivity",
            "the table needs partitioning first",
        ),
        (
            (
                "the sort direction matters",
                "A B-tree can be scanned backwards, so DESC in the index is optional.",
            ),
            ("writes get slower", "One more index on a 40M-row table is fine for our write rate."),
        ),
        "Add CREATE INDEX CONCURRENTLY ON orders (customer_id, created_at DESC);",
    ),
    _Problem(
        "Can we safely retry a failed payment capture call?",
        (
            "The payment provider supports an Idempotency-Key header.",
            "Our client sends a fresh UUID per capture attempt.",
            "Timeouts happen about once per thousand calls.",
            "A timeout does not tell us whether the capture went through.",
        ),
        (
            (
                "retries are safe if we reuse one idempotency key per capture",
                "the fix is to keep the same Idempotency-Key across retries",
                "one key per logical capture makes retries safe",
            ),
            (
                "we should query the payment status before any retry",
                "checking the status first, then retrying, might be better",
            ),
            (
                "maybe never retry and let support handle it",
                "perhaps disable automatic retries completely",
            ),
        ),
        (
            "the provider expires keys",
            "two workers retry at once",
            "the amount changes between attempts",
            "the status endpoint lags",
            "a double charge slips through",
        ),
        (
            ("keys expire", "Keys live for 24 hours; our retries finish within minutes."),
            ("two workers retry at once", "The job lock guarantees one worker per capture."),
        ),
        "Yes, if every retry of one capture reuses the same Idempotency-Key; "
        "generate it once and store it with the payment.",
    ),
    _Problem(
        "The daily sales report shows yesterday's orders under two dates. Why?",
        (
            "Orders are stored with UTC timestamps.",
            "The report groups by DATE(created_at).",
            "The business runs in Europe/Berlin.",
            "Orders placed between midnight and 1 or 2 a.m. local time "
            "fall on the previous UTC date.",
        ),
        (
            (
                "the grouping must convert to Europe/Berlin before taking the date",
                "grouping by the local date, not the UTC date, fixes it",
                "convert the timestamp to Berlin time, then group",
            ),
            (
                "maybe the timestamps are stored in local time after all",
                "perhaps the column is not really UTC",
            ),
            (
                "daylight saving time could be shifting the rows",
                "the DST switch might be the cause",
            ),
        ),
        (
            "the column is not UTC",
            "daylight saving changes the offset",
            "the database session has its own time zone",
            "the report caches old rows",
            "orders get edited later",
        ),
        (
            ("the session time zone interferes", "The session is UTC, so DATE() uses UTC dates."),
            (
                "DST matters",
                "The offset changes twice a year; converting with the zone name handles it.",
            ),
        ),
        "Group by DATE(created_at AT TIME ZONE 'Europe/Berlin'); "
        "the report currently groups by UTC date.",
    ),
    _Problem(
        "Why does this Python function keep old items between calls? "
        "def add(item, items=[]): items.append(item); return items",
        (
            "Default argument values are evaluated once, when the function is defined.",
            "The list object is shared by every call that omits items.",
            "append mutates that shared list.",
        ),
        (
            (
                "the mutable default list is shared between calls",
                "the default [] is created once and reused",
                "it is the classic mutable default argument",
            ),
            ("maybe append copies the list somehow", "perhaps the caller passes the same list"),
            (
                "the interpreter might cache the return value",
                "could it be some caching of the result",
            ),
        ),
        (
            "the caller passes the list explicitly",
            "this differs in Python 3.12",
            "a decorator wraps the function",
            "the list is copied on return",
        ),
        (
            (
                "the caller passes a list",
                "The bug shows when the argument is omitted, so it is the default.",
            ),
        ),
        "The default list is created once and shared; "
        "use items=None and create a new list inside the function.",
    ),
    _Problem(
        "Should we use UUIDv4 or UUIDv7 for the new events table primary key?",
        (
            "The table is append-heavy, about 5,000 inserts per second.",
            "The primary key is a B-tree index.",
            "UUIDv7 starts with a millisecond timestamp.",
            "UUIDv4 is fully random.",
        ),
        (
            (
                "UUIDv7 is better because inserts stay at the right edge of the index",
                "v7 keeps the B-tree inserts sequential",
                "time-ordered v7 ids suit an append-heavy table",
            ),
            ("UUIDv4 hides the creation time, which might matter", "v4 leaks nothing about timing"),
            ("a bigint sequence would be simpler than either", "perhaps plain bigserial is enough"),
        ),
        (
            "the timestamp leaks information",
            "clocks drift between servers",
            "our driver does not support v7",
            "ids must be unguessable",
            "sharding later needs random ids",
        ),
        (
            ("timing leaks matter", "Event ids are internal and never shown to users."),
            ("clock drift", "Within one millisecond order does not matter for events."),
        ),
        "Use UUIDv7: time-ordered ids keep inserts cheap on an append-heavy B-tree.",
    ),
    _Problem(
        "Our invoice totals are sometimes off by one cent. "
        "The code sums float prices. What is wrong?",
        (
            "Prices are stored as floats in euros.",
            "Binary floating point cannot represent 0.1 exactly.",
            "Rounding happens only at the end of the sum.",
            "Line items are rounded individually on the printed invoice.",
        ),
        (
            (
                "the sum must use integer cents or Decimal",
                "switching to integer cents fixes the drift",
                "money should be Decimal, never float",
            ),
            (
                "rounding each line before summing would match the printout",
                "maybe round per line, then sum",
            ),
            (
                "it could be banker's rounding in the formatter",
                "perhaps the formatter rounds half to even",
            ),
        ),
        (
            "the database column is float too",
            "tax is computed per line",
            "currencies with three decimals exist",
            "Decimal is too slow",
        ),
        (
            (
                "Decimal is too slow",
                "We sum at most a few hundred lines; speed does not matter here.",
            ),
        ),
        "Float rounding: store and sum amounts as integer cents (or Decimal) "
        "and round each line the same way the invoice prints it.",
    ),
    _Problem(
        "Should I rebase or merge main into my long-running shared feature branch?",
        (
            "Three people push to the feature branch.",
            "Rebasing rewrites commits that others have already pulled.",
            "Merging keeps history but adds merge commits.",
        ),
        (
            (
                "merge main into the shared branch",
                "a merge is right for a branch others use",
                "merging avoids rewriting shared history",
            ),
            (
                "rebase anyway and ask everyone to reset",
                "maybe a rebase with a heads-up is cleaner",
            ),
            (
                "squash everything at the end instead",
                "perhaps squash-merge solves the history question",
            ),
        ),
        (
            "the history gets messy",
            "conflicts repeat on every merge",
            "bisect gets harder",
            "the team prefers linear history",
        ),
        (("conflicts repeat", "rerere can record resolutions, and merges happen weekly."),),
        "Merge main into the shared branch; rebase only branches nobody else has pulled.",
    ),
    _Problem(
        "Does this binary search have an off-by-one bug? lo, hi = 0, len(a); while lo < hi: "
        "mid = (lo + hi) // 2; if a[mid] < x: lo = mid + 1 else: hi = mid",
        (
            "The interval is half-open, [lo, hi).",
            "The loop stops when lo == hi.",
            "When a[mid] < x, mid is excluded, so lo = mid + 1.",
            "Otherwise mid may be the answer, so hi = mid keeps it.",
        ),
        (
            (
                "the code is correct and returns the leftmost insertion point",
                "there is no off-by-one, it is bisect_left",
                "the half-open version is right as written",
            ),
            ("hi should start at len(a) - 1", "maybe the upper bound is off by one"),
            ("the condition should be lo <= hi", "perhaps the loop needs <="),
        ),
        (
            "mid overflows",
            "the loop never ends when hi = lo + 1",
            "duplicates break it",
            "the array is empty",
        ),
        (
            (
                "the array is empty",
                "Then lo == hi == 0 and the loop does not run: it returns 0, correct.",
            ),
            ("hi = lo + 1", "mid = lo, and either branch shrinks the interval."),
        ),
        "No bug: it is a correct half-open binary search (equivalent to bisect_left).",
    ),
    _Problem(
        "Is this email regex good enough for our sign-up form: ^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$ ?",
        (
            "The regex requires one @ and a dot after it.",
            "It rejects whitespace.",
            "We also send a confirmation email.",
            "Full RFC 5322 validation is not needed for sign-up.",
        ),
        (
            (
                "the simple regex is enough because the confirmation mail is the real check",
                "it is fine: the confirmation email does the real validation",
                "keep the simple pattern",
            ),
            ("we should use a full RFC 5322 regex", "maybe the complete RFC grammar is needed"),
            ("a DNS MX lookup at sign-up would be stricter", "perhaps check the MX record too"),
        ),
        (
            "quoted local parts are valid",
            "international domains fail",
            "plus addressing breaks",
            "a TLD without a dot exists",
        ),
        (
            ("plus addressing", "The pattern allows + in the local part."),
            ("international domains", "Punycode and Unicode domains both pass [^@\\s]+."),
        ),
        "Yes, it is good enough: keep the simple pattern and rely on the confirmation email.",
    ),
)

# Doubt openers. The first group matches the design's doubt patterns; the second group
# does not (so a spiral built from them escapes pure marker counting).
_LISTED = (
    "Wait, but what if {concern}?",
    "Wait, what if {concern}?",
    "Let me reconsider.",
    "On second thought, {concern} worries me.",
    "This might be wrong, because {concern}.",
    "Actually, let's rethink this.",
    "Hold on, there is a flaw: {concern}.",
    "Alternatively, maybe {other}.",
)
_UNLISTED = (
    "Hmm, but actually, {concern}.",
    "No, wait. What about when {concern}?",
    "Then again, {concern}.",
    "I'm not sure that's right.",
    "Let me double-check that again.",
    "But is that really right?",
    "Or maybe not.",
    "Hmm. Unless {concern}.",
)
_RESTATE = (
    "So {h}.",
    "In that case {h}.",
    "Then {h}.",
    "Which means {h}.",
    "Back to the idea that {h}.",
    "I think {h}.",
)
_COSTS = (
    "That would introduce a potential deadlock.",
    "That adds needless complexity.",
    "That could break the existing callers.",
    "That is slower on large inputs.",
    "That needs another migration.",
    "That changes the public behaviour.",
    "",
    "",
)
# The design's maxThinkingTokensHardCap; its token estimate is ceil(chars / 4) per chunk.
_HARD_CAP_TOKENS = 4096
#: Phrases that close a healthy reasoning; none of them occurs in a spiral.
CONCLUSIONS = ("So the answer is:", "Final answer:", "Therefore:", "I'm confident now:")


def _spiral(run: Run, problem: _Problem, cycles: int, unlisted_share: float) -> str:
    parts: list[str] = []
    order = [0]
    for _ in range(cycles):
        # Return to hypothesis A every other step: the "restate the same hypothesis" trap.
        order.append(0 if order[-1] != 0 else run.randint(1, len(problem.hypotheses) - 1))
    for i in range(cycles):
        marker = run.choice(_UNLISTED if run.chance(unlisted_share) else _LISTED)
        other_h = run.choice(problem.hypotheses[order[i + 1] if order[i + 1] != 0 else 1])
        parts.append(marker.format(concern=run.choice(problem.concerns), other=other_h))
        h = run.choice(problem.hypotheses[order[i + 1]])
        parts.append(run.choice(_RESTATE).format(h=h))
        cost = run.choice(_COSTS)
        if cost and order[i + 1] != 0:
            parts.append(cost)
    return " ".join(parts)


def overthinking(seed: int, index: int) -> list[Case]:
    """Reasoning streams that spiral in doubt versus healthy reasoning that concludes.

    Varies: the problem (12 small technical and arithmetic questions), the number of
    doubt cycles (4-7 short, 8-18 long), the share of doubt phrases outside the design's
    marker list, the length of the analysis before the spiral (long runs add up to
    thousands of characters of distinct reasoning), whether an earlier exchange precedes
    it. Negatives: healthy reasoning with 0-3 resolved checks that ends in a conclusion
    (and usually an answer message); ``many-checks`` hard negatives with 4-7 resolved
    checks; long healthy reasoning, a few beyond the 4,096-token hard cap; and the
    spiral runs cut before the first doubt.

    Why hard: a spiral paraphrases the same two or three hypotheses, so word overlap is
    moderate, not total; unlisted doubt phrases escape marker counting; many-checks
    negatives carry as many markers as a spiral; long healthy reasoning trips a budget.

    Targets the overthinking detector (doubt markers, word-window repetition, token
    cap). Onset: ``char`` = the first character of the first doubt sentence after the
    first hypothesis; everything after it only revisits earlier hypotheses.
    """
    run = Run("overthinking", seed, index)
    problem = run.choice(_PROBLEMS)
    msgs = []
    if run.chance(0.25):
        msgs.append(run.user("Quick one before the real question: what does idempotent mean?"))
        msgs.append(
            run.bot(
                "An operation is idempotent when doing it twice "
                "has the same effect as doing it once."
            )
        )
    msgs.append(run.user(problem.task))
    long_run = run.chance(0.35)
    facts = list(problem.facts[: run.randint(2, len(problem.facts))])
    if long_run:
        facts += prose(run, run.randint(8, 30))
    first_h = run.choice(problem.hypotheses[0])
    prefix = f"{run.choice(_OPENERS)} " + " ".join(facts) + f" {run.choice(_FIRST)} {first_h}. "
    positive = run.chance(0.55)
    if positive:
        cycles = run.randint(8, 18) if long_run else run.randint(4, 7)
        unlisted = run.choice((0.0, 0.3, 0.5, 0.9))
        spiral = _spiral(run, problem, cycles, unlisted)
        text = prefix + spiral
        if run.chance(0.4):
            # The stream was cut by a budget mid-sentence; never back into the prefix.
            text = text[: max(len(prefix) + 40, len(text) - run.randint(1, 30))]
        tags = ["long" if long_run else "short", f"cycles-{cycles}"]
        if unlisted >= 0.9:
            tags.append("unlisted-markers")
        reasoning = run.reasoning(text)
        onset = len(msgs)
        run.add_case(
            "full",
            [*msgs, reasoning],
            looping=True,
            onset=onset,
            char=len(prefix),
            kind="overthinking",
            note=f"after the first hypothesis the reasoning cycles through doubt {cycles} times "
            "without concluding",
            tags=tags,
        )
        if run.chance(0.3):
            run.add_case(
                "cut",
                [*msgs, cut_message(reasoning, len(prefix))],
                looping=False,
                kind="progress",
                note="the same reasoning stopped before the first doubt",
                tags=[*tags, "truncated-before-loop"],
                hard_negative=True,
            )
        return run.cases
    many = run.chance(0.3)
    n_checks = run.randint(4, 7) if many else run.randint(0, 3)
    checks: list[str] = []
    pool = list(problem.checks)
    for i in range(n_checks):
        if i < len(pool):
            question, resolution = pool[i]
        else:
            question = run.choice(problem.concerns)
            resolution = run.choice(_RESOLUTIONS)
        checks.append(f"{run.choice(_CHECK_OPENERS).format(q=question)} {resolution}")
    extra: list[str] = []
    if long_run and run.chance(0.15):
        extra = prose(run, run.randint(190, 260))  # past the design's 4,096-token cap
    body = (
        prefix
        + " ".join(checks)
        + (" " if checks else "")
        + (" ".join(extra) + " " if extra else "")
    )
    conclusion = run.choice(CONCLUSIONS)
    text = body + f"{conclusion} {problem.answer}"
    tags = ["long" if long_run else "short", f"checks-{n_checks}"]
    if many:
        tags.append("many-checks")
    if len(text) > 4 * _HARD_CAP_TOKENS:
        tags.append("over-token-cap")
    msgs.append(run.reasoning(text))
    if run.chance(0.6):
        msgs.append(run.bot(problem.answer))
    run.add_case(
        "full",
        msgs,
        looping=False,
        kind="healthy-reasoning",
        note=f"the reasoning checks {n_checks} concern(s), resolves each and concludes",
        tags=tags,
        hard_negative=many or "over-token-cap" in tags,
    )
    return run.cases


_OPENERS = (
    "Let me think about this.",
    "Okay, the user wants to know this.",
    "First, the facts.",
    "Let me work through it.",
    "Alright.",
)
_FIRST = (
    "So my first idea:",
    "My first hypothesis:",
    "It looks like",
    "Initial answer:",
    "I believe",
)
_CHECK_OPENERS = (
    "Wait, but what if {q}?",
    "Let me verify the case where {q}.",
    "Quick check: what if {q}?",
    "Wait, what if {q}?",
    "One concern: {q}.",
)
_RESOLUTIONS = (
    "That does not apply here, so the plan stands.",
    "Checked: it is handled already.",
    "Not an issue for this setup.",
    "Fine, that case is covered by the facts above.",
    "That is out of scope for this question.",
)
