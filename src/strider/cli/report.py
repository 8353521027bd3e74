"""What ``strider walk`` and ``strider stand`` print: a one-paragraph summary, or a JSON object.

Kept apart from argument parsing so that the wording can be read and tested
on its own, and so that benchmarks can reuse the JSON form.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from strider.datafile import json_safe
from strider.progress import move_to, progress_bar

if TYPE_CHECKING:
    from strider.runner.scenario import Result


EXIT_OK = 0
EXIT_FAILED = 1     # the run failed: its simulation became unstable


def deliver(result: Result, as_json_object: bool) -> int:
    """Print ``result`` (JSON or the summary) and return the run's exit status."""
    print(as_json(result) if as_json_object else summary(result))
    return EXIT_FAILED if result.unstable else EXIT_OK


def emit(facts: dict, as_json_object: bool, text: str, status: int = EXIT_OK) -> int:
    """Print a command's ``facts`` as one JSON object (NaN and infinity as null), or its human ``text``; return
    ``status``."""
    print(json.dumps(json_safe(facts), indent=2) if as_json_object else text)
    return status


def as_json(result: Result) -> str:
    """The result as one JSON object; values JSON cannot hold (NaN, infinity) become null."""
    return json.dumps(json_safe(result.as_dict()), indent=2)


def summary(result: Result) -> str:
    """A human paragraph: how far and how fast, whether it fell, how fast it simulated, where the video went."""
    command = result.command
    action = command.get("action", "walk")
    if command.get("script"):
        motion = (f"Followed the plan for {result.sim_seconds:.1f} s of simulated time and moved "
                  f"{result.distance_m:.2f} m: {_speeds(result)}, sideways drift off the walked path "
                  f"{result.lateral_drift_m:.2f} m, heading {result.heading_error_deg:.0f} deg off the final target, "
                  f"{result.steps} steps.")
    elif action == "stand":
        motion = (f"Stood for {result.sim_seconds:.1f} s of simulated time and moved {result.distance_m:.2f} m "
                  f"(mean speed {result.mean_speed_mps:+.2f} m/s, {result.steps} steps).")
    else:
        motion = (f"Walked {result.distance_m:.2f} m in {result.sim_seconds:.1f} s of simulated time: "
                  f"{_speeds(result, command.get('speed', 0.0))}, sideways drift off the walked path {result.lateral_drift_m:.2f} m, "
                  f"heading {result.heading_error_deg:.0f} deg off "
                  f"target, {result.steps} steps.")
    return f"{motion} {aftermath(result)}"


def aftermath(result: Result) -> str:
    """What a summary says after the motion: falls, pushes, throws, the simulation's speed, the video."""
    command = result.command
    parts = [_falls(result)]
    if result.pushes:
        survived = sum(p.survived for p in result.pushes)
        parts.append(f"It survived {survived} of {len(result.pushes)} push{'es' if len(result.pushes) > 1 else ''}.")
    for outcome in result.throws:
        t = outcome.throw
        what = f"hit the {', '.join(b.split('/')[-1] for b in outcome.hit_bodies)}" if outcome.hit else "missed"
        parts.append(f"The ball thrown at {t.time:g} s from {t.azimuth_deg:+.0f} deg {what}.")
    report = result.controller
    if report.get("flights"):
        # SLIP counts its flights (0.02 s or more with no foot down) and how high the COM rose in them.
        parts.append(f"It flew {report['flights']} time(s); the COM rose at most "
                     f"{100 * report['highest_flight_rise']:.1f} cm above take-off and landing.")
    if report.get("qp_fallbacks"):
        # A whole-body QP (SLIP) that did not always solve with its first backend says how often it fell back.
        failed = report.get("qp_failures", 0)
        parts.append(f"The QP fell back from its first solver {report['qp_fallbacks']} time(s)"
                     + (f"; no solver answered {failed} time(s), and the torques before were held." if failed
                        else "."))
    parts.append(f"Simulated at {result.realtime_factor:.1f}x real time ({result.wall_seconds:.1f} s wall clock).")
    if command.get("video"):
        parts.append(f"Video written to {command['video']}.")
    return " ".join(parts)


def _speeds(result: Result, commanded: float | None = None) -> str:
    """Speed along the walked path: steady (the run's last half, after the start from rest) and whole-run."""
    asked = f"commanded {commanded:+.2f}; " if commanded is not None else ""
    if result.steady_speed_mps is None:
        return f"mean speed along the path {result.mean_speed_mps:+.2f} m/s" + (f" ({asked[:-2]})" if asked else "")
    return (f"steady speed {result.steady_speed_mps:+.2f} m/s over the last half ({asked}whole-run mean "
            f"{result.mean_speed_mps:+.2f} m/s, along the path)")


def _falls(result: Result) -> str:
    if result.unstable:
        return instability(result)
    if result.fell:
        when = f" at t = {result.fall_time:.2f} s" if result.fall_time is not None else ""
        return f"It fell{when}."
    return "It did not fall."


def instability(result: Result) -> str:
    """The sentence for a run whose simulation blew up: when, and the engine's words."""
    return (f"The simulation became unstable by t = {result.unstable_time:.2f} s (MuJoCo: {result.unstable_warning}) "
            "and stopped there; that counts as a failure.")


class CMAProgress:
    """A progress bar over a CMA-ES budget, moved on by each finished generation."""

    def __init__(self, budget: int, desc: str, quiet: bool):
        self.budget = budget
        self.bar = progress_bar(budget, desc, unit="eval", enabled=not quiet)

    def generation(self, g) -> None:
        move_to(self.bar, min(g.evaluations, self.budget), best=f"{g.best:.4f}")

    def close(self) -> None:
        self.bar.close()


def cma_budget_bar(asked: int, dimensions: int, desc: str, quiet: bool,
                   popsize: int | None = None) -> tuple[int, CMAProgress]:
    """The budget a CMA-ES run keeps for ``asked`` evaluations (whole generations; a note on stderr when it is
    rounded up) and its progress bar. ``asked`` below 1 is a UsageError."""
    import sys

    from strider.errors import UsageError
    from strider.optimize.cma_es import default_popsize, whole_generations

    if asked < 1:
        raise UsageError(f"--budget must be >= 1 evaluation, got {asked}")
    popsize = popsize or default_popsize(dimensions)
    budget = whole_generations(asked, popsize)
    if budget != asked:
        print(f"note: a budget of {asked} evaluations is rounded up to {budget}, {budget // popsize} whole "
              f"generations of {popsize} (CMA-ES updates on full populations)", file=sys.stderr)
    return budget, CMAProgress(budget, desc, quiet)
