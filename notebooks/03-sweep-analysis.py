# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Sweep analysis
#
# Load a study (`harness sweep` folder: `study.json`, the Optuna journal, `trials.csv`,
# `best.json`, `comparison.json` and the evaluations of `test/`), look at its history,
# Pareto front, parameter importances and slices, and compare the configurations it
# evaluated on the test split. Only the public `harness` API is used.
#
# **Parameters** (environment variables):
#
# - `LOOPGUARD_STUDY_DIR`: the sweep folder (default `runs/sweep`);
# - `LOOPGUARD_DETECTOR`: the detector to compare (default: the first evaluated).

# %%
import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
from IPython.display import display

import harness

STUDY_DIR = Path(os.environ.get("LOOPGUARD_STUDY_DIR", "runs/sweep"))
if not (STUDY_DIR / "study.json").is_file():
    raise FileNotFoundError(
        f"{STUDY_DIR} is not a sweep folder (no study.json): run `harness sweep` first, "
        "or set LOOPGUARD_STUDY_DIR"
    )
study = harness.load_study(STUDY_DIR)
configs = list(study.tests)
DETECTOR = os.environ.get("LOOPGUARD_DETECTOR", "") or (
    study.tests[configs[0]].detectors[0] if configs else ""
)
print(f"study {study.name}: objectives {study.objectives} ({study.directions})")
print(f"{len(study.complete_trials())} complete trials of {len(study.trials)}")
print(f"evaluated on the test split: {', '.join(configs) or 'nothing'}")

# %% [markdown]
# ## What was searched

# %%
print(json.dumps(study.info, indent=2))

# %% [markdown]
# ## Trials
#
# `study.trials` is `trials.csv` (Optuna's `trials_dataframe()`).

# %%
columns = ["number", *study.value_columns, *study.param_columns]
study.complete_trials()[columns].sort_values(study.value_columns[0], ascending=False).head(10)

# %% [markdown]
# ## Optimisation history

# %%
display(harness.plot_history(study))
plt.close("all")

# %% [markdown]
# ## Pareto front
#
# Only for a study with two or more objectives; the numbers are the Pareto-optimal
# trials.

# %%
if study.multi_objective:
    display(harness.plot_pareto(study))
else:
    print("single-objective study: no Pareto front")

# %% [markdown]
# ## Parameter importances
#
# fANOVA (Optuna, seeded): the share of the objective's variance each parameter
# explains. It needs the Optuna journal and a few complete trials.

# %%
importances = harness.param_importances(study)
if importances.empty:
    print(importances.attrs.get("note"))
else:
    display(importances)
    display(harness.plot_importances(study))

# %% [markdown]
# ## Slices
#
# The objective against each parameter's value, coloured by trial number: where the
# good values are, and whether the search converged.

# %%
display(harness.plot_slices(study))
plt.close("all")

# %% [markdown]
# ## Compare the configurations
#
# The study's evaluations on the test split (defaults, tuned, Pareto trials), from
# their saved runs, with 95% intervals; and the study's own verdict.

# %%
if isinstance(study.comparison, dict):
    print("verdict:", study.comparison.get("verdict"))
board = harness.leaderboard(study)
board[board["detector"] == DETECTOR][
    [
        "config",
        "corpus",
        "source",
        "precision",
        "precision_lo",
        "precision_hi",
        "recall",
        "recall_lo",
        "recall_hi",
        "f1",
        "f1_lo",
        "f1_hi",
    ]
]

# %%
if DETECTOR:
    display(harness.plot_precision_recall(study, DETECTOR))
    display(harness.plot_confusion(study, DETECTOR))
plt.close("all")

# %% [markdown]
# ## Parameters of each configuration

# %%
{name: run.params(DETECTOR) for name, run in study.tests.items()}
