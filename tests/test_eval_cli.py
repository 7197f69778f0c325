"""``harness eval`` and ``harness.evaluate``: outputs, errors, jobs, sensitivity."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner, Result

import loopguard as lg
from harness._cli_eval import eval_command
from harness.detectors import REGISTRY, Detector, Fire, Param, register
from harness.evaluate import evaluate, load_params_file

DATA = Path(__file__).parent / "data" / "eval"
MINI = DATA / "mini.jsonl"  # SOURCE: written for these tests (tests/data/eval/README.md)
INVALID = DATA / "invalid.jsonl"
DETECTORS = ["thread_cycle", "repetition_guard", "overthinking", "alm"]


def run(*args: str) -> Result:
    return CliRunner().invoke(eval_command, list(args), catch_exceptions=False)


def detector_args(names: list[str]) -> list[str]:
    return [x for name in names for x in ("--detector", name)]


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Result, Path]:
    out = tmp_path_factory.mktemp("eval") / "run"
    result = run(
        "--corpus", str(MINI), *detector_args(DETECTORS), "--chunking", "word",
        "--bootstrap", "100", "--out", str(out), "--no-progress",
    )  # fmt: skip
    return result, out


def test_eval_writes_verdicts_metrics_and_manifest(baseline: tuple[Result, Path]) -> None:
    result, out = baseline
    assert result.exit_code == 0, result.output
    verdicts = read_jsonl(out / "verdicts.jsonl")
    assert len(verdicts) == 8 * len(DETECTORS)
    # Deterministic order: corpus order, then case, then detector as given.
    assert [v["detector"] for v in verdicts[: len(DETECTORS)]] == DETECTORS
    for verdict in verdicts:
        assert {"case", "detector", "fired", "fired_at", "label", "reason"} <= set(verdict)
        assert {"latency_messages", "latency_tokens", "early", "outcome"} <= set(verdict)
        if verdict["fired"]:
            assert set(verdict["fired_at"]) == {"message", "char"}
    metrics = json.loads((out / "metrics.json").read_text())
    for name in DETECTORS:
        mine = [v for v in verdicts if v["detector"] == name]
        block = metrics["detectors"][name]
        for outcome in ("tp", "fp", "tn", "fn"):
            assert block[outcome] == sum(v["outcome"] == outcome for v in mine)
        for rate in ("precision", "recall", "f1", "f0_5", "mcc", "specificity"):
            assert rate in block and f"{rate}_ci" in block
        assert set(block["breakdown"]) == {"kind", "tag", "source", "corpus"}
    assert "ladder" in metrics["detectors"]["alm"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["corpora"][0]["sha256"] == hashlib.sha256(MINI.read_bytes()).hexdigest()
    assert {"git_sha", "dirty"} <= set(manifest["code_version"])
    assert manifest["packages"]["numpy"] and manifest["chunking"] == "word"
    assert manifest["seed"] == 0 and manifest["started"] <= manifest["finished"]
    # Without --params every detector runs with the library defaults (min_chars 0).
    assert manifest["detectors"]["repetition_guard"] == lg.detector_defaults("repetition_guard")
    assert "thread_cycle" in result.output and "precision" in result.output
    assert "mix label sources" in result.output  # mini.jsonl has synthetic and llm-judge labels


def test_jobs_give_the_same_verdicts(baseline: tuple[Result, Path], tmp_path: Path) -> None:
    _, out = baseline
    result = run(
        "--corpus", str(MINI), *detector_args(DETECTORS), "--chunking", "word",
        "--bootstrap", "100", "--jobs", "2", "--out", str(tmp_path), "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "verdicts.jsonl").read_bytes() == (out / "verdicts.jsonl").read_bytes()
    first = json.loads((out / "metrics.json").read_text())
    again = json.loads((tmp_path / "metrics.json").read_text())
    assert first["detectors"] == again["detectors"]


def test_preset_and_params_file(tmp_path: Path) -> None:
    params = tmp_path / "params.toml"
    params.write_text("[repetition_guard]\nngram = 3\n", encoding="utf-8")
    result = run(
        "--corpus", str(MINI), "--detector", "repetition_guard", "--preset",
        "repetition_guard=production", "--params", str(params), "--bootstrap", "0",
        "--out", str(tmp_path / "o"), "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    used = json.loads((tmp_path / "o" / "manifest.json").read_text())["detectors"]
    assert (
        used["repetition_guard"]["min_chars"]
        == lg.preset("repetition_guard", "production")["min_chars"]
    )
    assert used["repetition_guard"]["ngram"] == 3
    assert load_params_file(params) == {"repetition_guard": {"ngram": 3}}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--detector", "nope"], "unknown detector 'nope'; known: repeated_suffix"),
        (["--chunking", "chars"], "allowed: provider, word, sentence, fixed:N, whole"),
        (["--preset", "repetition_guard"], "expected DETECTOR=PRESET"),
        (["--preset", "repetition_guard=fast"], "no preset 'fast'; known: production"),
    ],
)
def test_bad_input_is_named_with_what_is_allowed(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = run("--corpus", str(MINI), *args, "--out", str(tmp_path), "--no-progress")
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_out_of_bounds_parameter_in_a_file(tmp_path: Path) -> None:
    params = tmp_path / "p.json"
    params.write_text(json.dumps({"repetition_guard": {"ngram": 40}}), encoding="utf-8")
    result = run(
        "--corpus", str(MINI), "--detector", "repetition_guard", "--params", str(params),
        "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert result.exit_code == 2
    assert "repetition_guard.ngram must be an integer in [2, 8]; got 40" in " ".join(
        result.output.split()
    )
    assert not (tmp_path / "o" / "verdicts.jsonl").exists()


def test_invalid_corpus_is_refused_unless_skipped(tmp_path: Path) -> None:
    refused = run("--corpus", str(INVALID), "--detector", "alm", "--out", str(tmp_path / "a"))
    assert refused.exit_code == 1
    assert "refusing to load an invalid corpus" in refused.output
    assert "invalid.jsonl:2" in refused.output
    skipped = run(
        "--corpus", str(INVALID), "--detector", "alm", "--skip-invalid", "--bootstrap", "0",
        "--out", str(tmp_path / "b"), "--no-progress",
    )  # fmt: skip
    assert skipped.exit_code == 0, skipped.output
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["corpora"][0]["skipped_invalid"] == 1
    assert len(read_jsonl(tmp_path / "b" / "verdicts.jsonl")) == 2


@pytest.fixture
def flaky_detector() -> Iterator[str]:
    class Adapter:
        follow_after_fire = False

        def append(self, message: dict[str, Any]) -> Fire | None:
            if message.get("type") == "reasoning":
                raise ValueError("cannot read reasoning")
            return None

        def finish(self) -> None:
            return None

    saved = dict(REGISTRY)
    register(
        Detector(
            name="flaky_for_test",
            kind="thread",
            description="raises on reasoning messages",
            defaults_key="repeated_result_run",
            params=(Param("min_result_repetitions", "int", low=2, high=8),),
            build=lambda params: Adapter,
        )
    )
    try:
        yield "flaky_for_test"
    finally:
        REGISTRY.clear()
        REGISTRY.update(saved)


def test_a_detector_error_is_recorded_and_the_run_ends_non_zero(
    flaky_detector: str, tmp_path: Path
) -> None:
    result = run(
        "--corpus", str(MINI), "--detector", flaky_detector, "--detector", "alm",
        "--bootstrap", "0", "--out", str(tmp_path), "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 1
    verdicts = read_jsonl(tmp_path / "verdicts.jsonl")
    broken = [v for v in verdicts if v["error"]]
    # mini.jsonl has reasoning in 3 cases: result-run, overthink, chat.
    assert {v["case"] for v in broken} == {"result-run", "overthink", "chat"}
    assert all(v["detector"] == flaky_detector and "ValueError" in v["error"] for v in broken)
    assert len([v for v in verdicts if v["detector"] == "alm"]) == 8
    assert "3 detector errors" in result.output
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert metrics["errors"] == 3 and metrics["detectors"][flaky_detector]["errors"] == 3


def test_chunking_sensitivity_reports_changed_verdicts(tmp_path: Path) -> None:
    result = run(
        "--corpus", str(MINI), "--detector", "overthinking", "--detector", "thread_cycle",
        "--chunking", "word", "--chunking-sensitivity", "word,whole", "--bootstrap", "0",
        "--out", str(tmp_path), "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "chunking_sensitivity.json").read_text())
    assert report["policies"] == ["word", "whole"]
    assert list(report["detectors"]) == ["overthinking"]  # thread detectors do not chunk
    for item in report["changed"]:
        assert len(set(item["fired"].values())) == 2
    assert report["detectors"]["overthinking"]["cases_changed"] == len(report["changed"])


def test_evaluate_returns_dataframes() -> None:
    result = evaluate(MINI, ["repeated_suffix", "text_run"], chunking="word", bootstrap=50)
    assert isinstance(result.verdicts, pd.DataFrame) and isinstance(result.metrics, pd.DataFrame)
    assert len(result.verdicts) == 16
    assert {"case", "detector", "fired", "fired_at", "label", "reason"} <= set(result.verdicts)
    overall = result.metrics[result.metrics["by"] == "all"].set_index("detector")
    assert list(overall.index) == ["repeated_suffix", "text_run"]
    suffix = result.verdicts[result.verdicts["detector"] == "repeated_suffix"]
    assert overall.loc["repeated_suffix", "tp"] == int((suffix["outcome"] == "tp").sum())
    assert result.manifest["detectors"]["text_run"] == lg.detector_defaults("text_run")
    again = evaluate(MINI, ["repeated_suffix", "text_run"], chunking="word", bootstrap=50)
    assert again.metrics_json["detectors"] == result.metrics_json["detectors"]
