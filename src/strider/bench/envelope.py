"""``strider bench envelope``: walk 20 s from standing at every (speed, step period) of the grid.

A case passes when the character does not fall and its mean forward speed over
the last 10 s is within ``speed_tolerance`` of the command (coros-walking.md,
P2). Only cases whose step length |speed| x period is at most
``max_step_length`` are run (P2).
"""

from __future__ import annotations

import numpy as np

from strider.bench import plots
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row


def cases(p) -> list[tuple[float, float]]:
    return [(v, T) for T in p.periods for v in p.speeds if abs(v) * T <= p.max_step_length + 1e-9]


def passed(result: dict, p) -> bool:
    err = result["steady_speed_error"]
    return (not result["fell"]) and err is not None and err <= p.speed_tolerance


def worst_speed_error(results: list[dict]) -> dict | None:
    """The largest steady speed error among the cases that did not fall, with its case; None if all fell."""
    measured = [r for r in results if not r["fell"] and r["steady_speed_error"] is not None]
    if not measured:
        return None
    r = max(measured, key=lambda r: r["steady_speed_error"])
    return {"error": r["steady_speed_error"], "speed_cmd": r["speed_cmd"], "period": r["period"]}


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    trials = {f"v{v:+.2f}-T{T:.2f}": trial_base(protocol, run.controller, run.config, speed=v, period=T, seconds=p.seconds,
                                                 steady_from=p.steady_from, extra={"speed_cmd": v, "period": T})
              for v, T in cases(p)}
    results = list(run.run(trials).values())
    ok = [passed(r, p) for r in results]
    grid = np.full((len(p.periods), len(p.speeds)), np.nan)
    err = np.full_like(grid, np.nan)
    for r, good in zip(results, ok):
        i, j = p.periods.index(r["period"]), p.speeds.index(r["speed_cmd"])
        grid[i, j] = 1.0 if good else 0.0
        err[i, j] = r["steady_speed_error"] if r["steady_speed_error"] is not None else np.nan
    fell = sum(r["fell"] for r in results)
    passing_speeds = [v for j, v in enumerate(p.speeds) if np.all(grid[:, j][np.isfinite(grid[:, j])] == 1)]
    worst = worst_speed_error(results)
    rows = [Row(f"cases passed ({len(results)} speed x period pairs with step length <= {p.max_step_length:g} m)",
                f"{sum(ok)}/{len(results)}", protocol.anchor("envelope_pass"), all(ok)),
            Row("  fell", f"{fell}/{len(results)}"),
            Row("  speeds passing at every period", ", ".join(f"{v:+g}" for v in passing_speeds) or "none"),
            Row("  worst steady speed error of the cases that did not fall",
                "n/a (every case fell)" if worst is None else
                f"{worst['error']:.2f} m/s ({worst['speed_cmd']:+g} m/s x {worst['period']:g} s)",
                f"<= {p.speed_tolerance:g} m/s (the pass criterion)", None if worst is None else
                worst["error"] <= p.speed_tolerance)]
    for T in p.periods:
        row = [r for r, good in zip(results, ok) if r["period"] == T]
        good = [r["speed_cmd"] for r in row if passed(r, p)]
        rows.append(Row(f"  period {T:g} s", f"{len(good)}/{len(row)} pass"
                        + (f" ({min(good):+g}..{max(good):+g} m/s)" if good else "")))
    summary = {"passed": sum(ok), "cases": len(results), "fell": fell, "speeds_passing_every_period": passing_speeds,
               "worst_speed_error": worst,
               "pass_grid": {f"{T:g}": {f"{v:+g}": (None if np.isnan(grid[i, j]) else bool(grid[i, j]))
                                       for j, v in enumerate(p.speeds)} for i, T in enumerate(p.periods)}}
    cols, rws = [f"{v:+g}" for v in p.speeds], [f"{T:g}" for T in p.periods]
    figs = {"heatmap": plots.heatmap(grid, rws, cols, f"gait envelope ({run.subject}): 1 = walks, speed "
                                     f"within {p.speed_tolerance:g} m/s", "step period, s", "commanded speed, m/s",
                                     "pass"),
            "speed-error": plots.heatmap(err, rws, cols, f"steady speed error, m/s ({run.subject}; blank: fell "
                                         "or not run)", "step period, s", "commanded speed, m/s", "m/s", vmin=0,
                                         vmax=max(0.3, 2 * p.speed_tolerance), fmt="{:.2f}", cmap="RdYlGn_r")}
    return BenchOutput("envelope", run.controller, protocol.as_dict(), results, summary, rows, plots=figs)
