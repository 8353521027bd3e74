"""The schedule CMA searches: a 26-D vector in [0, 1] decoded into six phases (Mordatch et al. 2010, Sec. 4.4).

The schedule is fixed, DS SS F DS SS F (Fig. 4). Phase 2 stands on foot A, the foot planted last; the other
foot swings and lands at ``y_swing`` after phase 2 (walking) or phase 3 (running); phases 4 and 5 stand on A and
the new foot, then on the new foot alone. At most one of phases 3 and 4 is non-zero, so one signed value,
theta34, gives either a flight (theta > 0) or a double support (theta < 0). A phase shorter than 10 ms drops
out, which is how walking, running, jumping and standing all come from the same vector.

Layout (slip-planning.md Sec. 4): T1, T2, theta34, T5, T6; heading accelerations of the four stance phases;
five centre-of-pressure knots as bilinear (u, v) in their support quads; five vertical-force knots; the swing
foot's offset (2). The COP knots K0..K4 sit at the start of phase 1, the boundaries 1|2, 2|4, 4|5 and the end of
phase 5; K0 lies in the double-support quad, K1 and K2 in foot A's sole, K3 and K4 in the new foot's sole.
Each knot's rest length comes from its normalized vertical force f = w^2 (r - z_ref) / g, z_ref = ground + z_st.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace

import numpy as np

from strider.control.capture import convex_hull
from strider.methods.slip.preview import FlightPhase, Preview, PreviewModel, StancePhase, end_state

T1, T2, THETA34, T5, T6 = range(5)
HEADING_ACCEL = slice(5, 9)
COP_UV = slice(9, 19)
FORCE = slice(19, 24)
SWING = slice(24, 26)
SIZE = 26

SNAP_DURATION = 0.01   # s: shorter phases drop out (slip-planning.md Sec. 4)
SIDES = ("left", "right")
STANCE_PHASES = (0, 1, 3, 4)          # phases 1, 2, 4, 5 (0-based)
KNOTS_OF_STANCE = ((0, 1), (1, 2), (2, 3), (3, 4))


def other(side: str) -> str:
    return "right" if side == "left" else "left"


def yaw_rotate(v: np.ndarray, yaw) -> np.ndarray:
    """Vectors (..., 2) or (..., 3) turned about z by ``yaw`` (broadcast against v[..., 0]); z is kept."""
    v = np.asarray(v, dtype=float)
    c, s = np.cos(yaw), np.sin(yaw)
    x = c * v[..., 0] - s * v[..., 1]
    y = s * v[..., 0] + c * v[..., 1]
    parts = [x, y] if v.shape[-1] == 2 else [x, y, np.broadcast_to(v[..., 2], x.shape)]
    return np.stack(parts, axis=-1)


@dataclass(frozen=True)
class ScheduleBounds:
    """Physical ranges of the normalized vector (slip-planning.md Sec. 4, Decision on bounds)."""

    double_support: float = 2.0     # s; long only when standing
    single_support: float = 1.0     # s
    theta34: float = 0.5            # s, either sign
    last_flight: float = 0.5        # s (T6)
    heading_accel: float = 15.0     # rad/s^2, either sign
    force: float = 3.0              # body weights (normalized vertical force)


DEFAULT_BOUNDS = ScheduleBounds()
DEFAULT_MODEL = PreviewModel()


@dataclass(frozen=True)
class SoleBox:
    """A foot's sole as a rectangle about its centre (foot frame, x forward) and where the ankle sits above it."""

    half_length: float
    half_width: float
    ankle: tuple[float, float, float]   # sole centre -> ankle, foot frame

    def corner_offsets(self) -> tuple[np.ndarray, np.ndarray]:
        """Each corner's offset from the centre along the sole and across it, in :meth:`corners` order."""
        L, W = self.half_length, self.half_width
        return np.array([-L, L, L, -L]), np.array([-W, -W, W, W])

    def corners(self, centre_xy: np.ndarray, yaw: np.ndarray) -> np.ndarray:
        """(..., 4, 2) counter-clockwise corners: back-right, front-right, front-left, back-left. ``u`` runs from
        the back to the front, ``v`` from the right edge to the left."""
        local = np.array([[-self.half_length, -self.half_width], [self.half_length, -self.half_width],
                          [self.half_length, self.half_width], [-self.half_length, self.half_width]])
        return np.asarray(centre_xy)[..., None, :] + yaw_rotate(local, np.asarray(yaw)[..., None])


@dataclass(frozen=True)
class BodyGeometry:
    """What the planner knows of the body, read once from the standing pose (Sec. 5.2, 5.3, 6)."""

    rest_leg: float                      # L_r, hip to ankle standing
    leg_min: float                       # L_min
    leg_max: float                       # L_max
    standing_com_height: float           # z_st, COM above the ground
    hips: dict[str, tuple[float, float, float]]   # COM -> hip, heading frame
    sole: SoleBox

    @property
    def swing_reach(self) -> float:
        """Half-side of the box that bounds the swing offset: the L1 ball ||c - y|| < L_r / 2 (Eq. 28)."""
        return self.rest_leg / (2 * math.sqrt(2))


@dataclass(frozen=True)
class FootOnGround:
    centre: tuple[float, float, float]   # sole centre, world
    yaw: float


@dataclass(frozen=True)
class PlanStart:
    """The reduced state s0 (Eqs. 1, 2, 16) with the memory the decisions add: which foot was planted last and
    when, and the COM then (for touchdown-to-touchdown step timing and length)."""

    com: tuple[float, float, float]
    com_velocity: tuple[float, float, float]
    heading: float
    heading_rate: float
    start_phase: int                      # 1 both feet down, 2 one, 3 none
    stance_side: str                      # foot A: planted last
    feet: dict[str, FootOnGround]
    time_since_touchdown: float = 0.0
    com_at_touchdown: tuple[float, float, float] | None = None
    double_support_quad: np.ndarray | None = field(default=None, repr=False)   # (4, 2), filled by ``with_quad``

    def with_quad(self, sole: SoleBox) -> PlanStart:
        corners = np.concatenate([sole.corners(np.asarray(f.centre[:2]), np.asarray(f.yaw))
                                  for f in self.feet.values()])
        return replace(self, double_support_quad=largest_quad(corners))


def largest_quad(points: np.ndarray) -> np.ndarray:
    """The counter-clockwise quadrilateral of largest area among the convex hull's vertices (the decision for the
    double-support quad the source fits to both soles)."""
    hull = convex_hull(points)
    if len(hull) <= 4:
        return np.concatenate([hull, np.repeat(hull[-1:], 4 - len(hull), axis=0)])
    best, best_area = None, -1.0
    for idx in itertools.combinations(range(len(hull)), 4):
        q = hull[list(idx)]
        area = 0.5 * abs(np.dot(q[:, 0], np.roll(q[:, 1], -1)) - np.dot(q[:, 1], np.roll(q[:, 0], -1)))
        if area > best_area:
            best, best_area = q, area
    return best


def bilinear(quad: np.ndarray, uv: np.ndarray) -> np.ndarray:
    """Points of quads (..., 4, 2) at bilinear coordinates uv (..., 2) in [0, 1]^2."""
    u, v = uv[..., 0:1], uv[..., 1:2]
    return ((1 - u) * (1 - v) * quad[..., 0, :] + u * (1 - v) * quad[..., 1, :] + u * v * quad[..., 2, :]
            + (1 - u) * v * quad[..., 3, :])


@dataclass
class Decoded:
    """The physical schedule of every plan (P rows)."""

    durations: np.ndarray       # (P, 6)
    heading_accel: np.ndarray   # (P, 4)
    cop_uv: np.ndarray          # (P, 5, 2)
    force: np.ndarray           # (P, 5)
    swing_offset: np.ndarray    # (P, 2), before the 45 deg rotation


def decode(x: np.ndarray, start: PlanStart, geometry: BodyGeometry,
           bounds: ScheduleBounds = DEFAULT_BOUNDS) -> Decoded:
    """Physical durations, accelerations, knots and swing offset from normalized vectors (P, 26)."""
    x = np.atleast_2d(np.asarray(x, dtype=float))
    theta = (2 * x[:, THETA34] - 1) * bounds.theta34
    durations = np.stack([x[:, T1] * bounds.double_support, x[:, T2] * bounds.single_support,
                          np.maximum(theta, 0.0), np.maximum(-theta, 0.0),
                          x[:, T5] * bounds.single_support, x[:, T6] * bounds.last_flight], axis=1)
    if start.start_phase >= 2:
        durations[:, 0] = 0.0
    if start.start_phase == 3:     # in the air: nothing to stand on before the new foot lands
        durations[:, 1] = 0.0
        durations[:, 3] = 0.0
    durations = np.where(durations < SNAP_DURATION, 0.0, durations)
    reach = geometry.swing_reach
    return Decoded(durations=durations, heading_accel=(2 * x[:, HEADING_ACCEL] - 1) * bounds.heading_accel,
                   cop_uv=x[:, COP_UV].reshape(-1, 5, 2), force=x[:, FORCE] * bounds.force,
                   swing_offset=(2 * x[:, SWING] - 1) * reach)


def encode(decoded: Decoded, geometry: BodyGeometry, bounds: ScheduleBounds = DEFAULT_BOUNDS) -> np.ndarray:
    """The normalized vectors of a decoded schedule: ``decode(encode(d))`` gives ``d`` back (durations that
    the start phase or snapping zeroed stay zero)."""
    d = decoded.durations
    theta = np.where(d[:, 2] > 0, d[:, 2], -d[:, 3])
    x = np.empty((d.shape[0], SIZE))
    x[:, T1] = d[:, 0] / bounds.double_support
    x[:, T2] = d[:, 1] / bounds.single_support
    x[:, THETA34] = (theta / bounds.theta34 + 1) / 2
    x[:, T5] = d[:, 4] / bounds.single_support
    x[:, T6] = d[:, 5] / bounds.last_flight
    x[:, HEADING_ACCEL] = (decoded.heading_accel / bounds.heading_accel + 1) / 2
    x[:, COP_UV] = decoded.cop_uv.reshape(-1, 10)
    x[:, FORCE] = decoded.force / bounds.force
    x[:, SWING] = (decoded.swing_offset / geometry.swing_reach + 1) / 2
    return x


def rotate45(v: np.ndarray) -> np.ndarray:
    """The swing offset's box turned into the L1 ball of Eq. 28."""
    return yaw_rotate(v, math.pi / 4)


class Terrain:
    """Ground height and signed distance to the edge of support, for many points at once (flat by default)."""

    def heights(self, xy: np.ndarray) -> np.ndarray:
        return np.zeros(np.shape(xy)[:-1])

    def sdf(self, xy: np.ndarray) -> np.ndarray:
        return np.full(np.shape(xy)[:-1], np.inf)


class CourseTerrain(Terrain):
    """A terrain course as the planner sees it: the same description that built the engine's geometry."""

    def __init__(self, course):
        self.course = course

    def heights(self, xy: np.ndarray) -> np.ndarray:
        return self.course.heights(xy)

    def sdf(self, xy: np.ndarray) -> np.ndarray:
        return self.course.sdfs(xy)


class ProfileTerrain(Terrain):
    """Ground whose height varies along x only: the scene's slope or steps (of a bump field, the level ground
    under the bumps, which the planner then does not see)."""

    def __init__(self, height_at_x):
        self.height_at_x = height_at_x

    def heights(self, xy: np.ndarray) -> np.ndarray:
        xy = np.asarray(xy, dtype=float)
        return np.vectorize(self.height_at_x, otypes=[float])(xy[..., 0])


def ground_slopes(sole: SoleBox, corner_heights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Slopes along and across a sole (m per m, forward and leftward) of the plane through the ground under its
    corners: heights (..., 4) in :meth:`SoleBox.corners` order. Level ground gives exactly zero."""
    h = corner_heights
    along = ((h[..., 1] + h[..., 2]) - (h[..., 0] + h[..., 3])) / (4.0 * sole.half_length)
    across = ((h[..., 2] + h[..., 3]) - (h[..., 0] + h[..., 1])) / (4.0 * sole.half_width)
    return along, across


def sole_normal(terrain: Terrain, sole: SoleBox, centre_xy, yaw: float) -> np.ndarray:
    """The upward unit normal (3,) of the ground under a sole centred at ``centre_xy`` and turned to ``yaw``:
    what a landing sole lies parallel to (slip-planning.md Sec. 4, E_swing: "sole parallel to the terrain").
    Level ground gives exactly (0, 0, 1)."""
    corners = sole.corners(np.asarray(centre_xy, dtype=float), np.asarray(yaw, dtype=float))
    along, across = (float(v) for v in ground_slopes(sole, terrain.heights(corners)))
    c, s = math.cos(yaw), math.sin(yaw)
    normal = np.array([-along * c + across * s, -along * s - across * c, 1.0])
    return normal / np.linalg.norm(normal)


def terrain_of(scene) -> Terrain:
    """What the planner should know of ``scene``'s ground: its course, else its terrain's profile, else flat."""
    if scene.course is not None:
        return CourseTerrain(scene.course)
    if scene.terrain.kind != "flat":
        return ProfileTerrain(scene.terrain.height)
    return Terrain()


@dataclass
class PlanRollout:
    """A decoded schedule with its preview and where its feet are (P rows)."""

    decoded: Decoded
    preview: Preview
    knots: np.ndarray              # (P, 5, 2) COP knots, world
    knot_ground: np.ndarray        # (P, 5)
    rests: np.ndarray              # (P, 5) rest lengths
    touchdown_time: np.ndarray     # (P,) when the new foot lands, from the plan's start
    swing_target: np.ndarray       # (P, 3) new foot's sole centre
    swing_yaw: np.ndarray          # (P,)
    stance_side: str               # foot A


def roll_out(x: np.ndarray, start: PlanStart, geometry: BodyGeometry, model: PreviewModel = DEFAULT_MODEL,
             terrain: Terrain | None = None, bounds: ScheduleBounds = DEFAULT_BOUNDS) -> PlanRollout:
    """Decode every candidate and preview it: phases 1-3, then the new foot from the COM at touchdown, then 4-6."""
    terrain = terrain or Terrain()
    if start.double_support_quad is None:
        start = start.with_quad(geometry.sole)
    d = decode(x, start, geometry, bounds)
    P = d.durations.shape[0]
    side_a = start.stance_side
    foot_a = start.feet[side_a]
    quad_a = geometry.sole.corners(np.asarray(foot_a.centre[:2]), np.asarray(foot_a.yaw))
    ds_ground = float(np.mean([f.centre[2] for f in start.feet.values()]))
    knots = np.empty((P, 5, 2))
    knots[:, 0] = bilinear(np.broadcast_to(start.double_support_quad, (P, 4, 2)), d.cop_uv[:, 0])
    knots[:, 1] = bilinear(np.broadcast_to(quad_a, (P, 4, 2)), d.cop_uv[:, 1])
    knots[:, 2] = bilinear(np.broadcast_to(quad_a, (P, 4, 2)), d.cop_uv[:, 2])
    ground = np.empty((P, 5))
    ground[:, 0] = ds_ground
    ground[:, 1:3] = foot_a.centre[2]

    g, w = model.gravity, model.spring_omega
    com = np.broadcast_to(np.asarray(start.com, dtype=float), (P, 3)).copy()
    vel = np.broadcast_to(np.asarray(start.com_velocity, dtype=float), (P, 3)).copy()
    heading = np.full(P, float(start.heading))
    rate = np.full(P, float(start.heading_rate))
    phases: list = []

    def rest_of(k: int) -> np.ndarray:
        return ground[:, k] + geometry.standing_com_height + g * d.force[:, k] / w**2

    def stance(j: int):
        nonlocal com, vel, heading, rate
        a, b = KNOTS_OF_STANCE[j]
        phase = StancePhase.start(model, com, vel, heading, rate, d.durations[:, STANCE_PHASES[j]], knots[:, a],
                                  knots[:, b], ground[:, a], rest_of(a), rest_of(b), d.heading_accel[:, j])
        phases.append(phase)
        com, vel, heading, rate = end_state(model, phase)

    def flight(i: int):
        nonlocal com, vel, heading, rate
        phase = FlightPhase(d.durations[:, i], com, vel, heading, rate)
        phases.append(phase)
        if i < 5:    # the last phase's end starts nothing
            com, vel, heading, rate = end_state(model, phase)

    stance(0)
    stance(1)
    flight(2)
    touchdown = d.durations[:, :3].sum(axis=1)
    swing_xy = com[:, :2] + rotate45(d.swing_offset)
    swing_z = terrain.heights(swing_xy)
    swing_yaw = heading.copy()
    quad_new = geometry.sole.corners(swing_xy, swing_yaw)
    knots[:, 3] = bilinear(quad_new, d.cop_uv[:, 3])
    knots[:, 4] = bilinear(quad_new, d.cop_uv[:, 4])
    ground[:, 3:5] = swing_z[:, None]
    stance(2)
    stance(3)
    flight(5)
    rests = np.stack([rest_of(k) for k in range(5)], axis=1)
    return PlanRollout(decoded=d, preview=Preview(model, phases), knots=knots, knot_ground=ground, rests=rests,
                       touchdown_time=touchdown, swing_target=np.concatenate([swing_xy, swing_z[:, None]], axis=1),
                       swing_yaw=swing_yaw, stance_side=side_a)
