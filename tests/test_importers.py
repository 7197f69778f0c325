"""Importers of the real public traces, on the small raw samples shipped in tests/data.

Expected values were checked by hand against the raw samples (see each test);
rule checks recompute the rule from the raw JSON, independently of the importer.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from harness._cli_import import import_command
from harness._errors import CorpusError, CorpusNotFoundError
from harness.importers import (
    DATASETS,
    import_tau_bench,
    import_thoughtology,
    import_who_and_when,
    split_of,
    write_provenance,
)
from harness.importers.tau_bench import label_run, map_trajectory
from harness.importers.thoughtology import (
    LOOPING_MIN_CYCLES,
    NEGATIVE_MAX_CYCLES,
    label_chain,
    strip_annotations,
)
from harness.importers.who_and_when import strip_log_noise

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "tests" / "data" / "raw-samples"
WW_DIR = SAMPLES / "who-and-when"
TAU_FILE = SAMPLES / "tau-bench" / "gpt-4o-airline-sample.json"
TH_FILE = SAMPLES / "thoughtology" / "r1-aime-sample.json"
REAL = REPO / "corpora" / "real"
SOURCES = {"human", "llm-judge", "rule", "synthetic"}
STAGE_TAGS = re.compile(r"</?(?:DEFINE|BLOOM|CYCLE|FINAL|r|v)>")


def read_corpus(path: Path) -> list[dict[str, Any]]:
    raw = path.read_bytes()
    if path.name.endswith(".gz"):
        raw = gzip.decompress(raw)
    return [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]


def assert_valid_corpus(cases: list[dict[str, Any]]) -> None:
    """The corpus-format v1 rules, checked directly (not through the harness reader)."""
    ids = [c["id"] for c in cases]
    assert len(ids) == len(set(ids)), "ids must be unique"
    split_by_group: dict[str, str] = {}
    for case in cases:
        assert isinstance(case["id"], str) and case["id"]
        assert isinstance(case["messages"], list) and case["messages"]
        for message in case["messages"]:
            assert isinstance(message["type"], str)
            assert isinstance(message["text"], str)
            assert "chunks" not in message  # real traces were not streamed
            if "meta" in message:
                assert isinstance(message["meta"], dict)
            if message["type"] == "activity":
                activity = message["meta"]["activity"]
                function = activity["function"]
                assert isinstance(function["name"], str)
                assert "arguments" in function
                assert ("result" in function) == (activity["type"] == "response")
        label = case["label"]
        assert isinstance(label["looping"], bool)
        assert label["source"] in SOURCES
        onset = label.get("onset")
        if onset is not None:
            assert label["looping"] is True
            assert 0 <= onset["message"] < len(case["messages"])
            if onset["char"] is not None:
                assert 0 <= onset["char"] <= len(case["messages"][onset["message"]]["text"])
        assert isinstance(case["group"], str) and case["group"]
        assert all(isinstance(t, str) for t in case["tags"])
        assert isinstance(case["origin"], dict) and case["origin"]["license"].startswith("MIT")
        assert case["split"] in ("train", "test")
        assert split_by_group.setdefault(case["group"], case["split"]) == case["split"]


@pytest.fixture(scope="module")
def ww(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("ww") / "ww.jsonl"
    summary = import_who_and_when(WW_DIR, out)
    return summary, read_corpus(out)


@pytest.fixture(scope="module")
def tau(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("tau") / "tau.jsonl"
    summary = import_tau_bench(TAU_FILE, out)
    return summary, read_corpus(out)


@pytest.fixture(scope="module")
def th(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("th") / "th.jsonl"
    summary = import_thoughtology(TH_FILE, out)
    return summary, read_corpus(out)


# --------------------------------------------------------------------------- Who&When


def raw_ledger(trace: str, step: int) -> dict[str, Any]:
    """The ledger of a raw step, parsed without the importer (warning lines dropped)."""
    history = json.loads((WW_DIR / "hand-crafted" / f"{trace}.json").read_text("utf-8"))["history"]
    content = history[step]["content"]
    lines = [ln for ln in content.split("\n") if "Warning:" not in ln and "= await " not in ln]
    body = "\n".join(lines)
    assert body.startswith("Updated Ledger:")
    ledger: dict[str, Any] = json.loads(body[len("Updated Ledger:") :])
    return ledger


def test_who_and_when_counts_and_labels(ww: tuple[Any, list[dict[str, Any]]]) -> None:
    summary, cases = ww
    assert_valid_corpus(cases)
    # Ledgers in the sample: trace 1 at steps 2,5,9,13,17,21,25; trace 14 (trimmed to 18 steps)
    # at 2,5,9,13,17; trace 26 at 2,5,9,13,17,21,25,29. is_in_loop is true at 1:13,21,25 and
    # 26:21,25,29 (read by hand in the raw files).
    assert summary.cases == len(cases) == 20
    positives = {c["id"] for c in cases if c["label"]["looping"]}
    assert positives == {
        f"who-and-when/hand-crafted/{t}/step-{s:03d}"
        for t, s in [(1, 13), (1, 21), (1, 25), (26, 21), (26, 25), (26, 29)]
    }
    assert (summary.positives, summary.negatives, summary.groups) == (6, 14, 3)
    assert summary.skipped == {"CaptainAgent trace: no loop judgement in the log": 1}
    for case in cases:
        trace, step = re.fullmatch(
            r"who-and-when/hand-crafted/(\d+)/step-(\d+)", case["id"]
        ).groups()
        ledger = raw_ledger(trace, int(step))
        assert case["label"]["looping"] is ledger["is_in_loop"]["answer"]
        assert case["label"]["note"] == ledger["is_in_loop"]["reason"]
        assert case["label"]["source"] == "llm-judge"
        assert case["label"]["onset"] is None
        assert case["group"] == f"who-and-when/hand-crafted/{trace}"
        progress = ledger["is_progress_being_made"]["answer"]
        assert ("judged-no-progress" in case["tags"]) is (progress is False)


def test_who_and_when_case_is_the_trace_before_its_ledger(
    ww: tuple[Any, list[dict[str, Any]]],
) -> None:
    _, cases = ww
    by_id = {c["id"]: c for c in cases}
    history = json.loads((WW_DIR / "hand-crafted" / "1.json").read_text("utf-8"))["history"]
    case = by_id["who-and-when/hand-crafted/1/step-013"]
    # Steps 0..12: WebSurfer steps 4, 8 and 12 become request/response pairs: 13 + 3 messages.
    assert len(case["messages"]) == 16
    assert case["messages"][0] == {"type": "user", "text": history[0]["content"]}
    last = case["messages"][-1]["meta"]["activity"]
    assert last["type"] == "response"
    assert last["function"]["result"] == history[12]["content"]
    assert last["function"]["name"] == "click"
    assert last["function"]["arguments"] == {"target_name": "NY Jidokwan Taekwondo"}
    first_action = case["messages"][4]["meta"]["activity"]["function"]
    assert first_action == {
        "name": "input_text",
        "arguments": {
            "text_value": "martial arts schools near the New York Stock Exchange",
            "input_field_name": "0 characters out of 2000",
        },
    }
    assert case["messages"][2]["type"] == "reasoning"
    assert case["messages"][2]["text"] == history[2]["content"]
    assert case["messages"][3]["meta"] == {"agent": "Orchestrator", "to": "WebSurfer"}
    # Each case of a trace extends the previous one: same run, growing prefix.
    steps = sorted(c for c in by_id if c.startswith("who-and-when/hand-crafted/1/"))
    for before, after in itertools.pairwise(steps):
        shorter, longer = by_id[before]["messages"], by_id[after]["messages"]
        assert longer[: len(shorter)] == shorter and len(longer) > len(shorter)


def test_who_and_when_noise_and_tools(ww: tuple[Any, list[dict[str, Any]]]) -> None:
    summary, cases = ww
    texts = [json.dumps(m, ensure_ascii=False) for c in cases for m in c["messages"]]
    assert not any("UserWarning" in t for t in texts)
    assert summary.notes["warning lines removed from message texts"] > 0
    # Trace 14's first ledger has warning lines inside its JSON: it still gives a case.
    case = next(c for c in cases if c["id"] == "who-and-when/hand-crafted/14/step-017")
    names = Counter(
        m["meta"]["activity"]["function"]["name"]
        for m in case["messages"]
        if m["type"] == "activity" and m["meta"]["activity"]["type"] == "request"
    )
    assert names["ComputerTerminal"] == 2 and names["FileSurfer"] >= 1


def test_strip_log_noise() -> None:
    text = (
        "Next speaker Assistant\n"
        "/usr/lib/python3.11/site-packages/x/coder.py:55: UserWarning: Resolved model mismatch\n"
        "  response = await self._model_client.create(\n"
        "keep me"
    )
    assert strip_log_noise(text) == ("Next speaker Assistant\nkeep me", 2)
    assert strip_log_noise("  response = something else") == ("  response = something else", 0)


def test_who_and_when_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(CorpusNotFoundError, match="hand-crafted"):
        import_who_and_when(tmp_path, tmp_path / "out.jsonl")


# --------------------------------------------------------------------------- tau-bench


def raw_runs() -> dict[str, dict[str, Any]]:
    runs = json.loads(TAU_FILE.read_text("utf-8"))
    return {f"tau-bench/airline/task-{r['task_id']:02d}/trial-{r['trial']}": r for r in runs}


def test_tau_bench_counts_and_labels(tau: tuple[Any, list[dict[str, Any]]]) -> None:
    summary, cases = tau
    assert_valid_corpus(cases)
    labels = {c["id"]: (c["label"]["looping"], c["label"]["onset"]) for c in cases}
    # By hand: 11-2 repeats the booking error at traj 15, 19, 25 (25 -> message 26, since
    # traj 24 carries text and a call); 13-2 at traj 13, 27, 37; 13-3 at traj 12, 16, 24.
    assert labels == {
        "tau-bench/airline/task-11/trial-2": (True, {"message": 26, "char": None}),
        "tau-bench/airline/task-13/trial-2": (True, {"message": 37, "char": None}),
        "tau-bench/airline/task-13/trial-3": (True, {"message": 24, "char": None}),
        "tau-bench/airline/task-12/trial-3": (False, None),
        "tau-bench/airline/task-21/trial-1": (False, None),
    }
    assert summary.skipped == {
        "rewarded, but a call, an error or an assistant text repeats (no error-retry)": 1,
        "unrewarded, no error-retry": 1,
    }
    assert {c["group"] for c in cases if "task-13" in c["id"]} == {"tau-bench/airline/task-13"}
    assert all(c["label"]["source"] == "rule" and c["label"]["note"] for c in cases)


def test_tau_bench_rules_hold_on_the_raw_runs(tau: tuple[Any, list[dict[str, Any]]]) -> None:
    _, cases = tau
    runs = raw_runs()
    for case in cases:
        run = runs[case["id"]]
        results = [t["content"] for t in run["traj"] if t["role"] == "tool"]
        names = [t["name"] for t in run["traj"] if t["role"] == "tool"]
        errors = Counter(
            (n, r) for n, r in zip(names, results, strict=True) if r.startswith("Error")
        )
        calls = Counter(
            (
                c["function"]["name"],
                json.dumps(json.loads(c["function"]["arguments"]), sort_keys=True),
            )
            for t in run["traj"]
            for c in t.get("tool_calls") or []
        )
        if case["label"]["looping"]:
            assert max(errors.values()) >= 3
            onset = case["label"]["onset"]["message"]
            hit = case["messages"][onset]["meta"]["activity"]["function"]
            seen = Counter(
                (
                    m["meta"]["activity"]["function"]["name"],
                    m["meta"]["activity"]["function"]["result"],
                )
                for m in case["messages"][: onset + 1]
                if m["type"] == "activity" and m["meta"]["activity"]["type"] == "response"
            )
            assert seen[(hit["name"], hit["result"])] == 3
            assert max(seen.values()) == 3  # no other error reached 3 earlier
        else:
            assert run["reward"] == 1.0
            assert max(calls.values(), default=0) <= 1 and all(n == 1 for n in errors.values())
    # The skipped rewarded run does repeat a call or an error (13-1).
    skipped = runs["tau-bench/airline/task-13/trial-1"]
    assert skipped["reward"] == 1.0
    assert "tau-bench/airline/task-13/trial-1" not in {c["id"] for c in cases}


def test_tau_bench_mapping(tau: tuple[Any, list[dict[str, Any]]]) -> None:
    _, cases = tau
    run = raw_runs()["tau-bench/airline/task-11/trial-2"]
    case = next(c for c in cases if c["id"] == "tau-bench/airline/task-11/trial-2")
    traj = run["traj"]
    n_calls = sum(len(t.get("tool_calls") or []) for t in traj)
    n_text = sum(1 for t in traj if t["role"] == "assistant" and t["content"])
    n_bare = sum(
        1 for t in traj if t["role"] == "assistant" and not t["content"] and not t.get("tool_calls")
    )
    n_other = sum(1 for t in traj if t["role"] in ("system", "user"))
    assert len(case["messages"]) == n_other + n_text + n_bare + 2 * n_calls
    assert case["messages"][0] == {"type": "system", "text": traj[0]["content"]}
    # traj 24: text and a call -> a bot message, then the request, then the response.
    bot, request, response = case["messages"][24:27]
    assert bot == {"type": "bot", "text": traj[24]["content"]}
    call = traj[24]["tool_calls"][0]
    assert request["meta"]["activity"] == {
        "type": "request",
        "function": {
            "name": call["function"]["name"],
            "arguments": json.loads(call["function"]["arguments"]),
        },
    }
    assert request["tool_call_id"] == call["id"] == response["tool_call_id"]
    assert (
        response["meta"]["activity"]["function"]["result"] == traj[25]["content"]
    )  # string as logged


def test_tau_bench_rule_edges() -> None:
    def response(result: str, args: object = None) -> dict[str, Any]:
        function = {"name": "book", "arguments": args or {}, "result": result}
        return {
            "type": "activity",
            "text": "",
            "meta": {"activity": {"type": "response", "function": function}},
        }

    two = [response("Error: x", {"a": 1}), response("Error: x", {"a": 2})]
    assert label_run(two, 0.0) is None
    assert label_run([*two, response("Error: y")], 0.0) is None  # different error text
    three = label_run(
        [*two, {"type": "user", "text": "again"}, response("Error: x", {"a": 3})], 1.0
    )
    assert three is not None and three["looping"] and three["onset"] == {"message": 3, "char": None}
    assert label_run([response("ok", {"a": 1}), response("ok", {"a": 2})], 1.0)["looping"] is False
    assert label_run([response("ok", {"a": 1}), response("ok", {"a": 1})], 1.0) is None
    assert (
        label_run([{"type": "bot", "text": "same"}, {"type": "bot", "text": "same"}], 1.0) is None
    )
    assert label_run([response("ok")], 0.0) is None


def test_tau_bench_bad_input(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no open call"):
        map_trajectory([{"role": "tool", "content": "x", "tool_call_id": "a", "name": "f"}], "w")
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "a", "function": {"name": "f", "arguments": "{}"}}],
    }
    with pytest.raises(CorpusError, match="answers 'b'"):
        map_trajectory(
            [call, {"role": "tool", "content": "x", "tool_call_id": "b", "name": "f"}], "w"
        )
    with pytest.raises(CorpusError, match="ends before"):
        map_trajectory([call], "w")
    bad = tmp_path / "bad.json"
    bad.write_text('{"not": "a list"}', encoding="utf-8")
    with pytest.raises(CorpusError, match="list of runs"):
        import_tau_bench(bad, tmp_path / "out.jsonl")
    with pytest.raises(CorpusError, match=r"\.jsonl"):
        import_tau_bench(TAU_FILE, tmp_path / "out.json")


# --------------------------------------------------------------------------- Thoughtology


def think_body(chain: str) -> str:
    start = chain.index("<think>") + len("<think>")
    end = chain.find("</think>")
    return chain[start : end if end >= 0 else len(chain)]


def test_thoughtology_counts_and_labels(th: tuple[Any, list[dict[str, Any]]]) -> None:
    summary, cases = th
    assert_valid_corpus(cases)
    labels = {c["id"]: c["label"]["looping"] for c in cases}
    # By hand: 21 has 153 cycles over ~34,000 characters; 9 has exactly 10 cycles; 12, 23, 25 few;
    # 29 has 37 cycles but only ~10,000 characters of them; 8 has no FINAL stage.
    assert labels == {
        "thoughtology/r1-aime/09": False,
        "thoughtology/r1-aime/12": False,
        "thoughtology/r1-aime/21": True,
        "thoughtology/r1-aime/23": False,
        "thoughtology/r1-aime/25": False,
    }
    assert summary.skipped == {
        ">= 20 cycles spanning < 20000 characters (fine segmentation)": 1,
        "annotation incomplete (missing stage, unclosed tag or unclosed think)": 1,
    }
    assert all(c["label"]["source"] == "llm-judge" for c in cases)
    records = {r["id"]: r for r in json.loads(TH_FILE.read_text("utf-8"))}
    positive = next(c for c in cases if c["id"] == "thoughtology/r1-aime/21")
    body = think_body(records[21]["answer"])
    at = [m.start() for m in re.finditer("<CYCLE>", body)][LOOPING_MIN_CYCLES - 1]
    expected = len(STAGE_TAGS.sub("", body[:at]))
    assert positive["label"]["onset"] == {"message": 1, "char": expected}
    assert positive["messages"][0] == {"type": "user", "text": records[21]["question"]}


def test_thoughtology_stripping_keeps_positions(th: tuple[Any, list[dict[str, Any]]]) -> None:
    _, cases = th
    records = {r["id"]: r for r in json.loads(TH_FILE.read_text("utf-8"))}
    for case in cases:
        body = think_body(records[case["origin"]["record_id"]]["answer"])
        reasoning = case["messages"][1]
        text, spans = reasoning["text"], reasoning["meta"]["annotations"]
        assert text == STAGE_TAGS.sub("", body)
        assert not STAGE_TAGS.search(text)
        # Every span covers exactly the raw text between its tag and its closing tag.
        for tag in ("DEFINE", "BLOOM", "CYCLE", "FINAL", "r", "v"):
            raw = [STAGE_TAGS.sub("", m) for m in re.findall(f"<{tag}>(.*?)</{tag}>", body, re.S)]
            got = [text[s["start"] : s["end"]] for s in spans if s["tag"] == tag]
            assert got == raw, (case["id"], tag)
    wrapped = next(c for c in cases if c["id"] == "thoughtology/r1-aime/12")
    assert wrapped["messages"][1]["meta"]["dropped_wrapper"] == ["```markdown\n", "\n```"]
    nine = next(c for c in cases if c["id"] == "thoughtology/r1-aime/09")
    assert (
        sum(s["tag"] == "CYCLE" for s in nine["messages"][1]["meta"]["annotations"])
        == NEGATIVE_MAX_CYCLES
    )


def spans_of(
    n_cycles: int, cycle_len: int, *, bloom_len: int = 10
) -> tuple[str, list[dict[str, Any]]]:
    spans = [
        {"tag": "DEFINE", "start": 0, "end": 5},
        {"tag": "BLOOM", "start": 5, "end": 5 + bloom_len},
    ]
    at = 5 + bloom_len
    for _ in range(n_cycles):
        spans.append({"tag": "CYCLE", "start": at, "end": at + cycle_len})
        at += cycle_len
    spans.append({"tag": "FINAL", "start": at, "end": at + 5})
    return "x" * (at + 5), spans


COMPLETE = {"think_open": True, "think_closed": True, "stray_closing_tags": 0}


def test_thoughtology_rule_edges() -> None:
    text, spans = spans_of(20, 1000)
    label, _ = label_chain(text, spans, COMPLETE)
    assert (
        label is not None
        and label["looping"]
        and label["onset"] == {"message": 1, "char": 15 + 19 * 1000}
    )
    text, spans = spans_of(19, 2000)
    assert label_chain(text, spans, COMPLETE)[0] is None  # between the thresholds
    text, spans = spans_of(20, 999)
    assert label_chain(text, spans, COMPLETE)[0] is None  # 19,980 characters of cycles
    text, spans = spans_of(10, 100)
    label, _ = label_chain(text, spans, COMPLETE)
    assert label is not None and label["looping"] is False and label["onset"] is None
    assert label_chain(text, spans, {**COMPLETE, "think_closed": False})[0] is None
    assert label_chain(text, spans[:-1], COMPLETE)[0] is None  # no FINAL
    text, spans = spans_of(2, 100, bloom_len=15_001)
    assert label_chain(text, spans, COMPLETE)[1].startswith("a stage longer")


_TAG_NAMES = st.sampled_from(["DEFINE", "BLOOM", "CYCLE", "FINAL", "r", "v"])
_PLAIN = st.text(alphabet=st.characters(blacklist_characters="<"), max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_PLAIN, _TAG_NAMES, _PLAIN), max_size=6), _PLAIN)
def test_strip_annotations_property(parts: list[tuple[str, str, str]], tail: str) -> None:
    chain = "<think>" + "".join(f"{a}<{t}>{b}</{t}>" for a, t, b in parts) + tail + "</think>"
    text, spans, facts = strip_annotations(chain)
    assert text == "".join(a + b for a, _, b in parts) + tail
    assert [s["tag"] for s in spans] == [t for _, t, _ in parts]
    for (_, _, inner), span in zip(parts, spans, strict=True):
        assert text[span["start"] : span["end"]] == inner
    assert facts["stray_closing_tags"] == 0 and facts["think_closed"]


def test_thoughtology_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        '[{"id": "zero", "question": "q", "answer": "<think></think>"}]', encoding="utf-8"
    )
    with pytest.raises(CorpusError, match="'id' must be an integer"):
        import_thoughtology(bad, tmp_path / "out.jsonl")
    with pytest.raises(CorpusNotFoundError):
        import_thoughtology(tmp_path / "missing.json", tmp_path / "out.jsonl")


# --------------------------------------------------------------------------- shared


def test_deterministic_bytes_and_gzip(tmp_path: Path) -> None:
    for name, importer, raw in [
        ("ww", import_who_and_when, WW_DIR),
        ("tau", import_tau_bench, TAU_FILE),
        ("th", import_thoughtology, TH_FILE),
    ]:
        first, second, packed = (
            tmp_path / f"{name}1.jsonl",
            tmp_path / f"{name}2.jsonl",
            tmp_path / f"{name}.jsonl.gz",
        )
        importer(raw, first)
        importer(raw, second)
        importer(raw, packed)
        assert first.read_bytes() == second.read_bytes()
        assert gzip.decompress(packed.read_bytes()) == first.read_bytes()
        again = tmp_path / f"{name}-again.jsonl.gz"
        importer(raw, again)
        assert again.read_bytes() == packed.read_bytes()  # gzip without a timestamp


def test_split_is_a_stable_hash_of_the_group() -> None:
    for group in ["a", "tau-bench/airline/task-13", "who-and-when/hand-crafted/1"]:
        value = int.from_bytes(hashlib.sha256(group.encode()).digest()[:8], "big") % 100
        assert split_of(group) == ("train" if value < 70 else "test")
    shares = Counter(split_of(f"group-{i}") for i in range(2000))
    assert 0.65 < shares["train"] / 2000 < 0.75


def test_write_provenance_copies_source_and_license(tmp_path: Path) -> None:
    written = write_provenance(SAMPLES / "tau-bench", tmp_path / "x" / "c.jsonl")
    assert [Path(p).name for p in written] == ["SOURCE.md", "LICENSE"]
    for name in ("SOURCE.md", "LICENSE"):
        assert (tmp_path / "x" / name).read_bytes() == (SAMPLES / "tau-bench" / name).read_bytes()
    with pytest.raises(CorpusNotFoundError, match="LICENSE"):
        (tmp_path / "raw").mkdir()
        (tmp_path / "raw" / "SOURCE.md").write_text("s", encoding="utf-8")
        write_provenance(tmp_path / "raw", tmp_path / "y" / "c.jsonl")


def test_cli_import(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "corpus" / "tau.jsonl"
    result = runner.invoke(import_command, ["tau-bench", str(TAU_FILE), "--out", str(out)])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert (summary["cases"], summary["positives"], summary["negatives"]) == (5, 3, 2)
    assert (out.parent / "LICENSE").is_file() and (out.parent / "SOURCE.md").is_file()
    assert runner.invoke(import_command, ["nope", str(TAU_FILE)]).exit_code == 2
    assert (
        runner.invoke(import_command, ["tau-bench", str(tmp_path / "missing.json")]).exit_code == 2
    )
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    failed = runner.invoke(
        import_command, ["tau-bench", str(bad), "--out", str(tmp_path / "o.jsonl")]
    )
    assert failed.exit_code == 1 and "cannot read raw JSON" in failed.output


# --------------------------------------------------------------------------- checked-in corpora


@pytest.mark.parametrize("dataset", sorted(DATASETS))
def test_checked_in_corpus_is_valid_and_documented(dataset: str) -> None:
    path = REPO / DATASETS[dataset][1]
    assert path.is_file(), f"{path} is missing: run `harness corpora import {dataset} RAW`"
    assert (path.parent / "LICENSE").is_file() and (path.parent / "SOURCE.md").is_file()
    cases = read_corpus(path)
    assert_valid_corpus(cases)
    positives = sum(c["label"]["looping"] for c in cases)
    row = f"| `{path.name}` | {len(cases)} | {positives} | {len(cases) - positives} |"
    assert row in (REAL / "README.md").read_text("utf-8"), f"README.md lacks the row {row}"
