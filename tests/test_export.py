"""harness export: diff, refusal, upstream formats, and a round trip through a fresh process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import loopguard
from harness._cli_export import export_command
from harness._export_formats import render_options
from harness.sweep import run_sweep

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "smoke"
    run_sweep(REPO / "experiments" / "smoke.toml", out=out, progress=False)
    return out


def fresh(code: str, defaults: Path) -> str:
    env = {**os.environ, "LOOPGUARD_DEFAULTS": str(defaults)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_export_round_trip_through_a_fresh_process(smoke_run: Path, tmp_path: Path) -> None:
    defaults = tmp_path / "defaults.json"
    shutil.copy(loopguard.defaults_path(), defaults)
    before = json.loads(defaults.read_text())["detectors"]["repetition_guard"]
    best = json.loads((smoke_run / "best.json").read_text())["best"]
    tuned = best["params"]["repetition_guard"]
    assert tuned != before, "the smoke sweep should find a configuration other than the defaults"

    result = CliRunner().invoke(
        export_command, [str(smoke_run), "--defaults", str(defaults), "--write"]
    )
    assert result.exit_code == 0, result.output
    assert "repetition_guard." in result.output and "wrote" in result.output

    # A fresh process reads the exported file: the library's defaults changed.
    options = json.loads(
        fresh(
            "import json, loopguard; print(json.dumps(loopguard.RepetitionGuard().options))",
            defaults,
        )
    )
    assert options == {k: tuned[k] for k in options}
    written = json.loads(defaults.read_text())
    assert written["provenance"]["kind"] == "tuned"
    assert written["provenance"]["trial"] == best["trial"]
    assert written["provenance"]["previous"]["kind"] == "production"

    # `harness eval` with the (new) defaults reproduces the exported test-split figures.
    test_files = sorted((smoke_run / "splits" / "test").glob("*.jsonl"))
    out = tmp_path / "eval"
    env = {**os.environ, "LOOPGUARD_DEFAULTS": str(defaults)}
    command = [
        sys.executable,
        "-m",
        "harness.cli",
        "eval",
        "--detector",
        "repetition_guard",
        "--out",
        str(out),
        "--no-progress",
        "--bootstrap",
        "200",
    ]
    for path in test_files:
        command += ["--corpus", str(path)]
    subprocess.run(command, env=env, check=True, capture_output=True, text=True)
    got = json.loads((out / "metrics.json").read_text())["detectors"]["repetition_guard"]
    want = json.loads((smoke_run / "test" / "tuned" / "metrics.json").read_text())
    want = want["detectors"]["repetition_guard"]
    for key in ("tp", "fp", "tn", "fn", "precision", "recall", "f1"):
        assert got[key] == want[key], key


def test_export_refuses_a_worse_configuration(smoke_run: Path, tmp_path: Path) -> None:
    defaults = tmp_path / "defaults.json"
    shutil.copy(loopguard.defaults_path(), defaults)
    runner = CliRunner()
    assert (
        runner.invoke(
            export_command, [str(smoke_run), "--defaults", str(defaults), "--write"]
        ).exit_code
        == 0
    )
    exported = defaults.read_text()
    # Trial 0 is the production defaults: now worse than the current (tuned) defaults.
    result = runner.invoke(
        export_command, [str(smoke_run), "--trial", "0", "--defaults", str(defaults), "--write"]
    )
    assert result.exit_code != 0
    assert "refusing to export" in result.output and "below the current defaults" in result.output
    assert defaults.read_text() == exported
    forced = runner.invoke(
        export_command,
        [str(smoke_run), "--trial", "0", "--defaults", str(defaults), "--write", "--force"],
    )
    assert forced.exit_code == 0, forced.output
    assert json.loads(defaults.read_text())["detectors"]["repetition_guard"]["ngram"] == 4


def test_dry_run_writes_nothing(smoke_run: Path, tmp_path: Path) -> None:
    defaults = tmp_path / "defaults.json"
    shutil.copy(loopguard.defaults_path(), defaults)
    before = defaults.read_bytes()
    result = CliRunner().invoke(export_command, [str(smoke_run), "--defaults", str(defaults)])
    assert result.exit_code == 0
    assert "dry run" in result.output
    assert defaults.read_bytes() == before


def test_upstream_formats() -> None:
    tuned = {
        "repetition_guard": {"ngram": 5, "max_unique_ratio": 0.35, "min_chars": 0},
        "thread_cycle": {"min_repetitions": 3, "max_pattern_length": None, "last_messages": 6},
    }
    go = render_options(tuned, "go")
    assert (
        "thread.GuardOptions{Ngram: thread.Opt(5), MaxUniqueRatio: thread.Opt(0.35), "
        "MinChars: thread.Opt(0)}" in go
    )
    assert "thread.CycleOptions{MinRepetitions: thread.Opt(3)}" in go
    assert "not an upstream option (loopguard only): {'last_messages': 6}" in go
    ts = render_options(tuned, "ts")
    assert "createRepetitionGuard({ ngram: 5, maxUniqueRatio: 0.35, minChars: 0 });" in ts
    assert json.loads(render_options(tuned, "json")) == tuned
    assert 'max_pattern_length = "null"' in render_options(tuned, "toml")
    with pytest.raises(ValueError, match="format must be one of"):
        render_options(tuned, "yaml")


def test_not_a_sweep_folder_is_a_clear_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(export_command, [str(tmp_path)])
    assert result.exit_code != 0
    assert "not a finished sweep run folder" in result.output
