"""Where and how a bench writes its results: ``<bench>-<controller>-<date>.json`` with the protocol, the
versions and every trial, a Markdown summary beside it, and PNG plots.

A summary is a list of :class:`Row` (what, measured, anchor, met); the same rows
become the Markdown table, the printed summary and ``strider bench report``'s
tables. Keys holding timings (``TIMING_KEYS``) are the only parts of a result
file that may differ between two runs of the same protocol and seed.
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from strider.datafile import json_safe
from strider.parallel.sweep import Checkpoint, Resumable

DEFAULT_RESULTS_DIR = Path("benchmarks/results")
CHECKPOINT_DIR = ".partial"   # inside the results folder: checkpoints of interrupted sweeps
TIMING_KEYS = frozenset({"wall_seconds", "realtime_factor", "date", "run", "versions", "memory_mb", "timings"})


class TrialLog(list):
    """A bench's trial records that move a progress bar on as they come (a bench running its episodes one after
    another in this process records each one here, wherever in its helpers that happens). With a ``checkpoint``,
    trials run through :meth:`record` are kept there as they finish, and an interrupted run resumes."""

    def __init__(self, bar, checkpoint: Checkpoint | None = None):
        super().__init__()
        self.bar = bar
        self._resumable = Resumable(checkpoint)

    def record(self, key: str, run: Callable[..., dict], *args: Any) -> dict:
        """Trial ``key``'s record: ``run(*args)``'s, or the one the checkpoint kept from an interrupted run (the
        same values: both pass through JSON). Appended either way."""
        trial = self._resumable.result(key, run, *args)
        self.append(trial)
        return trial

    def append(self, trial) -> None:
        super().append(trial)
        self.bar.update(1)

    def extend(self, trials) -> None:
        trials = list(trials)
        super().extend(trials)
        self.bar.update(len(trials))

    def __iadd__(self, trials):
        self.extend(trials)
        return self


@dataclass(frozen=True)
class Row:
    what: str
    measured: str
    anchor: str = ""
    met: bool | None = None    # None: a figure with no pass/fail target

    @property
    def verdict(self) -> str:
        return "" if self.met is None else ("yes" if self.met else "**no**")


@dataclass
class BenchOutput:
    """What one bench run produced, before it is written."""

    bench: str
    controller: str
    protocol: dict
    trials: list[dict]
    summary: dict
    rows: list[Row]
    notes: list[str] = field(default_factory=list)
    plots: dict[str, Any] = field(default_factory=dict)   # suffix -> matplotlib figure
    run: dict = field(default_factory=dict)
    variant: str = ""   # e.g. "find-max": part of the file name, so it does not replace the plain bench's file
    config: str = "default"   # the controller's configuration; a named one is part of the file name too

    @property
    def label(self) -> str:
        return f"{self.bench}-{self.variant}" if self.variant else self.bench


SUBSET = "subset"   # the variant of a run that changed its protocol from the command line


def as_subset(out: BenchOutput, changed: tuple[str, ...]) -> BenchOutput:
    """A run over part of its protocol (``--speeds 0.6``, ``--features stairs``): no figure of it is compared
    with the full protocol's target, its files are named as a subset so they never replace a full run's, and
    the benchmark page leaves it out."""
    flags = ", ".join("--" + name.replace("_", "-") for name in changed)
    why = f"not compared: {flags} changed the protocol"
    out.rows = [row if row.met is None else replace(row, met=None, anchor=f"{row.anchor} ({why})" if row.anchor
                                                     else why) for row in out.rows]
    out.notes.append(f"A part of the protocol ({flags} changed it): no figure is compared with the full "
                     "protocol's targets, and `strider bench report` leaves this result out.")
    out.variant = f"{out.variant}-{SUBSET}" if out.variant else SUBSET
    return out


def versions() -> dict:
    import matplotlib
    import numpy

    import strider

    out = {"strider": strider.__version__, "python": platform.python_version(), "numpy": numpy.__version__,
           "matplotlib": matplotlib.__version__, "machine": platform.machine(), "platform": platform.platform()}
    from strider.sim import engine_version

    out["mujoco"] = engine_version()
    try:
        root = Path(strider.__file__).resolve().parent
        out["git_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                                           text=True, timeout=10, check=False).stdout.strip() or None
    except OSError:
        out["git_commit"] = None
    return out


def today() -> str:
    return _dt.date.today().isoformat()


def stem(bench: str, controller: str, date: str) -> str:
    return f"{bench}-{controller}-{date}"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell: a bare '|' would end the cell."""
    return text.replace("|", "\\|")


def markdown_table(rows: list[Row]) -> str:
    lines = ["| figure | measured | source / target | met |", "|---|---|---|---|"]
    lines += [f"| {cell(r.what)} | {cell(r.measured)} | {cell(r.anchor)} | {r.verdict} |" for r in rows]
    return "\n".join(lines)


def markdown(out: BenchOutput, files: dict[str, str], date: str) -> str:
    flag = f" --{out.variant}" if out.variant else ""
    flag += f" --config {out.config}" if out.config != "default" else ""
    title = f"# `strider bench {out.bench}{flag}` on {out.controller}, {date}"
    parts = [title, "", markdown_table(out.rows), ""]
    if out.notes:
        parts += [f"- {n}" for n in out.notes] + [""]
    for suffix, name in files.items():
        if suffix.endswith(".png"):
            parts += [f"![{out.bench} {suffix[:-4]}]({name})", ""]
    run = out.run
    parts.append(f"Protocol: `{out.protocol.get('source', '')}`; backend {run.get('backend')}, "
                 f"{run.get('workers')} workers, {run.get('wall_seconds', 0):.0f} s wall clock.")
    return "\n".join(parts) + "\n"


def write(out: BenchOutput, results_dir: Path, date: str | None = None) -> dict[str, Path]:
    """Write the JSON, the Markdown summary and the plots; returns the paths by suffix."""
    import matplotlib.pyplot as plt

    date = date or today()
    results_dir.mkdir(parents=True, exist_ok=True)
    base = stem(out.label, out.controller if out.config == "default" else f"{out.controller}-{out.config}", date)
    paths: dict[str, Path] = {}
    for suffix, fig in out.plots.items():
        path = results_dir / f"{base}-{suffix}.png"
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        paths[f"{suffix}.png"] = path
    payload = {"bench": out.bench, "variant": out.variant or None, "controller": out.controller, "config": out.config,
               "date": date, "protocol": out.protocol,
               "versions": versions(), "run": out.run, "summary": out.summary,
               "rows": [asdict(r) for r in out.rows], "notes": out.notes, "trials": out.trials}
    paths["json"] = results_dir / f"{base}.json"
    paths["json"].write_text(json.dumps(json_safe(payload), indent=1, sort_keys=False) + "\n")
    paths["md"] = results_dir / f"{base}.md"
    paths["md"].write_text(markdown(out, {k: p.name for k, p in paths.items()}, date))
    return paths


def without_timings(value: Any) -> Any:
    """A result with every timing field removed, for comparing two runs."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value
