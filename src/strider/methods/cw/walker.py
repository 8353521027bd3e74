"""Walking a course with CW planning (seed 000, Sec. 3.5): a planar walker replans its next step at every foot
strike from the step-to-step model and the course ahead, and records every footfall.

A footfall counts as supported when at least half the foot lands on support
(Sec. 3.6, Table 3.1's test); a fall ends the walk.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from strider.errors import UsageError
from strider.methods.cw.model import StepModel
from strider.methods.cw.planner import GAP_SEARCHES, Footing, Planner, PlannerParams
from strider.methods.cw.stepping import StepRunner

SUPPORTED_SHARE = 0.5          # of the foot on support for a footfall to count as a success (Sec. 3.6)
DEFAULT_MAX_STEPS = 200
PAST_COURSE = 1.0              # m: the walk ends once a heel lands this far short of the course's end
FEET_CLEARANCE = 0.3           # m of support a standing walker needs either side of its start (its feet, heel to toe)


@dataclass(frozen=True)
class Footfall:
    time: float                # s of simulated time at the strike
    heel: float                # m: where the heel landed
    planned: float | None      # m: where the plan put it (None: the base gait's own step)
    supported: float           # share of the foot over support
    search: str                # which search chose the step ('base', 'regular', 'random', 'hybrid', 'nearest')
    accepted: bool             # the plan met every constraint over its horizon
    samples: int               # model predictions the plan made
    plan_seconds: float        # wall time of the plan

    @property
    def success(self) -> bool:
        return self.supported >= SUPPORTED_SHARE


@dataclass
class CWWalk:
    footfalls: list[Footfall] = field(default_factory=list)
    fell: bool = False
    fall_time: float | None = None
    sim_seconds: float = 0.0
    wall_seconds: float = 0.0

    @property
    def plan_seconds_max(self) -> float:
        return max((f.plan_seconds for f in self.footfalls), default=0.0)


def walk_course(model: StepModel, course, *, search: str = "hybrid", params: PlannerParams | None = None,
                seed: int = 0, character: str = "planar7", until: float | None = None,
                max_steps: int = DEFAULT_MAX_STEPS, video: str | None = None,
                early_touchdown: float | None = None, start_x: float = 0.0, hooks: tuple = ()) -> CWWalk:
    """Walk ``course`` from x = ``start_x``, planning each step by ``search`` ('random' or 'hybrid'), until a heel
    lands past ``until`` (default: near the course's end), a fall, or ``max_steps``. ``early_touchdown`` is
    SIMBICON's switch of that name (None: the source's state machine); ``hooks`` watch the episode (see
    :mod:`strider.runner.hooks`). Impossible values are refused before anything is simulated
    (:func:`check_walk`)."""
    check_walk(model, course, character, start_x, max_steps, seed, search, until)
    runner = StepRunner(character, ground=course, seed=seed, video=video, early_touchdown=early_touchdown,
                        start_x=start_x, hooks=hooks)
    try:
        footing = Footing(course.support_intervals(), runner.foot_length)
        planner = Planner(model, params or PlannerParams(), seed=seed)
        end = until if until is not None else course.end - PAST_COURSE
        walk = CWWalk()
        start = time.perf_counter()
        for _ in range(max_steps):
            t = time.perf_counter()
            plan = planner.gaps(runner.last.state, runner.last.heel, footing, search)
            plan_seconds = time.perf_counter() - t
            out = runner.step(plan.action)
            if out.fell:
                walk.fell, walk.fall_time = True, runner.time
                break
            heel = out.strike.heel
            walk.footfalls.append(Footfall(runner.time, heel, plan.heels[0] if plan.heels else None,
                                           footing.supported_share(heel), plan.search, plan.accepted, plan.samples,
                                           plan_seconds))
            if heel > end:
                break
        walk.sim_seconds, walk.wall_seconds = runner.time, time.perf_counter() - start
        return walk
    finally:
        runner.close()


def check_walk(model: StepModel, course, character: str, start_x: float, max_steps: int, seed: int,
               search: str = "hybrid", until: float | None = None, flags: dict[str, str] | None = None) -> None:
    """Refuse a walk that :func:`walk_course` cannot make: a model made for another character, a start off the
    course's support (with ``FEET_CLEARANCE`` either side), no steps, a negative seed, an unknown search or a
    non-finite end. Values are named as ``flags`` maps them (the command line's ``--start``), else by argument."""
    name = (flags or {}).get
    if model.character is not None and model.character != character:
        raise UsageError(f"the step model was made for {model.character!r}, not {character!r}: load the example "
                         f"set of {character!r}")
    if search not in GAP_SEARCHES:
        raise UsageError(f"unknown gap search {search!r}; choose from {', '.join(GAP_SEARCHES)}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, (int, np.integer)) or max_steps < 1:
        raise UsageError(f"{name('max_steps', 'max_steps')} must be a whole number >= 1, got {max_steps!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise UsageError(f"{name('seed', 'seed')} must be a whole number >= 0, got {seed!r}")
    if until is not None and not _finite(until):
        raise UsageError(f"until must be a finite position in m or None, got {until}")
    start = name("start_x", "start_x")
    if not _finite(start_x):
        raise UsageError(f"{start} must be a finite position in m, got {start_x}")
    support = course.support_intervals()
    if not support:
        raise UsageError(f"course {course.name!r} has no support along the walker's line (y = 0)")
    if not any(a + FEET_CLEARANCE <= start_x <= b - FEET_CLEARANCE for a, b in support):
        raise UsageError(f"{start} {start_x:g} m is not on the support of course {course.name!r} with "
                         f"{FEET_CLEARANCE:g} m to spare either side (support: "
                         + ", ".join(f"{a:g} to {b:g} m" for a, b in support) + ")")


def _finite(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool) \
        and math.isfinite(value)


def gap_footfall_score(walk: CWWalk, intervals: list[tuple[float, float]]) -> tuple[int, int]:
    """(successful, total) footfalls from the first gap-aware plan to the first footfall past the last gap of a
    course with support ``intervals`` (Sec. 3.6, Table 3.1); a fall before that counts as one more, failed,
    footfall."""
    last_gap_end = intervals[-1][0]
    first = next((i for i, f in enumerate(walk.footfalls) if f.search != "base"), None)
    if first is None:
        return (0, 1) if walk.fell else (0, 0)
    counted = []
    for f in walk.footfalls[first:]:
        counted.append(f.success)
        if f.heel >= last_gap_end:
            break
    else:
        if walk.fell:
            counted.append(False)
    return int(np.sum(counted)), len(counted)


def gap_course(width: float, spacing: float, lead: float, count: int = 5, tail: float = 8.0):
    """Table 3.1's terrain (Sec. 3.6): ``count`` gaps ``width`` wide, ``spacing`` apart, the first ``lead`` m
    ahead of x = 0 (where a character stands), 1 m deep."""
    from strider.courses.library import parse_course
    from strider.datafile import Fields

    start = -2.0
    pieces: list[dict] = [{"flat": {"length": lead - start}}]
    for i in range(count):
        pieces.append({"gap": {"width": width, "depth": 1.0}})
        pieces.append({"flat": {"length": spacing if i < count - 1 else tail}})
    name = f"gaps-w{width:g}-s{spacing:g}"
    return parse_course(Fields({"name": name, "start": start, "pieces": pieces}, name))
