"""The notebooks under ``notebooks/``: they run on small data, and their ``.ipynb`` are clean.

Each notebook is kept as a jupytext percent-format ``.py`` file and a paired
``.ipynb`` committed without outputs. Here every ``.py`` is executed in a real
kernel (nbclient, with a timeout per cell) on a run and a study made in a
temporary folder from ``tests/data/eval/mini.jsonl``; the parameters reach the
notebooks through the ``LOOPGUARD_*`` environment variables they read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import harness
from harness.evaluate import run_evaluation

from .test_report import EXTRA_CASES, MINI, fabricate_study

jupytext = pytest.importorskip("jupytext")
nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = REPO / "notebooks"
NAMES = ["01-corpus-overview", "02-false-positive-explorer", "03-sweep-analysis"]
# Seconds a cell may take before the run fails (the notebooks take a few seconds here).
CELL_TIMEOUT = 120


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("notebook-data")
    corpus = root / "mini-plus.jsonl"
    cases = [json.loads(line) for line in MINI.read_text(encoding="utf-8").splitlines() if line]
    harness.write_corpus(corpus, cases + EXTRA_CASES)
    run = root / "run"
    run_evaluation(corpus, ["repetition_guard", "thread_cycle"], out=run, bootstrap=20)
    study = fabricate_study(root / "sweep", corpus, corpus, trials=5, multi=True)
    return {"corpus": corpus, "run": run, "study": study}


def _execute(name: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    notebook = jupytext.read(NOTEBOOKS / f"{name}.py")
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(REPO)}},
    )
    client.execute()
    return notebook


def _outputs(notebook: Any, mime: str) -> list[str]:
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if mime in data:
                found.append(data[mime])
    return found


def test_corpus_overview_runs(data: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = _execute(
        "01-corpus-overview", {"LOOPGUARD_CORPUS": str(data["corpus"])}, monkeypatch
    )
    assert len(_outputs(notebook, "image/png")) >= 2
    text = "".join(
        o.get("text", "") for c in notebook.cells for o in c.get("outputs", []) if "text" in o
    )
    # The first case of each kind is printed, with its id.
    assert "escape-fp" in text and "runaway" in text


def test_false_positive_explorer_runs(
    data: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = _execute(
        "02-false-positive-explorer",
        {
            "LOOPGUARD_RUN_DIR": str(data["run"]),
            "LOOPGUARD_DETECTOR": "repetition_guard",
            "LOOPGUARD_OUTCOME": "fp",
            "LOOPGUARD_TAG": "",
        },
        monkeypatch,
    )
    cases = [h for h in _outputs(notebook, "text/html") if 'class="case fp"' in h]
    assert cases and "escape-fp" in cases[0]
    assert "<mark>" in cases[0] and "&lt;b&gt;ship" in cases[0]
    assert _outputs(notebook, "image/png")


def test_sweep_analysis_runs(data: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = _execute(
        "03-sweep-analysis",
        {"LOOPGUARD_STUDY_DIR": str(data["study"]), "LOOPGUARD_DETECTOR": ""},
        monkeypatch,
    )
    # History, Pareto front, slices, precision-recall and confusion (importances when
    # fANOVA finds variance) are drawn.
    assert len(_outputs(notebook, "image/png")) >= 5


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_matches_its_pair_and_has_no_outputs(name: str) -> None:
    ipynb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    for cell in ipynb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{name}.ipynb has outputs: clear them before committing"
            assert cell.execution_count is None
    paired = jupytext.read(NOTEBOOKS / f"{name}.py")
    assert [(c.cell_type, c.source) for c in ipynb.cells] == [
        (c.cell_type, c.source) for c in paired.cells
    ], f"{name}.ipynb differs from {name}.py: run `jupytext --sync notebooks/{name}.py`"
    assert ipynb.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("name", NAMES)
def test_notebooks_use_only_the_public_api(name: str) -> None:
    source = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
    assert re.search(r"^import harness$", source, re.MULTILINE)
    assert not re.search(r"(from|import)\s+harness\.", source), "import names from `harness`"
    for used in set(re.findall(r"\bharness\.(\w+)", source)):
        assert used in harness.__all__, f"harness.{used} is not public"


def test_environment_is_the_only_input() -> None:
    # The notebooks read their parameters from LOOPGUARD_* variables (documented in
    # each notebook's first cell), never from a path inside /work or ../shared.
    for name in NAMES:
        source = (NOTEBOOKS / f"{name}.py").read_text(encoding="utf-8")
        for variable in re.findall(r'os\.environ\.get\("(\w+)"', source):
            assert variable.startswith("LOOPGUARD_") and variable in source.split("# %%")[1]
        assert "shared" not in source and str(REPO) not in source
