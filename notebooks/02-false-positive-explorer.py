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
# # False-positive explorer
#
# Load a saved run (`harness eval --out DIR`), pick a detector, an outcome and a tag,
# and read each case's text around the fire, with the phrase from the detector's
# reason highlighted and ▲ where it fired. Nothing is re-run: the verdicts come
# from the run folder, the texts from the corpus files its manifest names.
#
# **Parameters** (environment variables):
#
# - `LOOPGUARD_RUN_DIR`: the run folder (default `runs/notebook-demo`; made here on
#   `synthetic/default` if it does not exist);
# - `LOOPGUARD_DETECTOR`: the detector (default: the run's first);
# - `LOOPGUARD_OUTCOME`: `fp`, `fn`, `tp` or `tn` (default `fp`);
# - `LOOPGUARD_TAG`: only cases with this tag (default: any);
# - `LOOPGUARD_LIMIT`: cases shown (default 10).

# %%
import os
from pathlib import Path

import matplotlib.pyplot as plt
from IPython.display import HTML, display

import harness

RUN_DIR = Path(os.environ.get("LOOPGUARD_RUN_DIR", "runs/notebook-demo"))
OUTCOME = os.environ.get("LOOPGUARD_OUTCOME", "fp")
TAG = os.environ.get("LOOPGUARD_TAG", "")
LIMIT = int(os.environ.get("LOOPGUARD_LIMIT", "10"))

if not (RUN_DIR / "metrics.json").is_file():
    # No run yet: make a small one (three detectors on the synthetic corpus).
    harness.evaluate(
        "synthetic/default",
        ["repetition_guard", "thread_cycle", "text_run"],
        bootstrap=200,
        out=RUN_DIR,
    )

run = harness.load_run(RUN_DIR)
DETECTOR = os.environ.get("LOOPGUARD_DETECTOR", "") or run.detectors[0]
print(f"run {run.path}: detectors {', '.join(run.detectors)}; showing {DETECTOR}, {OUTCOME}")

# %% [markdown]
# ## Where the numbers come from
#
# The run's code version, corpora (with sha256) and the detector's parameters.

# %%
print("code version:", run.manifest.get("code_version"))
for corpus in run.corpora:
    print(f"corpus {corpus['name']}: {corpus['cases']} cases, sha256 {corpus['sha256']}")
print("parameters:", run.params(DETECTOR))

# %% [markdown]
# ## Scores
#
# Every detector of the run on each corpus and label source, with 95% intervals.

# %%
board = harness.leaderboard(run)
board[
    ["detector", "corpus", "source", "cases", "tp", "fp", "tn", "fn", "precision", "recall", "f1"]
]

# %%
fig = harness.plot_breakdown(run, DETECTOR, "kind")
display(fig)
plt.close("all")

# %% [markdown]
# ## Filter the verdicts
#
# `run.verdicts` is a DataFrame with one row per case and detector (the fields of
# `verdicts.jsonl`). Filter it like any DataFrame.

# %%
verdicts = run.verdicts
chosen = verdicts[(verdicts["detector"] == DETECTOR) & (verdicts["outcome"] == OUTCOME)]
if TAG:
    chosen = chosen[chosen["tags"].map(lambda tags: TAG in (tags or []))]
print(
    f"{len(chosen)} verdicts of {DETECTOR} with outcome {OUTCOME}"
    + (f" and tag {TAG}" if TAG else "")
)
chosen.groupby("kind", dropna=False).size().sort_values(ascending=False).to_frame("cases")

# %%
tag_counts = chosen.explode("tags").groupby("tags").size().sort_values(ascending=False)
tag_counts.head(20).to_frame("cases")

# %% [markdown]
# ## The cases
#
# Each case's text around the fire (for a miss: from the labelled onset), spread over
# kinds. `harness.gallery_rows` picks rows round-robin over kinds; any filtered rows
# can be passed to `harness.case_contexts` instead.

# %%
rows = harness.gallery_rows(run, DETECTOR, OUTCOME, LIMIT)
if TAG:
    rows = chosen.head(LIMIT)
contexts = harness.case_contexts(run, rows)
for context in contexts:
    display(HTML(context.html()))
if not contexts:
    print("no case matches")

# %% [markdown]
# ## One case
#
# `harness.case_context(run, case_id, detector)` shows a single case; `width` sets how
# many characters of text are shown.

# %%
if contexts:
    one = harness.case_context(run, contexts[0].case, DETECTOR, width=600)
    display(one)
    print(one.reason_text)
