"""C4: the motion constraints of a rectified step, y = q_a - c_w(theta) (Abe 2012, Sec. 3.2; phase-tracking.md
Sec. 3 "Impact consistency and fitting" and Sec. 4's decisions).

A step is cut into stages where the feet's contact modes change (heel strike, foot flat, heel off). In each stage
every actuated joint is a cubic clamped B-spline of the phase theta normalized to [0, 1] over the stage, with
``control_points`` control points, fitted by least squares to the rectified frames with a small penalty on the
second derivative (3.10, squared norms). The stages join continuously (C0). Where a stage begins by losing a
contact (the heel rises) nothing jolts the body, so the joints' rates in theta also agree (C1). Where it begins
by making one (the toe comes down, the next heel strikes), the rates after the impact are those the impact leaves
(3.9): q'_after * (dtheta/dq L q'_before) = L q'_before with L = I - M^-1 J^T (J M^-1 J^T)^+ J over the contacts
after it. That constraint is bilinear; it is solved by fixing its scalar factor, refitting, and repeating.

A step's end is its start mirrored (the rectifier's symmetric window), so the last stage ends on the first's
start with left and right exchanged; a jump's end is its start moved forward, its legs as they were, and its
phase is the centre of mass ahead of the toes (Sec. 3.4.3). Each stage is stored as a piecewise cubic,
evaluated with its first two derivatives in one vectorized pass at run time.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

import numpy as np
from scipy.interpolate import BSpline, PPoly

from strider.errors import UsageError
from strider.methods.tracking.mocap_import import FREE, MODE_NAMES, TOE
from strider.methods.tracking.planar_model import PlanarModel
from strider.methods.tracking.rectify import Rectified, active, ramp
from strider.sim import Scene, Terrain

ROOT = 3               # q[:3] is the root (x, z, pitch); the rest are the actuated joints
DEGREE = 3
FD_STEP = 1e-6         # rad or m: finite differences of the planar kinematics (offline only)


@dataclass(frozen=True)
class FitParams:
    control_points: int = 8          # per joint per stage (phase-tracking.md Sec. 4)
    smoothness: float = 1e-4         # k of (3.10) on the normalized phase (same)
    impact_consistency: bool = True  # (3.9) at the stages that begin with a contact; off: C0 only there
    impact_iterations: int = 4       # refits of the bilinear impact constraint (it settles in two or three)
    gravity: float = Scene.gravity   # m/s^2, the simulator's: the rectified centre of pressure needs it


# A jump's fit: its landing and crouch move the joints a radian within a few hundredths of the phase, which the
# walk's fit flattens (0.065 rad RMS against 0.009 with these); and no impact consistency at the landing, which on
# MuJoCo's soft contacts is no instantaneous impact (with it the jumper fell within two jumps).
JUMP_FIT = FitParams(control_points=12, smoothness=1e-6, impact_consistency=False)
# A point-footed step is one stage from strike to strike, where a flat-footed one has five, so its joints need more
# control points; and the walk's smoothness, on a phase normalized over the whole step, flattens the swing by 0.03
# rad RMS (0.001 with these). With the walk's fit the 5-link walker stalled within three steps (docs/tracking.md).
POINT_FOOT_FIT = FitParams(control_points=24, smoothness=1e-6)


@dataclass(frozen=True)
class Stage:
    """A run of frames with the same contact modes: ``stance`` and ``swing`` are FREE/HEEL/TOE/FLAT."""

    stance: int
    swing: int
    theta: tuple[float, float]       # the phase at its start and end
    breakpoints: np.ndarray          # (k+1,) on the normalized phase [0, 1]
    coefficients: np.ndarray         # (4, k, joints): the cubic of each interval, highest power first
    makes_contact: bool              # it begins with a foot point touching down (an impact)
    centre_of_pressure: float        # mean rectified CoP in the stage, m ahead of the stance heel
    _breaks: list[float] = field(init=False, repr=False, compare=False)   # for bisect: a list searches fastest

    def __post_init__(self) -> None:
        object.__setattr__(self, "_breaks", np.asarray(self.breakpoints).tolist())

    @property
    def label(self) -> str:
        return f"{MODE_NAMES[self.stance]}/{MODE_NAMES[self.swing]}"

    def evaluate(self, theta: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """c, dc/dtheta and d2c/dtheta2 at ``theta``, clamped to the stage's range."""
        return tuple(self.evaluate_rows(theta))

    def evaluate_rows(self, theta: float) -> np.ndarray:
        """(3, joints): c, dc/dtheta and d2c/dtheta2 at ``theta`` as the rows of one array (the control step's
        form: one product of the cubic's power basis and its coefficients)."""
        t0, t1 = self.theta
        width = t1 - t0
        raw = (theta - t0) / width
        s = min(max(raw, 0.0), 1.0)
        k = min(max(bisect.bisect_right(self._breaks, s) - 1, 0), len(self._breaks) - 2)
        u = s - self._breaks[k]
        w2 = width * width
        basis = np.array([[u * u * u, u * u, u, 1.0],
                          [3.0 * u * u / width, 2.0 * u / width, 1.0 / width, 0.0],
                          [6.0 * u / w2, 2.0 / w2, 0.0, 0.0]])
        if raw != s:
            # Past the range the phase is projected back onto it (Abe 2012, Sec. 3.4.1), so the constraint holds
            # its end value: its rates in theta are zero there, not the end's (which would drive the joints on).
            basis[1:] = 0.0
        return basis @ self.coefficients[:, k]


@dataclass(frozen=True)
class PhaseConstraints:
    """The fitted constraints of one step, its phase-rate reference, and what the controller needs to run it."""

    name: str
    joints: tuple[str, ...]          # the actuated joints, in the order of c
    side: str                        # the stance leg of the rectified step; the other leg's steps are mirrored
    mirror: tuple[int, ...]          # joint index -> its left/right counterpart
    stages: tuple[Stage, ...]
    reference_theta: np.ndarray      # the rectified step's phase per frame ...
    reference_rate: np.ndarray       # ... and its rate: theta_dot_ref(theta) for the FRI policy
    reference_q: np.ndarray          # the rectified frames (q, qd), root included: the first is where a walk
    reference_qd: np.ndarray         # begins, and any other gives the root's pose at a phase
    step_length: float
    period: float
    rms_fit: float                   # rad: the fit against the rectified frames
    ground_slope: float = 0.0        # deg: the ground the step was rectified on (its cone tilts with it)
    motion: str = "walk"             # "walk": steps on alternating legs, theta the stance angle; "jump": both legs
                                     # together, theta the centre of mass ahead of the feet (Sec. 3.4.3)
    # a jump's push-off: the rectified ground force (rows theta, F_x, F_z) over the stage on the toes, which the
    # controller may follow in place of the stance knee and ankle (Sec. 3.4.3)
    takeoff_force: np.ndarray | None = None

    def takeoff_force_at(self, theta: float) -> np.ndarray:
        """The rectified push-off force (F_x, F_z) at ``theta``, interpolated between frames."""
        f = self.takeoff_force
        return np.array([np.interp(theta, f[:, 0], f[:, 1]), np.interp(theta, f[:, 0], f[:, 2])])

    @property
    def speed(self) -> float:
        return self.step_length / self.period

    @property
    def terrain(self) -> Terrain:
        """The ground the step was rectified on, as the simulator builds it."""
        return ramp(self.ground_slope)

    def reference_rate_at(self, theta: float) -> float:
        return float(np.interp(theta, self.reference_theta, self.reference_rate))

    def reference_at(self, theta: float) -> tuple[np.ndarray, np.ndarray]:
        """The rectified (q, qd) at phase ``theta``, interpolated between frames (the phase rises through them)."""
        q = np.array([np.interp(theta, self.reference_theta, col) for col in self.reference_q.T])
        qd = np.array([np.interp(theta, self.reference_theta, col) for col in self.reference_qd.T])
        return q, qd

    @property
    def theta_range(self) -> tuple[float, float]:
        return self.stages[0].theta[0], self.stages[-1].theta[1]

    def stage_at(self, theta: float) -> int:
        """The index of the stage whose phase range holds ``theta`` (the first or last beyond the ends)."""
        ends = [stage.theta[1] for stage in self.stages[:-1]]
        return int(np.searchsorted(ends, theta, side="right"))


def stage_runs(rect: Rectified) -> list[tuple[int, int, int, int]]:
    """(first frame, end frame, stance mode, swing mode) of each run of equal contact modes."""
    side = rect.stance[0]
    if rect.window not in ("step", "jump") or np.any(rect.stance != side):
        raise UsageError(f"{rect.name}: constraint fitting takes a rectified step or jump (rectify with --window "
                         "step or jump)")
    other = "right" if side == "left" else "left"
    pairs = list(zip(rect.modes[side].tolist(), rect.modes[other].tolist()))
    runs, first = [], 0
    for i in range(1, len(pairs) + 1):
        if i == len(pairs) or pairs[i] != pairs[first]:
            runs.append((first, i, *pairs[first]))
            first = i
    if pairs[0][0] == FREE:
        raise UsageError(f"{rect.name}: the step does not begin with its stance foot down")
    return runs


def phase_of(model: PlanarModel, q: np.ndarray, side: str, anchor: float | None = None) -> float:
    """theta of a walk (the stance angle), or of a jump when ``anchor`` is given (the centre of mass ahead of where
    the toes came down)."""
    if anchor is not None:
        return float(model.jump_phase(list(q), anchor))
    return float(model.stance_angle(list(q), side))


def phase_jacobian(model: PlanarModel, q: np.ndarray, side: str, anchor: float | None = None) -> np.ndarray:
    return _gradient(lambda x: phase_of(model, x, side, anchor), q)


def jump_anchor(model: PlanarModel, rect: Rectified) -> float | None:
    """Where a rectified jump's toes are down (None for a walk): its phase is measured from there."""
    if rect.window != "jump":
        return None
    side = rect.stance[0]
    first = next((i for i, mode in enumerate(rect.modes[side]) if active(mode, "toe")), None)
    if first is None:
        raise UsageError(f"{rect.name}: the jump's toes never touch the ground, and its phase is measured from them")
    return float(model.point(list(rect.q[first]), model.contact(side, "toe"))[0])


def point_jacobian(model: PlanarModel, q: np.ndarray, contact: int) -> np.ndarray:
    """2 x n: d(point x, z)/dq of a contact point."""
    cols = [(np.array(model.point(list(q + h), contact)) - np.array(model.point(list(q - h), contact))) / (2 * FD_STEP)
            for h in np.eye(len(q)) * FD_STEP]
    return np.array(cols).T


def mass_matrix(model: PlanarModel, q: np.ndarray) -> np.ndarray:
    """M(q) of the planar model: each link's COM velocity and pitch rate are linear in qd."""
    n = len(q)
    columns = [model.velocities(list(q), list(e)) for e in np.eye(n)]
    M = np.zeros((n, n))
    for k, link in enumerate(model.links):
        Jv = np.array([[columns[j][k][0] for j in range(n)], [columns[j][k][1] for j in range(n)]])
        Jw = np.array([columns[j][k][2] for j in range(n)])
        M += link.mass * Jv.T @ Jv + link.inertia * np.outer(Jw, Jw)
    return M


def contact_rows(model: PlanarModel, q: np.ndarray, side: str, mode: int) -> np.ndarray:
    """The contact Jacobian of a foot in ``mode``: heel and/or toe (x, z); a flat foot's 4 rows have rank 3."""
    rows = [point_jacobian(model, q, model.contact(side, name)) for name in ("heel", "toe") if active(mode, name)]
    return np.vstack(rows) if rows else np.zeros((0, len(q)))


def fit_constraints(model: PlanarModel, rect: Rectified, params: FitParams | None = None) -> PhaseConstraints:
    """The motion constraints of a rectified step or jump; ``params`` None: a jump's :data:`JUMP_FIT`, a
    point-footed walk's :data:`POINT_FOOT_FIT`, a walk's defaults."""
    params = params or (JUMP_FIT if rect.window == "jump" else POINT_FOOT_FIT if model.point_feet else FitParams())
    runs = stage_runs(rect)
    side = rect.stance[0]
    motion = "jump" if rect.window == "jump" else "walk"
    n_joints = model.n - ROOT
    mirror = tuple(model.mirror[ROOT + j] - ROOT for j in range(n_joints))
    # the legs swap roles from one step to the next; a jump's stay as they are
    relabel = mirror if motion == "walk" else tuple(range(n_joints))
    # the step ends where the next begins: the first frame mirrored (a jump's moved on), its phase seen from this
    # step's stance leg (a jump's from where this jump's toes came down)
    end_q = np.array(model.mirrored(list(rect.q[0]), rect.shift) if motion == "walk"
                     else [rect.q[0, 0] + rect.shift, *rect.q[0, 1:]])
    anchor = jump_anchor(model, rect)
    theta = np.array([phase_of(model, q, side, anchor) for q in rect.q])
    theta_end = phase_of(model, end_q, side, anchor)
    bounds = [theta[first] for first, *_ in runs] + [theta_end]
    if np.any(np.diff(bounds) <= 0):
        raise UsageError(f"{rect.name}: the phase does not increase through the step's stages")

    layout = _Layout([end - first for first, end, *_ in runs], bounds, n_joints, params.control_points)

    # least squares rows: every frame of every stage, and the smoothness penalty on the same samples
    H = np.zeros((layout.size, layout.size))
    g = np.zeros(layout.size)
    for s, (first, end, *_modes) in enumerate(runs):
        u = np.clip((theta[first:end] - bounds[s]) / (bounds[s + 1] - bounds[s]), 0.0, 1.0)
        B = _design(u, layout.knots[s], 0)
        B2 = _design(u, layout.knots[s], 2)
        block = B.T @ B + params.smoothness * B2.T @ B2
        for j in range(n_joints):
            idx = layout.cols(s, j)
            H[np.ix_(idx, idx)] += block
            g[idx] += B.T @ rect.q[first:end, ROOT + j]

    def equalities(factors: dict[int, tuple[np.ndarray, np.ndarray, float]]) -> tuple[np.ndarray, np.ndarray]:
        A, b = [], []

        def add(terms: list[tuple[np.ndarray, np.ndarray]], value: float) -> None:
            row = np.zeros(layout.size)
            for cols, coeffs in terms:
                row[cols] += coeffs
            A.append(row)
            b.append(value)

        for s in range(len(runs)):
            nxt = (s + 1) % len(runs)
            # the next stage's joint j, in this stage's labels (across the wrap the legs swap roles)
            label = (lambda j: relabel[j]) if nxt == 0 else (lambda j: j)
            for j in range(n_joints):
                add([(layout.cols(s, j), layout.value(s, 1.0)), (layout.cols(nxt, label(j)), -layout.value(nxt, 0.0))],
                    0.0)
            if nxt in factors:
                L_rows, offset, sigma = factors[nxt]
                # sigma c'_next(start) - [L q'_before]_joints = [L p]_joints, with q'_before = P c'_before + p
                for j in range(n_joints):
                    add([(layout.cols(nxt, label(j)), sigma * layout.slope(nxt, 0.0))]
                        + [(layout.cols(s, jj), -L_rows[j, jj] * layout.slope(s, 1.0)) for jj in range(n_joints)],
                        offset[j])
            elif not _makes_contact(runs, nxt):
                for j in range(n_joints):
                    add([(layout.cols(s, j), layout.slope(s, 1.0)), (layout.cols(nxt, label(j)), -layout.slope(nxt, 0.0))],
                        0.0)
        return np.array(A), np.array(b)

    impacts = [s for s in range(len(runs)) if _makes_contact(runs, s)]
    factors: dict[int, tuple[np.ndarray, np.ndarray, float]] = {}
    w = _solve_kkt(H, g, *equalities(factors))
    if params.impact_consistency:
        for _ in range(params.impact_iterations):
            factors = {s: _impact_factor(model, rect, runs, s, layout, w, side, end_q, anchor) for s in impacts}
            w = _solve_kkt(H, g, *equalities(factors))

    stages = []
    frame_cop, frame_force = _centres_of_pressure(model, rect, side, params.gravity)
    takeoff = None
    if motion == "jump":
        on_toes = np.concatenate([np.arange(first, end) for first, end, stance_mode, swing_mode in runs
                                  if stance_mode == swing_mode == TOE])
        takeoff = np.column_stack([theta[on_toes], frame_force[on_toes]]) if len(on_toes) else None
    for s, (first, end, stance_mode, swing_mode) in enumerate(runs):
        pieces = [PPoly.from_spline(BSpline(layout.knots[s], w[layout.cols(s, j)], DEGREE)) for j in range(n_joints)]
        breaks = pieces[0].x
        keep = np.flatnonzero(np.diff(breaks) > 0)
        coefficients = np.stack([pp.c[:, keep] for pp in pieces], axis=-1)
        cop = frame_cop[first:end]
        stages.append(Stage(stance_mode, swing_mode, (bounds[s], bounds[s + 1]), np.append(breaks[keep], 1.0),
                            coefficients, _makes_contact(runs, s), float(np.nanmean(cop)) if np.isfinite(cop).any()
                            else 0.0))
    fitted = np.array([stages[_stage_of(runs, i)].evaluate(theta[i])[0] for i in range(len(theta))])
    rms = float(np.sqrt(np.mean((fitted - rect.q[:, ROOT:]) ** 2)))
    rate = np.array([phase_jacobian(model, q, side, anchor) @ qd for q, qd in zip(rect.q, rect.qd)])
    return PhaseConstraints(rect.name, tuple(model.coords[ROOT:]), str(side), mirror, tuple(stages), theta, rate,
                            rect.q.copy(), rect.qd.copy(), rect.shift, rect.period, rms, rect.ground_slope, motion,
                            takeoff)


def _makes_contact(runs: list, s: int) -> bool:
    """Stage ``s`` begins with a foot point touching down (the first stage: the heel strike that begins it)."""
    before = runs[s - 1] if s > 0 else None
    now = runs[s]
    if before is None:
        return True
    return any(active(now[k], p) and not active(before[k], p) for k in (2, 3) for p in ("heel", "toe"))


def _stage_of(runs: list, frame: int) -> int:
    return next(s for s, (first, end, *_) in enumerate(runs) if first <= frame < end)


def _impact_factor(model: PlanarModel, rect: Rectified, runs: list, s: int, layout: _Layout, w: np.ndarray,
                   side: str, end_q: np.ndarray, anchor: float | None) -> tuple[np.ndarray, np.ndarray, float]:
    """The linearized (3.9) at the start of stage ``s``: the joint rows of L P and L p, and sigma, the phase rate
    after the impact per unit phase rate before it, from the current fit."""
    jump = anchor is not None
    # a jump lands on the same legs it took off from
    other = side if jump else "right" if side == "left" else "left"
    n = model.n
    n_joints = n - ROOT
    before = (s - 1) % len(runs)
    wrap = s == 0
    q = end_q if wrap else rect.q[runs[s][0]]
    # the zero-dynamics direction before the impact: root rates from the old contacts and d theta = 1
    stance_before, swing_before = runs[before][2], runs[before][3]
    Jc_before = np.vstack([contact_rows(model, q, side, stance_before), contact_rows(model, q, other, swing_before)])
    Jth = phase_jacobian(model, q, side, anchor)
    P, p = _manifold_direction(Jc_before, Jth)
    # the contacts after it, in this step's labels (at the wrap: the new stance leg is the old swing leg)
    stance_after, swing_after = runs[s][2], runs[s][3]
    if wrap:
        Jc_after = np.vstack([contact_rows(model, q, other, stance_after), contact_rows(model, q, side, swing_after)])
        Jth_after = phase_jacobian(model, q, other, anchor)
    else:
        Jc_after = np.vstack([contact_rows(model, q, side, stance_after), contact_rows(model, q, other, swing_after)])
        Jth_after = Jth
    M = mass_matrix(model, q)
    Minv_Jt = np.linalg.solve(M, Jc_after.T)
    L = np.eye(n) - Minv_Jt @ np.linalg.pinv(Jc_after @ Minv_Jt) @ Jc_after
    LP, Lp = L @ P, L @ p
    slope_before = np.array([layout.slope(before, 1.0) @ w[layout.cols(before, j)] for j in range(n_joints)])
    sigma = float(Jth_after @ (LP @ slope_before + Lp))
    # joint rows of L q'_before, relabelled for the next step at the wrap (its unknowns are mirrored there)
    return LP[ROOT:], Lp[ROOT:], sigma


def _manifold_direction(Jc: np.ndarray, Jth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """q' = P c' + p: the full rate of q per unit phase given the joints' rates c', the contacts held."""
    n = Jth.shape[0]
    A = np.vstack([Jc, Jth])
    rhs_joints = -A[:, ROOT:]
    rhs_const = np.zeros(len(A))
    rhs_const[-1] = 1.0
    root_rows = A[:, :ROOT]
    # least squares: a flat foot's rows are rank-deficient, a free stance foot leaves the root underdetermined
    pinv = np.linalg.pinv(root_rows)
    P = np.zeros((n, n - ROOT))
    p = np.zeros(n)
    P[:ROOT] = pinv @ rhs_joints
    P[ROOT:] = np.eye(n - ROOT)
    p[:ROOT] = pinv @ rhs_const
    return P, p


def _centres_of_pressure(model: PlanarModel, rect: Rectified, side: str, g: float) -> tuple[np.ndarray, np.ndarray]:
    """Per frame: the rectified centre of pressure, m ahead of the stance heel, and the ground force (F_x, F_z),
    both from the momentum's change (NaN and 0 where there is none)."""
    mass = model.mass
    moms = np.array([model.momentum(list(q), list(qd)) for q, qd in zip(rect.q, rect.qd)])
    out = np.full(len(rect.q), np.nan)
    forces = np.zeros((len(rect.q), 2))
    heel = model.contact(side, "heel")
    rise = np.tan(np.radians(rect.ground_slope))
    for i in range(len(rect.q) - 1):
        fx, fz, tau = (moms[i + 1] - moms[i]) / rect.dt
        fz += mass * g
        forces[i] = fx, fz
        lever = fz - rise * fx      # the force's moment about the origin, per m of x along the ground z = rise x
        if lever <= 0:
            continue
        cx, cz = model.com(list(rect.q[i]))
        cop = (cx * fz - cz * fx - tau) / lever
        out[i] = cop - model.point(list(rect.q[i]), heel)[0]
    return out, forces


def _gradient(f, x: np.ndarray) -> np.ndarray:
    return np.array([(f(x + h) - f(x - h)) / (2 * FD_STEP) for h in np.eye(len(x)) * FD_STEP])


class _Layout:
    """Where each stage's control points sit in the unknowns, and the spline rows at its ends. A stage gets
    ``control_points`` of them, or fewer when it holds few frames (a 2-frame heel contact cannot pin 8), but at
    least a single cubic's 4."""

    def __init__(self, frames: list[int], bounds: list[float], n_joints: int, control_points: int):
        self.n_joints = n_joints
        self.counts = [min(control_points, max(DEGREE + 1, f + 2)) for f in frames]
        self.offsets = np.concatenate([[0], np.cumsum([c * n_joints for c in self.counts])]).astype(int)
        self.size = int(self.offsets[-1])
        self.knots = [np.concatenate([np.zeros(DEGREE), np.linspace(0.0, 1.0, c - DEGREE + 1), np.ones(DEGREE)])
                      for c in self.counts]
        self.widths = np.diff(bounds)

    def cols(self, stage: int, joint: int) -> np.ndarray:
        return self.offsets[stage] + np.arange(self.counts[stage]) * self.n_joints + joint

    def value(self, stage: int, u: float) -> np.ndarray:
        return _design(np.array([u]), self.knots[stage], 0)[0]

    def slope(self, stage: int, u: float) -> np.ndarray:
        """d/dtheta (not d/du) of the spline at ``u``, per control point."""
        return _design(np.array([u]), self.knots[stage], 1)[0] / self.widths[stage]


def _design(u: np.ndarray, knots: np.ndarray, derivative: int) -> np.ndarray:
    """The B-spline basis (or its derivative in u) at ``u``: rows are samples, columns control points."""
    ncp = len(knots) - DEGREE - 1
    out = np.zeros((len(u), ncp))
    for c in range(ncp):
        spline = BSpline(knots, np.eye(ncp)[c], DEGREE)
        out[:, c] = (spline.derivative(derivative) if derivative else spline)(u)
    return out


def _solve_kkt(H: np.ndarray, g: np.ndarray, A: np.ndarray, b: np.ndarray) -> np.ndarray:
    n, m = len(g), len(b)
    K = np.zeros((n + m, n + m))
    K[:n, :n] = H
    K[:n, n:] = A.T
    K[n:, :n] = A
    sol = np.linalg.lstsq(K, np.concatenate([g, b]), rcond=None)[0]
    return sol[:n]
