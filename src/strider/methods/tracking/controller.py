"""C7: the phase-indexed controller (Abe 2012, Sec. 3.3, Algorithm 1; phase-tracking.md Sec. 2-4).

Every control step, in the floating-base form the spec decides on:

1. the phase theta (stance ankle -> hip angle from vertical; from the foot point of a point foot) and its rate come
   from the state; the stage moves on when a foot point touches down (its normal force passes ``contact_share`` of
   body weight) or, for a contact that ends (the heel rising), when theta passes the stage's end; the swing heel's
   strike begins the next step with the legs relabelled, and a swing foot that comes down behind while theta
   falls begins a step backwards; a walker that has rolled back below its stage's start follows the constraints of
   the stage theta is in, so its swing foot retraces its swing; past the step's end with the swing foot still up
   over lower ground, the stance knee bends on, lowering the body onto it;
2. the FRI (the ground force's point of application) comes from the policy, within the support: fixed at a lone
   point contact, free along a flat foot;
3. q'' and the ground force F at the FRI solve one square linear system: the root rows of the equation of motion,
   the feet in contact not accelerating, and every output y = q_a - c(theta) following
   y'' = -(k_s/eps^2) y - (k_d/eps) y'. If F leaves the friction cone it is projected back (F = 0 when it would
   pull) and q'' is refit by least squares on the outputs with F fixed (3.16);
4. the joint torques are u = M q'' + h - tau_passive - J^T F on the actuated rows, from the engine's own mass
   matrix, bias forces and Jacobians (not ``mj_inverse``, which would fold in the engine's contact forces).

Which joints are outputs follows from the contacts: the stance ankle is not one while its foot is flat (its torque
places the FRI), and a trailing foot in contact gives up its knee and ankle to the contact (3.18-3.19), so there is
always one coordinate left, theta, whose motion the FRI regulates.

A jump (Sec. 3.4.3) runs through the same law with both legs in the same mode: theta is the centre of mass ahead
of where the toes came down at the last landing, the feet share the ground force equally, and a landing (any foot
point loaded once both feet have left the ground) starts the next jump on the same legs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Protocol

import numpy as np
from scipy.linalg import lapack

from strider.control.controller import CommandRange, begin_from
from strider.errors import UsageError
from strider.methods.tracking.constraints import PhaseConstraints, Stage
from strider.methods.tracking.mocap_import import FLAT, FREE, HEEL, TOE
from strider.methods.tracking.planar_model import CONTACT_NAMES, has_point_feet, sole_points
from strider.methods.tracking.rectify import active
from strider.sim import Character, State, World
from strider.sim.dynamics import Dynamics

SPEED_SHARE = (0.8, 1.2)   # commanded speeds a tracker accepts, x its motion's (P5's +-20%)
Y_AXIS = 1          # rows of a 3-D Jacobian: x, y, z; the plane's rotation is about y
X, Z = 0, 2
X_Z = slice(X, Z + 1, Z - X)   # a 3-D Jacobian's x and z rows, as a view


@dataclass(frozen=True)
class OutputGains:
    """The outputs' convergence, y'' = -(k_s/eps^2) y - (k_d/eps) y' (Westervelt's form; Table 3.1)."""

    epsilon: float = 0.05      # s-like convergence scale (stable 0.001-0.49)
    stiffness: float = 10.0    # k_s (stable 1e-2-1e4); k_d = 2 sqrt(k_s): critically damped

    @property
    def position(self) -> float:
        return self.stiffness / self.epsilon ** 2

    @property
    def velocity(self) -> float:
        return 2.0 * math.sqrt(self.stiffness) / self.epsilon


UNANSWERED = ("nearest", "rectified")   # FriPolicy.unanswered


@dataclass(frozen=True)
class FriPolicy:
    """Where the ground force acts along a flat stance foot. ``integral`` (3.20, with the spec's gain): the
    stage's mean rectified CoP moved forward by ``gain`` x the integral of (theta_dot - theta_dot_ref(theta)),
    so a walker going too fast pushes the CoP toward its toes; frozen while the CoP is pinned at a foot's end
    (anti-windup). ``constant``: the rectified CoP alone."""

    kind: str = "integral"        # integral | constant | vi (a value-iteration table; see fri_value.py)
    gain: float = 1.0             # K_I, m/rad (phase-tracking.md Sec. 4)
    margin: float = 0.01          # m kept inside the heel and toe, so the foot never pivots on its edge
    # where a VI table has no answer (every action failed from its nearest grid state): 'nearest', the answer of the
    # nearest rate in the same phase row that has one (strider's); 'rectified', the stage's rectified centre of
    # pressure. The source leaves it open (its tables' failing states are blank)
    unanswered: str = "nearest"


class FriTable(Protocol):
    """A tabulated FRI policy: the share of the way from the support's rear end to its front, by phase and rate;
    None where the table has no answer (every action failed there)."""

    def action(self, theta: float, rate: float, nearest_answer: bool = False) -> float | None: ...


@dataclass(frozen=True)
class FallRule:
    """The protocols' fall (phase-tracking.md Sec. 5): a non-foot body touches the ground, the pelvis drops
    below ``pelvis_height`` above the ground under it, or the torso pitches beyond ``torso_pitch``."""

    pelvis_height: float = 0.55   # m above the ground beneath the pelvis
    torso_pitch: float = 60.0     # deg


@dataclass(frozen=True)
class TrackParams:
    gains: OutputGains = field(default_factory=OutputGains)
    policy: FriPolicy = field(default_factory=FriPolicy)
    falls: FallRule = field(default_factory=FallRule)
    friction: float = 0.8          # mu of the controller's cone (phase-tracking.md Sec. 4)
    contact_share: float = 0.05    # a foot point is down when its normal force passes this x body weight (same)
    strike_progress: float = 0.5   # the swing foot may end the step once this share of its phase has passed
    max_torque: float | None = None   # N m clamp on every joint (protocol 2: 300); None leaves torques as solved
    # strider's, not the source's: when the clamp would bind, re-solve for the accelerations and ground force
    # that follow the outputs best within it (a QP), instead of clipping torques the solve relied on
    clamp_aware: bool = False
    # a jump on its toes follows the rectified push-off force in place of the stance knee and ankle: the source's
    # (Sec. 3.4.3), off by default because on MuJoCo's soft contacts the legs it frees scuff the ground as the
    # flight begins (docs/tracking.md, jumps)
    takeoff_force: bool = False
    # strider's, not the source's: the contact rows also bring the held point's velocity (and a flat foot's pitch
    # rate) to zero at this rate, 1/s, where the source's hold only their accelerations at zero (0 here) and so
    # keep whatever velocity the point had when the stage began: a heel that strikes a slope and bounces, or a
    # foot rocked by a push, then glides on above the ground while the solve counts on it (docs/tracking.md)
    contact_damping: float = 50.0
    # strider's, not the source's: the swing knee bends this much more (rad) at the middle of the swing, a sin^2
    # bump over the stages the swing foot is free, zero with zero rates at lift-off and at the strike. The rectified
    # CMU swing clears flat ground by 4-5 mm, so a ramp of 6 deg up meets the passing toe; 0.2 raises it to 15 mm
    swing_knee_lift: float = 0.2
    # a swing foot that comes down behind the stance foot while the walker moves backwards (the phase falling) takes
    # the weight as a backward step: the legs swap and the motion runs on backwards from the phase the new stance
    # leg is at; and a forward strike waits for the phase to rise. The source's walkers took backward steps (Sec.
    # 3.4.1); strider's strike test, which waits for the step's phase to pass strike_progress, left such a foot on
    # the ground beside a stance leg it kept
    backward_steps: bool = True
    # strider's, not the source's: once a walker pushed back has rolled onto the flat of its stance foot again (the
    # phase fallen below its stage's start, with the phase falling and a stance point loaded that the stage has off
    # the ground), its joints follow the constraints of the stage the phase is in, not the stage's first pose: the
    # motion runs backwards, and the swing foot retraces its swing and comes down behind, where backward_steps takes
    # it as a step. Held at that pose, a walker pushed back as its heel rose stood on its toe, rolled back, and fell
    # with its swing foot in the air
    swing_retraces: bool = True
    # strider's, not the source's: rad of stance-knee bend per rad of phase once the phase has run past the end of the
    # step's last stage with the swing foot still in the air over lower ground, so the body lowers onto it. Down a
    # slope the swing foot meets the lower ground late; held at the step's last pose, the walker pitched on over its
    # stance toe, each step faster, until the swing foot no longer landed (docs/tracking.md, P3). The source's 0 holds
    # that pose, and the source's controller has no notion of the ground's shape, which this reads
    late_strike_yield: float = 2.0
    # m: ... while the ground under the swing heel lies this much lower than under the stance toe. On level ground a
    # long step's strike can come late too, and a yield there felled the x1.5 length edit in its second step
    late_strike_drop: float = 0.02


CONTACT_ROWS = {FREE: 0, HEEL: 2, TOE: 2, FLAT: 3}   # rows holding a foot in each mode: a point's x, z (and pitch)


@dataclass(frozen=True)
class StageLayout:
    """The shape of one stage's solve for one stance leg, fixed by its contact modes."""

    outputs: np.ndarray       # the output joints, indices into the constraints' joints
    columns: np.ndarray       # ... and the columns of c(theta) each follows, relabelled for the stance leg
    qpos: np.ndarray          # their qpos ...
    dofs: np.ndarray          # ... and dof addresses
    n_contact: int            # rows: the root's 3, then the feet's contact rows
    n_hard: int               # ... then a set ground force's 2 (a jump's push-off)
    selection: np.ndarray     # outputs x nv: a 1 at each output joint's dof (y'' = S q'' - ...)
    position: dict[str, int]  # joint name -> its place among the outputs


@dataclass
class TrackStats:
    steps: int = 0
    cone_projections: int = 0      # control steps where F was projected into the cone (3.16)
    singular_solves: int = 0       # control steps solved by least squares because the system was singular
    clamp_solves: int = 0          # control steps re-solved within the torque clamp (TrackParams.clamp_aware)
    clamp_failures: int = 0        # ... where that QP had no answer, so the torques were clipped
    backward_steps: int = 0        # steps taken backwards (TrackParams.backward_steps), counted in steps too


class PhaseTrackingController:
    """The controller protocol's phase-indexed tracker of one fitted step, on a torque-actuated planar walker."""

    name = "track"
    capabilities: frozenset[str] = frozenset()

    def __init__(self, constraints: PhaseConstraints, params: TrackParams | None = None,
                 table: FriTable | None = None):
        self.constraints = constraints
        self.params = params or TrackParams()
        if (self.params.policy.kind == "vi") != (table is not None):
            raise ValueError("the 'vi' FRI policy needs its table, and only it takes one")
        if self.params.policy.unanswered not in UNANSWERED:
            raise ValueError(f"FriPolicy.unanswered must be one of {', '.join(UNANSWERED)}, got "
                             f"{self.params.policy.unanswered!r}")
        if self.params.clamp_aware and self.params.max_torque is None:
            raise ValueError("clamp_aware re-solves within a torque clamp: set max_torque too")
        if self.params.max_torque is not None and self.params.max_torque <= 0:
            raise ValueError(f"max_torque must be > 0 N m, got {self.params.max_torque}")
        if not self.params.contact_damping >= 0:
            raise ValueError(f"contact_damping must be >= 0 per second, got {self.params.contact_damping}")
        if not math.isfinite(self.params.late_strike_drop):
            raise ValueError(f"late_strike_drop must be a finite height, m, got {self.params.late_strike_drop}")
        if not (math.isfinite(self.params.late_strike_yield) and self.params.late_strike_yield >= 0):
            raise ValueError(f"late_strike_yield must be a finite rate >= 0, rad per rad, got "
                             f"{self.params.late_strike_yield}")
        if not math.isfinite(self.params.swing_knee_lift):
            raise ValueError(f"swing_knee_lift must be a finite angle, rad, got {self.params.swing_knee_lift}")
        self.table = table
        self.hold_fri: float | None = None   # a fixed share of the support, overriding the policy (VI sampling)
        self.control_period = 0.0          # every physics step; set at reset
        v = constraints.speed
        self.command_range = CommandRange(
            speed=(SPEED_SHARE[0] * v, SPEED_SHARE[1] * v), lateral_speed=(0.0, 0.0), max_turn_rate=0.0,
            stands=False, note=f"the tracker walks its motion's own steps, about {v:.2f} m/s; to change that, "
                               "edit and rectify the motion")

    # --- the controller protocol -----------------------------------------------------------------
    def reset(self, world: World, character: Character, start: State | str | None = None) -> None:
        """Bind to ``character``; None places it on the fitted step's first frame (its heel strike)."""
        self.world, self.character = world, character
        self.dynamics = Dynamics(world)
        self.control_period = world.timestep
        if self.params.contact_damping * world.timestep > 1.0:
            # Each step takes R * dt of a held point's velocity away: past 1 the rows reverse it, past 2 grow it.
            raise UsageError(f"contact damping must be at most 1 / timestep = {1.0 / world.timestep:g} per second "
                             f"(a held point's velocity decays by rate x timestep each step), got "
                             f"{self.params.contact_damping:g}")
        c = self.constraints
        ch = character
        if tuple(ch.joints) != c.joints:
            raise UsageError(f"the motion {c.name!r} was rectified for a character whose joints are "
                             f"{', '.join(c.joints)}; {ch.spec.name!r} has {', '.join(ch.joints)}: walk it on the "
                             f"character it was made for, or rectify it for {ch.spec.name} ('strider track rectify "
                             f"CLIP --character {ch.spec.name}')")
        self.dofs = np.array([ch.root_dof, ch.root_dof + 1, ch.root_dof + 2]
                             + [int(ch.joints[j].dof[0]) for j in c.joints])
        self.qpos = np.array([ch.root_qpos, ch.root_qpos + 1, ch.root_qpos + 2]
                             + [int(ch.joints[j].qpos[0]) for j in c.joints])
        self.actuators = np.array([int(ch.joints[j].servos[0]) for j in c.joints])
        legs = ch.spec.roles.legs
        self.legs = {side: legs[side] for side in ("left", "right")}
        # heel and toe (rows, in CONTACT_NAMES order) in each foot's frame; read in the world once a control step
        self.sole_local = {side: np.array([sole_points(ch.spec, leg.foot)[name] for name in CONTACT_NAMES])
                           for side, leg in self.legs.items()}
        self.foot_body = {side: ch.body(leg.foot) for side, leg in self.legs.items()}
        self.point_feet = has_point_feet(ch.spec)
        self.thigh_body = {side: ch.body(leg.upper) for side, leg in self.legs.items()}
        self.weight = ch.mass * world.scene.gravity
        self.contact_threshold = self.params.contact_share * self.weight   # N: a foot point is down above it
        self.labels = {side: np.array(c.mirror) if side != c.side else np.arange(len(c.joints)) for side in self.legs}
        # what a control step's solve looks like in each stage, for each stance leg: read once here
        self.layouts = {(k, side): self._layout(stage, side) for k, stage in enumerate(c.stages) for side in self.legs}
        self._roots, self._actuated = _as_slice(self.dofs[:3]), _as_slice(self.dofs[3:])
        self._output_kp, self._output_kd = self.params.gains.position, self.params.gains.velocity
        if begin_from(world, start):
            self._place_at_start()
        world.forward()
        self.stance = c.side
        self.stage = 0
        self.integral = 0.0
        self.jump = c.motion == "jump"
        self.anchor = float(self.foot_point(c.side, "toe")[X])   # a jump's phase is measured from here
        self.airborne = False                                      # both feet have left the ground in this flight
        self.stats = TrackStats()
        self.fallen = False
        self.last_theta = 0.0
        self.last_rate = 0.0
        self.last_fri = 0.0
        self.last_output_error = 0.0     # rad, RMS of the outputs y = q_a - c(theta) this step
        self.last_output_peak = 0.0      # rad, their largest magnitude
        nv = self.dynamics.nv
        self._hip_jacobian, self._ankle_jacobian, self._leg_jacobian = (np.zeros((3, nv)) for _ in range(3))
        self._mass = np.zeros((nv, nv))
        self._bias = np.zeros(nv)
        self._passive = np.zeros(nv)
        self._clamp_qp = None          # made on the first step the clamp binds (TrackParams.clamp_aware)
        self._ground_turn = ground_frame(c.ground_slope)
        self._joint_index = {name: i for i, name in enumerate(c.joints)}
        free = [stage for stage in c.stages if stage.swing == FREE]    # the swing phase: from lift-off to the strike
        self._swing_span = (free[0].theta[0], free[-1].theta[1]) if free else (0.0, 1.0)

    def set_command(self, command) -> None:
        """The tracker follows its fitted step; a command does not change it."""

    def has_fallen(self) -> bool:
        return self.fallen

    def info(self) -> dict:
        return {"steps": self.stats.steps, "stage": self.stage_now.label, "stance": self.stance,
                "theta": self.last_theta, "fri": self.last_fri, "cone_projections": self.stats.cone_projections,
                "singular_solves": self.stats.singular_solves, "backward_steps": self.stats.backward_steps}

    @property
    def stage_now(self) -> Stage:
        return self.constraints.stages[self.stage]

    def control(self, t: float) -> None:
        if latch_fall(self):
            return
        phase = self._phase()
        steps = self.stats.steps
        soles = self.soles()           # the state does not change within the step: both feet, read once
        self._advance_stage(phase[0], soles, phase[3])
        if self.stats.steps != steps:  # a new step's phase is the new stance leg's; a new jump's, from its toes
            phase = self._phase()
        torques = self._torques(phase, soles)
        if self.params.max_torque is not None:
            np.clip(torques, -self.params.max_torque, self.params.max_torque, out=torques)
        self.character.motor_torques[self.actuators] = torques

    # --- start -----------------------------------------------------------------------------------
    def _place_at_start(self) -> None:
        c, ch = self.constraints, self.character
        ch.data.qpos[self.qpos] = c.reference_q[0]
        ch.data.qvel[self.dofs] = c.reference_qd[0]

    def start_at(self, theta: float, rate: float) -> None:
        """Place the character on its fitted step's zero dynamics at phase ``theta`` and rate ``rate``: every output
        on its constraint (y = 0, y' = 0), the root's pitch and rates from the rectified frames at ``theta`` scaled
        to ``rate``, its height so the stance foot's lowest contact point rests on the ground, and its velocity so
        the stance foot's contact is still (a flat foot neither moves nor turns). The stance leg is the fitted
        step's own; the stage is the one ``theta`` lies in."""
        c, ch = self.constraints, self.character
        self.stance, self.stage, self.integral, self.fallen = c.side, c.stage_at(theta), 0.0, False
        self.airborne = False
        stage = self.stage_now
        value, slope, curvature = stage.evaluate(theta)
        if self.params.swing_knee_lift and stage.swing == FREE and not self.jump:
            knee = self._joint_index[self.legs[self.swing_side].knee]
            value, slope, _ = self._lift_swing_knee(theta, knee, value, slope, curvature)
        q, qd = c.reference_at(theta)
        qd *= rate / c.reference_rate_at(theta)
        q[3:], qd[3:] = value, slope * rate
        ch.data.qpos[self.qpos] = q
        ch.data.qvel[self.dofs] = qd
        self.world.forward()

        def clearance(name: str) -> float:
            p = self.foot_point(self.stance, name)
            return p[Z] - self.world.ground_height(p[X], p[1])

        if stage.stance != FREE:    # in the air (a jump's flight) the root stays where the rectified frames put it
            lowest = min((name for name in CONTACT_NAMES if active(stage.stance, name)), key=clearance)
            ch.data.qpos[self.qpos[1]] -= clearance(lowest)
            self.world.forward()
            # the root's velocity (x and z; and pitch for a flat foot) that keeps the stance foot's contact still
            rows = np.array(self._contact_rows(self.stance, stage.stance, self.sole(self.stance))[0])
            free = self.dofs[:len(rows)]
            ch.data.qvel[free] = 0.0
            ch.data.qvel[free] = np.linalg.solve(rows[:, free], -rows @ ch.data.qvel)
            self.world.forward()
        if self.jump:       # the toes' place that puts the centre of mass at theta
            self.anchor = float(ch.com_position()[X]) - theta
        if rate != 0.0:     # that correction moved the phase rate; every velocity is linear in it, so rescale
            ch.data.qvel[self.dofs] *= rate / self._phase()[3]
            self.world.forward()

    def phase_state(self) -> tuple:
        """The few values that change as the controller walks (stance leg, stage, integral, counters): with the
        world's own snapshot, a cheap point to branch a sampled walk from. Episode snapshots take the whole
        controller instead (:mod:`strider.control.snapshot`)."""
        return (self.stance, self.stage, self.integral, self.fallen, self.hold_fri, self.anchor, self.airborne,
                replace(self.stats))

    def set_phase_state(self, state: tuple) -> None:
        (self.stance, self.stage, self.integral, self.fallen, self.hold_fri, self.anchor, self.airborne,
         stats) = state
        self.stats = replace(stats)

    # --- stages ----------------------------------------------------------------------------------
    @property
    def swing_side(self) -> str:
        return "right" if self.stance == "left" else "left"

    def _point_forces(self, soles: dict[str, np.ndarray]) -> dict[tuple[str, str], float]:
        """Normal force under each foot's heel and toe, N (a contact goes to the nearer of the two); ``soles`` is
        :meth:`soles` of the current state."""
        out = {}
        feet = self.dynamics.ground_contacts(*(self.foot_body[side] for side in self.legs))
        for side, contacts in zip(self.legs, feet):
            heel_force = toe_force = 0.0
            if contacts:
                heel, toe = soles[side]
                # nearer the heel: on its side of the plane halfway between the two points (a point foot's heel
                # and toe coincide, and its force is the toe's, the point it stands on)
                axis = toe - heel
                halfway = 0.5 * float((heel + toe) @ axis)
                for point, force in contacts:
                    if float(point @ axis) < halfway:
                        heel_force += force
                    else:
                        toe_force += force
            out[side, "heel"], out[side, "toe"] = heel_force, toe_force
        return out

    def _advance_stage(self, theta: float, soles: dict[str, np.ndarray], rate: float) -> None:
        stages, p = self.constraints.stages, self.params
        threshold = self.contact_threshold
        stage = stages[self.stage]
        forces = None
        span = stages[-1].theta[1] - stages[0].theta[0]
        progressed = (theta - stages[0].theta[0]) / span >= p.strike_progress
        if p.backward_steps and not self.jump:
            backwards = rate < 0.0
            # only a swing foot the stage has in the air: a trailing foot in a double support is down by design
            if backwards and stage.swing == FREE and self._stepped_back(soles):
                return
            progressed = progressed and not backwards
        if self.jump:
            # a jump lands (on the legs it left from) only from its flight, once both feet have left the ground
            progressed = stage.stance == FREE and self.stage == len(stages) - 1
            if progressed and not self.airborne:
                forces = self._point_forces(soles)
                self.airborne = max(forces.values()) <= threshold
                progressed = False
        # a step of one stage (a point-footed walker's single support) may end in it; others once it is left
        if progressed and (self.stage > 0 or len(stages) == 1):
            forces = self._point_forces(soles)
            first = stages[0]
            strike = [name for name in CONTACT_NAMES if active(first.stance, name)]
            lands = self.stance if self.jump else self.swing_side
            if any(forces[lands, name] > threshold for name in strike):
                self.stance = lands
                self.stage = 0
                self.stats.steps += 1
                if self.jump:
                    self.anchor = float(soles[lands][1][X])
                    self.airborne = False
                return
        if self.stage + 1 >= len(stages):
            return
        nxt = stages[self.stage + 1]
        if nxt.makes_contact:
            forces = forces or self._point_forces(soles)
            new = [(self.stance, name) for name in CONTACT_NAMES
                   if active(nxt.stance, name) and not active(stage.stance, name)]
            new += [(self.swing_side, name) for name in CONTACT_NAMES
                    if active(nxt.swing, name) and not active(stage.swing, name)]
            if any(forces[key] > threshold for key in new):
                self.stage += 1
        elif theta >= stage.theta[1]:
            self.stage += 1

    def _stepped_back(self, soles: dict[str, np.ndarray]) -> bool:
        """Whether the swing foot has come down behind the stance foot; if so, it becomes the stance foot
        (TrackParams.backward_steps)."""
        swing = self.swing_side
        if soles[swing][1][X] >= soles[self.stance][0][X]:
            return False
        forces = self._point_forces(soles)
        if not any(forces[swing, name] > self.contact_threshold for name in CONTACT_NAMES):
            return False
        self.stance = swing
        self.stage = self.constraints.stage_at(self._phase()[0])
        self.stats.steps += 1
        self.stats.backward_steps += 1
        return True

    # --- kinematics ------------------------------------------------------------------------------
    def foot_point(self, side: str, name: str) -> np.ndarray:
        """World position of a foot's ``heel`` or ``toe`` contact point (the bottom of its sphere)."""
        return self.sole(side)[CONTACT_NAMES.index(name)]

    def sole(self, side: str) -> np.ndarray:
        """World positions of a foot's heel and toe contact points, rows in ``CONTACT_NAMES`` order."""
        return self.character.body_points(self.legs[side].foot, self.sole_local[side])

    def soles(self) -> dict[str, np.ndarray]:
        """:meth:`sole` of both feet."""
        return {side: self.sole(side) for side in self.legs}

    def _phase(self) -> tuple[float, np.ndarray, float, float]:
        """theta, its Jacobian (nv), its bias acceleration (theta'' at q'' = 0) and its rate."""
        if self.jump:
            return self._jump_phase()
        ch, dyn = self.character, self.dynamics
        leg = self.legs[self.stance]
        # a point foot has no ankle: theta is the angle of the line from the foot point (PlanarModel.stance_angle)
        ankle = self.foot_point(self.stance, "toe") if self.point_feet else ch.joint_anchor(leg.ankle)
        hip = ch.joint_anchor(leg.hip)
        d = hip - ankle
        thigh, foot = self.thigh_body[self.stance], self.foot_body[self.stance]
        J = np.subtract(dyn.point_jacobian(thigh, hip, self._hip_jacobian),
                        dyn.point_jacobian(foot, ankle, self._ankle_jacobian), out=self._leg_jacobian)
        bias = dyn.point_bias_linear(thigh, hip) - dyn.point_bias_linear(foot, ankle)
        qvel = ch.data.qvel
        dd = (J @ qvel).tolist()
        dx, dz = float(d[X]), float(d[Z])     # plain floats: the scalar arithmetic below is a tenth of NumPy's
        r2 = dx ** 2 + dz ** 2
        theta = math.atan2(dx, dz)
        Jth = (dz * J[X] - dx * J[Z]) / r2
        rate = float(Jth @ qvel)
        bias_th = (dz * float(bias[X]) - dx * float(bias[Z])) / r2 - 2.0 * (dx * dd[X] + dz * dd[Z]) * rate / r2
        return theta, Jth, bias_th, rate

    def _jump_phase(self) -> tuple[float, np.ndarray, float, float]:
        """A jump's theta: the centre of mass ahead of where the toes came down at the last landing
        (:meth:`PlanarModel.jump_phase`)."""
        dyn = self.dynamics
        root = self.character.root_body
        J = dyn.subtree_com_jacobian(root)[X].copy()
        bias = float(dyn.subtree_com_bias_acceleration(root)[X])
        return float(self.character.com_position()[X]) - self.anchor, J, bias, float(J @ self.character.data.qvel)

    # --- the control law -------------------------------------------------------------------------
    def _outputs(self, stage: Stage, stance: str) -> np.ndarray:
        """Indices (in the constraints' joint order) of the joints that are outputs in ``stage``: all but those the
        contacts take over, the flat stance foot's ankle (its torque places the FRI) and a trailing foot's knee and
        ankle (3.18-3.19)."""
        swing = "right" if stance == "left" else "left"
        dropped = set()
        if stage.stance == FLAT:
            dropped.add(self.legs[stance].ankle)
        if self._follows_force(stage):
            dropped |= {self.legs[stance].ankle, self.legs[stance].knee}
        if stage.swing != FREE:
            dropped |= {self.legs[swing].ankle, self.legs[swing].knee}
            if stage.swing == FLAT:
                dropped.add(self.legs[swing].hip)
        return np.array([i for i, name in enumerate(self.constraints.joints) if name not in dropped])

    def _layout(self, stage: Stage, stance: str) -> StageLayout:
        outputs = self._outputs(stage, stance)
        n_contact = 3 + CONTACT_ROWS[stage.stance] + CONTACT_ROWS[stage.swing]
        n_hard = n_contact + (2 if self._follows_force(stage) else 0)
        columns = self.labels[stance][outputs]
        dofs = self.dofs[3 + outputs]
        selection = np.zeros((len(outputs), self.dynamics.nv))
        selection[np.arange(len(outputs)), dofs] = 1.0
        return StageLayout(outputs=outputs, columns=columns, qpos=self.qpos[3 + outputs], dofs=dofs,
                           n_contact=n_contact, n_hard=n_hard, selection=selection,
                           position={self.constraints.joints[i]: k for k, i in enumerate(outputs)})

    def _follows_force(self, stage: Stage) -> bool:
        """Whether ``stage`` is a jump's push-off whose ground force is set (TrackParams.takeoff_force)."""
        return (self.params.takeoff_force and self.constraints.takeoff_force is not None
                and stage.stance == stage.swing == TOE)

    def _torques(self, phase: tuple[float, np.ndarray, float, float], soles: dict[str, np.ndarray]) -> np.ndarray:
        p, dyn, ch = self.params, self.dynamics, self.character
        stage = self.stage_now
        stance, swing = self.stance, self.swing_side
        theta, Jth, bias_th, rate = phase
        self.last_theta = theta
        qvel = ch.data.qvel
        self.last_rate = rate
        shape = self._rolled_back_stage(stage, theta, rate, soles) if p.swing_retraces else stage
        layout = self.layouts[self.stage, stance]
        outputs = layout.outputs
        # c(theta) and its derivatives of the outputs alone, relabelled for the stance leg
        value, slope, curvature = shape.evaluate_rows(theta)[:, layout.columns]
        if p.swing_knee_lift and stage.swing == FREE and not self.jump:
            value, slope, curvature = self._lift_swing_knee(theta, layout.position[self.legs[swing].knee], value,
                                                            slope, curvature)
        if p.late_strike_yield and theta > stage.theta[1] and stage.swing == FREE and not self.jump \
                and self.stage == len(self.constraints.stages) - 1 and self._ground_drops(soles, stance, swing):
            value, slope = self._yield_stance_knee(theta - stage.theta[1], layout.position[self.legs[stance].knee],
                                                   value, slope)

        M = dyn.mass_matrix(self._mass)
        h = dyn.bias_forces(self._bias)
        tau_passive = dyn.passive_forces(self._passive)
        nv = dyn.nv
        loads = self._loads(stage, stance, swing, theta, rate, soles)
        n_force = 2 if loads else 0

        y = ch.data.qpos[layout.qpos] - value
        yd = qvel[layout.dofs] - slope * rate
        target = -self._output_kp * y - self._output_kd * yd
        self.last_output_error = math.sqrt(float(y @ y) / len(y))
        self.last_output_peak = float(np.abs(y).max())

        # hard rows: the root's equation of motion, the contacts, a set ground force; then one row per output
        G = np.zeros((nv, 2))
        for J, weight in loads:
            G += weight * J.T
        n_contact, n_hard = layout.n_contact, layout.n_hard
        A = np.zeros((n_hard + len(outputs), nv + n_force))
        b = np.empty(len(A))
        roots = self._roots
        A[:3, :nv] = M[roots]
        A[:3, nv:] = -G[roots, :n_force]
        b[:3] = tau_passive[roots] - h[roots]
        # the feet in contact: their rows hold the points' accelerations at zero
        row = 3
        for side, mode in ((stance, stage.stance), (swing, stage.swing)):
            rows, bias = self._contact_rows(side, mode, soles[side])
            for J, bias_acceleration in zip(rows, bias):
                A[row, :nv] = J
                b[row] = -bias_acceleration
                row += 1
        assert row == n_contact, (row, n_contact)     # CONTACT_ROWS and _contact_rows agree on each mode's rows
        if n_hard > n_contact:
            A[n_contact:n_hard, nv:] = np.eye(2)
            b[n_contact:n_hard] = self.constraints.takeoff_force_at(theta)
        A[n_hard:, :nv] = layout.selection - slope[:, None] * Jth
        b[n_hard:] = target + curvature * rate ** 2 + slope * bias_th
        z = None
        if A.shape[0] == A.shape[1]:
            # LAPACK's gesv directly: numpy's solve spends twice the factorization's time on checks at this size
            _, _, z, info = lapack.dgesv(A, b)
            if info != 0:
                z = None
        if z is None:
            z = np.linalg.lstsq(A, b, rcond=None)[0]
            self.stats.singular_solves += 1
        qacc, force = z[:nv], z[nv:]
        if n_force:
            fixed = _into_cone(force, p.friction, self._ground_turn)
            if fixed is not None:
                self.stats.cone_projections += 1
                force = fixed
                qacc = _least_squares_with_force(A[:n_hard, :nv], b[:n_hard] - A[:n_hard, nv:] @ force,
                                                 A[n_hard:, :nv], b[n_hard:])
        u = M @ qacc + h - tau_passive
        if n_force:
            u -= G @ force
        actuated = self._actuated
        limit = p.max_torque
        if p.clamp_aware and limit is not None and np.max(np.abs(u[actuated])) > limit:
            # u is linear in (q'', F): u = [M, -G] z + (h - tau_passive); keep the hard rows, the cone, the clamp
            S = np.hstack([M, -G[:, :n_force]])[actuated]
            z = self._within_clamp(A, b, n_hard, S, (h - tau_passive)[actuated], limit, n_force)
            if z is not None:
                return S @ z + (h - tau_passive)[actuated]
        return u[actuated]

    def _rolled_back_stage(self, stage: Stage, theta: float, rate: float, soles: dict[str, np.ndarray]) -> Stage:
        """The stage whose constraints the joints follow (TrackParams.swing_retraces): the one ``theta`` is in once the
        walker has rolled back below the start of ``stage`` onto a stance point ``stage`` has off the ground; else
        ``stage``."""
        if not (theta < stage.theta[0] and rate < 0.0 and stage.swing == FREE) or self.jump:
            return stage
        forces = self._point_forces(soles)
        if not any(forces[self.stance, name] > self.contact_threshold
                   for name in CONTACT_NAMES if not active(stage.stance, name)):
            return stage
        return self.constraints.stages[self.constraints.stage_at(theta)]

    def _ground_drops(self, soles: dict[str, np.ndarray], stance: str, swing: str) -> bool:
        """Whether the ground under the swing heel lies more than TrackParams.late_strike_drop below the ground under
        the stance toe (a slope or a step down ahead)."""
        heel, toe = soles[swing][0], soles[stance][1]
        ground = self.world.ground_height
        return ground(toe[X], toe[1]) - ground(heel[X], heel[1]) > self.params.late_strike_drop

    def _yield_stance_knee(self, past: float, i: int, value: np.ndarray,
                           slope: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """c(theta) and its slope with the stance knee bent on by TrackParams.late_strike_yield for each rad of phase
        ``past`` the step's end (the curvature stays the held pose's zero); ``i``: the knee's place in the arrays,
        which are changed in place (the caller's own, fresh from the stage's cubic)."""
        rate = self.params.late_strike_yield
        value[i] += rate * past
        slope[i] = rate
        return value, slope

    def _lift_swing_knee(self, theta: float, i: int, value: np.ndarray, slope: np.ndarray,
                         curvature: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """c(theta) and its first two derivatives with the swing knee's bump added (TrackParams.swing_knee_lift):
        lift x sin^2(pi u), u the share of the swing phase passed; ``i``: the knee's place in the arrays, which are
        changed in place (the caller's own, fresh from the stage's cubic)."""
        start, end = self._swing_span
        width = end - start
        u = (theta - start) / width
        if not 0.0 < u < 1.0:
            return value, slope, curvature
        lift = self.params.swing_knee_lift
        value[i] += lift * math.sin(math.pi * u) ** 2
        slope[i] += lift * math.pi * math.sin(2.0 * math.pi * u) / width
        curvature[i] += lift * 2.0 * math.pi ** 2 * math.cos(2.0 * math.pi * u) / width ** 2
        return value, slope, curvature

    def _within_clamp(self, A: np.ndarray, b: np.ndarray, n_hard: int, S: np.ndarray, offset: np.ndarray,
                      limit: float, n_force: int) -> np.ndarray | None:
        from strider.optimize.qp import QPSolver, TaskQP  # here: loading the QP backends costs 0.3 s

        self.stats.clamp_solves += 1
        if self._clamp_qp is None:
            self._clamp_qp = QPSolver()
        problem = TaskQP(A.shape[1])
        problem.add(A[n_hard:], b[n_hard:], 1.0)
        rows, bounds = [S, -S], [limit - offset, limit + offset]
        if n_force:
            cone = np.zeros((3, A.shape[1]))
            mu = self.params.friction
            # F_n >= 0 and |F_t| <= mu F_n, with (F_t, F_n) = R F in the ground's frame
            cone[:, -2:] = np.array([[0.0, -1.0], [1.0, -mu], [-1.0, -mu]]) @ self._ground_turn
            rows.append(cone)
            bounds.append(np.zeros(3))
        z = self._clamp_qp.solve(problem, A=A[:n_hard], b=b[:n_hard], G=np.vstack(rows), h=np.concatenate(bounds))
        if z is None:
            self.stats.clamp_failures += 1
        return z

    def _contact_rows(self, side: str, mode: int, sole: np.ndarray) -> tuple[list[np.ndarray], list[float]]:
        """Jacobian rows and bias accelerations holding a foot (its ``sole`` points now) in ``mode``: a point's x
        and z, and a flat foot's pitch besides its heel (the toe's rows would repeat them)."""
        if mode == FREE:
            return [], []
        dyn, foot = self.dynamics, self.foot_body[side]
        point = sole[1 if mode == TOE else 0]
        J = dyn.point_jacobian(foot, point)     # a new array each call: its rows need no copies
        if mode == FLAT:
            lin, ang = dyn.point_bias_acceleration(foot, point)
            rows, bias = [J[X], J[Z], dyn.rotation_jacobian(foot)[Y_AXIS]], [lin[X], lin[Z], ang[Y_AXIS]]
        else:
            lin = dyn.point_bias_linear(foot, point)
            rows, bias = [J[X], J[Z]], [lin[X], lin[Z]]
        damping = self.params.contact_damping
        if damping:     # J q'' = -J'q' - damping J q': the held point's velocity decays instead of persisting
            qvel = self.character.data.qvel
            bias = [b + damping * float(row @ qvel) for row, b in zip(rows, bias)]
        return rows, bias

    def _loads(self, stage: Stage, stance: str, swing: str, theta: float, rate: float, soles: dict[str, np.ndarray]):
        """Where the ground force F acts: per point, the x-z rows of its Jacobian and its share of F."""
        if stage.stance == FREE:
            return []
        if self.jump and stage.swing == stage.stance:
            return self._both_feet_loads(stage, theta, rate, soles)
        dyn = self.dynamics
        heel, toe = soles[stance]
        front = toe if stage.stance == TOE else heel     # the stance point nearest the trailing foot
        rear = soles[swing][1 if stage.swing == TOE else 0] if stage.swing != FREE else None
        if places_fri(stage):
            margin = self.params.policy.margin
            lo, hi = (heel[X] + margin, toe[X] - margin) if stage.stance == FLAT else (front[X], front[X])
            if rear is not None:   # both feet down: the support spans the trailing foot too
                lo = rear[X]
            fri = self._fri(stage, theta, rate, heel[X], lo, hi)
        else:
            fri = front[X]
        self.last_fri = fri
        foot = self.foot_body[stance]
        if rear is None or fri >= front[X]:
            point = _along_sole(heel, toe, (fri - heel[X]) / (toe[X] - heel[X])) if stage.stance == FLAT else front
            return [(dyn.point_jacobian(foot, point)[X_Z], 1.0)]
        # behind the stance foot: F splits into parallel forces at the two feet by the lever rule about the FRI
        rear_share = (front[X] - fri) / (front[X] - rear[X])
        return [(dyn.point_jacobian(foot, front)[X_Z], 1.0 - rear_share),
                (dyn.point_jacobian(self.foot_body[swing], rear)[X_Z], rear_share)]

    def _both_feet_loads(self, stage: Stage, theta: float, rate: float, soles: dict[str, np.ndarray]):
        """A jump's feet side by side in the same mode: F is shared equally, at the same place along each foot."""
        dyn = self.dynamics
        heel, toe = soles[self.stance]
        if stage.stance == FLAT:
            margin = self.params.policy.margin
            fri = self._fri(stage, theta, rate, heel[X], heel[X] + margin, toe[X] - margin)
            along = (fri - heel[X]) / (toe[X] - heel[X])
        else:
            along = 1.0 if stage.stance == TOE else 0.0
            fri = heel[X] + along * (toe[X] - heel[X])
        self.last_fri = fri
        loads = []
        for side in self.legs:
            back, front = soles[side]
            loads.append((dyn.point_jacobian(self.foot_body[side], _along_sole(back, front, along))[X_Z],
                          0.5))
        return loads

    def _fri(self, stage: Stage, theta: float, rate: float, heel_x: float, lo: float, hi: float) -> float:
        """The policy's FRI (world x) along a flat stance foot, the integral advanced one control step."""
        policy = self.params.policy
        share = self.hold_fri if self.hold_fri is not None else \
            self.table.action(theta, rate, policy.unanswered == "nearest") if self.table is not None else None
        if share is not None:
            return lo + share * (hi - lo)
        fri = heel_x + stage.centre_of_pressure
        if policy.kind == "integral":
            fri += policy.gain * self.integral
            error = rate - self.constraints.reference_rate_at(theta)
            pinned = (fri >= hi and error > 0) or (fri <= lo and error < 0)
            if not pinned:
                self.integral += error * self.control_period
        return min(max(fri, lo), hi)

def fallen(world: World, character: Character, rule: FallRule) -> bool:
    """The protocols' fall (:class:`FallRule`), or an engine that blew up; for any planar walker's controller."""
    ch = character
    if world.instability() or ch.non_foot_contact():
        return True
    pelvis = ch.body_position(ch.spec.bodies[0].name)
    if pelvis[Z] - world.ground_height(pelvis[X], pelvis[1]) < rule.pelvis_height:
        return True
    R = ch.body_rotation(ch.spec.roles.torso)
    return abs(math.degrees(math.atan2(R[0, 2], R[2, 2]))) > rule.torso_pitch


def latch_fall(controller) -> bool:
    """Whether a planar walker's controller (``world``, ``character``, ``params.falls``, ``fallen``) is down: the
    fall is latched in ``controller.fallen`` and the motors are off from the step it happens."""
    if not controller.fallen and fallen(controller.world, controller.character, controller.params.falls):
        controller.fallen = True
        controller.character.motor_torques[:] = 0.0
    return controller.fallen


def _as_slice(indices: np.ndarray) -> slice | np.ndarray:
    """``indices`` as a slice when they run consecutively (a view reads faster than a gather), else as they are."""
    if len(indices) and np.array_equal(indices, np.arange(indices[0], indices[0] + len(indices))):
        return slice(int(indices[0]), int(indices[0]) + len(indices))
    return indices


def _along_sole(heel: np.ndarray, toe: np.ndarray, share: float) -> np.ndarray:
    """The point ``share`` of the way from a foot's heel to its toe."""
    return heel + share * (toe - heel)


def places_fri(stage: Stage) -> bool:
    """Whether the support in ``stage`` is more than one point, so an FRI policy has a place to choose: a flat stance
    foot, or any stance with the trailing foot down too."""
    return stage.stance == FLAT or (stage.stance != FREE and stage.swing != FREE)


def ground_frame(slope_deg: float) -> np.ndarray:
    """R taking a world (x, z) force to (along, normal to) the ground z = tan(slope) x."""
    a = math.radians(slope_deg)
    return np.array([[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]])


def _into_cone(force: np.ndarray, mu: float, turn: np.ndarray) -> np.ndarray | None:
    """Algorithm 1's clip with mu, about the ground's normal (``turn`` = :func:`ground_frame`): None when F is
    inside the cone already."""
    along, normal = turn @ force
    if normal < 0.0:
        return np.zeros(2)
    if abs(along) > mu * normal:
        return turn.T @ np.array([math.copysign(mu * normal, along), normal])
    return None


def _least_squares_with_force(A_hard: np.ndarray, b_hard: np.ndarray, A_soft: np.ndarray,
                              b_soft: np.ndarray) -> np.ndarray:
    """min |A_soft x - b_soft|^2 subject to A_hard x = b_hard (3.16), by its KKT system."""
    n, m = A_soft.shape[1], A_hard.shape[0]
    K = np.zeros((n + m, n + m))
    K[:n, :n] = A_soft.T @ A_soft
    K[:n, n:] = A_hard.T
    K[n:, :n] = A_hard
    rhs = np.concatenate([A_soft.T @ b_soft, b_hard])
    return np.linalg.lstsq(K, rhs, rcond=None)[0][:n]


POLICIES = ("integral", "constant", "vi")


# strider's additions turned off: contact rows that hold accelerations only, the swing as rectified, a walker that
# rolls back holding its stage's first pose, and one whose phase runs past its step's end holding the step's last pose
SOURCE_SETTINGS = {"contact_damping": 0.0, "swing_knee_lift": 0.0, "swing_retraces": False, "late_strike_yield": 0.0}
NON_NEGATIVE_SETTINGS = ("contact_damping", "late_strike_yield")   # rates: a negative one would drive the other way
SOURCE_CONFIG = ",".join(["integral"] + [f"{key}={value:g}" for key, value in SOURCE_SETTINGS.items()])   # --config source
SWITCH_VALUES = {"0": False, "1": True, "off": False, "on": True}   # how --config spells an on/off setting


def parse_config(config: str) -> tuple[str, dict]:
    """``--config`` of the tracker: its FRI policy, then settings after commas. The policy is ``default`` (=
    ``integral``), ``integral``, ``constant``, ``vi`` (the value-iteration table made for the motion) or
    ``vi:PATH`` (a table file); a setting is ``contact_damping=R`` (1/s, >= 0), ``swing_knee_lift=RAD``,
    ``swing_retraces=on|off`` or ``late_strike_yield=R`` (rad per rad, >= 0), each 0 or off for the source's. ``source``
    is the source's configuration, ``integral`` with all four so. Returns the policy (``vi`` or ``vi:PATH`` kept whole)
    and the TrackParams fields the settings change."""
    if config == "source":
        config = SOURCE_CONFIG
    policy, *settings = config.split(",")
    kind = policy.split(":", 1)[0]
    if not (policy == "default" or policy in POLICIES or (kind == "vi" and policy != "vi:")):
        raise UsageError(f"--config for the tracker names its FRI policy (default, {', '.join(POLICIES)} or "
                         f"vi:PATH), then optional settings such as ',contact_damping=0', or is 'source'; "
                         f"got {config!r}")
    changes = {}
    for setting in settings:
        key, _, value = (part.strip() for part in setting.partition("="))
        if key not in SOURCE_SETTINGS:
            raise UsageError(f"--config for the tracker takes the settings {', '.join(SOURCE_SETTINGS)} after its "
                             f"policy, as name=value; got {setting!r}")
        if isinstance(SOURCE_SETTINGS[key], bool):
            if value.lower() not in SWITCH_VALUES:
                raise UsageError(f"--config: {key} is on or off; got {value!r}")
            changes[key] = SWITCH_VALUES[value.lower()]
            continue
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and (number >= 0 or key not in NON_NEGATIVE_SETTINGS)):
            raise UsageError(f"--config: {key} must be a finite number{' >= 0' if key in NON_NEGATIVE_SETTINGS else ''};"
                             f" got {value!r}")
        changes[key] = number
    return ("integral" if policy == "default" else policy), changes


def check_config(config: str) -> None:
    """Raise a UsageError naming what is wrong with a tracker ``--config`` (:func:`parse_config`)."""
    parse_config(config)
