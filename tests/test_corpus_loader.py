"""The corpus format v1: golden validator cases, schema agreement, loader, registry, stats."""

from __future__ import annotations

import copy
import gzip
import json
import os
import threading
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness._atomic import atomic_write_text
from harness.corpus import (
    CROSS_LINE_RULES,
    RULES,
    SCHEMA_RULES,
    Case,
    CorpusError,
    CorpusIssue,
    CorpusNotFoundError,
    CorpusReader,
    Onset,
    check_case,
    check_cases,
    corpora_dir,
    corpus_schema,
    corpus_stats,
    iter_cases,
    list_corpora,
    load_cases,
    resolve_corpus,
    validate_corpus,
    write_corpus,
)

GOLDEN = Path(__file__).resolve().parent / "golden" / "validator"
GOLDEN_CASES = sorted(p.name for p in GOLDEN.iterdir() if p.is_dir())
UPDATE = os.environ.get("LOOPGUARD_UPDATE_GOLDEN") == "1"


def golden_corpus(name: str) -> Path:
    (corpus,) = (GOLDEN / name).glob("corpus.jsonl*")
    return corpus


def case(cid: str, looping: bool = False, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": cid,
        "messages": [{"type": "user", "text": "hi"}, {"type": "bot", "text": "hello"}],
        "label": {"looping": looping, "source": "synthetic"},
    }
    record.update(extra)
    return record


def write_lines(path: Path, lines: list[str]) -> Path:
    data = "".join(line + "\n" for line in lines).encode("utf-8")
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return path


# --- golden files ----------------------------------------------------------------------


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_golden_validator(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = golden_corpus(name)
    monkeypatch.chdir(corpus.parent)  # error lines name the file as given: corpus.jsonl[.gz]
    report = validate_corpus(corpus.name)
    got = "".join(f"{issue}\n" for issue in report.issues)
    expected_file = corpus.parent / "expected.txt"
    if UPDATE:
        atomic_write_text(expected_file, got)
    assert got == expected_file.read_text(encoding="utf-8")
    assert report.ok == (got == "")
    assert name.startswith("valid-") == report.ok


def test_golden_cases_cover_every_rule_and_input_kind() -> None:
    seen: set[str] = set()
    for name in GOLDEN_CASES:
        for line in (GOLDEN / name / "expected.txt").read_text(encoding="utf-8").splitlines():
            rule = line.split(": ")[1].split("] ")[-1]
            seen.add(rule)
    assert seen == set(RULES)
    suffixes = {golden_corpus(n).name for n in GOLDEN_CASES}
    assert suffixes == {"corpus.jsonl", "corpus.jsonl.gz"}
    lines_per_case = [
        len((GOLDEN / n / "expected.txt").read_text(encoding="utf-8").splitlines())
        for n in GOLDEN_CASES
    ]
    assert 0 in lines_per_case and max(lines_per_case) > 10


# --- JSON Schema agreement ---------------------------------------------------------------

VALIDATOR = jsonschema.Draft202012Validator(corpus_schema())
# Errors a schema of one JSON value cannot see.
VALUE_INDEPENDENT = CROSS_LINE_RULES | {"duplicate-id"}


def test_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = corpus_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)
    corpus_schema()["title"] = "changed"
    assert corpus_schema()["title"] == schema["title"]  # a fresh copy each time


def _reject(token: str) -> float:
    raise ValueError(token)  # NaN and Infinity are not JSON


def parsed_lines(corpus: Path) -> Iterator[tuple[int, Any]]:
    """The lines of a golden corpus that are JSON documents, parsed independently."""
    opener = gzip.open if corpus.name.endswith(".gz") else open
    with opener(corpus, "rb") as handle:
        try:
            for number, raw in enumerate(handle, start=1):
                try:
                    text = raw.decode("utf-8").lstrip("\ufeff")
                    value = json.loads(text, parse_constant=_reject)
                except ValueError:
                    continue
                yield number, value
        except (OSError, EOFError):
            return


def schema_verdict_agrees(value: Any, rules: set[str]) -> None:
    schema_ok = VALIDATOR.is_valid(value)
    if not rules:
        assert schema_ok, "the loader accepts a case the schema rejects"
    if rules & SCHEMA_RULES:
        assert not schema_ok, f"the schema misses {rules & SCHEMA_RULES}"
    if not schema_ok:
        assert rules, "the schema is stricter than the loader"
    if rules and rules <= {"chunks-mismatch", "duplicate-id"}:
        assert schema_ok  # documented: not expressible in a schema


@pytest.mark.parametrize("name", GOLDEN_CASES)
def test_schema_agrees_with_loader_on_golden_cases(name: str) -> None:
    corpus = golden_corpus(name)
    report = validate_corpus(corpus)
    rules_by_line: dict[int, set[str]] = {}
    for issue in report.issues:
        rules_by_line.setdefault(issue.line, set()).add(issue.rule)
    checked = 0
    for number, value in parsed_lines(corpus):
        rules = rules_by_line.get(number, set()) - VALUE_INDEPENDENT
        schema_verdict_agrees(value, rules)
        checked += 1
    assert checked or name in {"valid-empty-file", "valid-blank-lines-only", "read-error-not-gzip"}


_BASES = [json.loads(line) for line in golden_corpus("valid-all-fields").read_text().splitlines()]
_OPTIONAL_PATHS: list[tuple[Any, ...]] = [
    ("group",),
    ("tags",),
    ("tags", 0),
    ("origin",),
    ("label", "onset"),
    ("label", "onset", "char"),
    ("label", "onset", "message"),
    ("label", "kind"),
    ("label", "note"),
    ("label", "looping"),
    ("label", "source"),
    ("messages", 0, "chunks"),
    ("messages", 0, "chunks", 0),
    ("messages", 0, "state"),
    ("messages", 0, "meta"),
    ("messages", 1, "text"),
]
_VALUES = st.sampled_from(
    [
        *(None, True, False, 0, 1, -1, 2, 1.5, 3.0, "", "x", "human", "rule", [], ["a"], [1], {}),
        *({"message": 0}, {"message": 1, "char": 2}, {"message": -1}, {"type": "bot"}),
    ]
).map(copy.deepcopy)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield (*prefix, index)
            yield from _paths(child, (*prefix, index))


def _mutate(record: Any, path: tuple[Any, ...], value: Any, delete: bool) -> Any:
    if not path:
        return value
    parent = record
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return record
    last = path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        if delete:
            parent.pop(last, None)
        else:
            parent[last] = value
    elif isinstance(parent, list) and isinstance(last, int) and last < len(parent):
        if delete:
            del parent[last]
        else:
            parent[last] = value
    return record


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_schema_agrees_with_loader_on_mutated_cases(data: st.DataObject) -> None:
    record = copy.deepcopy(data.draw(st.sampled_from(_BASES)))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = [*_paths(record), *_OPTIONAL_PATHS, ()]
        path = data.draw(st.sampled_from(paths))
        record = _mutate(record, path, data.draw(_VALUES), data.draw(st.booleans()))
    rules = {issue.rule for issue in check_case(record)}
    schema_verdict_agrees(record, rules)


# --- the loader ------------------------------------------------------------------------


def test_valid_corpus_loads_with_unknown_fields_kept() -> None:
    corpus = golden_corpus("valid-unknown-fields")
    cases = load_cases(corpus)
    originals = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines()]
    assert [c.raw for c in cases] == originals
    first = cases[0]
    assert first.raw["x-top"] == {"nested": [1, 2]}
    assert first.messages[0]["x-msg"] is True
    assert first.label["x-label"] == 3.5
    assert first.raw["label"]["onset"]["x-onset"] == "kept"
    assert cases[1].raw["annotator_confidence"] == 0.9


def test_case_properties_and_positions() -> None:
    cases = load_cases(golden_corpus("valid-all-fields"))
    by_id = {c.id: c for c in cases}
    one = by_id["all/1"]
    assert one.looping is True
    assert one.onset == Onset(1, len(one.messages[1]["text"]))
    assert (one.kind, one.source, one.group) == ("text-run", "rule", "all")
    assert one.note == "3 identical sentences"
    assert one.tags == ("cjk", "hard-negative")
    assert one.origin == {"dataset": "golden", "seed": 1}
    assert by_id["all/2"].onset == Onset(1, None)
    three = by_id["all/3"].onset
    assert three == Onset(1, 0) and type(three.message) is int and type(three.char) is int
    four = by_id["all/4"]
    assert (four.onset, four.group, four.tags, four.origin) == (None, "all/4", (), None)
    assert [c.line for c in cases] == [1, 2, 3, 4, 5]
    assert {c.path for c in cases} == {str(golden_corpus("valid-all-fields"))}

    crlf = load_cases(golden_corpus("valid-crlf"))
    assert [(c.id, c.line) for c in crlf] == [("crlf/1", 3), ("crlf/2", 5)]
    assert crlf[0].kind is None and crlf[0].note is None


def test_gz_and_plain_corpora_read_the_same(tmp_path: Path) -> None:
    gz_cases = load_cases(golden_corpus("valid-gz"))
    plain = tmp_path / "same.jsonl"
    plain.write_bytes(gzip.decompress(golden_corpus("valid-gz").read_bytes()))
    assert [c.raw for c in load_cases(plain)] == [c.raw for c in gz_cases]
    assert len(gz_cases) == 2


def test_invalid_corpus_is_refused_with_every_error() -> None:
    corpus = golden_corpus("multiple-errors")
    with pytest.raises(CorpusError) as caught:
        list(iter_cases(corpus))
    expected = validate_corpus(corpus).issues
    assert list(caught.value.issues) == expected and len(expected) == 16
    message = str(caught.value)
    assert "refusing to load an invalid corpus" in message
    assert all(str(issue) in message for issue in expected)


def test_skip_invalid_yields_valid_cases_and_reports_why() -> None:
    reader = CorpusReader(golden_corpus("multiple-errors"), skip_invalid=True)
    assert [(c.id, c.line) for c in reader] == [("me/ok", 2)]
    report = reader.report
    assert (report.lines, report.blank_lines, report.cases, report.valid) == (9, 3, 6, 1)
    assert report.invalid == 5
    assert report.invalid_cases_by_rule()["field-type"] == 2
    assert report.issues_by_rule()["field-type"] == 5
    assert report.invalid_cases_by_rule()["duplicate-id"] == 1
    assert "1 loaded, 5 skipped" in report.summary(skipped=True)
    assert "5 invalid" in report.summary() and "16 errors" in report.summary()
    # A second pass starts a fresh report.
    assert len(list(reader)) == 1 and reader.report.cases == 6


def test_duplicate_id_keeps_the_first_occurrence() -> None:
    reader = CorpusReader(golden_corpus("duplicate-id"), skip_invalid=True)
    assert [(c.id, c.line) for c in reader] == [("dup/a", 1), ("dup/b", 2), ("DUP/A", 4)]


def test_read_error_is_fatal_even_when_skipping(tmp_path: Path) -> None:
    corpus = golden_corpus("read-error-truncated-gz")
    reader = CorpusReader(corpus, skip_invalid=True)
    seen: list[str] = []
    with pytest.raises(CorpusError, match="cannot be read to the end") as caught:
        seen.extend(c.id for c in reader)
    assert seen == [f"trunc/{i:02d}" for i in range(10)]
    assert [i.rule for i in caught.value.issues] == ["read-error"]
    assert reader.report.complete is False


def test_iter_cases_streams(tmp_path: Path) -> None:
    # The second half is invalid: a reader that read (or validated) the whole file first
    # would raise before yielding the first case.
    lines = [json.dumps(case(f"s/{i}")) for i in range(1000)]
    lines += [json.dumps(case(f"bad/{i}", group="")) for i in range(1000)]
    corpus = write_lines(tmp_path / "half.jsonl.gz", lines)
    stream = iter_cases(corpus)
    assert next(stream).id == "s/0"
    rest: list[str] = []
    with pytest.raises(CorpusError) as caught:
        rest.extend(c.id for c in stream)
    assert len(rest) == 999
    assert len(caught.value.issues) == 1000  # every error, although reading stopped yielding
    message = str(caught.value)
    assert message.count("] empty-value:") == 50 and "... and 950 more" in message


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a named pipe")
def test_iter_cases_yields_before_the_rest_is_written(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    first_seen = threading.Event()
    writer_error: list[BaseException] = []

    def writer() -> None:
        try:
            with open(fifo, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(case("p/0")) + "\n")
                handle.flush()
                # The rest exists only once the reader has the first case.
                if not first_seen.wait(timeout=10):
                    raise TimeoutError("the reader did not yield the first case")
                handle.write(json.dumps(case("p/1")) + "\n")
        except BaseException as exc:  # reported by the main thread
            writer_error.append(exc)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    stream = iter_cases(fifo)
    assert next(stream).id == "p/0"
    first_seen.set()
    assert [c.id for c in stream] == ["p/1"]
    thread.join(timeout=10)
    assert not writer_error


def test_validation_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    filler = "Let me look at the invoice table again. " * 60
    lines = [
        json.dumps(case(f"m/{i:05d}", messages=[{"type": "bot", "text": filler}]))
        for i in range(3000)
    ]
    corpus = write_lines(tmp_path / "big.jsonl", lines)
    size = corpus.stat().st_size
    tracemalloc.start()
    try:
        report = validate_corpus(corpus)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.ok and report.valid == 3000
    assert size > 6_000_000
    assert peak < size / 10, f"peak {peak} bytes for a {size}-byte file"


def test_bad_paths(tmp_path: Path) -> None:
    with pytest.raises(CorpusNotFoundError, match="no such corpus file"):
        validate_corpus(tmp_path / "missing.jsonl")
    (tmp_path / "x.json").write_text("{}\n")
    with pytest.raises(CorpusError, match=r"must end in \.jsonl or \.jsonl\.gz"):
        list(iter_cases(tmp_path / "x.json"))
    (tmp_path / "dir.jsonl").mkdir()
    with pytest.raises(CorpusError, match="is a directory"):
        validate_corpus(tmp_path / "dir.jsonl")
    with pytest.raises(TypeError, match="skip_invalid must be a bool"):
        CorpusReader(tmp_path / "x.jsonl", skip_invalid="yes")  # type: ignore[arg-type]


def test_trailing_comma_and_unterminated_last_line(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_bytes(b'{"id": "a", "messages": [], }\n' + json.dumps(case("b")).encode())
    report = validate_corpus(corpus)
    assert [(i.line, i.rule) for i in report.issues] == [(1, "json-syntax")]
    assert report.valid == 1  # the last line needs no newline


def test_byte_order_mark_before_a_blank_first_line_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "bom.jsonl"
    corpus.write_bytes(b"\xef\xbb\xbf\n" + json.dumps(case("a")).encode() + b"\n")
    report = validate_corpus(corpus)
    assert [(i.line, i.rule) for i in report.issues] == [(1, "encoding")]
    assert (report.cases, report.valid, report.blank_lines) == (1, 1, 1)
    with pytest.raises(CorpusError, match="byte-order mark"):
        load_cases(corpus)
    assert [c.id for c in load_cases(corpus, skip_invalid=True)] == ["a"]


def test_issue_format() -> None:
    assert str(CorpusIssue("f.jsonl", 2, None, "not-object", "m")) == "f.jsonl:2: not-object: m"
    assert str(CorpusIssue("f.jsonl", 2, "a/b", "r", "m")) == "f.jsonl:2: [case a/b] r: m"
    assert str(CorpusIssue("f", 1, "a]b", "r", "m")) == 'f:1: [case "a]b"] r: m'
    assert str(CorpusIssue("f", 1, "a\nb", "r", "m")) == 'f:1: [case "a\\nb"] r: m'
    issue = CorpusIssue("f", 1, None, "r", "m")
    assert issue.to_dict() == {"file": "f", "line": 1, "case_id": None, "rule": "r", "message": "m"}


def test_check_case_and_check_cases_in_memory() -> None:
    assert check_case(case("ok")) == []
    problems = check_case({"id": "x", "messages": [], "label": {"looping": "no"}})
    assert [(p.rule, p.case_id) for p in problems] == [
        ("empty-value", "x"),
        ("field-type", "x"),
        ("required-field", "x"),
    ]
    found = check_cases([case("a"), case("b"), Case(case("a"), "mem", 1)])
    assert [(i.line, i.rule) for i in found] == [(3, "duplicate-id")]


def test_write_corpus_round_trip_and_refusal(tmp_path: Path) -> None:
    records = [case("w/1", label={"looping": True, "source": "rule"}), case("w/2")]
    out = tmp_path / "out.jsonl.gz"
    assert write_corpus(out, records) == 2
    first_bytes = out.read_bytes()
    assert [c.raw for c in load_cases(out)] == records
    assert write_corpus(out, load_cases(out)) == 2
    assert out.read_bytes() == first_bytes  # reproducible gzip

    with pytest.raises(CorpusError, match="not written, 3 problem") as caught:
        write_corpus(out, [case("w/1"), case("w/1"), {"id": "w/3"}])
    assert {i.rule for i in caught.value.issues} == {"duplicate-id", "required-field"}
    assert out.read_bytes() == first_bytes  # the old file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl.gz"]
    with pytest.raises(CorpusError, match="must end in"):
        write_corpus(tmp_path / "out.json", records)


# --- registry ----------------------------------------------------------------------------


@pytest.fixture
def corpora_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "corpora"
    files = [
        "synthetic/default.jsonl.gz",
        "real/tau-bench-airline.jsonl",
        "top.jsonl",
        "conformance/excluded.jsonl",
        "raw/tau-bench/excluded.jsonl",
        ".hidden/excluded.jsonl",
        "synthetic/.tmp-excluded.jsonl",
        "nested/conformance/kept.jsonl",
        "twin.jsonl",
        "twin.jsonl.gz",
    ]
    for index, name in enumerate(files):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_lines(path, [json.dumps(case(f"c/{index}", looping=index % 2 == 0))])
    (root / "notes.txt").write_text("not a corpus")
    monkeypatch.setenv("LOOPGUARD_CORPORA_DIR", str(root))
    return root


def test_list_corpora(corpora_tree: Path) -> None:
    assert corpora_dir() == corpora_tree
    names = [(c.name, c.path.relative_to(corpora_tree).as_posix()) for c in list_corpora()]
    assert names == [
        ("nested/conformance/kept", "nested/conformance/kept.jsonl"),
        ("real/tau-bench-airline", "real/tau-bench-airline.jsonl"),
        ("synthetic/default", "synthetic/default.jsonl.gz"),
        ("top", "top.jsonl"),
        ("twin", "twin.jsonl"),
        ("twin", "twin.jsonl.gz"),
    ]


def test_resolve_corpus(
    corpora_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert resolve_corpus("synthetic/default") == corpora_tree / "synthetic/default.jsonl.gz"
    assert resolve_corpus("twin.jsonl.gz") == corpora_tree / "twin.jsonl.gz"
    with pytest.raises(CorpusError, match="ambiguous"):
        resolve_corpus("twin")
    monkeypatch.chdir(tmp_path)
    local = write_lines(tmp_path / "local.jsonl", [json.dumps(case("l"))])
    assert resolve_corpus("local.jsonl") == Path("local.jsonl")
    assert resolve_corpus(local) == local
    with pytest.raises(CorpusNotFoundError) as caught:
        resolve_corpus("synthetic/nope")
    message = str(caught.value)
    assert "synthetic/nope" in message and "real/tau-bench-airline, synthetic/default" in message
    with pytest.raises(CorpusError, match="is a directory"):
        resolve_corpus(corpora_tree)


def test_corpora_dir_default_and_bad_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LOOPGUARD_CORPORA_DIR", raising=False)
    assert corpora_dir() == Path(__file__).resolve().parent.parent / "corpora"
    monkeypatch.setenv("LOOPGUARD_CORPORA_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(CorpusError, match="LOOPGUARD_CORPORA_DIR"):
        corpora_dir()


# --- stats -------------------------------------------------------------------------------


def test_corpus_stats(tmp_path: Path) -> None:
    def msgs(*texts: str) -> list[dict[str, Any]]:
        return [{"type": "bot", "text": t} for t in texts]

    one = write_lines(
        tmp_path / "one.jsonl",
        [
            json.dumps(
                case(
                    "a",
                    messages=msgs("ab", "cde"),
                    label={"looping": True, "kind": "suffix", "source": "rule", "onset": None},
                    tags=["x", "x", "y"],
                    group="g1",
                )
            ),
            json.dumps(
                case(
                    "b",
                    messages=[{"type": "user", "text": "héllo", "chunks": ["hé", "llo"]}],
                    label={"looping": False, "kind": "progress", "source": "human"},
                    tags=["y"],
                    group="g1",
                )
            ),
            json.dumps(
                case(
                    "c",
                    messages=msgs("", "1234", "", "xy"),
                    label={"looping": True, "onset": {"message": 1}, "source": "rule"},
                )
            ),
        ],
    )
    two = write_lines(
        tmp_path / "two.jsonl.gz",
        [
            json.dumps(case("d", group="g1")),
            json.dumps(case("e", group="")),  # invalid
        ],
    )
    with pytest.raises(CorpusError):
        corpus_stats([one, two])
    stats = corpus_stats([one, two], skip_invalid=True)
    first, second = stats["files"]
    assert first["file"] == str(one) and second["file"] == str(two)
    assert (first["cases"], first["positives"], first["negatives"]) == (3, 2, 1)
    assert first["with_onset"] == 1
    assert first["groups"] == 2  # g1, and c by default
    assert first["messages"] == 7 and first["chunked_messages"] == 1
    assert first["messages_per_case"] == {"min": 1, "median": 2, "mean": 2.333, "max": 4}
    assert first["text_chars_per_case"] == {"min": 5, "median": 5, "mean": 5.333, "max": 6}
    assert first["by_kind"] == {"(none)": 1, "progress": 1, "suffix": 1}
    assert first["by_source"] == {"rule": 2, "human": 1}
    assert first["by_tag"] == {"y": 2, "x": 1}
    assert first["by_message_type"] == {"bot": 6, "user": 1}
    assert (second["cases"], second["skipped"], second["skipped_by_rule"]) == (
        1,
        1,
        {"empty-value": 1},
    )
    total = stats["total"]
    assert (total["cases"], total["positives"], total["negatives"], total["skipped"]) == (
        4,
        2,
        2,
        1,
    )
    assert total["groups"] == 2  # g1 is shared across the files
    assert total["messages_per_case"] == {"min": 1, "median": 2.0, "mean": 2.25, "max": 4}
    assert json.loads(json.dumps(stats)) == stats

    empty = write_lines(tmp_path / "empty.jsonl", [])
    assert corpus_stats([empty])["total"]["messages_per_case"]["median"] is None
    with pytest.raises(TypeError, match="iterable of paths"):
        corpus_stats(str(empty))
