"""The preview planner: CMA-ES over the 26-D schedule, warm-started from the last plan (Mordatch et al. 2010, Sec. 5).

Each generation's 15 candidates are previewed and scored in one vectorized call. pycma runs with the spec's
settings (slip-planning.md Sec. 4) and its own seeded generator, so a replan from the same state gives the
same plan bit for bit. The warm start is the previous optimum shifted in time: the elapsed time comes off the
phase under way; after a contact event the finished phases drop out, the next step's phases move forward and
the lateral COP coordinates mirror, since the other foot now leads.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import cma
import numpy as np

from strider.methods.slip.objectives import ConstraintWeights, GaitGoals, Projectile, plan_costs
from strider.methods.slip.preview import PreviewModel
from strider.methods.slip.schedule import (
    DEFAULT_BOUNDS,
    FORCE,
    SIZE,
    T1,
    T2,
    T5,
    T6,
    THETA34,
    BodyGeometry,
    PlanRollout,
    PlanStart,
    ScheduleBounds,
    Terrain,
    decode,
    encode,
    roll_out,
)
from strider.optimize.local import refine

UNUSABLE_PLAN_COST = 1e12   # a candidate whose preview overflowed ranks below every finite plan


@dataclass(frozen=True)
class PlannerParams:
    """pycma settings (slip-planning.md Sec. 4)."""

    popsize: int = 15               # Mordatch et al. 2010, Sec. 5
    max_evaluations: int = 5000     # Sec. 5 (10000 with projectiles)
    projectile_evaluations: int = 10000   # Sec. 7
    tolfun: float = 1e-4            # slip-planning.md Sec. 4
    sigma_warm: float = 0.05        # slip-planning.md Sec. 4
    sigma_cold: float = 0.3         # slip-planning.md Sec. 4
    seed: int = 1
    refine_iterations: int = 0      # beyond the source: L-BFGS-B iterations on CMA's best plan (0: CMA alone).
                                    # CMA's few hundred generations leave a 26-D plan far from its optimum, and
                                    # consecutive plans then disagree; a gradient finishes the descent cheaply
    refine_step: float = 1e-4       # its forward-difference nudge, in normalized schedule units
    continuity_weight: float = 0.0  # beyond the source: a warm-started plan pays this per squared normalized unit
                                    # it moves away from the previous plan shifted to now (0: the source, whose
                                    # consecutive plans may jump between optima the body cannot follow)


# A cold start's phases: a short walking step, chosen here (the source gives no initial schedule).
COLD_DOUBLE_SUPPORT = 0.15   # s, phases 1 and 4
COLD_SINGLE_SUPPORT = 0.4    # s, phases 2 and 5


def standing_guess(bounds: ScheduleBounds = DEFAULT_BOUNDS) -> np.ndarray:
    """A cold start: a short walking step with no flight and no turning, COPs at the sole centres, the weight
    carried (normalized force 1), the swing foot straight below the COM."""
    x = np.full(SIZE, 0.5)
    x[T1] = COLD_DOUBLE_SUPPORT / bounds.double_support
    x[T2] = x[T5] = COLD_SINGLE_SUPPORT / bounds.single_support
    x[THETA34] = (1 - COLD_DOUBLE_SUPPORT / bounds.theta34) / 2      # theta34 < 0: a double support
    x[T6] = 0.0
    x[FORCE] = 1.0 / bounds.force
    return x


@dataclass
class Plan:
    """The chosen schedule and what it cost, term by term."""

    x: np.ndarray
    rollout: PlanRollout          # of this plan alone (one row)
    cost: float
    terms: dict[str, float]
    evaluations: int
    start: PlanStart


@dataclass
class Planner:
    geometry: BodyGeometry
    goals: GaitGoals
    params: PlannerParams = PlannerParams()
    model: PreviewModel = field(default_factory=PreviewModel)
    constraints: ConstraintWeights = field(default_factory=ConstraintWeights)
    bounds: ScheduleBounds = field(default_factory=ScheduleBounds)
    terrain: Terrain = field(default_factory=Terrain)

    def cost(self, x: np.ndarray, start: PlanStart, heading_goal: float,
             projectiles: tuple[Projectile, ...] = (), previous: np.ndarray | None = None
             ) -> tuple[np.ndarray, dict[str, np.ndarray], PlanRollout]:
        """Each candidate's cost, term by term; ``previous``: the last plan shifted to now, which the continuity
        term holds the candidates near (when its weight is not 0)."""
        rollout = roll_out(x, start, self.geometry, self.model, self.terrain, self.bounds)
        terms = plan_costs(rollout, start, self.geometry, self.goals, heading_goal, self.constraints,
                           self.terrain, projectiles)
        if previous is not None and self.params.continuity_weight > 0:
            terms["continuity"] = self.params.continuity_weight * np.sum((x - previous) ** 2, axis=1)
        total = np.sum(list(terms.values()), axis=0)
        return np.where(np.isfinite(total), total, UNUSABLE_PLAN_COST), terms, rollout

    def plan(self, start: PlanStart, heading_goal: float, warm: np.ndarray | None = None,
             projectiles: tuple[Projectile, ...] = ()) -> Plan:
        """The best schedule CMA finds from ``start`` (warm-started from ``warm`` if given)."""
        start = start.with_quad(self.geometry.sole) if start.double_support_quad is None else start
        x0 = standing_guess(self.bounds) if warm is None else np.clip(warm, 0.0, 1.0)
        previous = None if warm is None else x0
        sigma = self.params.sigma_cold if warm is None else self.params.sigma_warm
        budget = self.params.projectile_evaluations if projectiles else self.params.max_evaluations

        def score(xs: np.ndarray) -> np.ndarray:
            return self.cost(xs, start, heading_goal, projectiles, previous)[0]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            es = cma.CMAEvolutionStrategy(x0, sigma, cma_options(self.params, budget))
            best_x, best_cost = x0, float(score(x0[None])[0])
            evaluations = 1
            while not es.stop():
                candidates = es.ask()
                costs = score(np.asarray(candidates))
                es.tell(candidates, costs.tolist())
                evaluations += len(candidates)
                i = int(np.argmin(costs))
                if costs[i] < best_cost:
                    best_x, best_cost = np.asarray(candidates[i]), float(costs[i])
        if self.params.refine_iterations > 0:
            refined = refine(score, best_x, 0.0, 1.0, self.params.refine_iterations, self.params.refine_step)
            best_x = refined.x
            evaluations += refined.evaluations
        total, terms, rollout = self.cost(best_x[None], start, heading_goal, projectiles, previous)
        return Plan(x=best_x, rollout=rollout, cost=float(total[0]),
                    terms={k: float(v[0]) for k, v in terms.items()}, evaluations=evaluations, start=start)


def cma_options(params: PlannerParams, budget: int) -> dict:
    """pycma's options for a plan of at most ``budget`` evaluations."""
    return {"popsize": params.popsize, "maxfevals": budget, "bounds": [0.0, 1.0], "tolfun": params.tolfun,
            "seed": params.seed, "verbose": -9, "verb_log": 0, "verb_disp": 0}


def cma_bookkeeping_seconds(params: PlannerParams, generations: int = 100) -> float:
    """Wall time of one generation of pycma's own work (ask and tell, with the planner's options) on a cost that
    takes no time: the floor under every plan, whatever the previews cost."""
    options = {**cma_options(params, generations * params.popsize), "tolfun": 0.0, "tolx": 0.0,
               "tolflatfitness": generations}
    rng = np.random.default_rng(params.seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        es = cma.CMAEvolutionStrategy(np.full(SIZE, 0.5), params.sigma_warm, options)
        done = 0
        began = time.perf_counter()
        while not es.stop() and done < generations:
            candidates = es.ask()
            es.tell(candidates, rng.random(len(candidates)).tolist())
            done += 1
        return (time.perf_counter() - began) / max(done, 1)


def shift(x: np.ndarray, elapsed: float, geometry: BodyGeometry, start_phase: int, stepped: bool,
          bounds: ScheduleBounds = DEFAULT_BOUNDS) -> np.ndarray:
    """The warm start for a replan ``elapsed`` seconds later; ``stepped``: the new foot has landed since, so the
    second step's phases become the first's and the feet swap roles."""
    dummy = PlanStart(com=(0, 0, 0), com_velocity=(0, 0, 0), heading=0.0, heading_rate=0.0, start_phase=1,
                      stance_side="left", feet={})
    d = decode(x[None], dummy, geometry, bounds)
    if stepped:
        durations = d.durations[0]
        durations = np.array([durations[3], durations[4], durations[5], durations[3], durations[4],
                              durations[5]])
        accel = d.heading_accel[0][[2, 3, 2, 3]]
        uv = d.cop_uv[0][[2, 3, 4, 3, 4]].copy()
        uv[:, 1] = 1.0 - uv[:, 1]
        force = d.force[0][[2, 3, 4, 3, 4]]
        # Mirror the physical offset R45 delta across the heading: (ox, oy) -> (ox, -oy) is delta -> (-dy, -dx).
        swing = -d.swing_offset[0][::-1]
        d.durations = durations[None]
        d.heading_accel, d.cop_uv, d.force, d.swing_offset = accel[None], uv[None], force[None], swing[None]
    left = elapsed
    durations = d.durations[0]
    durations[:start_phase - 1] = 0.0     # phases before the one under way are over
    for i in range(start_phase - 1, 6):
        take = min(left, durations[i])
        durations[i] -= take
        left -= take
        if left <= 0:
            break
    return np.clip(encode(d, geometry, bounds)[0], 0.0, 1.0)
