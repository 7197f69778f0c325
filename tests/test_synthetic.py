"""Tests of the synthetic corpus generators (harness.synthetic) and the ``generate`` command.

The checks below re-derive every label property from the data itself (periods, onsets,
state snapshots, doubt markers) instead of trusting the generators' bookkeeping.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness._cli_generate import generate
from harness.synthetic import (
    DEFAULT_CASES,
    DEFAULT_CORPUS_PATH,
    FAMILIES,
    generate_corpus,
    split_for_group,
    write_default_corpus,
)
from harness.synthetic._summary import DOCS_BEGIN, DOCS_END, render_family_docs

ROOT = Path(__file__).resolve().parents[1]
Case = dict[str, Any]
STREAM_EXCLUDED = {"user", "system", "activity"}
NEGATIVE_ONLY = {
    "same-empty-result",
    "batch",
    "enumeration",
    "markdown-table",
    "repetitive-code",
    "requested-repetition",
}
TOOL_KINDS = {"activity-tail", "result-run", "error-retry", "ab-cycle", "drifting-args"}
TEXT_KINDS = {"text-run", "runaway-stream", "chant"}
# Minimum number of whole occurrences of the repeated unit for a positive, by kind.
MIN_OCCURRENCES = {
    "activity-tail": 3,
    "result-run": 3,
    "error-retry": 3,
    "drifting-args": 3,
    "ab-cycle": 2,
}
DOUBT = re.compile(
    r"\bwait\b|reconsider|second thought|might be wrong|rethink|hold on|alternatively|\bhmm\b|"
    r"not sure|double-check|really right|or maybe not|then again|\bunless\b|what about",
    re.IGNORECASE,
)
DOUBT_START = re.compile(
    r"(Wait|Let me reconsider|On second thought|This might be wrong|Actually, let's rethink|"
    r"Hold on|Alternatively|Hmm|No, wait|Then again|I'm not sure|Let me double-check|"
    r"But is that|Or maybe not)"
)
CONCLUSION = re.compile(r"So the answer is:|Final answer:|Therefore:|I'm confident now:")


# --- helpers ---------------------------------------------------------------------------
def fingerprint(message: Case) -> str:
    return json.dumps(
        [message["type"], message["text"], message.get("meta")], sort_keys=True, ensure_ascii=False
    )


def smallest_period(seq: Sequence[Any]) -> int:
    """Smallest p with seq[i] == seq[i + p] for every valid i (prefix function)."""
    n = len(seq)
    pi = [0] * n
    for i in range(1, n):
        k = pi[i - 1]
        while k and seq[i] != seq[k]:
            k = pi[k - 1]
        if seq[i] == seq[k]:
            k += 1
        pi[i] = k
    return n - pi[-1] if n else 0


def activity(message: Case) -> dict[str, Any]:
    act: dict[str, Any] = message["meta"]["activity"]
    return act


def state_of(message: Case, drop_timestamp: bool) -> Any:
    state = json.loads(message["state"]["state.json"])
    if drop_timestamp:
        state.pop("updated_at", None)
    return state


def encoded(cases: list[Case]) -> bytes:
    return b"".join(
        json.dumps(c, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
        for c in cases
    )


# --- structural rules (corpus format version 1) ------------------------------------------
def check_structure(case: Case) -> None:
    assert isinstance(case["id"], str) and case["id"].startswith("synthetic/")
    assert case["group"] == case["id"].rsplit("/", 1)[0]
    assert case["split"] == split_for_group(case["group"]) and case["split"] in ("train", "test")
    family = case["origin"]["generator"]
    assert family in FAMILIES and case["origin"]["dataset"] == "synthetic"
    assert case["tags"][0] == family and len(set(case["tags"])) == len(case["tags"])
    msgs = case["messages"]
    assert msgs, case["id"]
    for m in msgs:
        assert isinstance(m["type"], str) and isinstance(m["text"], str)
        streamed = m["type"] not in STREAM_EXCLUDED and m["text"] != ""
        assert ("chunks" in m) == streamed, (case["id"], m["type"])
        if streamed:
            assert "".join(m["chunks"]) == m["text"]
            assert all(1 <= len(ch) <= 9 for ch in m["chunks"]), case["id"]
            for ch in m["chunks"]:
                ch.encode("utf-8")  # never half a code point
        if m["type"] == "activity":
            act = activity(m)
            assert act["type"] in ("request", "response")
            fn = act["function"]
            assert isinstance(fn["name"], str) and "arguments" in fn
            assert ("result" in fn) == (act["type"] == "response")
        if "state" in m:
            assert isinstance(json.loads(m["state"]["state.json"]), dict)
    label = case["label"]
    assert label["source"] == "synthetic" and isinstance(label["kind"], str) and label["note"]
    assert isinstance(label["looping"], bool)
    if label["looping"]:
        onset = label["onset"]
        assert 0 <= onset["message"] < len(msgs)
        if onset["char"] is not None:
            assert 0 <= onset["char"] < len(msgs[onset["message"]]["text"])
        assert "hard-negative" not in case["tags"]
    else:
        assert label["onset"] is None


# --- exact onsets --------------------------------------------------------------------------
def check_thread_onset(case: Case) -> int:
    """Check a thread-level loop; return the period in messages of the checked projection."""
    msgs, kind = case["messages"], case["label"]["kind"]
    i = case["label"]["onset"]["message"]
    if kind == "suffix":
        keys = [fingerprint(m) for m in msgs]
        tail = keys[i:]
        p = smallest_period(tail)
        assert 1 <= p <= 5, (case["id"], p)
        assert len(tail) >= (3 if p == 1 else 2) * p, case["id"]
        assert i == 0 or keys[i - 1] != keys[i - 1 + p], (
            f"{case['id']}: loop starts before the onset"
        )
        return p
    assert msgs[i]["type"] == "activity" and activity(msgs[i])["type"] == "request", case["id"]
    positions = [j for j, m in enumerate(msgs) if m["type"] == "activity"]
    key: Callable[[Case], Any] = fingerprint
    if kind == "drifting-args":
        requests = [
            activity(msgs[j])["function"]["arguments"]
            for j in positions
            if j >= i and activity(msgs[j])["type"] == "request"
        ]
        drifting = {k for k in requests[0] if len({json.dumps(r.get(k)) for r in requests}) > 1}
        assert drifting, case["id"]
        assert len({json.dumps(r, sort_keys=True) for r in requests}) == len(requests), (
            "every call is unique"
        )

        def key(m: Case) -> Any:
            fn = activity(m)["function"]
            args = {k: v for k, v in fn["arguments"].items() if k not in drifting}
            return json.dumps(
                [activity(m)["type"], fn["name"], args, fn.get("result")], sort_keys=True
            )

    keys = [key(msgs[j]) for j in positions]
    at = positions.index(i)
    tail = keys[at:]
    p = smallest_period(tail)
    assert p % 2 == 0 and 2 <= p <= 6, (case["id"], p)
    if kind == "ab-cycle":
        assert p >= 4, case["id"]
    need = 4 if "hung-job" in case["tags"] else MIN_OCCURRENCES[kind]
    assert len(tail) // p >= need, (case["id"], len(tail), p)
    assert at == 0 or keys[at - 1] != keys[at - 1 + p], (
        f"{case['id']}: loop starts before the onset"
    )
    return p


def check_text_onset(case: Case) -> int:
    """Check a loop inside the last message; return the period in characters."""
    msgs = case["messages"]
    i, c = case["label"]["onset"]["message"], case["label"]["onset"]["char"]
    assert i == len(msgs) - 1 and msgs[i]["type"] not in STREAM_EXCLUDED and c is not None
    text = msgs[i]["text"]
    if "counter" in case["tags"]:
        c = len(re.sub(r"\d+", "0", text[:c]))
        text = re.sub(r"\d+", "0", text)
    tail = text[c:]
    p = smallest_period(tail)
    assert len(tail) >= 3 * p, (case["id"], len(tail), p)
    # The unit starts at a word (or, for indented lines, at the line start), never on the
    # separator in front of it.
    assert c == 0 or not text[c - 1].isalnum(), f"{case['id']}: onset inside a word"
    assert c == 0 or text[c - 1] == "\n" or not text[c].isspace(), (
        f"{case['id']}: onset on a separator"
    )
    assert text[c] != "\n", f"{case['id']}: a unit never starts with a newline"
    if "\n" in text[c : c + p]:
        assert c == 0 or text[c - 1] == "\n", (
            f"{case['id']}: a unit of lines starts at a line start"
        )
    assert c < p or text[c - p : c] != text[c : c + p], (
        f"{case['id']}: an occurrence ends at the onset"
    )
    return p


def check_overthinking(case: Case) -> None:
    msgs = case["messages"]
    i, c = case["label"]["onset"]["message"], case["label"]["onset"]["char"]
    assert i == len(msgs) - 1 and msgs[i]["type"] == "reasoning"
    text = msgs[i]["text"]
    assert DOUBT_START.match(text, c), case["id"]
    assert not DOUBT.search(text[:c]), f"{case['id']}: doubt before the onset"
    assert len(DOUBT.findall(text[c:])) >= 4, case["id"]
    assert not CONCLUSION.search(text[c:]), f"{case['id']}: a spiral never concludes"


def check_state_stall(case: Case) -> None:
    msgs = case["messages"]
    i = case["label"]["onset"]["message"]
    assert msgs[i]["type"] == "activity" and activity(msgs[i])["type"] == "request"
    drop = "stall-timestamp-only" in case["tags"]
    snaps = [(j, state_of(m, drop)) for j, m in enumerate(msgs) if "state" in m]
    before = [s for j, s in snaps if j < i]
    after = [s for j, s in snaps if j > i]
    assert len(after) >= 5 and all(s == before[-1] for s in after), case["id"]
    assert len(before) >= 2 and before[-1] != before[-2], (
        f"{case['id']}: the state changed right before the onset"
    )
    if drop:
        raw = [m["state"]["state.json"] for j, m in enumerate(msgs) if "state" in m and j > i]
        assert len(set(raw)) == len(raw), "only the timestamp still changes"


def check_positive(case: Case) -> int:
    kind = case["label"]["kind"]
    if kind == "overthinking":
        check_overthinking(case)
        return 0
    if kind == "state-stall":
        check_state_stall(case)
        return 0
    if kind in TEXT_KINDS:
        return check_text_onset(case)
    assert kind in TOOL_KINDS or kind == "suffix", kind
    return check_thread_onset(case)


def check_cut(cut: Case, full: Case, period: int) -> None:
    """A prefix-only negative is the same run, stopped before a second occurrence."""
    cm, fm = cut["messages"], full["messages"]
    assert len(cm) <= len(fm)
    assert [fingerprint(m) for m in cm[:-1]] == [fingerprint(m) for m in fm[: len(cm) - 1]]
    last, same = cm[-1], fm[len(cm) - 1]
    assert last["type"] == same["type"] and same["text"].startswith(last["text"])
    onset = full["label"]["onset"]
    kind = full["label"]["kind"]
    if kind in TEXT_KINDS or kind == "overthinking":
        assert len(cm) - 1 == onset["message"]
        # One occurrence of the unit; a unit may hold its smallest period 3 times ("go go go ").
        assert len(last["text"]) - onset["char"] <= 3 * period, cut["id"]
    elif kind == "state-stall":
        assert sum(1 for m in cm[onset["message"] :] if "state" in m) <= 1
    elif kind == "suffix":
        assert len(cm) - onset["message"] <= period, cut["id"]
    else:
        assert sum(1 for m in cm[onset["message"] :] if m["type"] == "activity") <= period, cut[
            "id"
        ]


def check_negative(case: Case) -> None:
    """Cheap sanity checks that the negatives really make progress."""
    family, msgs = case["origin"]["generator"], case["messages"]
    responses = [
        activity(m)["function"]
        for m in msgs
        if m["type"] == "activity" and activity(m)["type"] == "response"
    ]
    if family == "polling" and "truncated-before-loop" not in case["tags"]:
        sigs = [
            json.dumps(f, sort_keys=True) for f in responses if f["name"] not in ("sleep", "wait")
        ]
        for a, b, c in zip(sigs, sigs[1:], sigs[2:], strict=False):
            assert not a == b == c, f"{case['id']}: three equal polls in a row"
    if family in ("batch", "same-empty-result"):
        requests = [
            json.dumps(activity(m)["function"], sort_keys=True)
            for m in msgs
            if m["type"] == "activity" and activity(m)["type"] == "request"
        ]
        assert len(set(requests)) == len(requests), case["id"]
    if family == "same-empty-result":
        empties = Counter(json.dumps(f["result"], sort_keys=True) for f in responses)
        assert empties.most_common(1)[0][1] >= 3, case["id"]
    if family == "user-repeat":
        bots = [m["text"] for m in msgs if m["type"] == "bot"]
        assert len(set(bots)) == len(bots), case["id"]
    if family == "state-stall" and "truncated-before-loop" not in case["tags"]:
        snaps = [m["state"]["state.json"] for m in msgs if "state" in m]
        run = longest = 1
        for a, b in itertools.pairwise(snaps):
            run = run + 1 if a == b else 1
            longest = max(longest, run)
        assert longest <= 5, f"{case['id']}: {longest} equal snapshots in a row"
    if case["label"]["kind"] == "healthy-reasoning":
        reasoning = [m["text"] for m in msgs if m["type"] == "reasoning"]
        assert CONCLUSION.search(reasoning[-1]), case["id"]


def validate(cases: list[Case]) -> None:
    ids = [c["id"] for c in cases]
    assert len(set(ids)) == len(ids), "ids are unique"
    by_group: dict[str, list[Case]] = defaultdict(list)
    for case in cases:
        check_structure(case)
        by_group[case["group"]].append(case)
    periods: dict[str, int] = {}
    for case in cases:
        if case["label"]["looping"]:
            periods[case["id"]] = check_positive(case)
        else:
            check_negative(case)
    for group, members in by_group.items():
        assert len({c["split"] for c in members}) == 1, f"{group} straddles the splits"
        full = next((c for c in members if c["id"].endswith("/full")), None)
        for case in members:
            if "truncated-before-loop" in case["tags"]:
                assert full is not None and full["label"]["looping"]
                check_cut(case, full, periods[full["id"]])


# --- fixtures ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def default_cases() -> list[Case]:
    return list(generate_corpus())


# --- tests ---------------------------------------------------------------------------------
def test_default_corpus_is_valid_and_sized(default_cases: list[Case]) -> None:
    validate(default_cases)
    assert len(default_cases) == sum(DEFAULT_CASES.values()) >= 5000
    share = sum(c["label"]["looping"] for c in default_cases) / len(default_cases)
    assert 0.40 <= share <= 0.50, share
    families = Counter(c["origin"]["generator"] for c in default_cases)
    assert families == Counter(DEFAULT_CASES)


def test_checked_in_corpus_is_reproduced_byte_for_byte(tmp_path: Path) -> None:
    assert DEFAULT_CORPUS_PATH.exists(), (
        "run `harness corpora generate` to create the default corpus"
    )
    out = write_default_corpus(tmp_path / "default.jsonl")
    fresh = hashlib.sha256(out.read_bytes()).hexdigest()
    checked_in = hashlib.sha256(DEFAULT_CORPUS_PATH.read_bytes()).hexdigest()
    assert fresh == checked_in, "corpora/synthetic/default.jsonl is stale: regenerate it"


def test_other_seed_is_valid_and_both_labels_occur() -> None:
    cases = list(generate_corpus(n_per_family=40, seed=20240917))
    validate(cases)
    labels: dict[str, set[bool]] = defaultdict(set)
    for case in cases:
        labels[case["origin"]["generator"]].add(case["label"]["looping"])
    for family in FAMILIES:
        assert labels[family] == ({False} if family in NEGATIVE_ONLY else {False, True}), family


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_is_deterministic_and_documented(family: str) -> None:
    generator = FAMILIES[family]
    doc = generator.__doc__ or ""
    for word in ("Varies", "Why hard", "Target"):
        assert word in doc, f"{family}: docstring lacks {word!r}"
    first = encoded(generator(5, 3))
    assert first == encoded(generator(5, 3))
    assert first != encoded(generator(6, 3))
    assert first != encoded(generator(5, 4))


def test_same_seed_same_bytes_across_processes() -> None:
    script = (
        "import hashlib, json; from harness.synthetic import generate_corpus; "
        "b = b''.join(json.dumps(c, ensure_ascii=False, separators=(',', ':')).encode() + b'\\n' "
        "for c in generate_corpus(n_per_family=4, seed=11)); print(hashlib.sha256(b).hexdigest())"
    )
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        digests.add(done.stdout.strip())
    assert len(digests) == 1
    assert digests != {
        hashlib.sha256(encoded(list(generate_corpus(n_per_family=4, seed=12)))).hexdigest()
    }


def test_groups_hold_several_cases_and_never_straddle_splits(default_cases: list[Case]) -> None:
    groups: dict[str, set[str]] = defaultdict(set)
    sizes: Counter[str] = Counter()
    for case in default_cases:
        groups[case["group"]].add(case["split"])
        sizes[case["group"]] += 1
    assert all(len(s) == 1 for s in groups.values())
    assert sum(1 for n in sizes.values() if n > 1) > 300
    train = sum(1 for s in groups.values() if s == {"train"}) / len(groups)
    assert 0.66 <= train <= 0.74, train


def test_tags_cover_the_required_slices(default_cases: list[Case]) -> None:
    tags = Counter(t for c in default_cases for t in c["tags"])
    for tag in (
        "hard-negative",
        "cjk",
        "non-english",
        "interleaved-reasoning",
        "no-terminators",
        "no-whitespace",
        "code-block",
        "list",
        "table",
        "long",
        "short",
        "exact-heuristics-miss",
        "truncated-before-loop",
        "counter",
        "many-checks",
        "polling",
    ):
        assert tags[tag] >= 10, tag
    kinds = Counter(c["label"]["kind"] for c in default_cases)
    for kind in (
        "suffix",
        "activity-tail",
        "result-run",
        "error-retry",
        "ab-cycle",
        "drifting-args",
        "text-run",
        "runaway-stream",
        "chant",
        "overthinking",
        "state-stall",
        "progress",
        "polling",
        "enumeration",
        "table",
        "code",
        "requested-repetition",
        "user-repeat",
        "same-empty-result",
        "batch",
        "healthy-reasoning",
    ):
        assert kinds[kind] >= 20, kind


def test_sanity_of_a_few_loops_by_plain_reasoning(default_cases: list[Case]) -> None:
    """Spot checks written without the helpers above."""
    seen = Counter()
    for case in default_cases:
        label, msgs = case["label"], case["messages"]
        if (
            label["kind"] == "suffix"
            and "period-2" in case["tags"]
            and case["id"].endswith("/full")
        ):
            i = label["onset"]["message"]
            block = [fingerprint(m) for m in msgs[i : i + 2]]
            assert [fingerprint(m) for m in msgs[i + 2 : i + 4]] == block
            seen["period-2"] += 1
        if (
            label["kind"] == "result-run"
            and "interleaved-reasoning" in case["tags"]
            and "polling" not in case["tags"]
        ):
            sigs = [
                json.dumps(activity(m)["function"], sort_keys=True)
                for m in msgs[label["onset"]["message"] :]
                if m["type"] == "activity" and activity(m)["type"] == "response"
            ]
            assert len(sigs) >= 3 and len(set(sigs)) == 1
            between = [
                m["text"] for m in msgs[label["onset"]["message"] :] if m["type"] == "reasoning"
            ]
            assert len(set(between)) == len(between) >= 2, "the reasoning changes every time"
            seen["interleaved"] += 1
    assert seen["period-2"] > 10 and seen["interleaved"] > 10


def test_bad_arguments_are_rejected() -> None:
    with pytest.raises(ValueError, match="families"):
        list(generate_corpus(["no-such-family"]))
    with pytest.raises(ValueError, match="n_per_family"):
        list(generate_corpus(n_per_family=0))
    with pytest.raises(ValueError, match="seed"):
        list(generate_corpus(seed=-1))


def test_generate_command(tmp_path: Path) -> None:
    out = tmp_path / "chant.jsonl"
    runner = CliRunner()
    result = runner.invoke(
        generate, ["--out", str(out), "--family", "chant", "--cases-per-family", "5", "--seed", "3"]
    )
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 5 and all(
        json.loads(line)["origin"]["generator"] == "chant" for line in lines
    )
    assert out.read_bytes() == encoded(list(generate_corpus(["chant"], 5, 3)))
    refused = runner.invoke(generate, ["--seed", "3"])
    assert refused.exit_code != 0 and "--out is required" in refused.output
    unknown = runner.invoke(generate, ["--out", str(out), "--family", "nope"])
    assert unknown.exit_code != 0 and "nope" in unknown.output


def test_docs_counts_match_the_checked_in_corpus() -> None:
    docs = (ROOT / "docs" / "synthetic.md").read_text(encoding="utf-8")
    data = DEFAULT_CORPUS_PATH.read_bytes()
    cases = [json.loads(line) for line in data.decode("utf-8").splitlines() if line]
    block = render_family_docs(
        FAMILIES, cases, sha256=hashlib.sha256(data).hexdigest(), size=len(data)
    )
    start, end = docs.index(DOCS_BEGIN), docs.index(DOCS_END) + len(DOCS_END)
    assert docs[start:end] + "\n" == block, (
        "docs/synthetic.md is stale: run `harness corpora generate --docs`"
    )
