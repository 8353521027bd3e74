"""The benches' plots, drawn with matplotlib's headless Agg backend and returned as figures to save."""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib

MIN_WIDTH, MIN_HEIGHT = 5.5, 3.5   # inches: small grids still leave room for titles and labels

matplotlib.use("Agg")   # no display on benchmark machines; set before pyplot is imported

import matplotlib.pyplot as plt
import numpy as np


def heatmap(values: np.ndarray, rows: Sequence[str], cols: Sequence[str], title: str, row_label: str,
            col_label: str, colorbar: str, vmin: float = 0.0, vmax: float = 1.0, fmt: str = "{:.0f}",
            cmap: str = "RdYlGn"):
    """A grid of values (NaN cells are blank), each annotated."""
    fig, ax = plt.subplots(figsize=(max(MIN_WIDTH, 1.6 + 0.55 * len(cols)), max(MIN_HEIGHT, 1.4 + 0.38 * len(rows))))
    masked = np.ma.masked_invalid(values)
    im = ax.imshow(masked, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto", origin="lower")
    ax.set_xticks(range(len(cols)), cols, rotation=45 if max(len(c) for c in cols) > 3 else 0)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_xlabel(col_label)
    ax.set_ylabel(row_label)
    ax.set_title(title)
    for (i, j), v in np.ndenumerate(values):
        if np.isfinite(v):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=7)
    fig.colorbar(im, ax=ax, label=colorbar)
    return fig


def polar(directions_deg: Sequence[float], values: Sequence[float | None], title: str, label: str,
          target: float | None = None, ceiling: float | None = None):
    """Values by direction around the character, seen from above (0 = from behind, 90 = from its left)."""
    fig = plt.figure(figsize=(5.2, 5.2))
    ax = fig.add_subplot(projection="polar")
    theta = [math.radians(d) for d in directions_deg] + [math.radians(directions_deg[0])]
    vals = [np.nan if v is None else v for v in values]
    ax.plot(theta, vals + vals[:1], "o-", label=label)
    if target is not None:
        circle = np.linspace(0, 2 * math.pi, 200)
        ax.plot(circle, np.full_like(circle, target), "--", color="tab:red", label=f"target {target:g}")
    if ceiling is not None:
        ax.set_rmax(ceiling * 1.05)
    # The character faces up the page: pushes from behind at the bottom, from its left (90) on the left.
    ax.set_theta_zero_location("S")
    ax.set_theta_direction(-1)
    ax.set_title(title, pad=18)
    ax.legend(loc="lower left", bbox_to_anchor=(-0.15, -0.15), fontsize=8)
    return fig


def bars(names: Sequence[str], values: Sequence[float], title: str, ylabel: str, ymax: float = 1.0):
    fig, ax = plt.subplots(figsize=(max(5.0, 0.45 * len(names) + 1.5), 4.2))
    colors = ["tab:green" if v >= ymax - 1e-9 else ("tab:orange" if v > 0 else "tab:red") for v in values]
    ax.bar(range(len(names)), values, color=colors)
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right")
    ax.set_ylim(0, ymax * 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    fig.tight_layout()
    return fig


def lines(series: dict[str, tuple[Sequence[float], Sequence[float]]], title: str, xlabel: str, ylabel: str):
    fig, ax = plt.subplots(figsize=(6.5, 3.8))
    for name, (x, y) in series.items():
        ax.plot(x, y, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if len(series) > 1:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def shares(parts: dict[str, float], title: str):
    """Horizontal bars of fractions (a profile's breakdown)."""
    names = list(parts)
    fig, ax = plt.subplots(figsize=(6.5, 0.4 * len(names) + 1.2))
    ax.barh(range(len(names)), [100 * parts[n] for n in names])
    ax.set_yticks(range(len(names)), names)
    ax.invert_yaxis()
    ax.set_xlabel("% of profiled time")
    ax.set_title(title)
    fig.tight_layout()
    return fig
