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

    def at(self, model: PreviewModel, t: np.ndarray, select: tuple | None = None) -> PreviewPoints:
        """COM, velocity, acceleration and heading at local times ``t`` (P, K); ``select`` indexes the plans."""
        s = (slice(None),) if select is None else select
        nu = self.nu[s][..., None]
        e_plus = _exp(nu * t, model.taylor5)
        e_minus = _exp(-nu * t, model.taylor5)
        b1, b2 = self.b1[s][:, None, :], self.b2[s][:, None, :]
        ep, em = e_plus[..., None], e_minus[..., None]
        cop = self.cop0[s][:, None, :] + self.cop_rate[s][:, None, :] * t[..., None]
        xy = b1 * ep + b2 * em + cop
        xy_vel = nu[..., None] * (b1 * ep - b2 * em) + self.cop_rate[s][:, None, :]
        xy_acc = nu[..., None] ** 2 * (b1 * ep + b2 * em)
        w = model.spring_omega
        cos, sin = _cos_sin(w * t, model.taylor5)
        d1, d2 = self.d1[s][:, None], self.d2[s][:, None]
        rest = self.rest0[s][:, None] + self.rest_rate[s][:, None] * t
        z = d1 * cos + d2 * sin + rest - model.gravity / w**2
        z_vel = w * (d2 * cos - d1 * sin) + self.rest_rate[s][:, None]
        z_acc = -w**2 * (d1 * cos + d2 * sin)
        a0, ad0, add = (self.heading0[s][:, None], self.heading_rate0[s][:, None], self.heading_accel[s][:, None])
        return PreviewPoints(com=np.concatenate([xy, z[..., None]], axis=-1),
                             com_velocity=np.concatenate([xy_vel, z_vel[..., None]], axis=-1),
                             com_accel=np.concatenate([xy_acc, z_acc[..., None]], axis=-1),
                             heading=a0 + ad0 * t + 0.5 * add * t * t, heading_rate=ad0 + add * t,
                             cop=cop, rest=rest)


@dataclass
class FlightPhase:
    """A ballistic COM and a heading turning at the rate it left the ground with (Eqs. 13 corrected, 14)."""

    duration: np.ndarray
    com0: np.ndarray            # (P, 3)
    com_velocity0: np.ndarray   # (P, 3)
    heading0: np.ndarray
    heading_rate0: np.ndarray

    def at(self, model: PreviewModel, t: np.ndarray, select: tuple | None = None) -> PreviewPoints:
        s = (slice(None),) if select is None else select
        g = np.array([0.0, 0.0, -model.gravity])
        tt = t[..., None]
        com = self.com0[s][:, None, :] + self.com_velocity0[s][:, None, :] * tt + 0.5 * g * tt * tt
        vel = self.com_velocity0[s][:, None, :] + g * tt
        acc = np.broadcast_to(g, com.shape)
        heading = self.heading0[s][:, None] + self.heading_rate0[s][:, None] * t
        heading_rate = np.broadcast_to(self.heading_rate0[s][:, None], t.shape)
        nan2 = np.full(com.shape[:-1] + (2,), np.nan)
        return PreviewPoints(com=com, com_velocity=vel, com_accel=acc, heading=heading, heading_rate=heading_rate,
                             cop=nan2, rest=np.full(t.shape, np.nan))


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

    def end(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The state at the last sample of each plan: COM, velocity (P, 3), heading, heading rate (P,)."""
        return self.com[:, -1], self.com_velocity[:, -1], self.heading[:, -1], self.heading_rate[:, -1]


Phase = StancePhase | FlightPhase


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

    def phase_index(self, t: np.ndarray) -> np.ndarray:
        """Which phase each time (P, K) falls in: the last phase that has started (zero-length phases skipped)."""
        index = np.zeros(t.shape, dtype=int)
        for i in range(len(self.phases)):
            started = (t >= self.starts[:, i:i + 1]) & (self.durations[:, i:i + 1] > ZERO_DURATION)
            index = np.where(started, i, index)
        return index

    def at(self, t: np.ndarray) -> PreviewPoints:
        """The trajectory at absolute times ``t`` (P, K) from the plan's start (clipped to the schedule)."""
        t = np.clip(np.asarray(t, dtype=float), 0.0, self.total[:, None])
        index = self.phase_index(t)
        local = t - np.take_along_axis(self.starts, index, axis=1)
        out: PreviewPoints | None = None
        for i, phase in enumerate(self.phases):
            mask = index == i
            if not mask.any():
                continue
            points = phase.at(self.model, np.where(mask, local, 0.0))
            if out is None:
                out = points
                continue
            for name in ("com", "com_velocity", "com_accel", "cop"):
                setattr(out, name, np.where(mask[..., None], getattr(points, name), getattr(out, name)))
            for name in ("heading", "heading_rate", "rest"):
                setattr(out, name, np.where(mask, getattr(points, name), getattr(out, name)))
        assert out is not None
        return out

