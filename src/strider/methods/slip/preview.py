"""The SLIP preview model in closed form, vectorized over a population of plans (Mordatch et al. 2010, Sec. 4).

A stance phase moves the COM as an inverted pendulum horizontally over a centre of pressure that slides
linearly from p0 to pT (Eqs. 3, 6, 7) and as a spring of linearly varying rest length vertically (Eqs. 4, 8, 9);
the heading turns at constant acceleration (Eq. 10). A flight phase is ballistic (Eqs. 13, 14). Each phase
starts where the previous one ends, so a schedule of durations, COP and rest-length knots gives one smooth
trajectory; a phase of zero duration drops out.

Every array carries the population on its first axis, so one call previews all of CMA's candidates at once.
The exact exponential, cosine and sine are used; the source's 5th-order Taylor polynomials are behind
``taylor5`` for fidelity tests (slip-planning.md, Sec. 4: the Taylor form errs ~1 % already at nu T = 2).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

MIN_PENDULUM_HEIGHT = 0.3   # m; slip-planning.md Sec. 4: h = z0 - p0z, clamped, so nu stays finite
ZERO_DURATION = 1e-9        # s; below it a phase has no extent and its rates are not formed


# Columns of a phase's coefficients, one layout for stance and flight (see StancePhase and FlightPhase).
NU, B1, B2, COP0, COP_RATE = 0, slice(1, 3), slice(3, 5), slice(5, 7), slice(7, 9)
D1, D2, REST0, REST_RATE, Z0, VZ0, HEADING0, HEADING_RATE0, HEADING_ACCEL = range(9, 18)
COLUMNS = 18


@dataclass(frozen=True)
class PreviewModel:
    """Constants of the preview (slip-planning.md, Sec. 3 and 4)."""

    gravity: float = 9.81       # m/s^2 (Mordatch et al. 2010, Sec. 4.2)
    spring_omega: float = 1.0   # 1/s: sqrt(k/m), k = 1 per unit mass (Sec. 4.2; units decided in Sec. 4 of the spec)
    taylor5: bool = False       # the source's polynomial form instead of exp/cos/sin


def _exp(x: np.ndarray, taylor5: bool) -> np.ndarray:
    if not taylor5:
        return np.exp(x)
    return 1 + x * (1 + x / 2 * (1 + x / 3 * (1 + x / 4 * (1 + x / 5))))


def _cos_sin(x: np.ndarray, taylor5: bool) -> tuple[np.ndarray, np.ndarray]:
    if not taylor5:
        return np.cos(x), np.sin(x)
    x2 = x * x
    return 1 - x2 / 2 * (1 - x2 / 12), x * (1 - x2 / 6 * (1 - x2 / 20))


@dataclass
class StancePhase:
    """Coefficients of one stance phase for every plan: x(t) = b1 e^(nu t) + b2 e^(-nu t) + p0 + pdot t per axis,
    z(t) = d1 cos(w t) + d2 sin(w t) + r0 + rdot t - g/w^2, alpha(t) = a0 + ad0 t + add t^2 / 2."""

    duration: np.ndarray       # (P,)
    nu: np.ndarray             # (P,)
    b1: np.ndarray             # (P, 2)
    b2: np.ndarray             # (P, 2)
    cop0: np.ndarray           # (P, 2)
    cop_rate: np.ndarray       # (P, 2)
    d1: np.ndarray             # (P,)
    d2: np.ndarray             # (P,)
    rest0: np.ndarray          # (P,)
    rest_rate: np.ndarray      # (P,)
    heading0: np.ndarray       # (P,)
    heading_rate0: np.ndarray  # (P,)
    heading_accel: np.ndarray  # (P,)

    @staticmethod
    def start(model: PreviewModel, com, com_velocity, heading, heading_rate, duration, cop0, copT, ground0,
              rest0, restT, heading_accel) -> StancePhase:
        """The phase that starts from the given COM state (Eqs. 7 and 9 solved for their constants)."""
        T = np.asarray(duration, dtype=float)
        live = T > ZERO_DURATION
        T_safe = np.where(live, T, 1.0)
        h = np.maximum(com[:, 2] - ground0, MIN_PENDULUM_HEIGHT)
        nu = np.sqrt(model.gravity / h)
        cop_rate = np.where(live[:, None], (copT - cop0) / T_safe[:, None], 0.0)
        offset = com[:, :2] - cop0
        swing = (com_velocity[:, :2] - cop_rate) / nu[:, None]
        w = model.spring_omega
        rest_rate = np.where(live, (restT - rest0) / T_safe, 0.0)
        return StancePhase(duration=T, nu=nu, b1=(offset + swing) / 2, b2=(offset - swing) / 2, cop0=cop0,
                           cop_rate=cop_rate, d1=com[:, 2] - rest0 + model.gravity / w**2,
                           d2=(com_velocity[:, 2] - rest_rate) / w, rest0=rest0, rest_rate=rest_rate,
                           heading0=heading, heading_rate0=heading_rate, heading_accel=heading_accel)

    def coefficients(self) -> np.ndarray:
        """This phase's row of the preview's coefficient table (P, COLUMNS)."""
        c = np.zeros((self.duration.shape[0], COLUMNS))
        c[:, NU] = self.nu
        c[:, B1], c[:, B2], c[:, COP0], c[:, COP_RATE] = self.b1, self.b2, self.cop0, self.cop_rate
        c[:, D1], c[:, D2], c[:, REST0], c[:, REST_RATE] = self.d1, self.d2, self.rest0, self.rest_rate
        c[:, HEADING0], c[:, HEADING_RATE0], c[:, HEADING_ACCEL] = (self.heading0, self.heading_rate0,
                                                                    self.heading_accel)
        return c

    def at(self, model: PreviewModel, t: np.ndarray, select: tuple | None = None) -> PreviewPoints:
        """COM, velocity, acceleration and heading at local times ``t`` (P, K); ``select`` indexes the plans."""
        return evaluate(model, _rows(self.coefficients(), select), t, flight=False)


@dataclass
class FlightPhase:
    """A ballistic COM and a heading turning at the rate it left the ground with (Eqs. 13 corrected, 14)."""

    duration: np.ndarray
    com0: np.ndarray            # (P, 3)
    com_velocity0: np.ndarray   # (P, 3)
    heading0: np.ndarray
    heading_rate0: np.ndarray

    def coefficients(self) -> np.ndarray:
        """This phase's row of the preview's coefficient table: the COP columns carry the horizontal start and
        velocity, whose stance form with b1 = b2 = 0 is the ballistic one, and the heading does not accelerate."""
        c = np.zeros((self.duration.shape[0], COLUMNS))
        c[:, COP0], c[:, COP_RATE] = self.com0[:, :2], self.com_velocity0[:, :2]
        c[:, Z0], c[:, VZ0] = self.com0[:, 2], self.com_velocity0[:, 2]
        c[:, HEADING0], c[:, HEADING_RATE0] = self.heading0, self.heading_rate0
        return c

    def at(self, model: PreviewModel, t: np.ndarray, select: tuple | None = None) -> PreviewPoints:
        return evaluate(model, _rows(self.coefficients(), select), t, flight=True)


@dataclass
class PreviewPoints:
    """The preview sampled at (P, K) times: COM (P, K, 3) and its rates, heading (P, K); in flight the COP and
    rest length are NaN."""

    com: np.ndarray
    com_velocity: np.ndarray
    com_accel: np.ndarray
    heading: np.ndarray
    heading_rate: np.ndarray
    cop: np.ndarray
    rest: np.ndarray
    phase: np.ndarray | None = None    # (P, K) each sample's phase, when read from a whole Preview

    def columns(self, samples: slice) -> PreviewPoints:
        """The same points at a run of the sample times only."""
        return PreviewPoints(**{name: None if value is None else value[:, samples]
                                for name, value in vars(self).items()})

    def end(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The state at the last sample of each plan: COM, velocity (P, 3), heading, heading rate (P,)."""
        return self.com[:, -1], self.com_velocity[:, -1], self.heading[:, -1], self.heading_rate[:, -1]


Phase = StancePhase | FlightPhase


def _rows(coefficients: np.ndarray, select: tuple | None) -> np.ndarray:
    """One phase's coefficients (P, COLUMNS) as rows (P, 1, COLUMNS) for every sample, for the plans selected."""
    return (coefficients if select is None else coefficients[select])[:, None, :]


def evaluate(model: PreviewModel, c: np.ndarray, t: np.ndarray, flight: bool | np.ndarray) -> PreviewPoints:
    """The closed forms at local times ``t`` (P, K) from coefficient rows ``c`` (P, K or 1, COLUMNS). ``flight``
    says which samples are ballistic: one bool for all of them, or a (P, K) mask. Horizontally and in heading
    the stance form serves both; vertically a mask evaluates both forms and keeps each sample's own."""
    nu = c[..., NU]
    e_plus = _exp(nu * t, model.taylor5)
    e_minus = _exp(-nu * t, model.taylor5)
    b1, b2 = c[..., B1], c[..., B2]
    ep, em = e_plus[..., None], e_minus[..., None]
    cop = c[..., COP0] + c[..., COP_RATE] * t[..., None]
    xy = b1 * ep + b2 * em + cop
    xy_vel = nu[..., None] * (b1 * ep - b2 * em) + c[..., COP_RATE]
    xy_acc = nu[..., None] ** 2 * (b1 * ep + b2 * em)
    if flight is not True:
        w = model.spring_omega
        cos, sin = _cos_sin(w * t, model.taylor5)
        d1, d2 = c[..., D1], c[..., D2]
        rest = c[..., REST0] + c[..., REST_RATE] * t
        z = d1 * cos + d2 * sin + rest - model.gravity / w**2
        z_vel = w * (d2 * cos - d1 * sin) + c[..., REST_RATE]
        z_acc = -w**2 * (d1 * cos + d2 * sin)
    if flight is not False:
        g = -model.gravity
        ballistic = (c[..., Z0] + c[..., VZ0] * t + 0.5 * g * t * t, c[..., VZ0] + g * t,
                     np.broadcast_to(g, t.shape))
        if flight is True:
            z, z_vel, z_acc = ballistic
            cop, rest = np.full(cop.shape, np.nan), np.full(t.shape, np.nan)
        else:
            z, z_vel, z_acc = (np.where(flight, b, s) for b, s in zip(ballistic, (z, z_vel, z_acc)))
            cop, rest = np.where(flight[..., None], np.nan, cop), np.where(flight, np.nan, rest)
    add = c[..., HEADING_ACCEL]
    return PreviewPoints(com=np.concatenate([xy, z[..., None]], axis=-1),
                         com_velocity=np.concatenate([xy_vel, z_vel[..., None]], axis=-1),
                         com_accel=np.concatenate([xy_acc, z_acc[..., None]], axis=-1),
                         heading=c[..., HEADING0] + c[..., HEADING_RATE0] * t + 0.5 * add * t * t,
                         heading_rate=c[..., HEADING_RATE0] + add * t, cop=cop, rest=rest)


def end_state(model: PreviewModel, phase: Phase) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where a phase leaves the COM and heading, the start of the next phase."""
    return phase.at(model, phase.duration[:, None]).end()


@functools.cache
def gauss_legendre(nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes in [0, 1] and weights summing to 1 (slip-planning.md Sec. 4: 6 nodes per phase); read-only, since
    they are worked out once per node count (every plan evaluation asks for them)."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    x, w = (x + 1) / 2, w / 2
    x.flags.writeable = w.flags.writeable = False
    return x, w


@dataclass
class Preview:
    """A whole schedule's trajectory: its phases in order, with their durations, start times (P, n_phases) and
    total (P,) worked out once, since the objectives sample a preview many times."""

    model: PreviewModel
    phases: list[Phase]
    durations: np.ndarray = field(init=False)
    starts: np.ndarray = field(init=False)
    total: np.ndarray = field(init=False)

    def __post_init__(self):
        self.durations = np.stack([p.duration for p in self.phases], axis=1)
        ends = np.cumsum(self.durations, axis=1)
        self.starts = np.concatenate([np.zeros((ends.shape[0], 1)), ends[:, :-1]], axis=1)
        self.total = ends[:, -1]
        self.live = self.durations > ZERO_DURATION
        self.table = np.stack([p.coefficients() for p in self.phases], axis=1)     # (P, n_phases, COLUMNS)
        self.flight = np.array([isinstance(p, FlightPhase) for p in self.phases])

    def phase_index(self, t: np.ndarray) -> np.ndarray:
        """Which phase each time (P, K) falls in: the last phase that has started (zero-length phases skipped)."""
        started = (t[..., None] >= self.starts[:, None, :]) & self.live[:, None, :]
        last = started.shape[-1] - 1 - np.argmax(started[..., ::-1], axis=-1)
        return np.where(started.any(axis=-1), last, 0)

    def at(self, t: np.ndarray) -> PreviewPoints:
        """The trajectory at absolute times ``t`` (P, K) from the plan's start (clipped to the schedule): every
        sample's phase coefficients gathered from the table, then one pass of the closed forms."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.total[:, None])
        index = self.phase_index(t)
        local = t - np.take_along_axis(self.starts, index, axis=1)
        rows = np.take_along_axis(self.table, index[..., None], axis=1)
        flight = self.flight[index]
        points = evaluate(self.model, rows, local, True if flight.all() else flight if flight.any() else False)
        points.phase = index
        return points
