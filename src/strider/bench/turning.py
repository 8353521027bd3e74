"""``strider bench turning``: heading jumps of +-90 and 180 degrees while walking (coros-walking.md, P2).

Each speed of the protocol is one walk: straight for ``lead_in`` s, then a new heading every ``interval`` s.
A jump is judged on the pelvis' yaw, measured in the worker from the run's trace (:func:`jump_metrics`):

- **peak turn rate**: the largest yaw rate averaged over one step period. Averaging over a step removes most
  of the gait's own yaw sway; what is left is reported as the straight walk's floor of the same measure.
- **facing**: the yaw averaged over each stride (two steps, which cancels the sway) stays within
  ``facing_tolerance_deg`` of the new heading from |jump| / ``turn_rate`` + ``settle_periods`` step periods
  after the command until the next one.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from strider.bench import plots
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row
from strider.bench.trial import STRIDE_STEPS, Trial, stride_average
from strider.quat import wrap_angle, wrap_angles

FACING_SAMPLE = 0.1   # s between the facing samples a result keeps for its plot
# A walk reached a jump's end when its trace's last sample is this many control periods from it or later (the
# trace samples each control update, so a walk that did not fall ends within one of its last time).
END_SLACK_PERIODS = 1.5


def schedule(p) -> list[tuple[float, float]]:
    """(time s, commanded heading rad) of every jump, starting from heading 0."""
    heading, out = 0.0, []
    for i, deg in enumerate(p.jumps_deg):
        heading = wrap_angle(heading + math.radians(deg))
        out.append((p.lead_in + i * p.interval, heading))
    return out


def jump_metrics(p, trial: Trial, trace: dict) -> dict:
    """The turning figures of one walk, from its trace (see the module docstring); JSON-ready."""
    t, yaw = np.asarray(trace["t"]), np.unwrap(np.asarray(trace["heading"]))
    if len(t) < 2:
        return {"jumps": [], "straight_rate_floor": None, "facing_deg": []}
    dt = float(t[1] - t[0])
    step = max(1, round(trial.period / dt))
    rate = np.zeros_like(yaw)
    rate[step:] = (yaw[step:] - yaw[:-step]) / (t[step:] - t[:-step])
    facing = stride_average(yaw, STRIDE_STEPS * step)
    stride = STRIDE_STEPS * trial.period
    jumps = []
    times = schedule(p)
    for i, ((when, target), deg) in enumerate(zip(times, p.jumps_deg)):
        until = times[i + 1][0] if i + 1 < len(times) else trial.seconds
        completed = bool(t[-1] >= until - END_SLACK_PERIODS * dt)
        judged_from = when + math.radians(abs(deg)) / p.turn_rate + p.settle_periods * trial.period
        turn = (t >= when) & (t < until)
        held = (t >= judged_from + stride) & (t < until)
        peak = float(np.max(np.abs(rate[turn]))) if turn.any() else None
        error = (float(np.degrees(np.max(np.abs(wrap_angles(facing[held] - target))))) if held.any() else None)
        ok = bool(completed and peak is not None and abs(peak - p.turn_rate) <= p.turn_rate_tolerance
              and error is not None and error <= p.facing_tolerance_deg)
        jumps.append({"time": when, "jump_deg": deg, "target_deg": math.degrees(target), "completed": completed,
                      "peak_rate": peak, "facing_error_deg": error, "judged_from": judged_from, "passed": ok})
    straight = (t >= stride) & (t < min(times[0][0], t[-1]))
    sample = max(1, round(FACING_SAMPLE / dt))
    return {"jumps": jumps,
            "straight_rate_floor": float(np.max(np.abs(rate[straight]))) if straight.any() else None,
            "facing_deg": [[round(float(a), 3), round(float(b), 2)]
                           for a, b in zip(t[::sample], np.degrees(yaw[::sample]))]}


def _commanded_line(times: list[tuple[float, float]], seconds: float, results: list[dict]):
    """The commanded heading as steps, degrees; a 180 deg jump drawn the way the first walk turned."""
    samples = np.asarray(results[0]["facing_deg"]) if results and results[0]["facing_deg"] else None
    levels = [0.0]
    for i, (when, heading) in enumerate(times):
        until = times[i + 1][0] if i + 1 < len(times) else seconds
        near = levels[-1]
        if samples is not None and (late := samples[samples[:, 0] < until]).size:
            near = float(late[-1, 1])
        target = math.degrees(heading)
        levels.append(target + 360.0 * round((near - target) / 360.0))
    steps_t = [0.0] + [x for when, _ in times for x in (when, when)] + [seconds]
    return steps_t, [y for level in levels for y in (level, level)]


def _jump_label(j: dict) -> str:
    return f"{j['jump_deg']:+g} deg at {j['time']:g} s"


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    times = schedule(p)
    seconds = times[-1][0] + p.interval
    script = tuple((when, (("heading", heading), ("turn_rate", 0.0))) for when, heading in times)
    trials = {f"v{v:+.2f}": trial_base(protocol, run.controller, run.config, speed=v, period=p.period, seconds=seconds,
                                       script=script, analysis=functools.partial(jump_metrics, p),
                                       extra={"speed_cmd": v})
              for v in p.speeds}
    results = list(run.run(trials).values())
    jumps = [j for r in results for j in r["jumps"]]
    passed = sum(j["passed"] for j in jumps)
    rates = [j["peak_rate"] for j in jumps if j["peak_rate"] is not None]
    errors = [j["facing_error_deg"] for j in jumps if j["facing_error_deg"] is not None]
    rows = [Row(f"jumps passed ({len(jumps)}: {', '.join(f'{d:+g}' for d in p.jumps_deg)} deg every "
                f"{p.interval:g} s at {', '.join(f'{v:g}' for v in p.speeds)} m/s)", f"{passed}/{len(jumps)}",
                protocol.anchor("turning"), passed == len(jumps)),
            Row("  fell", f"{sum(r['fell'] for r in results)}/{len(results)} walks"),
            Row("  peak turn rate (one-step average)", f"{min(rates):.2f}..{max(rates):.2f} rad/s" if rates else "n/a",
                f"{p.turn_rate:g} +- {p.turn_rate_tolerance:g} rad/s",
                bool(rates) and all(abs(r - p.turn_rate) <= p.turn_rate_tolerance for r in rates)),
            Row("  worst facing error once settled (stride average)", f"{max(errors):.1f} deg" if errors else "n/a",
                f"<= {p.facing_tolerance_deg:g} deg", bool(errors) and max(errors) <= p.facing_tolerance_deg)]
    for r in results:
        floor = r["straight_rate_floor"]
        rows.append(Row(f"  {r['speed_cmd']:g} m/s: straight walk's floor of the same rate measure",
                        "n/a" if floor is None else f"{floor:.2f} rad/s"))
        for j in r["jumps"]:
            rows.append(Row(f"  {r['speed_cmd']:g} m/s, {_jump_label(j)}",
                            "not reached (fell)" if not j["completed"] else
                            f"peak {j['peak_rate']:.2f} rad/s, facing within {j['facing_error_deg']:.1f} deg",
                            "", j["passed"]))
    summary = {"passed": passed, "jumps": len(jumps), "fell": sum(r["fell"] for r in results),
               "peak_rate_range": [min(rates), max(rates)] if rates else None,
               "worst_facing_error_deg": max(errors) if errors else None}
    series = {f"{r['speed_cmd']:g} m/s": tuple(zip(*r["facing_deg"])) for r in results if r["facing_deg"]}
    series["commanded"] = _commanded_line(times, seconds, results)
    fig = plots.lines(series, f"heading jumps ({run.subject}): pelvis yaw", "time, s", "yaw, deg")
    return BenchOutput("turning", run.controller, protocol.as_dict(), results, summary, rows, plots={"facing": fig})
