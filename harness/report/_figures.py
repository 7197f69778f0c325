"""The report's matplotlib figures, drawn without pyplot (no global state, no display).

Each ``*_figure`` function returns a :class:`matplotlib.figure.Figure` (in a
notebook it shows inline); :func:`save_figure` writes it as PNG and SVG with
fixed size and DPI and no timestamps, so the same runs give the same files.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from functools import cache, wraps
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd

from .._atomic import atomic_open
from ._load import Config, StudyRun
from ._study import best_so_far, param_name, pareto_mask
from ._tables import breakdown_frame, corpus_label, true_positive_latencies

__all__ = [
    "STYLE",
    "breakdown_figure",
    "config_colors",
    "confusion_figure",
    "history_figure",
    "importance_figure",
    "latency_figure",
    "pareto_figure",
    "precision_recall_figure",
    "save_figure",
    "slice_figure",
    "tokens_figure",
]

#: Width of every figure, inches; heights grow with the number of rows shown.
WIDTH = 9.0
#: Resolution of the PNG files.
DPI = 110
#: Tags shown in a breakdown figure (the most frequent; the tables list them all).
MAX_TAGS = 30
#: Characters per line of a row label before it wraps.
LABEL_WRAP = 46

STYLE: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "figure.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    # Same input, same SVG: fixed ids, text kept as text.
    "svg.hashsalt": "loopguard-report",
    "svg.fonttype": "none",
    "path.simplify": True,
}

_GRAY = "#7f7f7f"
# Defaults of different studies get different greys, so that their legends differ.
_GRAYS = ["#7f7f7f", "#4d4d4d", "#adadad", "#262626"]
_PALETTE = [
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#bcbd22",
]
_SAVED = "#2ca02c"
_LOST = "#d62728"

F = TypeVar("F", bound=Callable[..., Any])


def _styled(function: F) -> F:
    @wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        import matplotlib

        with matplotlib.rc_context(cast(Any, STYLE)):
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@cache
def _figure_class() -> Any:
    from matplotlib.figure import Figure

    class ReportFigure(Figure):  # type: ignore[misc]
        """A Figure that shows itself in IPython and Jupyter, with or without pyplot."""

        def _repr_png_(self) -> bytes:
            import matplotlib

            buffer = io.BytesIO()
            with matplotlib.rc_context(cast(Any, STYLE)):
                self.savefig(buffer, format="png", dpi=DPI)
            return buffer.getvalue()

    return ReportFigure


def _figure(height: float, width: float = WIDTH) -> Any:
    # No pyplot: a plain Figure is not registered anywhere, so report builds keep no state.
    return _figure_class()(figsize=(width, max(1.6, height)), dpi=DPI, layout="constrained")


def save_figure(figure: Any, stem: str | Path) -> list[Path]:
    """Write ``figure`` to ``stem.png`` and ``stem.svg`` (atomically, no dates); return them."""
    import matplotlib

    base = Path(stem)
    written: list[Path] = []
    with matplotlib.rc_context(cast(Any, STYLE)):
        for fmt, metadata in (("png", {"Software": None}), ("svg", {"Date": None})):
            buffer = io.BytesIO()
            figure.savefig(buffer, format=fmt, dpi=DPI, metadata=metadata)
            # The first save placed everything; later formats reuse that layout (faster,
            # and the same positions in PNG and SVG).
            figure.set_layout_engine("none")
            target = base.with_name(f"{base.name}.{fmt}")
            with atomic_open(target, "wb") as handle:
                handle.write(buffer.getvalue())
            written.append(target)
    return written


def config_colors(configs: Sequence[Config]) -> dict[str, str]:
    """A colour per configuration label: defaults grey, the others from a fixed palette."""
    colors: dict[str, str] = {}
    index = 0
    grays = 0
    for config in configs:
        if config.label in colors:
            continue
        if config.role == "defaults":
            colors[config.label] = _GRAYS[grays % len(_GRAYS)]
            grays += 1
            continue
        colors[config.label] = _PALETTE[index % len(_PALETTE)]
        index += 1
    return colors


def _wrap(text: str, width: int = LABEL_WRAP) -> str:
    return "\n".join(textwrap.wrap(text, width, break_long_words=True, break_on_hyphens=False))


def row_label(row: Mapping[str, Any], with_config: bool = True) -> str:
    """``config · corpus · source`` of a leaderboard row."""
    parts = [str(row["config"])] if with_config else []
    parts.append(corpus_label(str(row["corpus"])))
    if row.get("source"):
        parts.append(f"labels: {row['source']}")
    return " · ".join(parts)


def _empty(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color=_GRAY)
    ax.set_xticks([])
    ax.set_yticks([])
    ax.grid(False)


def _legend_configs(figure: Any, labels: Sequence[str], colors: Mapping[str, str]) -> None:
    from matplotlib.lines import Line2D

    if len(labels) < 2:
        return
    handles = [
        Line2D([], [], marker="o", linestyle="", color=colors.get(label, _GRAY), label=label)
        for label in labels
    ]
    # Long configuration names get fewer columns, so the legend stays inside the figure.
    longest = max(len(label) for label in labels)
    columns = 1 if longest > 60 else 2 if longest > 38 else 3
    figure.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(columns, len(handles)),
        frameon=False,
        title="configuration",
    )


def _interval_panel(
    ax: Any,
    y: np.ndarray,
    values: Sequence[float],
    lows: Sequence[float],
    highs: Sequence[float],
    colors: Sequence[str],
) -> None:
    for yi, value, low, high, color in zip(y, values, lows, highs, colors, strict=True):
        if value is None or math.isnan(value):
            ax.text(0.04, yi, "undefined (0/0)", va="center", fontsize=7, color=_GRAY)
            continue
        if not (math.isnan(low) or math.isnan(high)):
            ax.hlines(yi, low, high, color=color, linewidth=2.2, alpha=0.55)
            for end in (low, high):
                ax.vlines(end, yi - 0.18, yi + 0.18, color=color, linewidth=1.2)
        ax.plot([value], [yi], marker="o", color=color, markersize=6, zorder=3)


@_styled
def precision_recall_figure(
    board: pd.DataFrame, detector: str, colors: Mapping[str, str] | None = None
) -> Any:
    """Precision, recall and F1 with 95% bootstrap intervals, per config, corpus and label source.

    ``board`` is a :func:`leaderboard` frame.
    """
    rows = board[board["detector"] == detector].reset_index(drop=True)
    colors = colors or {}
    n = len(rows)
    labels = [_wrap(f"{row_label(r)} (n={int(r['cases'])})") for r in rows.to_dict("records")]
    # Each row is as tall as its wrapped label; the legend gets a line per row of entries.
    lines = max((label.count("\n") + 1 for label in labels), default=1)
    configs = list(dict.fromkeys(rows["config"]))
    legend = 0.45 + 0.2 * math.ceil(len(configs) / 2) if len(configs) > 1 else 0.0
    figure = _figure(1.3 + max(0.42, 0.15 * lines + 0.1) * max(n, 1) + legend)
    axes = figure.subplots(1, 3, sharey=True)
    figure.suptitle(f"{detector}: precision, recall and F1 (points) with 95% bootstrap intervals")
    if n == 0:
        for ax in axes:
            _empty(ax, "no rows")
        return figure
    y = np.arange(n)
    point_colors = [colors.get(c, _PALETTE[0]) for c in rows["config"]]
    for ax, rate, title in zip(
        axes, ("precision", "recall", "f1"), ("precision", "recall", "F1"), strict=True
    ):
        _interval_panel(
            ax,
            y,
            list(rows[rate]),
            list(rows[f"{rate}_lo"]),
            list(rows[f"{rate}_hi"]),
            point_colors,
        )
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel(f"{title} (0-1)")
        ax.set_title(title)
        ax.grid(axis="y", visible=False)
    axes[0].set_yticks(y, labels)
    axes[0].set_ylim(n - 0.5, -0.5)
    _legend_configs(figure, configs, colors)
    return figure


@_styled
def confusion_figure(board: pd.DataFrame, detector: str) -> Any:
    """A confusion matrix per config, corpus and label source (cases, % of the label's cases)."""
    rows = board[board["detector"] == detector].reset_index(drop=True)
    n = max(len(rows), 1)
    columns = min(3, n)
    lines = math.ceil(n / columns)
    figure = _figure(0.6 + 2.75 * lines)
    figure.suptitle(f"{detector}: confusion matrices (cell: cases, % of the label's cases)")
    grid = np.atleast_1d(figure.subplots(lines, columns, squeeze=False)).ravel()
    for ax in grid[len(rows) :]:
        ax.set_visible(False)
    if rows.empty:
        grid[0].set_visible(True)
        _empty(grid[0], "no rows")
        return figure
    for ax, row in zip(grid, rows.to_dict("records"), strict=False):
        counts = np.array([[row["tp"], row["fn"]], [row["fp"], row["tn"]]], dtype=float)
        totals = counts.sum(axis=1, keepdims=True)
        share = np.divide(counts, totals, out=np.zeros_like(counts), where=totals > 0)
        ax.imshow(share, cmap="Blues", vmin=0, vmax=1, aspect="auto")
        names = (("TP", "FN"), ("FP", "TN"))
        for i in range(2):
            for j in range(2):
                color = "white" if share[i, j] > 0.6 else "black"
                ax.text(
                    j,
                    i,
                    f"{names[i][j]} {int(counts[i, j]):,}\n{share[i, j]:.0%}",
                    ha="center",
                    va="center",
                    color=color,
                    fontsize=8,
                )
        ax.set_xticks([0, 1], ["fired", "silent"])
        ax.set_yticks([0, 1], ["looping", "not\nlooping"])
        ax.set_xlabel("detector verdict")
        ax.set_ylabel("label")
        ax.grid(False)
        ax.set_title(_wrap(row_label(row), 34), fontsize=8)
    return figure


@_styled
def latency_figure(
    configs: Sequence[Config], detector: str, colors: Mapping[str, str] | None = None
) -> Any:
    """Latency of the true positives (fire minus onset), in messages and estimated tokens.

    One box per config, corpus and label source; early fires (before the onset)
    are counted in the label and left out of the boxes, like in ``metrics.json``.
    """
    colors = colors or {}
    groups: list[tuple[str, str, pd.DataFrame, int]] = []
    for config in configs:
        if detector not in config.run.detectors:
            continue
        tps = true_positive_latencies(config, detector)
        for (corpus, source), part in sorted(
            tps.groupby(["corpus", "source"], dropna=False), key=lambda kv: str(kv[0])
        ):
            early = int(part["early"].sum())
            on_time = part[~part["early"].astype(bool)]
            label = f"{config.label} · {corpus_label(str(corpus))} · labels: {source}"
            groups.append((label, config.label, on_time, early))
    n = max(len(groups), 1)
    figure = _figure(1.4 + 0.5 * n)
    axes = figure.subplots(1, 2, sharey=True)
    figure.suptitle(f"{detector}: latency of true positives (fire position minus labelled onset)")
    if not groups:
        for ax in axes:
            _empty(ax, "no true positive")
        return figure
    for ax, column, unit in (
        (axes[0], "latency_messages", "messages"),
        (axes[1], "latency_tokens", "estimated tokens, symlog scale"),
    ):
        data = [g[2][column].dropna().to_numpy(dtype=float) for g in groups]
        for i, (values, group) in enumerate(zip(data, groups, strict=True)):
            color = colors.get(group[1], _PALETTE[0])
            if values.size == 0:
                ax.text(
                    0.5,
                    i,
                    "no onset-labelled TP",
                    va="center",
                    fontsize=7,
                    color=_GRAY,
                    transform=ax.get_yaxis_transform(),
                )
                continue
            box = ax.boxplot(
                [values],
                positions=[i],
                orientation="horizontal",
                widths=0.55,
                showfliers=False,
                patch_artist=True,
                medianprops={"color": "black"},
            )
            for patch in box["boxes"]:
                patch.set_facecolor(color)
                patch.set_alpha(0.35)
            if values.size <= 300:
                jitter = (np.arange(values.size) % 7 - 3) * 0.04
                # Many points would make a heavy SVG: they are embedded as an image.
                ax.scatter(
                    values,
                    i + jitter,
                    s=6,
                    color=color,
                    alpha=0.6,
                    linewidths=0,
                    rasterized=values.size > 50,
                )
        if column == "latency_tokens":
            ax.set_xscale("symlog", linthresh=10)
        else:
            from matplotlib.ticker import MaxNLocator

            seen = np.concatenate([d for d in data if d.size] or [np.zeros(1)])
            ax.set_xlim(min(0.0, float(seen.min())) - 0.5, max(1.0, float(seen.max())) + 0.5)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel(f"latency ({unit})")
        ax.grid(axis="y", visible=False)
    labels = [_wrap(f"{g[0]} ({len(g[2])} on time, {g[3]} early)") for g in groups]
    axes[0].set_yticks(np.arange(len(groups)), labels)
    axes[0].set_ylim(len(groups) - 0.5, -0.5)
    return figure


@_styled
def tokens_figure(board: pd.DataFrame, detector: str) -> Any:
    """Estimated model tokens saved by true positives and lost to false positives."""
    rows = board[board["detector"] == detector].reset_index(drop=True)
    n = max(len(rows), 1)
    figure = _figure(1.9 + 0.55 * n)
    ax = figure.subplots()
    figure.suptitle(
        f"{detector}: model tokens after the fire (saved on true, lost on false positives)"
    )
    if rows.empty:
        _empty(ax, "no rows")
        return figure
    y = np.arange(len(rows))
    saved = rows["tokens_saved_total"].to_numpy(dtype=float) / 1000
    lost = rows["tokens_lost_total"].to_numpy(dtype=float) / 1000
    ax.barh(y - 0.18, saved, height=0.34, color=_SAVED, label="saved (true positives)")
    ax.barh(y + 0.18, lost, height=0.34, color=_LOST, label="lost (false positives)")
    top = float(max(saved.max(initial=0), lost.max(initial=0)))
    for yi, s, lo in zip(y, saved, lost, strict=True):
        ax.text(s + top * 0.01, yi - 0.18, f"{s * 1000:,.0f}", va="center", fontsize=7)
        ax.text(lo + top * 0.01, yi + 0.18, f"{lo * 1000:,.0f}", va="center", fontsize=7)
    ax.set_xlim(0, top * 1.15 if top > 0 else 1)
    ax.set_yticks(y, [_wrap(row_label(r)) for r in rows.to_dict("records")])
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel("thousands of estimated model tokens (ceil(UTF-16 length / 4))")
    ax.grid(axis="y", visible=False)
    figure.legend(loc="outside lower center", ncols=2, frameon=False)
    return figure


#: Up to this many configurations a breakdown is drawn as points with intervals;
#: beyond, as a heat map (the tables keep the intervals).
MAX_DOT_CONFIGS = 3


@_styled
def breakdown_figure(
    configs: Sequence[Config],
    detector: str,
    dimension: str,
    colors: Mapping[str, str] | None = None,
    max_slices: int = MAX_TAGS,
) -> Any:
    """Recall and false-positive rate per slice of ``dimension``, per configuration.

    ``dimension`` is ``kind``, ``tag``, ``source`` or ``corpus``; the slices
    with the most cases are shown (``max_slices``), the tables list them all.
    Up to :data:`MAX_DOT_CONFIGS` configurations: points with 95% intervals;
    more: a heat map of the values.
    """
    colors = colors or {}
    frame = breakdown_frame(configs, detector, dimension)
    figure_title = f"{detector}: results by {dimension}"
    if frame.empty:
        figure = _figure(1.8)
        ax = figure.subplots()
        figure.suptitle(figure_title)
        _empty(ax, f"no breakdown by {dimension}")
        return figure
    size = frame.groupby("slice")["cases"].max().sort_values(ascending=False, kind="stable")
    shown = list(size.index[:max_slices])
    if dimension != "tag":
        shown.sort()
    frame = frame[frame["slice"].isin(shown)]
    labels = list(dict.fromkeys(frame["config"]))
    more = "" if len(size) <= len(shown) else f" ({len(shown)} of {len(size)}, most cases first)"
    if len(labels) > MAX_DOT_CONFIGS:
        return _breakdown_heatmap(frame, shown, labels, f"{figure_title}{more}")
    k = len(labels)
    n = len(shown)
    figure = _figure(1.2 + n * (0.22 + 0.12 * k) + (0.5 if k > 1 else 0))
    axes = figure.subplots(1, 2, sharey=True)
    figure.suptitle(f"{figure_title}{more}: points with 95% bootstrap intervals")
    position = {s: i for i, s in enumerate(shown)}
    offsets = (np.arange(k) - (k - 1) / 2) * (0.7 / max(k, 1)) if k > 1 else np.zeros(1)
    for ax, rate, need, title in (
        (axes[0], "recall", "positives", "recall on looping cases"),
        (axes[1], "fpr", "negatives", "false-positive rate on other cases"),
    ):
        for ci, label in enumerate(labels):
            part = frame[(frame["config"] == label) & (frame[need] > 0)]
            y = np.array([position[s] + offsets[ci] for s in part["slice"]])
            _interval_panel(
                ax,
                y,
                list(part[rate]),
                list(part[f"{rate}_lo"]),
                list(part[f"{rate}_hi"]),
                [colors.get(label, _PALETTE[0])] * len(part),
            )
        ax.set_xlim(-0.03, 1.03)
        ax.set_xlabel(f"{title} (0-1)")
        ax.set_title(title)
        ax.grid(axis="y", visible=False)
    if k == 1:
        counts = frame.set_index("slice")
        ticks = [
            _wrap(
                f"{s} (looping {int(counts.loc[s, 'positives'])}, "
                f"other {int(counts.loc[s, 'negatives'])})",
                40,
            )
            for s in shown
        ]
    else:
        ticks = [_wrap(str(s), 40) for s in shown]
    axes[0].set_yticks(np.arange(n), ticks)
    axes[0].set_ylim(n - 0.5, -0.5)
    _legend_configs(figure, labels, colors)
    return figure


def _breakdown_heatmap(frame: pd.DataFrame, shown: list[str], labels: list[str], title: str) -> Any:
    n, k = len(shown), len(labels)
    # Room under the axes for the rotated configuration names.
    figure = _figure(1.3 + 0.3 * n + 0.065 * max(len(x) for x in labels))
    axes = figure.subplots(1, 2, sharey=True)
    figure.suptitle(f"{title}: value per configuration (blank: no such case)")
    row = {s: i for i, s in enumerate(shown)}
    col = {c: j for j, c in enumerate(labels)}
    for ax, rate, need, name, cmap in (
        (axes[0], "recall", "positives", "recall on looping cases", "Greens"),
        (axes[1], "fpr", "negatives", "false-positive rate on other cases", "Reds"),
    ):
        grid = np.full((n, k), np.nan)
        for record in frame[frame[need] > 0].to_dict("records"):
            grid[row[record["slice"]], col[record["config"]]] = record[rate]
        ax.imshow(grid, cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
        for i in range(n):
            for j in range(k):
                value = grid[i, j]
                if not math.isnan(value):
                    ax.text(
                        j,
                        i,
                        f"{value:.2f}",
                        ha="center",
                        va="center",
                        fontsize=7,
                        color="white" if value > 0.6 else "black",
                    )
        ax.set_xticks(np.arange(k), labels, rotation=45, ha="right", rotation_mode="anchor")
        ax.set_title(f"{name} (0-1)")
        ax.grid(False)
    axes[0].set_yticks(np.arange(n), [_wrap(str(s), 40) for s in shown])
    axes[0].set_xlabel("configuration")
    axes[1].set_xlabel("configuration")
    return figure


# -- studies ---------------------------------------------------------------------------------


@_styled
def history_figure(run: StudyRun) -> Any:
    """Objective value of each complete trial, and the best so far, per objective."""
    trials = (
        run.complete_trials().sort_values("number")
        if "number" in run.trials
        else run.complete_trials()
    )
    columns = run.value_columns
    count = max(len(columns), 1)
    figure = _figure(2.6 * count + 0.4)
    axes = np.atleast_1d(figure.subplots(count, 1, squeeze=False)).ravel()
    figure.suptitle(f"study {run.label}: optimisation history ({len(trials)} complete trials)")
    if trials.empty or not columns:
        _empty(axes[0], "no complete trial")
        return figure
    numbers = trials["number"].to_numpy() if "number" in trials else np.arange(len(trials))
    for ax, column, objective, direction in zip(
        axes, columns, run.objectives, run.directions, strict=False
    ):
        values = trials[column]
        ax.scatter(numbers, values, s=16, color=_PALETTE[0], label="trial", zorder=3)
        if not run.multi_objective:
            ax.step(
                numbers,
                best_so_far(values, direction),
                where="post",
                color=_PALETTE[1],
                label=f"best so far ({direction})",
            )
        ax.set_xlabel("trial number")
        ax.set_ylabel(f"{objective} ({direction})")
        # Outside the axes: trial points can sit anywhere inside.
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    return figure


@_styled
def pareto_figure(run: StudyRun) -> Any:
    """The first two objectives of every complete trial, the Pareto-optimal ones joined."""
    trials = run.complete_trials()
    columns = run.value_columns
    figure = _figure(5.0, 6.5)
    ax = figure.subplots()
    if len(columns) < 2 or trials.empty:
        figure.suptitle(f"study {run.label}: Pareto front")
        _empty(ax, "single-objective study: no Pareto front" if len(columns) < 2 else "no trial")
        return figure
    x_name, y_name = run.objectives[0], run.objectives[1]
    values = trials[columns].to_numpy(dtype=float)
    mask = pareto_mask(values, run.directions)
    extra = "" if len(columns) == 2 else f" (first 2 of {len(columns)} objectives)"
    figure.suptitle(f"study {run.label}: Pareto front{extra}")
    ax.scatter(
        values[~mask, 0], values[~mask, 1], s=18, color=_GRAY, alpha=0.6, label="dominated trial"
    )
    front = values[mask]
    numbers = trials["number"].to_numpy()[mask] if "number" in trials else np.flatnonzero(mask)
    order = np.argsort(front[:, 0])
    ax.plot(
        front[order, 0],
        front[order, 1],
        marker="o",
        color=_PALETTE[1],
        markersize=6,
        label=f"Pareto-optimal ({int(mask.sum())})",
    )
    # Trials with the same values share one label; neighbours alternate above and below.
    points: dict[tuple[float, float], list[int]] = {}
    for (xv, yv), number in zip(front[order], numbers[order], strict=True):
        points.setdefault((round(float(xv), 6), round(float(yv), 6)), []).append(int(number))
    if len(points) <= 20:
        for i, ((xv, yv), found) in enumerate(points.items()):
            text = "#" + ", #".join(str(f) for f in sorted(found)[:4])
            text += " ..." if len(found) > 4 else ""
            ax.annotate(
                text,
                (xv, yv),
                textcoords="offset points",
                xytext=(6, 5 if i % 2 == 0 else -11),
                fontsize=7,
            )
    ax.margins(x=0.12, y=0.08)
    ax.set_xlabel(f"{x_name} ({run.directions[0]})")
    ax.set_ylabel(f"{y_name} ({run.directions[1]})")
    ax.legend(loc="best")
    return figure


@_styled
def importance_figure(importances: pd.DataFrame, label: str = "") -> Any:
    """fANOVA importance of each parameter, per objective (a frame of :func:`param_importances`)."""
    params = list(dict.fromkeys(importances["param"])) if not importances.empty else []
    objectives = list(dict.fromkeys(importances["objective"])) if not importances.empty else []
    n = max(len(params), 1)
    k = max(len(objectives), 1)
    figure = _figure(1.4 + n * (0.25 + 0.15 * k))
    ax = figure.subplots()
    figure.suptitle(
        f"study {label}: parameter importances (fANOVA, seed 0; sum to 1 per objective)"
    )
    if importances.empty:
        _empty(ax, "no importances")
        return figure
    height = 0.8 / k
    for i, objective in enumerate(objectives):
        part = importances[importances["objective"] == objective].set_index("param")
        values = [float(part["importance"].get(p, 0.0)) for p in params]
        y = np.arange(n) + (i - (k - 1) / 2) * height
        ax.barh(y, values, height=height * 0.9, color=_PALETTE[i % len(_PALETTE)], label=objective)
        for yi, value in zip(y, values, strict=True):
            ax.text(value + 0.01, yi, f"{value:.2f}", va="center", fontsize=7)
    ax.set_yticks(np.arange(n), [_wrap(p, 36) for p in params])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("importance (share of the objective's variance, 0-1)")
    ax.grid(axis="y", visible=False)
    if k > 1:
        ax.legend(title="objective", loc="lower right")
    return figure


def _space_spec(run: StudyRun, param: str) -> Any:
    space = run.info.get("space") or run.info.get("parameters") or {}
    if isinstance(space, Mapping) and isinstance(space.get("dimensions"), list):
        space = space["dimensions"]
    if isinstance(space, list):
        return next((d for d in space if isinstance(d, Mapping) and d.get("name") == param), None)
    return space.get(param) if isinstance(space, Mapping) else None


def _is_log(run: StudyRun, param: str) -> bool:
    spec = _space_spec(run, param)
    if isinstance(spec, Mapping) and "log" in spec:
        return bool(spec["log"])
    study = run.study if run._study is not None or run._study_error is None else None
    if study is not None:
        for trial in study.trials:
            distribution = trial.distributions.get(param)
            if distribution is not None:
                return bool(getattr(distribution, "log", False))
    return False


@_styled
def slice_figure(run: StudyRun, params: Sequence[str] | None = None) -> Any:
    """Objective value against each parameter's value (one panel per parameter and objective)."""
    trials = run.complete_trials()
    columns = [c for c in run.param_columns if params is None or param_name(c) in params]
    values = run.value_columns
    n = max(len(columns), 1)
    per_row = min(4, n)
    # One detector's parameters: its name goes in the title, not in every axis label.
    owners = {param_name(c).split(".", 1)[0] for c in columns if "." in param_name(c)}
    common = (
        owners.pop() + "."
        if len(owners) == 1 and all("." in param_name(c) for c in columns)
        else ""
    )
    lines = math.ceil(n / per_row) * max(len(values), 1)
    figure = _figure(0.7 + 2.4 * lines)
    about = f" of {common[:-1]}" if common else ""
    figure.suptitle(f"study {run.label}: slice plots{about} (colour: trial number)")
    grid = np.atleast_1d(figure.subplots(lines, per_row, squeeze=False))
    if trials.empty or not columns or not values:
        for ax in grid.ravel()[1:]:
            ax.set_visible(False)
        _empty(grid.ravel()[0], "no complete trial or no parameter")
        return figure
    numbers = trials["number"].to_numpy() if "number" in trials else np.arange(len(trials))
    scatter = None
    block = math.ceil(n / per_row)
    for vi, (value_column, objective) in enumerate(zip(values, run.objectives, strict=False)):
        axes = grid[vi * block : (vi + 1) * block].ravel()
        for ax in axes[len(columns) :]:
            ax.set_visible(False)
        for ax, column in zip(axes, columns, strict=False):
            name = param_name(column)
            raw = trials[column]
            numeric = pd.to_numeric(raw, errors="coerce")
            # A parameter left out of some trials (conditional on a null flag) is NaN there.
            present = raw.notna().to_numpy()
            if present.any() and numeric[present].notna().all() and raw.dtype != bool:
                x = numeric.to_numpy(dtype=float)
                if _is_log(run, name):
                    ax.set_xscale("log")
            else:
                categories = sorted({str(v) for v in raw})
                x = np.array([categories.index(str(v)) for v in raw], dtype=float)
                ax.set_xticks(range(len(categories)), categories)
                present = np.ones(len(raw), dtype=bool)
            scatter = ax.scatter(
                x[present],
                trials[value_column].to_numpy()[present],
                c=numbers[present],
                cmap="viridis",
                s=16,
                vmin=float(numbers.min()),
                vmax=float(max(numbers.max(), numbers.min() + 1)),
            )
            ax.set_xlabel(_wrap(name[len(common) :] if common else name, 28))
            ax.set_ylabel(objective)
    if scatter is not None:
        figure.colorbar(scatter, ax=grid.ravel().tolist(), label="trial number", shrink=0.8)
    return figure
