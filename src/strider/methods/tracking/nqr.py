"""C8: the NQR baseline (Abe 2012, Sec. 3.4.2; phase-tracking.md Sec. 4): a time-indexed tracker of one recorded
walk, u = u_ref(t) + K(t) (x_ref(t) - x).

The reference is the phase-indexed controller's own walk of a few steps, every state and torque at every physics
step. The gains are the finite-horizon LQR of the engine's one-step linearization along it (``mjd_transitionFD``:
contacts, integrator and all), with Table 3.2's weights the same for every DOF and a horizon to the end of each
step, where Q_end and Qd_end take over. The spec pins the stance point by an equality for the linearization; here
the engine's own soft contact is linearized as it is, which is the stiff spring the pinned point approximates,
and keeps A and B those of the model that is simulated.

A pinned stance point also means the regulated state has no place along the ground of its own: the body's horizontal
position is measured from the stance foot. The tracker reads it that way (``NqrParams.stance_anchored``): the root's
horizontal error is taken with the reference moved along the ground so that its stance foot is where the walker's
foot of the same side is. Walking is the same anywhere along level ground, so the moved reference is a walk of the
same linearization; a push moves where the feet land, and an error in the absolute position is one no torque can
remove while the foot stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from strider.control.controller import CommandRange, begin_from
from strider.errors import UsageError
from strider.methods.tracking.constraints import PhaseConstraints
from strider.methods.tracking.controller import FallRule, PhaseTrackingController, TrackParams, latch_fall
from strider.methods.tracking.planar_model import sole_points
from strider.optimize.lqr import time_varying_lqr
from strider.sim import Character, State, World
from strider.sim.dynamics import Dynamics

MAX_STEP_SHARE = 3.0   # a reference walk that has not taken its steps in this x their rectified time has stalled


@dataclass(frozen=True)
class NqrWeights:
    """Table 3.2 (the seed's chosen values; the same for every DOF). The stage costs are per second of the
    horizon (each step's cost x the time step), the end costs once at the end of the step."""

    position: float = 1e6        # Q      (range 0-1e7)
    velocity: float = 1e2        # Q-dot  (range 6e1-6e4)
    end_position: float = 1e8    # Q_end  (range 1e7-1e9)
    end_velocity: float = 1e8    # Q-dot_end (range 1e2-1e8)
    torque: float = 1e1          # R      (range 1e0-1e4)


@dataclass(frozen=True)
class NqrParams:
    weights: NqrWeights = field(default_factory=NqrWeights)
    max_torque: float = 300.0    # N m on every joint (protocol 2, both controllers)
    epsilon: float = 1e-6        # finite-difference step of the linearization
    falls: FallRule = field(default_factory=FallRule)
    # the root's horizontal error measured from the stance foot, as in the spec's pinned stance point (module
    # docstring); off, the tracker pulls the body back to the reference's absolute position
    stance_anchored: bool = True


@dataclass
class Reference:
    """A recorded walk: the world's state before each control step, the torques applied at it, and the control
    steps at which each walking step ended (a heel strike)."""

    states: list[State]
    qpos: np.ndarray          # (T + 1, nq)
    qvel: np.ndarray          # (T + 1, nv)
    torques: np.ndarray       # (T, nu), by actuator id
    step_ends: tuple[int, ...]
    timestep: float
    # the phase-indexed walker's own state (PhaseTrackingController.phase_state) at the first recorded state, and the
    # steps it had taken before it: a walker started there walks on exactly as the recording did
    phase_state: tuple | None = None
    warmup_steps: int = 0
    # per control step: the stance leg the walker acted on, and the world x of that foot's heel point (a point foot's
    # one point) at the state, the place the NQR measures the body from (NqrParams.stance_anchored)
    stance_sides: tuple[str, ...] = ()
    stance_x: np.ndarray | None = None

    @property
    def length(self) -> int:
        return len(self.torques)

    def step_span(self, step: int) -> tuple[int, int]:
        """Control steps [begin, end) of walking step ``step`` (1 = the first)."""
        begin = 0 if step == 1 else self.step_ends[step - 2]
        return begin, self.step_ends[step - 1]


def record_reference(world: World, character: Character, constraints: PhaseConstraints, steps: int,
                     params: TrackParams, warmup_steps: int = 0) -> Reference:
    """Walk ``steps`` steps with the phase-indexed controller from its start, recording every control step; with
    ``warmup_steps``, walk that many first, unrecorded, so the recording starts on the gait the walker settles on
    (a point-footed walker's steps settle over some twenty steps away from its rectified ones)."""
    controller = PhaseTrackingController(constraints, params)
    controller.reset(world, character)
    limit = MAX_STEP_SHARE * (warmup_steps + steps) * constraints.period

    def check() -> None:
        if world.time > limit or controller.has_fallen():
            walk = f"{steps} steps" + (f" after {warmup_steps} to settle" if warmup_steps else "")
            raise UsageError(f"the reference walk of {walk} did not finish: "
                             + ("it fell" if controller.has_fallen() else f"{controller.stats.steps} steps in "
                                                                          f"{world.time:.1f} s")
                             + f" (torque clamp {params.max_torque} N m)")

    while controller.stats.steps < warmup_steps:
        check()
        controller.control(world.time)
        world.step()
    phase_state = controller.phase_state()
    total = warmup_steps + steps
    states, qpos, qvel, torques, ends, sides, stance_x = [], [], [], [], [], [], []
    while controller.stats.steps < total:
        check()
        states.append(world.snapshot())
        qpos.append(world.data.qpos.copy())
        qvel.append(world.data.qvel.copy())
        before = controller.stats.steps
        controller.control(world.time)
        if controller.stats.steps > before:
            ends.append(len(torques))      # the strike was seen at this state: the step ended before it
        torques.append(character.motor_torques.copy())
        sides.append(controller.stance)
        stance_x.append(controller.foot_point(controller.stance, "heel")[0])
        world.step()
    ends.append(len(torques))
    qpos.append(world.data.qpos.copy())
    qvel.append(world.data.qvel.copy())
    return Reference(states, np.array(qpos), np.array(qvel), np.array(torques), tuple(ends[:steps]),
                     world.timestep, phase_state, warmup_steps, tuple(sides), np.array(stance_x))


def nqr_gains(world: World, reference: Reference, params: NqrParams) -> np.ndarray:
    """K (T, nu, 2 nv): the engine linearized at every recorded state and torque, then the LQR of each step with
    its own horizon. The world is left at the reference's first state."""
    dyn = Dynamics(world)
    linear = []
    for state, u in zip(reference.states, reference.torques):
        world.restore(state)
        world.data.ctrl[:] = u
        linear.append(dyn.transition_jacobians(params.epsilon))
    world.restore(reference.states[0])
    A = np.array([a for a, _ in linear])
    B = np.array([b for _, b in linear])
    nv, nu, w = dyn.nv, B.shape[2], params.weights
    if A.shape[1] != 2 * nv:
        raise UsageError("the NQR baseline linearizes positions and velocities only; this model has actuator "
                         "states")
    dt = reference.timestep
    Q = np.diag(np.r_[np.full(nv, w.position), np.full(nv, w.velocity)]) * dt
    R = np.eye(nu) * w.torque * dt
    Q_end = np.diag(np.r_[np.full(nv, w.end_position), np.full(nv, w.end_velocity)])
    K = np.zeros((reference.length, nu, 2 * nv))
    begin = 0
    for end in reference.step_ends:
        K[begin:end] = time_varying_lqr(A[begin:end], B[begin:end], Q, R, Q_end)
        begin = end
    return K


class NqrController:
    """The time-indexed tracker: control step k applies u_ref[k] + K[k] (x_ref[k] - x), clamped; past the
    reference's end it has nothing left to track and holds the last torques."""

    name = "nqr"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, reference: Reference, gains: np.ndarray, params: NqrParams | None = None):
        if len(gains) != reference.length:
            raise ValueError(f"{len(gains)} gains for a reference of {reference.length} control steps")
        self.reference, self.gains = reference, gains
        self.params = params or NqrParams()
        self.control_period = reference.timestep
        self.command_range = CommandRange(speed=(0.0, 0.0), lateral_speed=(0.0, 0.0), max_turn_rate=0.0,
                                          stands=False, note="the NQR baseline replays its one recorded walk")

    def reset(self, world: World, character: Character, start: State | str | None = None) -> None:
        """Bind to ``character``; None starts from the reference's first state."""
        self.world, self.character = world, character
        self.dynamics = Dynamics(world)
        if begin_from(world, start):
            world.restore(self.reference.states[0])
        self.index = 0
        self.fallen = False
        legs = character.spec.roles.legs
        # each foot's heel point in its frame, where the reference measured its stance foot
        self._heels = {side: (leg.foot, np.array([sole_points(character.spec, leg.foot)["heel"]]))
                       for side, leg in legs.items()}
        if self.params.stance_anchored and len(self.reference.stance_sides) != self.reference.length:
            raise UsageError("this NQR reference was recorded without its stance feet; record it again, or set "
                             "stance_anchored off")

    def set_command(self, command) -> None:
        """The baseline replays its reference; a command does not change it."""

    def has_fallen(self) -> bool:
        return self.fallen

    def info(self) -> dict:
        return {"index": self.index, "steps": int(np.searchsorted(self.reference.step_ends, self.index, "right"))}

    @property
    def finished(self) -> bool:
        return self.index >= self.reference.length

    def control(self, t: float) -> None:
        if latch_fall(self):
            return
        ref, k = self.reference, min(self.index, self.reference.length - 1)
        d = self.character.data
        error = np.concatenate([self.dynamics.position_difference(d.qpos, ref.qpos[k]), ref.qvel[k] - d.qvel])
        if self.params.stance_anchored:
            foot, heel = self._heels[ref.stance_sides[k]]
            # the reference moved along the ground by how far this foot is from where the reference had it
            error[self.character.root_dof] += self.character.body_points(foot, heel)[0, 0] - ref.stance_x[k]
        u = ref.torques[k] + self.gains[k] @ error if not self.finished else ref.torques[-1]
        limit = self.params.max_torque
        self.character.motor_torques[:] = np.clip(u, -limit, limit)
        self.index += 1
