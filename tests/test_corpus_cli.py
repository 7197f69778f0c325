"""`harness corpora list|validate|stats`, driven through click's test runner."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from harness._cli_corpora import corpora
from harness.corpus import corpus_stats

GOLDEN = Path(__file__).resolve().parent / "golden" / "validator"


def run(*args: str) -> Result:
    # A wide terminal, so that rich tables do not fold the values the tests look for.
    return CliRunner(env={"COLUMNS": "200"}).invoke(corpora, list(args))


def case(cid: str, looping: bool = False, **extra: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": cid,
        "messages": [{"type": "user", "text": "hi"}, {"type": "bot", "text": "hello"}],
        "label": {"looping": looping, "source": "synthetic"},
    }
    record.update(extra)
    return record


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)
    return path


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "corpora"
    write(root / "synthetic" / "default.jsonl.gz", [case("a", True), case("b"), case("c", True)])
    write(root / "real" / "small.jsonl", [case("r1"), case("r1")])  # one duplicate
    write(root / "conformance" / "ignored.jsonl", [case("x")])
    monkeypatch.setenv("LOOPGUARD_CORPORA_DIR", str(root))
    return root


def test_validate_prints_the_golden_error_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    folder = GOLDEN / "multiple-errors"
    monkeypatch.chdir(folder)
    result = run("validate", "corpus.jsonl")
    assert result.exit_code == 1
    expected = (folder / "expected.txt").read_text(encoding="utf-8").splitlines()
    lines = result.output.splitlines()
    assert lines[:-1] == expected
    assert lines[-1].startswith("corpus.jsonl: 6 cases, 5 invalid (")
    assert lines[-1].endswith("16 errors")


def test_validate_valid_and_gz(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN)
    result = run("validate", "valid-gz/corpus.jsonl.gz", "valid-all-fields/corpus.jsonl")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "valid-gz/corpus.jsonl.gz: 2 cases, all valid",
        "valid-all-fields/corpus.jsonl: 5 cases, all valid",
        "total: 2 files, 7 cases, 0 invalid",
    ]


def test_validate_skip_invalid_reports_skips_and_exits_zero(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(GOLDEN / "duplicate-id")
    result = run("validate", "--skip-invalid", "corpus.jsonl")
    assert result.exit_code == 0, result.output
    summary = result.output.splitlines()[-1]
    assert summary == (
        "corpus.jsonl: 9 cases, 3 loaded, 6 skipped "
        "(field-type: 2, unknown-source: 2, duplicate-id: 3)"
    )
    assert len(result.output.splitlines()) == 8  # the 7 error lines say why


def test_validate_read_error_fails_even_when_skipping(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(GOLDEN / "read-error-truncated-gz")
    result = run("validate", "--skip-invalid", "corpus.jsonl.gz")
    assert result.exit_code == 1
    assert "read-error" in result.output and "reading stopped at line 11" in result.output


def test_validate_names_and_all(registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(registry.parent)
    by_name = run("validate", "synthetic/default")
    assert by_name.exit_code == 0
    assert by_name.output == "corpora/synthetic/default.jsonl.gz: 3 cases, all valid\n"
    every = run("validate", "--all")
    assert every.exit_code == 1
    assert every.output.splitlines() == [
        "corpora/real/small.jsonl:2: [case r1] duplicate-id: id already used on line 1",
        "corpora/real/small.jsonl: 2 cases, 1 invalid (duplicate-id: 1), 1 error",
        "corpora/synthetic/default.jsonl.gz: 3 cases, all valid",
        "total: 2 files, 5 cases, 1 invalid",
    ]


def test_validate_usage_errors(registry: Path) -> None:
    unknown = run("validate", "synthetic/nope")
    assert unknown.exit_code == 2
    assert "known names" in unknown.output and "real/small, synthetic/default" in unknown.output
    assert run("validate").exit_code == 2
    assert run("validate", "--all", "real/small").exit_code == 2


def test_list(registry: Path) -> None:
    result = run("list", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["corpora_dir"] == str(registry)
    assert data["corpora"] == [
        {
            "name": "real/small",
            "path": "real/small.jsonl",
            "cases": 1,
            "positives": 0,
            "negatives": 1,
            "invalid": 1,
            "readable": True,
        },
        {
            "name": "synthetic/default",
            "path": "synthetic/default.jsonl.gz",
            "cases": 3,
            "positives": 2,
            "negatives": 1,
            "invalid": 0,
            "readable": True,
        },
    ]
    table = run("list")
    assert table.exit_code == 0
    rows = {line.split("│")[1].strip(): line for line in table.output.splitlines() if "│" in line}
    cells = [c.strip() for c in rows["synthetic/default"].split("│")[2:6]]
    assert cells == ["3", "2", "1", "0"]
    assert "conformance" not in table.output


def test_list_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPGUARD_CORPORA_DIR", str(tmp_path))
    result = run("list")
    assert result.exit_code == 0
    assert "no corpora under" in result.output


def test_stats(registry: Path) -> None:
    result = run("stats", "--json", "synthetic/default")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data == corpus_stats([registry / "synthetic" / "default.jsonl.gz"])
    assert data["total"]["positives"] == 2 and data["total"]["negatives"] == 1

    table = run("stats", "synthetic/default", str(registry / "real" / "small.jsonl"))
    assert table.exit_code == 1
    assert "duplicate-id" in table.output and "refusing to load" in table.output

    skipping = run("stats", "--skip-invalid", "--all")
    assert skipping.exit_code == 0, skipping.output
    rows = {
        line.split("│")[1].strip(): line for line in skipping.output.splitlines() if "│" in line
    }
    assert [c.strip() for c in rows["cases"].split("│")[2:5]] == ["1", "3", "4"]
    assert [c.strip() for c in rows["skipped (invalid)"].split("│")[2:5]] == ["1", "0", "1"]
    assert "by label source" in skipping.output and "skipped by rule" in skipping.output
