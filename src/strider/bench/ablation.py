"""``strider bench gbwc-ablation``: what the thesis alone achieves on this engine, and what each addition buys.

GBWC in strider carries mechanisms Coros 2010, Ch. 5 does not have, each a named switch
(:data:`strider.methods.gbwc.params.ADDITIONS`). This bench runs protocol P1 (the push protocol: the 600 N
grid of 12 directions x 8 phases and, unless ``--no-find-max``, the largest force every phase survives per
direction) under the ``default`` configuration (every addition on), the ``thesis`` configuration (every
addition off), and the default with each addition turned off alone. Its table is the ablation: for every
configuration the grid survival and the weakest direction's F_max, with the change against the default.

The default's and the thesis' own push results are written as ordinary ``push`` results too (with the
configuration in their file names), so the report sets the two configurations side by side.
"""

from __future__ import annotations

from dataclasses import dataclass

from strider.bench.execution import RunOptions
from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol
from strider.parallel import Executor

CONTROLLER = "gbwc"
FULL_CONFIGS = ("default", "thesis")   # their push results are kept as ordinary results too


@dataclass(frozen=True)
class AblationRun:
    config: str
    addition: str | None      # the addition turned off alone; None for the two full configurations
    summary: str              # what the configuration is, for the table
    grid: BenchOutput
    find_max: BenchOutput | None


def configurations(only: tuple[str, ...] | None = None) -> list[tuple[str, str | None, str]]:
    """(configuration, addition turned off, description) in table order; ``only`` limits the additions."""
    from strider.methods.gbwc.params import ADDITIONS

    out: list[tuple[str, str | None, str]] = [("default", None, "every addition on (strider's best)"),
                                              ("thesis", None, "every addition off (Coros 2010, Ch. 5 alone)")]
    out += [(f"without:{a.name}", a.name, a.summary) for a in ADDITIONS if only is None or a.name in only]
    return out


def run(protocol: Protocol, executor: Executor, options: RunOptions, find_max: bool = True,
        only: tuple[str, ...] | None = None) -> tuple[BenchOutput, list[BenchOutput]]:
    """The ablation's output, and the full configurations' push outputs to be written beside it."""
    from strider.bench.runners import run_bench

    runs = []
    for config, addition, summary in configurations(only):
        grid = run_bench(protocol, CONTROLLER, executor, options, "", config)
        fmax = run_bench(protocol, CONTROLLER, executor, options, "find-max", config) if find_max else None
        runs.append(AblationRun(config, addition, summary, grid, fmax))
        if config not in FULL_CONFIGS:
            _close_plots([out for out in (grid, fmax) if out is not None])
    kept = [out for r in runs if r.config in FULL_CONFIGS for out in (r.grid, r.find_max) if out is not None]
    return summarize(protocol, runs, find_max), kept


def _close_plots(outputs: list[BenchOutput]) -> None:
    """The partial configurations' figures are not written: free them as they come (13 runs would pile up)."""
    import matplotlib.pyplot as plt

    for out in outputs:
        for fig in out.plots.values():
            plt.close(fig)
        out.plots = {}


def summarize(protocol: Protocol, runs: list[AblationRun], find_max: bool) -> BenchOutput:
    p = protocol.params
    base = runs[0]
    rows = []
    table = []
    for r in runs:
        survived, n = r.grid.summary["survived"], r.grid.summary["trials"]
        worst = r.find_max.summary["min_max_force"] if r.find_max is not None else None
        weakest = _weakest(r.find_max.summary["max_force_by_direction"]) if r.find_max is not None else None
        entry = {"config": r.config, "addition_off": r.addition, "what": r.summary, "grid_survived": survived,
                 "grid_trials": n, "grid_did_not_fall": r.grid.summary["did_not_fall"],
                 "min_max_force": worst, "weakest_directions": weakest,
                 "max_force_by_direction": r.find_max.summary["max_force_by_direction"] if r.find_max else None}
        table.append(entry)
        grid_text = f"{survived}/{n}"
        if r is not base:
            grid_text += f" ({survived - base.grid.summary['survived']:+d})"
        measured = grid_text
        if find_max:
            fm = f"{worst:g} N" if worst is not None else f"< {p.find_max_low:g} N"
            if r is not base and worst is not None and table[0]["min_max_force"] is not None:
                fm += f" ({worst - table[0]['min_max_force']:+g})"
            measured += f"; min F_max {fm}" + (f" from {', '.join(weakest)} deg" if weakest else "")
        label = r.config if r.addition is None else f"without {r.addition}"
        rows.append(Row(f"{label}: {r.summary}", measured))
    notes = [f"Protocol P1 (docs/gbwc.md): {p.force:g} N x {p.duration:g} s pushes, {p.directions} directions x "
             f"{p.phases} phases at {p.speed:g} m/s after {p.settle_seconds:g} s of walking; measured: trials "
             "survived and walking again within the recovery time"
             + (f", then the smallest over directions of the largest force every phase survives "
                f"({p.find_max_low:g}-{p.find_max_high:g} N in {p.find_max_resolution:g} N steps)" if find_max else "")
             + ". In brackets: the change against the default configuration.",
             ("Each 'without' row turns one addition off and keeps the others: what that addition buys on its own, "
             "given the rest.")]
    summary = {"configurations": table}
    return BenchOutput("gbwc-ablation", CONTROLLER, protocol.as_dict(), [], summary, rows, notes=notes)


def _weakest(by_direction: dict) -> list[str]:
    known = {d: v for d, v in by_direction.items() if v is not None}
    if len(known) < len(by_direction):
        return [d for d, v in by_direction.items() if v is None]
    low = min(known.values())
    return [d for d, v in known.items() if v == low]
