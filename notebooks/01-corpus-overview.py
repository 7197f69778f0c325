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
# # Corpus overview
#
# What is in a labelled corpus: how many looping and other cases, of which kinds,
# from which label sources, how long the conversations are, and what a case of each
# kind looks like. Only the public `harness` API is used.
#
# **Parameters** (environment variables, so that `make test` can run this notebook on
# a small corpus):
#
# - `LOOPGUARD_CORPUS`: one or more corpus names or paths, comma-separated
#   (default `synthetic/default`; `harness corpora list` shows the names).

# %%
import os

import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import display

import harness

CORPORA = [
    c.strip()
    for c in os.environ.get("LOOPGUARD_CORPUS", "synthetic/default").split(",")
    if c.strip()
]
PATHS = [harness.resolve_corpus(c) for c in CORPORA]
display(PATHS)

# %% [markdown]
# ## The named corpora
#
# Every `.jsonl` / `.jsonl.gz` file under `corpora/` (except the conformance suite).

# %%
pd.DataFrame([(c.name, str(c.path)) for c in harness.list_corpora()], columns=["name", "path"])

# %% [markdown]
# ## Validation and totals
#
# `validate_corpus` checks every rule of `docs/corpus-format.md`; `corpus_stats`
# counts cases, classes, kinds, sources and sizes.

# %%
for path in PATHS:
    print(harness.validate_corpus(path).summary())

stats = harness.corpus_stats(PATHS)
columns = ["cases", "positives", "negatives", "with_onset", "groups", "messages"]
totals = pd.DataFrame([{"file": f["file"], **{k: f[k] for k in columns}} for f in stats["files"]])
display(totals)

# %% [markdown]
# ## One row per case
#
# The loader streams cases; a small table of each case's label and size is enough
# for the figures below.

# %%
rows = []
for path in PATHS:
    for case in harness.iter_cases(path):
        rows.append(
            {
                "file": path.name,
                "case": case.id,
                "looping": case.looping,
                "kind": case.kind or "(none)",
                "source": case.source,
                "tags": ", ".join(case.tags),
                "messages": len(case.messages),
                "chars": sum(len(m["text"]) for m in case.messages),
            }
        )
cases = pd.DataFrame(rows)
cases.head(10)

# %% [markdown]
# ## Cases by kind and label
#
# Kinds are the families of loops (and of hard negatives) the corpus covers.

# %%
by_kind = cases.pivot_table(
    index="kind", columns="looping", values="case", aggfunc="count", fill_value=0
).rename(columns={True: "looping", False: "not looping"})
by_kind = by_kind.reindex(columns=["looping", "not looping"], fill_value=0)
fig, ax = plt.subplots(figsize=(8, 0.3 * len(by_kind) + 1.2), layout="constrained")
by_kind.plot.barh(stacked=True, ax=ax, color=["#d62728", "#1f77b4"])
ax.invert_yaxis()
ax.set_xlabel("cases")
ax.set_ylabel("kind")
ax.set_title("Cases by kind and label")
plt.show()

# %% [markdown]
# ## Label sources
#
# Labels from different sources (synthetic generators, rules, LLM judges, people)
# are not equally trustworthy: compare detectors within one source.

# %%
cases.groupby(["source", "looping"]).size().unstack(fill_value=0)

# %% [markdown]
# ## Conversation sizes

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 3), layout="constrained")
axes[0].hist(cases["messages"], bins=30, color="#1f77b4")
axes[0].set_xlabel("messages per case")
axes[0].set_ylabel("cases")
axes[1].hist(cases["chars"].clip(lower=1), bins=30, color="#2ca02c", log=True)
axes[1].set_xlabel("characters of text per case")
axes[1].set_ylabel("cases (log scale)")
fig.suptitle("Size of the cases")
plt.show()

# %% [markdown]
# ## One case of each kind
#
# The first case of each kind, each message cut to 160 characters.

# %%
first = cases.drop_duplicates("kind").set_index("case")
for path in PATHS:
    for case in harness.iter_cases(path):
        if case.id not in first.index or first.loc[case.id, "file"] != path.name:
            continue
        print(f"== {case.id}  kind={case.kind}  looping={case.looping}  onset={case.onset}")
        for index, message in enumerate(case.messages[:8]):
            text = message["text"].replace("\n", " ")
            print(f"  [{index} {message['type']}] {text[:160]}")
        if len(case.messages) > 8:
            print(f"  ... {len(case.messages) - 8} more messages")

# %%
display(cases.groupby("kind")[["messages", "chars"]].median())
