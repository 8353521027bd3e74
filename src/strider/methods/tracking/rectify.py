"""C2: rectification, the smallest change to a motion that makes its ground forces valid (Abe 2012, Sec. 4.1;
phase-tracking.md Sec. 3, "Rectification", and Sec. 4's decisions).

Direct transcription over one window of the clip at a fixed step: states x_i = (q_i, qd_i) are the unknowns,
linked by q_{i+1} = q_i + dt qd_i (4.2a). The external force and moment on the body come from finite
differences of its momentum (no torques are unknowns). In contact, the force stays in the friction cone, pushes
at least ``min_normal_share`` of body weight, and its centre of pressure lies within the feet in contact (4.4); in
flight it is zero (4.3). Feet in contact stay on their contact points (4.1a); the phase variable only increases
(4.1b). The window is a step whose end is the start mirrored (symmetric, 4.6), a stride whose end is its start
moved forward (cyclic), or a two-footed jump from landing to landing, its legs together, also cyclic (Sec.
3.4.3). Each contact point's place on the ground is an unknown too, pulled toward where the
source put it, so the step length can change as much as the physics asks. The ground is level or, for the slope
edit (Sec. 4.2.2), the plane z = tan(slope) x, with the cone about its normal.

A point-footed walker (planar5) lands one foot as the other leaves: its strike is a plastic impact, the velocities
on either side differing by an impulse through the landing point, in place of that interval's force rows.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import casadi
import numpy as np

from strider.errors import UsageError
from strider.methods.tracking.mocap_import import FLAT, FREE, HEEL, SIDES, TOE, PlanarClip, constant_runs, legs_together
from strider.methods.tracking.planar_model import PlanarModel, Trig
from strider.methods.tracking.rates import DEFAULT_RATE, POINT_FOOT_RATE
from strider.optimize.nlp import IpoptOptions, NlpProblem, NlpResult, solve
from strider.sim import Scene, Terrain

CASADI_TRIG = Trig(casadi.sin, casadi.cos, casadi.atan2)
WINDOWS = ("step", "stride", "jump")


@dataclass(frozen=True)
class RectifyWeights:
    """Weights of the motion metric (4.5); the source gives ranges (phase-tracking.md Sec. 3, "Metric weights")."""

    angle: float = 1.0          # joint angle (0.1-1.0)
    velocity: float = 0.1       # joint velocity (0.1-1.0)
    acceleration: float = 1e-4  # joint acceleration: the source's 0.1 is for its own units; squared accelerations
                                # of a walk at 60 Hz are ~1e3 rad^2/s^4, so this keeps the term beside the others
    torso: float = 10.0         # torso world pitch (0-100)
    swing_height: float = 10.0  # height of the feet while up (0-100)
    contact_place: float = 10.0  # a decision: where each contact point lands, against the source's place
    # strider's, not the source's, both off for a walk (JUMP_WEIGHTS has a jump's):
    force_change: float = 0.0    # the ground force's change from frame to frame in contact, and to none at a
                                 # take-off, (body weights)^2
    takeoff_moment: float = 0.0  # the ground force's moment about the centre of mass in the last intervals before
                                 # a take-off, (body weight x m)^2


# A jump's metric. Left to the source's terms, the rectified push-off keeps pushing hard to its last frame and
# puts half the flight's spin into that last 17 ms interval; on MuJoCo's soft contacts the toes leave before it,
# and the jumper lands pitched forward. Ramping the force down and keeping the spin out of the last intervals
# makes a take-off the simulator reproduces (docs/tracking.md, jumps).
JUMP_WEIGHTS = RectifyWeights(force_change=1.0, takeoff_moment=10.0)

# A point-footed walk's metric (planar5's; a decision, the source gives none). Left free, the rectified stance leg
# pushes up with eight body weights in the last interval before the strike, which slows the fall into the impact at
# no cost in the metric; the simulated walker cannot follow a push that short and loses a third of its speed at
# every strike. Penalizing the force's change spreads the push out (docs/tracking.md, the 5-link walker).
POINT_FOOT_WEIGHTS = RectifyWeights(force_change=10.0)

# A walk rectified for a slope (Sec. 4.2.2's edit), strider's, not the source's: the ground force's change penalized
# as for the 5-link walker, and downhill the centre of pressure kept SLOPE_COP_MARGIN inside the feet. Left to the
# source's metric, the ramp gaits ride the NLP's bounds (uphill, the whole force on the trailing toe through the double
# support; downhill, the stance toe at the least normal force allowed, the centre of pressure at the toe, where the
# tracker has no harder braking left), and the tracker fell in their second step either way; with these, +20 and
# -20 deg walked 30 s. Uphill the margin only took push-off away: the second clip then fell on +15 and +20 deg
# (docs/tracking.md, P6)
SLOPE_WEIGHTS = RectifyWeights(force_change=3.0)
SLOPE_COP_MARGIN = 0.02   # m, downhill
# RectifyParams fields that rectify as the source does: its own metric (none of strider's force terms) and no margin
SOURCE_RECTIFIER = {"weights": RectifyWeights(), "cop_margin": 0.0}


@dataclass(frozen=True)
class RectifyParams:
    rate: float | None = None       # Hz; None: DEFAULT_RATE, or POINT_FOOT_RATE for a point-footed walker
    window: str = "step"            # "step": symmetric (4.6); "stride": cyclic, no mirroring; "jump": landing to
                                    # landing of a two-footed jump, the legs together, cyclic (Sec. 3.4.3)
    friction: float = 0.8           # mu in the rectifier (phase-tracking.md Sec. 4)
    gravity: float = Scene.gravity  # m/s^2, the simulator's
    min_normal_share: float = 0.05  # k = 0.05 m g (same)
    phase_rate_share: float = 0.2   # k_theta = 0.2 x the input's mean phase rate (same)
    min_step_travel: float = 0.2    # m: a step of the clip counts as walking when the body moves this far (a
                                    # decision, so a clip that starts standing or shuffling is skipped)
    max_step_time: float = 1.5      # s: and takes no longer (the source's clips: 0.67-1.5 s)
    start: float = 0.0              # s: look for the window from here on
    length: float = 1.0             # the edit of Sec. 4.2.2: the step (or stride) length, x the capture's; the
                                    # contact places the metric pulls toward are stretched alike
    slope: float = 0.0              # deg, the other edit of Sec. 4.2.2: the ground is the plane z = tan(slope) x
                                    # (the simulator's sloped terrain); the cone and the centre of pressure follow it
    weights: RectifyWeights | None = None   # None: the window's (JUMP_WEIGHTS for a jump, POINT_FOOT_WEIGHTS for a
                                            # point-footed walker, SLOPE_WEIGHTS for a walk on a slope, the defaults
                                            # otherwise)
    # strider's, not the source's: m the centre of pressure stays inside the hindmost and foremost points in contact,
    # wherever the capture has them more than twice that apart (a lone point, or a point foot, keeps its own);
    # None: SLOPE_COP_MARGIN for a walk down a slope, else 0 (the source's)
    cop_margin: float | None = None
    solver: IpoptOptions = field(default_factory=IpoptOptions)

    @property
    def metric(self) -> RectifyWeights:
        if self.weights is not None:
            return self.weights
        if self.window == "jump":
            return JUMP_WEIGHTS
        return SLOPE_WEIGHTS if self.slope else RectifyWeights()

    @property
    def margin(self) -> float:
        """m: the centre of pressure's margin inside the feet (``cop_margin`` settled)."""
        if self.cop_margin is not None:
            return self.cop_margin
        return SLOPE_COP_MARGIN if self.slope < 0 and self.window != "jump" else 0.0

    def for_model(self, model: PlanarModel) -> RectifyParams:
        """These parameters with the defaults left open (None) settled for ``model``'s feet."""
        point = model.point_feet and self.window != "jump"
        rate = self.rate if self.rate is not None else POINT_FOOT_RATE if point else DEFAULT_RATE
        weights = self.weights if self.weights is not None or not point else POINT_FOOT_WEIGHTS
        return replace(self, rate=rate, weights=weights)


@dataclass(frozen=True)
class Rectified:
    """A rectified window: a physically valid cyclic motion of the planar character."""

    name: str
    coords: tuple[str, ...]
    dt: float
    q: np.ndarray                    # (N, n); one Euler step past the last frame is the next window's first
    qd: np.ndarray                   # (N, n)
    modes: dict[str, np.ndarray]     # side -> (N,) FREE/HEEL/TOE/FLAT
    stance: np.ndarray               # (N,) the stance leg of each frame ("left"/"right"): the one that landed last
    window: str
    shift: float                     # m the next window starts ahead of this one (step or stride length)
    source_q: np.ndarray             # (N, n) the input the rectifier started from
    solution: NlpResult
    ground_slope: float = 0.0        # deg: the plane z = tan(ground_slope) x the motion walks on

    @property
    def period(self) -> float:
        return len(self.q) * self.dt

    @property
    def speed(self) -> float:
        return self.shift / self.period


@dataclass(frozen=True)
class _Window:
    q: np.ndarray
    qd: np.ndarray
    modes: dict[str, np.ndarray]
    stance: np.ndarray


def heel_strikes(modes: np.ndarray) -> np.ndarray:
    """Frames where the heel (or the whole foot) comes down after the foot was up; for a foot that never has its
    heel down (a point foot, which lands on its one point), where it lands."""
    heel = np.isin(modes, (HEEL, FLAT))
    down = heel if heel.any() else modes != FREE
    return np.flatnonzero(down[1:] & (modes[:-1] == FREE)) + 1


def select_window(clip: PlanarClip, params: RectifyParams) -> _Window:
    """The first window of the clip the parameters ask for, resampled at ``params.rate``."""
    if params.window not in WINDOWS:
        raise UsageError(f"window must be one of {', '.join(WINDOWS)}, not {params.window!r}")
    if params.window == "jump":
        return _jump_window(clip, params)
    strikes = {side: heel_strikes(clip.modes[side]) for side in SIDES}
    events = sorted((f, side) for side in SIDES for f in strikes[side] if f >= params.start * clip.fps)
    steps = [(f0, f1, side0) for (f0, side0), (f1, side1) in itertools.pairwise(events)
             if side1 != side0 and clip.q[f1, 0] - clip.q[f0, 0] >= params.min_step_travel
             and (f1 - f0) / clip.fps <= params.max_step_time]
    for k, (f0, f1, side0) in enumerate(steps):
        if params.window == "step":
            return _resample(clip, f0, f1, {side0: f0}, params.rate)
        if k + 1 < len(steps) and steps[k + 1][0] == f1:
            return _resample(clip, f0, steps[k + 1][1], {side0: f0, steps[k + 1][2]: f1}, params.rate)
    raise UsageError(f"{clip.name}: no walking {params.window} (heel strikes of alternating feet, each step moving "
                     f">= {params.min_step_travel} m in <= {params.max_step_time} s) after {params.start} s of "
                     f"{clip.n_frames / clip.fps:.2f} s of motion; a clip for phase tracking needs at least "
                     f"{'two walking steps' if params.window == 'stride' else 'one walking step'}")


def landings(modes: np.ndarray) -> np.ndarray:
    """Frames where a foot comes down after a flight."""
    return np.flatnonzero((modes[1:] != FREE) & (modes[:-1] == FREE)) + 1


def _jump_window(clip: PlanarClip, params: RectifyParams) -> _Window:
    """From one landing to the next, or, for a capture of a single jump that ends as it began (a looping clip),
    from its landing round to the same landing a jump later."""
    modes = clip.modes["left"]
    found = [f for f in landings(modes) if f >= params.start * clip.fps]
    if len(found) >= 2:
        q = clip.q[found[0]:found[1] + 1]
        modes_of = {side: m[found[0]:found[1] + 1] for side, m in clip.modes.items()}
    else:
        loop_error = float(np.max(np.abs(clip.q[-1, 2:] - clip.q[0, 2:])))
        if not found or modes[0] == FREE or modes[-1] == FREE or loop_error > LOOP_TOLERANCE:
            raise UsageError(f"{clip.name}: a jump for phase tracking needs two landings, or one landing in a clip "
                             f"that ends in the pose it starts in (feet down, joints within {LOOP_TOLERANCE} rad); "
                             f"found {len(found)} landing(s), and the ends differ by {loop_error:.2f} rad")
        # a looping clip's last frame leads into its first (DeepMimic's "wrap" gives it no duration of its own)
        landing, end = found[0], clip.n_frames - 1
        q = np.concatenate([clip.q[landing:end], clip.q[:landing + 1]])
        q[end - landing:, 0] += clip.q[end, 0] - clip.q[0, 0]
        modes_of = {side: np.concatenate([m[landing:end], m[:landing + 1]]) for side, m in clip.modes.items()}
    # the closing landing frame only ends the window: a resampled frame rounding onto it is still in the air
    modes_of = {side: np.append(m[:-1], m[-2]) for side, m in modes_of.items()}
    if not np.isin(modes_of["left"], (TOE, FLAT)).any():
        raise UsageError(f"{clip.name}: the jump's toes never touch the ground, and its phase is measured from them")
    return _resample(PlanarClip(clip.name, clip.fps, q, modes_of, clip.speed), 0, len(q) - 1, {"left": 0},
                     params.rate)


def _resample(clip: PlanarClip, start: int, end: int, landings: dict[str, int], rate: float) -> _Window:
    duration = (end - start) / clip.fps
    n = max(4, round(duration * rate))
    frames = start + np.arange(n) * (end - start) / n
    src = np.arange(clip.n_frames)
    q = np.stack([np.interp(frames, src, clip.q[:, j]) for j in range(clip.q.shape[1])], axis=1)
    qd_src = clip.velocities()
    qd = np.stack([np.interp(frames, src, qd_src[:, j]) for j in range(clip.q.shape[1])], axis=1)
    nearest = np.clip(np.round(frames).astype(int), 0, clip.n_frames - 1)
    modes = {side: clip.modes[side][nearest] for side in SIDES}
    stance = np.array([max((s for s in landings if landings[s] <= f), key=landings.get) for f in nearest])
    return _Window(q, qd, modes, stance)


def active(mode: int, point: str) -> bool:
    return mode == FLAT or mode == (HEEL if point == "heel" else TOE)


TAKEOFF_INTERVALS = 3   # the intervals before a take-off that RectifyWeights.takeoff_moment covers (50 ms)
LOOP_TOLERANCE = 0.5    # rad: a clip whose last pose is its first within this loops (the jump window); the
                        # rectifier closes such a gap (DeepMimic's jump ends with its knees 0.3 rad more bent)
LENGTH_EDIT = (0.3, 2.0)    # the length edits strider accepts, x the capture's (the source shows 0.5 and 1.5)
SLOPE_EDIT = (-30.0, 30.0)  # deg: the slope edits strider accepts (the source shows -20 and +20, Fig. 4-1)
MAX_COP_MARGIN = 0.05       # m: RectifyParams.cop_margin, under a quarter of a foot


def ramp(slope_deg: float) -> Terrain:
    """The simulator's ground for a motion rectified on ``slope_deg``: the plane z = tan(slope) x, or level."""
    return Terrain("slope", slope_deg) if slope_deg else Terrain()


def check_edits(length: float, slope: float, flags: tuple[str, ...] = ("the length edit", "the slope edit",
                                                                       "the centre of pressure's margin"),
                cop_margin: float | None = None) -> None:
    """A clear error for an edit outside what the rectifier accepts; ``flags`` name them as the caller knows them."""
    if not LENGTH_EDIT[0] <= length <= LENGTH_EDIT[1]:
        raise UsageError(f"{flags[0]} must be between {LENGTH_EDIT[0]:g} and {LENGTH_EDIT[1]:g} x the capture's "
                         f"step, got {length:g}")
    if not SLOPE_EDIT[0] <= slope <= SLOPE_EDIT[1]:
        raise UsageError(f"{flags[1]} must be between {SLOPE_EDIT[0]:g} and {SLOPE_EDIT[1]:g} degrees, got {slope:g}")
    if cop_margin is not None and not 0.0 <= cop_margin <= MAX_COP_MARGIN:
        raise UsageError(f"{flags[2]} must be between 0 and {MAX_COP_MARGIN:g} m (inside the feet), got {cop_margin:g}")


def check_window(model: PlanarModel, window: str) -> None:
    """A clear error for a window the character cannot be rectified in: a point-footed walker's import makes every
    double support instantaneous, so it has no two-footed landing to jump from."""
    if model.point_feet and window == "jump":
        raise UsageError("a point-footed walker such as planar5 walks on one foot at a time and cannot land a "
                         "two-footed jump: rectify its walks (window step)")


def rectify(model: PlanarModel, clip: PlanarClip, params: RectifyParams = RectifyParams()) -> Rectified:
    params = params.for_model(model)
    check_window(model, params.window)
    check_edits(params.length, params.slope, cop_margin=params.cop_margin)
    if params.window == "jump":
        if not np.any((clip.modes["left"] == FREE) & (clip.modes["right"] == FREE)):
            raise UsageError(f"{clip.name}: no frame has both feet off the ground, so there is no jump to rectify "
                             "(a walk takes --window step or stride)")
        clip = legs_together(clip, model)
    window = _stretched(select_window(clip, params), params.length)
    problem, unpack = _build(model, window, params)
    result = solve(problem, params.solver)
    q, qd, shift = unpack(result.x)
    return Rectified(clip.name, model.coords, 1.0 / params.rate, q, qd, window.modes, window.stance, params.window,
                     shift, window.q, result, params.slope)


def _build(model: PlanarModel, w: _Window, params: RectifyParams):
    n, N = model.n, len(w.q)
    dt = 1.0 / params.rate
    mass = model.mass
    trig = CASADI_TRIG
    Q = casadi.SX.sym("q", N, n)
    V = casadi.SX.sym("qd", N, n)
    shift = casadi.SX.sym("shift")
    symmetric = params.window == "step"
    # the ground z = rise x; its normal (-sin, cos) and tangent (cos, sin) carry the cone
    angle = np.radians(params.slope)
    rise, sin_a, cos_a = float(np.tan(angle)), float(np.sin(angle)), float(np.cos(angle))

    def mirror_index(c: int) -> int:
        point = model.contacts[c]
        if not symmetric:
            return c
        other = "right" if point.side == "left" else "left"
        return model.contact(other, point.name)

    # contact runs: per point, maximal runs of frames in contact, each with an unknown ground place
    activity = np.array([[active(w.modes[c.side][i], c.name) for c in model.contacts] for i in range(N)])
    run_of = -np.ones((N, len(model.contacts)), dtype=int)
    runs: list[tuple[int, int, int]] = []     # (contact, first, end exclusive)
    for c in range(len(model.contacts)):
        for first, end in constant_runs(activity[:, c]):
            if activity[first, c]:
                run_of[first:end, c] = len(runs)
                runs.append((c, first, end))
    places = casadi.SX.sym("place", len(runs))
    toe = model.contact("left", "toe")
    # a point foot's heel is its toe, which carries its rows
    twin = [model.point_feet and point.name == "heel" for point in model.contacts]

    rows: list = []
    lower: list[float] = []
    upper: list[float] = []
    names: list[str] = []

    def add(expr, lo: float, hi: float, name: str) -> None:
        rows.append(expr)
        lower.append(lo)
        upper.append(hi)
        names.append(name)

    q_rows = [[Q[i, j] for j in range(n)] for i in range(N)]
    v_rows = [[V[i, j] for j in range(n)] for i in range(N)]
    q_next_wrap = model.mirrored(q_rows[0], shift) if symmetric else _shifted(q_rows[0], shift)
    q_next_wrap[1] = q_next_wrap[1] + rise * shift     # the next window starts as far up the slope as it is ahead
    kinematics = _trace_frame(model, trig)
    frames = [_FrameKinematics(kinematics(Q[i, :].T, V[i, :].T)) for i in range(N)]
    momenta = [f.momentum for f in frames]
    coms = [f.com for f in frames]
    points = [f.points for f in frames]

    # (4.2a) Euler steps, the last one onto the next window's start
    for i in range(N):
        nxt = q_rows[i + 1] if i + 1 < N else q_next_wrap
        for j in range(n):
            add(nxt[j] - q_rows[i][j] - dt * v_rows[i][j], 0.0, 0.0, f"euler {model.coords[j]} frame {i}")

    # (4.1a) contact points on their places; points up stay above the ground
    for i in range(N):
        for c, point in enumerate(model.contacts):
            if twin[c]:
                continue
            x, z = points[i][c]
            label = f"{point.side} {point.name} frame {i}"
            if activity[i, c]:
                add(x - places[run_of[i, c]], 0.0, 0.0, f"contact x {label}")
                add(z - rise * x, 0.0, 0.0, f"contact z {label}")
            else:
                add(z - rise * x, 0.0, np.inf, f"clearance {label}")

    # the wrap: a point down at the end and, mirrored, at the start is the same place
    for c in range(len(model.contacts)):
        if activity[N - 1, c] and activity[0, mirror_index(c)]:
            add(places[run_of[N - 1, c]] - places[run_of[0, mirror_index(c)]] - shift, 0.0, 0.0,
                f"wrap place {model.contacts[c].side} {model.contacts[c].name}")

    # (4.1b) the phase only moves forward
    if params.window == "jump":
        # measured from where the toe is down in this jump (its first run of contact)
        first_toe = int(np.flatnonzero(activity[:, toe])[0])
        anchor = places[run_of[first_toe, toe]]
        theta = [frames[i].jump_phase - anchor for i in range(N)]
        source_anchor = model.point(list(w.q[first_toe]), toe)[0]
        theta_source = np.array([model.jump_phase(list(row), source_anchor) for row in w.q])
        came_down = landings(w.modes["left"])
        same = [i for i in range(N - 1) if i + 1 not in came_down]
    else:
        theta = [frames[i].stance_angle[w.stance[i]] for i in range(N)]
        theta_source = np.array([model.stance_angle(list(row), side) for row, side in zip(w.q, w.stance)])
        same = [i for i in range(N - 1) if w.stance[i] == w.stance[i + 1]]
    rate = np.mean([(theta_source[i + 1] - theta_source[i]) / dt for i in same])
    k_theta = params.phase_rate_share * max(float(rate), 0.0)
    for i in same:
        add((theta[i + 1] - theta[i]) / dt, k_theta, np.inf, f"phase rate frame {i}")

    torso_source = np.array([model.poses(list(row))[model.torso_link][2] for row in w.q])
    source_points = [[model.point(list(row), c) for c in range(len(model.contacts))] for row in w.q]
    source_places = [float(np.mean([source_points[i][c][0] for i in range(first, end)])) for c, first, end in runs]
    source_shift = _source_shift(w)

    # a point foot's landing (phase-tracking.md Sec. 4, "5-link model": instantaneous double support) is a plastic
    # impact: the velocities before and after differ by an impulse through the landing point alone, inside the
    # friction cone, so the motion loses what the simulator's impact will take from it, no less
    impulses: list = []
    impact_intervals: set[int] = set()
    if model.point_feet:
        impact = _impact_residual(model, trig)
        for i in range(N):
            after = activity[i + 1] if i + 1 < N else activity[0, [mirror_index(c) for c in range(len(model.contacts))]]
            landed = [c for c in range(len(model.contacts)) if after[c] and not activity[i, c]]
            if not landed:
                continue
            if len(landed) != 1:
                raise UsageError(f"two point feet land at once in frame {i + 1} of the window; a point-footed walk "
                                 "lands one foot at a time")
            c = landed[0]
            impact_intervals.add(i)
            impulse = casadi.SX.sym(f"impulse{i}", 2)
            impulses.append(impulse)
            q_after = casadi.vertcat(*(q_rows[i + 1] if i + 1 < N else q_next_wrap))
            v_after = (V[i + 1, :].T if i + 1 < N
                       else casadi.vertcat(*model.mirrored(v_rows[0])) if symmetric else V[0, :].T)
            residual = impact(q_after, V[i, :].T, v_after, impulse, c)
            for j in range(n):
                add(residual[j], 0.0, 0.0, f"impact {model.coords[j]} interval {i}")
            normal, along = cos_a * impulse[1] - sin_a * impulse[0], cos_a * impulse[0] + sin_a * impulse[1]
            add(normal, 0.0, np.inf, f"impact normal interval {i}")
            add(params.friction * normal - along, 0.0, np.inf, f"impact friction forward interval {i}")
            add(params.friction * normal + along, 0.0, np.inf, f"impact friction backward interval {i}")

    # (4.3)/(4.4) forces from momentum
    min_normal = params.min_normal_share * mass * params.gravity
    margin = params.margin
    ground_forces: list = []        # (fx, fz) per interval: from the momentum in contact, zero in flight
    moments: list = []              # and the moment about the centre of mass
    for i in range(N):
        # the next window's start has the first frame's momentum: mirroring swaps two identical legs in one plane
        p0, p1 = momenta[i], (momenta[i + 1] if i + 1 < N else momenta[0])
        fx = (p1[0] - p0[0]) / dt
        fz = (p1[1] - p0[1]) / dt + mass * params.gravity
        tau = (p1[2] - p0[2]) / dt
        here = [c for c in range(len(model.contacts)) if activity[i, c]]
        ground_forces.append((fx, fz) if here else (0.0, 0.0))
        moments.append(tau)
        # the places down at the interval's end: the next frame's, or the next window's first (moved by shift)
        if i + 1 < N:
            ahead = [(run_of[i + 1, c], 0, 0.0) for c in range(len(model.contacts)) if activity[i + 1, c]]
        else:
            ahead = [(run_of[0, mirror_index(c)], shift, source_shift) for c in range(len(model.contacts))
                     if activity[0, mirror_index(c)]]
        if i in impact_intervals:    # the impact's rows above take this interval
            continue
        support = [places[run_of[i, c]] for c in here] + [places[r] + moved for r, moved, _ in ahead]
        label = f"interval {i}"
        if not support:
            add(fx, 0.0, 0.0, f"flight force x {label}")
            add(fz, 0.0, 0.0, f"flight force z {label}")
            add(tau, 0.0, 0.0, f"flight moment {label}")
            continue
        normal, along = cos_a * fz - sin_a * fx, cos_a * fx + sin_a * fz
        add(normal, min_normal, np.inf, f"normal force {label}")
        add(params.friction * normal - along, 0.0, np.inf, f"friction forward {label}")
        add(params.friction * normal + along, 0.0, np.inf, f"friction backward {label}")
        cx, cz = coms[i]
        # the moment about the origin of F acting at the ground point (p, rise p) is p (fz - rise fx)
        moment = cx * fz - cz * fx - tau
        lever = fz - rise * fx
        # the centre of pressure lies between the hindmost and foremost points in contact; which points those
        # are is read from the source, whose feet the rectifier does not reorder
        guesses = [source_places[run_of[i, c]] for c in here] + [source_places[r] + moved for r, _, moved in ahead]
        hind = support[int(np.argmin(guesses))]
        fore = support[int(np.argmax(guesses))]
        if margin and max(guesses) - min(guesses) > 2.0 * margin:
            hind, fore = hind + margin, fore - margin
        add(moment - hind * lever, 0.0, np.inf, f"centre of pressure behind the feet {label}")
        add(fore * lever - moment, 0.0, np.inf, f"centre of pressure ahead of the feet {label}")

    # (4.5) the metric
    wts = params.metric
    target_q, target_v = w.q, w.qd
    objective = 0
    for i in range(N):
        for j in range(2, n):
            objective += wts.angle * (Q[i, j] - target_q[i, j]) ** 2 + wts.velocity * (V[i, j] - target_v[i, j]) ** 2
        objective += wts.torso * (frames[i].torso_pitch - torso_source[i]) ** 2
        for c in range(len(model.contacts)):
            if not activity[i, c] and not twin[c]:
                height = points[i][c][1] - rise * points[i][c][0]     # above the ground beneath it
                objective += wts.swing_height * (height - max(source_points[i][c][1], 0.0)) ** 2
        # smoothness within the window, skipped across impacts (a contact beginning)
        if i + 1 < N and not any(activity[i + 1] & ~activity[i]):
            for j in range(2, n):
                objective += wts.acceleration * ((v_rows[i + 1][j] - v_rows[i][j]) / dt) ** 2
    for r, place in enumerate(source_places):
        objective += wts.contact_place * (places[r] - place) ** 2
    if wts.takeoff_moment:
        # the moment about the centre of mass in the last intervals before a take-off, in body weight x metres
        for i in range(N):
            if activity[i].any() and not activity[(i + 1) % N].any():
                for k in range(max(i - TAKEOFF_INTERVALS + 1, 0), i + 1):
                    objective += wts.takeoff_moment * (moments[k] / (mass * params.gravity)) ** 2
    if wts.force_change:
        # the ground force's change between intervals in contact, and to none at a take-off, in body weights per
        # frame; skipped at impacts, where it jumps
        weight = mass * params.gravity
        for i in range(N - 1):
            a, b = ground_forces[i], ground_forces[i + 1]
            if not any(activity[i + 1] & ~activity[i]):
                objective += wts.force_change * ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) / weight ** 2

    x = casadi.vertcat(casadi.reshape(Q, -1, 1), casadi.reshape(V, -1, 1), places, *impulses, shift)
    # the first guess: the capture carried up (or down) the slope beneath it
    guess_q, guess_qd = w.q.copy(), w.qd.copy()
    guess_q[:, 1] += rise * guess_q[:, 0]
    guess_qd[:, 1] += rise * guess_qd[:, 0]
    x0 = np.concatenate([guess_q.ravel(order="F"), guess_qd.ravel(order="F"), source_places,
                         np.zeros(2 * len(impulses)), [source_shift]])
    lbx = np.full(x0.shape, -np.inf)
    ubx = np.full(x0.shape, np.inf)
    if params.length != 1.0:    # an edited length is the edit's, not the metric's to trade against the angles
        lbx[-1] = ubx[-1] = source_shift
    problem = NlpProblem(x, objective, casadi.vertcat(*rows), np.array(lower), np.array(upper), x0, lbx, ubx, names)

    def unpack(sol: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
        q = sol[:N * n].reshape((N, n), order="F")
        qd = sol[N * n:2 * N * n].reshape((N, n), order="F")
        return q, qd, float(sol[-1])

    return problem, unpack


class _FrameKinematics:
    """One frame's kinematics as expressions of its coordinates, from :func:`_trace_frame`'s function: the torso's
    pitch, the momentum (px, pz, L), the centre of mass, each contact point, each leg's stance angle, and the
    jump phase measured from x = 0."""

    def __init__(self, outputs: tuple):
        torso, momentum, com, points, stance, jump = (_scalars(o) for o in outputs)
        self.torso_pitch = torso[0]
        self.momentum = tuple(momentum)
        self.com = tuple(com)
        self.points = [tuple(points[k:k + 2]) for k in range(0, len(points), 2)]
        self.stance_angle = dict(zip(SIDES, stance))
        self.jump_phase = jump[0]


def _scalars(column: casadi.SX) -> list:
    return [column[k] for k in range(column.shape[0])]


def _trace_frame(model: PlanarModel, trig) -> casadi.Function:
    """The model's formulas for one frame traced once, on symbols, into a function of (q, qd) that each frame
    calls: every frame gets the same expressions, for one trace instead of one per frame."""
    q = casadi.SX.sym("q", model.n)
    qd = casadi.SX.sym("qd", model.n)
    qs, vs = [q[j] for j in range(model.n)], [qd[j] for j in range(model.n)]
    poses = model.poses(qs, trig)
    points = [x for c in range(len(model.contacts)) for x in model.point(qs, c, trig, poses)]
    outputs = ([poses[model.torso_link][2]], model.momentum(qs, vs, trig, poses), model.com(qs, trig, poses), points,
               [model.stance_angle(qs, side, trig, poses) for side in SIDES], [model.jump_phase(qs, 0.0, trig, poses)])
    return casadi.Function("frame", [q, qd], [casadi.vertcat(*column) for column in outputs])


def _impact_residual(model: PlanarModel, trig) -> Callable:
    """``f(q, v_before, v_after, impulse, contact)``: M(q) (v_after - v_before) - J_contact(q)' impulse, zero when
    the velocity changes by an impulse (x, z) through that contact point alone; M is the Hessian of the kinetic
    energy in the velocities."""
    q = casadi.SX.sym("q", model.n)
    v = casadi.SX.sym("v", model.n)
    qs, vs = [q[j] for j in range(model.n)], [v[j] for j in range(model.n)]
    poses = model.poses(qs, trig)
    mass = casadi.Function("mass", [q], [casadi.hessian(model.kinetic_energy(qs, vs, trig, poses), v)[0]])
    jacobians = [casadi.Function(f"contact{c}", [q], [casadi.jacobian(casadi.vertcat(*model.point(qs, c, trig, poses)),
                                                                      q)])
                 for c in range(len(model.contacts))]

    def residual(q_after, v_before, v_after, impulse, contact: int):
        return mass(q_after) @ (v_after - v_before) - jacobians[contact](q_after).T @ impulse

    return residual


def _stretched(w: _Window, length: float) -> _Window:
    """The window with its travel scaled by ``length`` about its first frame: the root's x and x-velocity, so the
    contact places, the shift and the first guess all follow; the joint angles are the capture's."""
    if length == 1.0:
        return w
    q, qd = w.q.copy(), w.qd.copy()
    q[:, 0] = q[0, 0] + length * (q[:, 0] - q[0, 0])
    qd[:, 0] *= length
    return _Window(q, qd, w.modes, w.stance)


def _shifted(q: list, shift) -> list:
    return [q[0] + shift, *q[1:]]


def _source_shift(w: _Window) -> float:
    """How far the source moved over the window: its root travel extrapolated by one frame."""
    travel = w.q[-1, 0] - w.q[0, 0]
    return float(travel * len(w.q) / max(len(w.q) - 1, 1))

