"""What the planner minimizes: goal, modelling and constraint terms of a previewed schedule (Mordatch et al. 2010,
Sec. 5.1-5.3, with the decisions of slip-planning.md Sec. 4).

Every term is computed for the whole population at once and returned by name, so a plan's cost can be read
term by term. Integrals over stance phases use 6-node Gauss-Legendre quadrature per phase; the soft
constraints (leg length, a leg that would have to pull, projectiles) are sigmoids over 40 uniform samples of
the schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.errors import UsageError
from strider.methods.slip.preview import ZERO_DURATION, Preview, PreviewPoints, gauss_legendre
from strider.methods.slip.schedule import (
    STANCE_PHASES,
    BodyGeometry,
    PlanRollout,
    PlanStart,
    Terrain,
    ground_slopes,
    other,
    yaw_rotate,
)

STEP_TIMINGS = ("touchdown", "literal")


@dataclass(frozen=True)
class GaitGoals:
    """One gait's goals and weights (Table 1); data in ``gaits/*.yaml``."""

    step_length: float = 0.75       # d_step, m (Table 1, walk)
    step_duration: float = 0.6      # T_step, s (Table 1, walk)
    apex_height: float = 0.0        # h_d, m (Table 1)
    w_step_time: float = 10.0       # Table 1
    w_step_length: float = 10.0     # Table 1
    w_heading: float = 1.0          # Table 1
    w_apex: float = 0.0             # w_com (Table 1: 0 walking, > 0 running and jumping)
    w_accel: float = 0.05           # Table 1
    w_leg: float = 10.0             # Table 1
    w_hip: float = 10.0             # Table 1
    step_timing: str = "touchdown"  # "touchdown" (the spec's decision) or "literal" (Eq. 19 from now)
    flight_accel: bool = False      # beyond the spec's reading: Eq. 24's integral also runs over flight (c'' = g)
    w_drift: float = 0.0            # beyond the source: the two steps' net sideways COM travel (0: the source)
    heading_each_step: bool = False  # beyond the source: Eq. 21 also at the first touchdown, not only at the end

    def __post_init__(self):
        if self.step_timing not in STEP_TIMINGS:
            raise UsageError(f"step_timing {self.step_timing!r} is not one of {', '.join(STEP_TIMINGS)}")


@dataclass(frozen=True)
class ConstraintWeights:
    """The soft constraints' constants, which the source does not give (slip-planning.md Sec. 4)."""

    leg_weight: float = 100.0        # L outside [L_min, L_max]
    leg_scale: float = 0.01          # m
    pull_weight: float = 100.0       # a leg whose spring would pull (w^2 (r - z) < 0)
    pull_scale: float = 0.01         # body weights
    projectile_weight: float = 1000.0
    projectile_scale: float = 0.01   # m^2 (the spec's decision; 0.1 in strider's configuration)
    projectile_clearance: float = 0.5   # D, m
    unsupported_weight: float = 1e3  # a sole corner that does not rest: 1e3 + 1e3 |depth|
    unsupported_depth: float = 1e-3  # m: a corner this far off the ground under it does not rest on it
    sdf_weight: float = 100.0        # keep the new foot 0.12 m inside support (gap and stone courses)
    sdf_margin: float = 0.12         # m
    samples: int = 40                # uniform samples of the schedule for the sigmoids (summed)
    landing_weight: float = 1000.0   # beyond the source: a flight must end where a leg can land (see plan_costs)
    min_horizon: float = 1.0         # s; beyond the source: a shorter plan pays horizon_weight per s^2 short
    horizon_weight: float = 100.0
    quadrature_nodes: int = 6        # Gauss-Legendre nodes per stance phase


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function in its tanh form, which cannot overflow on a wild candidate's huge arguments."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


@dataclass(frozen=True)
class Projectile:
    """A ball the planner keeps D away from: its state at the plan's start, flying ballistically."""

    position: tuple[float, float, float]
    velocity: tuple[float, float, float]

    def at(self, t: np.ndarray, gravity: float) -> np.ndarray:
        p, v = np.asarray(self.position), np.asarray(self.velocity)
        g = np.array([0.0, 0.0, -gravity])
        return p + v * t[..., None] + 0.5 * g * t[..., None] ** 2


def _ankles(rollout: PlanRollout, start: PlanStart, geometry: BodyGeometry) -> dict[str, np.ndarray]:
    """Ankle positions (P, 3) of foot A, of the other foot where it stands now, and of the new foot."""
    P = rollout.knots.shape[0]
    ankle = np.asarray(geometry.sole.ankle)
    out = {}
    for name, side in (("a", rollout.stance_side), ("b", other(rollout.stance_side))):
        foot = start.feet[side]
        out[name] = np.broadcast_to(np.asarray(foot.centre) + yaw_rotate(ankle, np.asarray(foot.yaw)), (P, 3))
    out["new"] = rollout.swing_target + yaw_rotate(ankle, rollout.swing_yaw)
    return out


# Which legs carry the body in each of the six phases: (ankle name, hip side) pairs.
def _legs(phase: int, side_a: str) -> tuple[tuple[str, str], ...]:
    side_b = other(side_a)
    return {0: (("a", side_a), ("b", side_b)), 1: (("a", side_a),), 2: (), 3: (("a", side_a), ("new", side_b)),
            4: (("new", side_b),), 5: ()}[phase]


class _Samples:
    """Every time the objectives read a preview at, in one pass of the closed forms (P, K) and sliced by name
    afterwards; the hips turned with the heading at every sample, for the leg vectors."""

    def __init__(self, preview: Preview, hips: dict[str, tuple[float, float, float]], **times: np.ndarray):
        self.slices, k = {}, 0
        for name, t in times.items():
            self.slices[name] = slice(k, k + t.shape[1])
            k += t.shape[1]
        self.points = preview.at(np.concatenate(list(times.values()), axis=1))
        self.hips = {side: yaw_rotate(np.asarray(hip), self.points.heading) for side, hip in hips.items()}

    def __getitem__(self, name: str) -> PreviewPoints:
        return self.points.columns(self.slices[name])

    def legs(self, name: str, ankle: np.ndarray, hip_side: str, first: int = 0, count: int | None = None
             ) -> np.ndarray:
        """hip - ankle (P, K, 3) at the named times, or at ``count`` of them from the ``first``."""
        named = self.slices[name]
        begin = named.start + first
        at = slice(begin, named.stop if count is None else begin + count)
        return self.points.com[:, at] + self.hips[hip_side][:, at] - ankle[:, None, :]


def plan_costs(rollout: PlanRollout, start: PlanStart, geometry: BodyGeometry, goals: GaitGoals,
               heading_goal: float, constraints: ConstraintWeights = ConstraintWeights(),
               terrain: Terrain | None = None, projectiles: tuple[Projectile, ...] = ()) -> dict[str, np.ndarray]:
    """Every weighted term (P,) by name; their sum is the plan's cost (Eq. 18)."""
    terrain = terrain or Terrain()
    preview = rollout.preview
    model = preview.model
    d = rollout.decoded.durations
    P = d.shape[0]
    starts = preview.starts
    nodes, weights = gauss_legendre(constraints.quadrature_nodes)
    n = len(nodes)
    uniform = np.linspace(0.0, 1.0, constraints.samples)
    times = {"ends": np.stack([rollout.touchdown_time, preview.total], axis=1),
             "quadrature": np.concatenate([starts[:, i:i + 1] + d[:, i:i + 1] * nodes for i in STANCE_PHASES],
                                          axis=1),
             "uniform": preview.total[:, None] * uniform,
             "landings": np.stack([starts[:, 2] + d[:, 2], starts[:, 5] + d[:, 5]], axis=1),
             "apex": _first_flight(rollout)[2]}
    if projectiles:
        # Over at least min_horizon, the COM held where the plan ends: a plan must not escape a ball by ending
        # before it arrives.
        times["balls"] = np.maximum(preview.total, constraints.min_horizon)[:, None] * uniform
    samples = _Samples(preview, geometry.hips, **times)
    costs: dict[str, np.ndarray] = {}

    # Goal terms (Eqs. 19-23).
    if goals.step_timing == "literal":
        step_a = d[:, 0] + d[:, 1] + d[:, 2]
    else:
        step_a = start.time_since_touchdown + d[:, 0] + d[:, 1] + d[:, 2]
    step_b = d[:, 3] + d[:, 4] + d[:, 5]
    costs["step_time"] = goals.w_step_time * ((step_a - goals.step_duration) ** 2
                                              + (step_b - goals.step_duration) ** 2)
    at_ends = samples["ends"]
    direction = np.array([np.cos(heading_goal), np.sin(heading_goal)])
    origin = np.asarray(start.com_at_touchdown if start.com_at_touchdown is not None and goals.step_timing != "literal"
                        else start.com)[:2]
    length_a = (at_ends.com[:, 0, :2] - origin) @ direction
    length_b = (at_ends.com[:, 1, :2] - at_ends.com[:, 0, :2]) @ direction
    costs["step_length"] = goals.w_step_length * ((length_a - goals.step_length) ** 2
                                                  + (length_b - goals.step_length) ** 2)
    if goals.w_drift > 0:
        # Eq. 20 measures steps along the heading only, so a plan may slide sideways at no cost.
        side = np.array([-direction[1], direction[0]])
        drift = (at_ends.com[:, 1, :2] - origin) @ side
        costs["drift"] = goals.w_drift * drift ** 2
    if goals.heading_each_step:
        # Eq. 21 alone looks only at the preview's end, so a plan remade every few steps may turn away now and
        # promise to turn back later, forever: a 4 s walk drifted 1.9 rad off its heading that way.
        costs["heading"] = goals.w_heading * ((at_ends.heading - heading_goal) ** 2).sum(axis=1)
    else:
        costs["heading"] = goals.w_heading * (at_ends.heading[:, 1] - heading_goal) ** 2
    if goals.w_apex > 0:
        costs["apex"] = goals.w_apex * (apex_rise(rollout, samples["apex"]) - goals.apex_height) ** 2

    # Modelling terms (Eqs. 24-26) by quadrature over the stance phases.
    accel = np.zeros(P)
    leg = np.zeros(P)
    hip = np.zeros(P)
    ankles = _ankles(rollout, start, geometry)
    quadrature = samples["quadrature"]
    for j, i in enumerate(STANCE_PHASES):
        T = d[:, i]
        if not (T > ZERO_DURATION).any():
            continue
        w = T[:, None] * weights
        accel += np.sum(w * np.sum(quadrature.com_accel[:, j * n:(j + 1) * n] ** 2, axis=-1), axis=1)
        for ankle_name, hip_side in _legs(i, rollout.stance_side):
            v = samples.legs("quadrature", ankles[ankle_name], hip_side, j * n, n)
            leg += np.sum(w * (np.sum(v * v, axis=-1) - geometry.rest_leg ** 2) ** 2, axis=1)
            hip += np.sum(w * np.sum(v[..., :2] ** 2, axis=-1), axis=1)
    if goals.flight_accel:
        # Otherwise a flight costs nothing in any modelling term, and a walk's plans fill with it.
        accel += model.gravity ** 2 * (d[:, 2] + d[:, 5])
    costs["accel"] = goals.w_accel * accel
    costs["leg"] = goals.w_leg * leg
    costs["hip"] = goals.w_hip * hip

    # Soft constraints over uniform samples (Eqs. 27, 31; the leg-pull penalty of the force decision).
    points = samples["uniform"]
    length_penalty = np.zeros_like(points.heading)
    for i in STANCE_PHASES:
        in_phase = points.phase == i
        for ankle_name, hip_side in _legs(i, rollout.stance_side):
            v = samples.legs("uniform", ankles[ankle_name], hip_side)
            length = np.sqrt(np.sum(v * v, axis=-1))
            over = sigmoid((length - geometry.leg_max) / constraints.leg_scale)
            under = sigmoid((geometry.leg_min - length) / constraints.leg_scale)
            length_penalty += np.where(in_phase, over + under, 0.0)
    costs["leg_limits"] = constraints.leg_weight * length_penalty.sum(axis=1)
    stance = ~np.isnan(points.rest)
    pull = np.where(stance, -model.spring_omega ** 2 * (np.nan_to_num(points.rest) - points.com[..., 2])
                    / model.gravity, -np.inf)
    costs["leg_pull"] = constraints.pull_weight * sigmoid(pull / constraints.pull_scale).sum(axis=1)
    costs["landing"] = constraints.landing_weight * _landing_violation(samples, rollout, geometry, terrain,
                                                                       constraints)
    # Nothing in the source's terms makes a plan look ahead: every integral shrinks with the schedule, so an
    # empty plan would cost nothing. Standing's "single arbitrarily long double support" (Sec. 7) needs a floor.
    costs["horizon"] = constraints.horizon_weight * np.maximum(0.0, constraints.min_horizon - preview.total) ** 2
    if projectiles:
        com = samples["balls"].com
        near = np.zeros(P)
        for ball in projectiles:
            gap = np.sum((ball.at(times["balls"], model.gravity) - com) ** 2, axis=-1)
            excess = (constraints.projectile_clearance ** 2 - gap) / constraints.projectile_scale
            near += sigmoid(excess).max(axis=1)
        costs["projectile"] = constraints.projectile_weight * near

    # Footholds on the terrain (the foot-projection and SDF decisions).
    costs.update(foothold_costs(rollout, geometry, terrain, constraints))
    return costs


def _landing_violation(samples: _Samples, rollout: PlanRollout, geometry: BodyGeometry, terrain: Terrain,
                       constraints: ConstraintWeights) -> np.ndarray:
    """How far each flight's end is from a leg's reach, as sigmoids: the landing leg after phase 3 against
    [L_min, L_max]; after phase 6 the hip's height over the ground under the COM. The source's leg limits
    watch only legs on the ground, so a plan could otherwise fall through the floor during a flight."""
    d = rollout.decoded.durations
    ends = samples["landings"]
    side_b = other(rollout.stance_side)
    ankle_new = rollout.swing_target + yaw_rotate(np.asarray(geometry.sole.ankle), rollout.swing_yaw)
    leg = samples.legs("landings", ankle_new, side_b, 0, 1)[:, 0]
    length = np.sqrt(np.sum(leg * leg, axis=-1))
    hip_z = ends.com[:, 1, 2] + geometry.hips[side_b][2]
    rise = hip_z - terrain.heights(ends.com[:, 1, :2]) - geometry.sole.ankle[2]
    s = constraints.leg_scale

    def outside(value: np.ndarray) -> np.ndarray:
        return sigmoid((value - geometry.leg_max) / s) + sigmoid((geometry.leg_min - value) / s)

    return (np.where(d[:, 2] > ZERO_DURATION, outside(length), 0.0)
            + np.where(d[:, 5] > ZERO_DURATION, outside(rise), 0.0))


def _first_flight(rollout: PlanRollout) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each plan's first flight phase (2 or 5; -1 without flight), its duration and its start and end times
    (P, 2)."""
    d = rollout.decoded.durations
    first = np.where(d[:, 2] > ZERO_DURATION, 2, np.where(d[:, 5] > ZERO_DURATION, 5, -1))
    t0 = np.take_along_axis(rollout.preview.starts, np.maximum(first, 0)[:, None], axis=1)[:, 0]
    T = np.take_along_axis(d, np.maximum(first, 0)[:, None], axis=1)[:, 0]
    return first, T, np.stack([t0, t0 + T], axis=1)


def apex_rise(rollout: PlanRollout, begin: PreviewPoints | None = None) -> np.ndarray:
    """h_eps of Eq. 23: the first flight's apex above the higher of its start and end; 0 without flight.
    ``begin``: the preview at the flight's start and end, if already sampled."""
    first, T, times = _first_flight(rollout)
    begin = rollout.preview.at(times) if begin is None else begin
    vz = begin.com_velocity[:, 0, 2]
    gravity = rollout.preview.model.gravity
    t_apex = np.clip(vz / gravity, 0.0, T)
    apex = begin.com[:, 0, 2] + vz * t_apex - 0.5 * gravity * t_apex ** 2
    rise = np.maximum(apex - begin.com[:, 0, 2], apex - begin.com[:, 1, 2])
    return np.where(first >= 0, rise, 0.0)


def foothold_costs(rollout: PlanRollout, geometry: BodyGeometry, terrain: Terrain,
                   constraints: ConstraintWeights) -> dict[str, np.ndarray]:
    """The new sole's corners must rest on the ground they were planned on; on gap and stone courses the sole
    keeps ``sdf_margin`` inside support. The sole lies parallel to the ground under it (the spec's E_swing): its
    plane has the slopes of the ground under its corners and passes through the ground under its centre. A
    corner off that plane, the ground lower there (over an edge or a gap) or higher (inside a riser), does not
    rest; on a ramp every corner rests, as on level ground."""
    sole = geometry.sole
    corners = sole.corners(rollout.swing_target[:, :2], rollout.swing_yaw)        # (P, 4, 2)
    ground = terrain.heights(corners)
    along, across = ground_slopes(sole, ground)
    u, v = sole.corner_offsets()
    depth = rollout.swing_target[:, None, 2] + along[:, None] * u + across[:, None] * v - ground
    off = np.abs(depth)
    unsupported = off > constraints.unsupported_depth
    out = {"unsupported": np.sum(np.where(unsupported, constraints.unsupported_weight * (1 + off), 0.0), axis=1)}
    sdf = terrain.sdf(rollout.swing_target[:, :2])
    if np.isfinite(sdf).any():
        out["sdf"] = constraints.sdf_weight * np.maximum(0.0, constraints.sdf_margin - sdf) ** 2
    return out
