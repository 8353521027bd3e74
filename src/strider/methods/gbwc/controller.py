"""Generalized Biped Walking Control (Coros 2010, Ch. 5; specs/coros-walking.md, Sec. 3.4).

Every control update:

1. the step state machine advances (foot strike or t >= T) and gives the phase;
2. the desired speed and heading move towards the command (bounded acceleration
   and turn rate, Sec. 5.3.5);
3. inverted-pendulum placement picks where the swing foot lands (Sec. 5.3.2),
   the swing ankle follows a path there, and two-link IK turns it into hip and
   knee targets;
4. style trajectories give every other joint's target, parent-relative or in
   the character frame (Sec. 5.3.1);
5. PD servos track the targets; gravity compensation (Sec. 5.3.4), velocity
   tuning through the stance leg (Sec. 5.3.3) and the root torque through the
   stance hip (Eq. 2.3) are added as joint torques.

Standing (Sec. 5.5.1) uses the same pieces with both feet down: velocity tuning
pulls the COM over the middle of the feet, and the character takes a step when
it is pushed too far or too fast.
"""

from __future__ import annotations

import itertools

import numpy as np

from strider import quat
from strider.control.controller import CommandRange, HeadingTarget, LocomotionCommand, begin_from
from strider.control.falls import FallJudge
from strider.control.fastmath import clamp
from strider.control.frames import CharacterFrame
from strider.control.gravity import lifting_forces
from strider.control.ik import segment_frame
from strider.control.leg_geometry import SIDES, LegGeometry
from strider.control.step_fsm import StepStateMachine
from strider.methods.gbwc.carrying import Carrying
from strider.methods.gbwc.params import MAX_STEP_WIDTH, GBWCParams
from strider.methods.gbwc.placement import FootPlacement
from strider.methods.gbwc.posture import Posture
from strider.methods.gbwc.stepping import Stepping
from strider.methods.gbwc.torques import JointTorques
from strider.sim import Character, State, World


class GBWC(Stepping, FootPlacement, Posture, JointTorques, Carrying):
    """The GBWC walking controller. Commands live in :attr:`command` and may change at any time.

    This module holds its state (set up in :meth:`reset`) and the control update; each concept of Ch. 5 is a
    module of its own, mixed in: the step cycle (``stepping``), foot placement and the swing leg
    (``placement``), the motion generator's targets (``posture``), the joint torques (``torques``) and the hands
    (``carrying``: reaching and holding a load).
    """

    name = "gbwc"
    capabilities = frozenset({"recovery_step"})   # strider.methods.registry.RECOVERY_STEP

    def __init__(self, command: LocomotionCommand | None = None, params: GBWCParams | None = None):
        self.command = command or LocomotionCommand()
        self.params = params = params or GBWCParams()
        self.control_period = params.control_period
        self.command_range = CommandRange(
            speed=params.speed_range, period=params.period_range, max_turn_rate=params.max_turn_rate,
            lateral_speed=(-params.lateral_speed_limit, params.lateral_speed_limit),
            step_width=(0.0, MAX_STEP_WIDTH), note="the walking envelope of Coros 2010, Sec. 5.5.1")
        self.world: World | None = None
        self.character: Character | None = None

    # --- setup ------------------------------------------------------------------------------
    def reset(self, world: World, character: Character, start: State | str | None = None) -> None:
        """Bind to ``character`` and begin from ``start`` (the controller contract): None puts it in the standing
        pose; ``AS_IS`` takes it over as it is (another controller hands over mid-motion)."""
        place = begin_from(world, start)
        self.world, self.character = world, character
        spec = character.spec
        self.spec = spec
        self.roles = spec.roles
        self.legs = {s: LegGeometry.of(spec, s) for s in SIDES}
        self.leg_length = spec.leg_length()
        self.weight = character.mass * world.scene.gravity
        self.gravity = world.scene.gravity
        self.root_gains = spec.root_gains
        self._hip_gains = {s: spec.joint_gains(self.roles.legs[s].hip) for s in SIDES}
        # The root gains per stance side, scaled per hip axis while walking (_root_control), computed once.
        self._root_axis_gains = {(s, walking): (self.root_gains.kp * scale, self.root_gains.kd * scale)
                                 for s in SIDES for walking, scale in ((True, self._root_gain_scale(s)), (False, 1.0))}
        # The largest heading error the root PD (Eq. 2.3) acts on: past it, its stiffness alone would ask the
        # stance hip for more than the hip's torque limit (0.2 rad for the shipped characters).
        self._heading_lag_limit = min(self._hip_gains[s].limit for s in SIDES) / self.root_gains.kp
        self._ball = [n for n, j in character.joints.items() if j.kind == "ball"]
        self._ball_index = {n: i for i, n in enumerate(self._ball)}
        self._ball_qpos = np.array([character.joints[n].qpos for n in self._ball])
        self._ball_servos = np.array([character.joints[n].servos for n in self._ball])
        self._dof_slot = {int(d): i for i, d in enumerate(character.internal_dofs)}
        # Index arrays resolved once, so an update does no name lookups: each joint's torque slots (positions
        # in ``internal_dofs``), each hinge target's servo, and the ball-servo rows of each set of targets.
        self._slots = {n: np.array([self._dof_slot[int(d)] for d in j.dof]) for n, j in character.joints.items()}
        # Per leg: the knee's, ankle's and hip's DOF columns of a Jacobian, and where each joint's lie among them.
        self._leg_dof_columns, self._leg_dof_slots = {}, {}
        for s in SIDES:
            dofs = [character.joints[getattr(self.roles.legs[s], j)].dof for j in ("knee", "ankle", "hip")]
            self._leg_dof_columns[s] = np.concatenate(dofs)
            ends = [0, *np.cumsum([len(d) for d in dofs]).tolist()]
            self._leg_dof_slots[s] = tuple(slice(a, b) for a, b in itertools.pairwise(ends))
        self._hinge_servo = {}
        for n, j in character.joints.items():
            self._hinge_servo[n] = int(j.servos[0])
            for k, servo in enumerate(j.servos):
                self._hinge_servo[(n, k)] = int(servo)
        self._ball_rows: dict[tuple[str, ...], tuple[tuple[str, ...], np.ndarray, np.ndarray]] = {}
        self._upper_body_cache: tuple | None = None
        self._lift = lifting_forces(character.dof_subtree()[1], self.gravity)   # gravity compensation's M_j g
        self._stance_leg_mask = {s: self._leg_dof_mask(s) for s in SIDES}
        self._setup_hands()
        self._foot_bodies = {s: [character.body(self.roles.legs[s].foot)]
                             + ([character.body(self.roles.legs[s].toes)] if self.roles.legs[s].toes else [])
                             for s in SIDES}
        self._knee_gains = {s: spec.joint_gains(self.roles.legs[s].knee) for s in SIDES}
        # The thigh's and shank's local (long axis, knee axis) frames, for orienting them in the swing IK.
        self._segment_frames = {s: (segment_frame(self.legs[s].upper_dir, self.legs[s].knee_axis),
                                    segment_frame(self.legs[s].lower_dir, self.legs[s].knee_axis)) for s in SIDES}
        self.fsm = StepStateMachine(period=self.command.period)
        self.mode = "standing"
        self.desired_speed = 0.0
        self.desired_lateral_speed = 0.0
        root_q = character.body_quat(self.roles.root)
        self.heading = quat.yaw(root_q)
        heading = self.command.heading
        self.target_heading = HeadingTarget(self.heading if heading is None else heading)
        self._following_jump = False   # turning to a commanded heading jump: the heading yield stands aside
        self._fall_judge = FallJudge(world, character, self.params.falls)
        self.fallen = False
        self._recovering = False    # stepping to stop a push (recovery_step), not a commanded stop
        self._crossover = False     # this recovery step swings the lifted foot across the loaded one
        self._soft_stance = False   # this recovery softens the stance hip (recovery_backward_hip_scale)
        self._stance_hold: np.ndarray | None = None
        # Both ankles' positions (plain floats), read once per update by control().
        self._ankles = {s: character.joint_anchor(self.roles.legs[s].ankle).tolist() for s in SIDES}
        self._swing_start = np.zeros(2)
        self._lateral_strike = 0.0
        self._speed_error_integral = 0.0
        self._previous_swing_targets: dict | None = None
        self._previous_swing_key: tuple | None = None
        if place:
            self._pose_initial()
        self._begin_step()

    def _root_gain_scale(self, side: str) -> np.ndarray:
        """Per hip-servo axis factor on the root gains: full about the thigh's twist axis, reduced about the others.

        The hip servo axes are the thigh frame's; the one along the thigh turns the pelvis about the vertical.
        """
        scale = np.full(3, self.params.root_tilt_scale)
        scale[int(np.argmax(np.abs(self.legs[side].upper_dir)))] = 1.0
        return scale

    def _leg_dof_mask(self, side: str) -> np.ndarray:
        leg = self.roles.legs[side]
        mask = np.zeros(len(self.character.internal_dofs), dtype=bool)
        for jn in (leg.hip, leg.knee, leg.ankle, leg.toe):
            if jn:
                for d in self.character.joints[jn].dof:
                    mask[self._dof_slot[int(d)]] = True
        return mask


    # --- the control update ------------------------------------------------------------------
    def set_command(self, command: LocomotionCommand) -> None:
        self.command = command
        self.target_heading.follow(command)
        self._note_heading_jump()

    def command_step(self, command: LocomotionCommand) -> None:
        """Take ``command`` as one of Coros 2010's per-step controllers (Ch. 4): at once, its speed without the
        ramp of :meth:`set_command`. A task-level policy switches controllers at foot strikes, each walking
        with its own V_d from the strike on."""
        self.set_command(command)
        if command.walking and self.mode == "walking":
            self.desired_speed = command.speed

    def has_fallen(self) -> bool:
        return self.fallen

    def info(self) -> dict:
        return {"mode": self.mode, "stance": self.fsm.stance, "phase": self.fsm.phase, "steps": self.fsm.steps,
                "desired_speed": self.desired_speed, "heading": self.heading,
                "target_heading": self.target_heading.value, "recovery": self._recovery_kind()}


    def control(self, t: float) -> None:
        ch, p = self.character, self.params
        dt = self.control_period
        com, com_vel = self._com_state()
        root_q = ch.body_quat(self.roles.root)
        foot_force = dict(zip(SIDES, ch.contact_normal_force_each([self._foot_bodies[s] for s in SIDES])))
        # Both ankles' positions as plain floats, read once: the swing placement, step timing and velocity
        # tuning all need the stance ankle, and the data do not change within an update.
        self._ankles = {s: ch.joint_anchor(self.roles.legs[s].ankle).tolist() for s in SIDES}
        self._check_fall()
        self._update_commands(dt)
        self._yield_heading(self._follow_heading_jump(root_q))
        frame = CharacterFrame(self.heading, com)
        v_local = frame.to_local(com_vel)
        if self.mode == "walking" and not self._following_jump:
            limit = self.params.speed_integral_limit
            self._speed_error_integral = float(clamp(
                self._speed_error_integral + (self.desired_speed - v_local[0]) * dt, -limit, limit))

        if self.mode == "standing":
            self._maybe_start_stepping(com, v_local, frame)
        elif self.mode == "starting":
            self._maybe_lift_first_foot(com, frame, foot_force)
        else:
            self.fsm.period = self.command.period
            if self.fsm.advance(dt, foot_force[self.fsm.swing], self.weight, p.strike,
                                remaining=self._remaining_step_time(com, v_local, frame)):
                self._crossover = False
                self._on_foot_strike(v_local)
                if self.mode != "standing":
                    self._begin_step()

        targets: dict[str, np.ndarray] = {}
        hinges: dict[str, float] = {}
        torques = np.zeros(len(ch.internal_dofs))
        self._upper_body_targets(frame, targets, hinges)
        if self.mode in ("standing", "starting"):
            support = SIDES
            self._standing_leg_targets(frame, targets, hinges)
        else:
            support = (self.fsm.stance,)
            self._swing_leg_targets(frame, com, v_local, targets, hinges)
            self._stance_leg_targets(frame, v_local, targets, hinges)
        self._write_servos(targets, hinges)
        if self.mode == "walking" or self.mode == "stopping":
            self._track_swing_velocity(targets, hinges)

        torques += self._gravity_compensation(support)
        if self.load is not None:
            self._load_compensation(torques)
        hip_vt = self._velocity_tuning(com, v_local, frame, support, foot_force, torques)
        self._root_control(root_q, support, foot_force, hip_vt, torques)
        ch.set_feedforward_torques(torques)

    # --- commands, modes and steps --------------------------------------------------------------


    # --- targets ------------------------------------------------------------------------------------


    # --- writing servo targets ----------------------------------------------------------------------


    # --- torques ---------------------------------------------------------------------------------------


def build(command: LocomotionCommand, style: str, config: str = "default") -> GBWC:
    """The registry's factory: GBWC with a named style or a style file in a named configuration (``default``,
    ``thesis``, ``without:ADDITION,...``; see :mod:`strider.methods.registry` and ``params.ADDITIONS``)."""
    from strider.methods.gbwc.params import load_style

    return GBWC(command, GBWCParams(style=load_style(style)).configured(config))
