"""Generalized Biped Walking Control (seed 000, Ch. 5; specs/coros-walking.md, Sec. 3.4).

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
import math
from dataclasses import dataclass

import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec
from strider.control.capture import capture_offset
from strider.control.controller import CommandRange, HeadingTarget, LocomotionCommand, begin_from
from strider.control.falls import FallJudge
from strider.control.fastmath import clamp
from strider.control.frames import CharacterFrame
from strider.control.gravity import lifting_forces, lifting_torques
from strider.control.ik import (
    orient_frame,
    reachable_share,
    segment_frame,
    two_link_floats,
    universal_angles,
    within_reach_floats,
)
from strider.control.ipm import slope_step_offset, step_offset
from strider.control.pd import servo_command, servo_commands
from strider.control.stance_hip import stance_hip_servo_command
from strider.control.step_fsm import StepStateMachine, other
from strider.control.step_timing import remaining_step_time
from strider.control.velocity_tuning import lateral_force, lateral_target, sagittal_force, standing_sagittal_force
from strider.control.virtual_force import com_relative_to_foot, jacobian_transpose
from strider.methods.gbwc.params import MAX_STEP_WIDTH, GBWCParams
from strider.sim import Character, State, World

SIDES = ("left", "right")

SIDE_SIGN = {"left": 1.0, "right": -1.0}

STANDING_COM_AHEAD_OF_ANKLES = 0.03   # m: the ankle sits behind the middle of the foot
SLOPE_PROBE = 0.1   # m between the ground-height samples that give the slope under the stance foot
MIN_SLOPE_OFFSET = 1e-6   # m: below this flat IPM offset the slope's scaling is left out (no division by ~0)
MIN_LEVER_HEIGHT = 0.1                # m: floor on the COM height used to turn the weight moment into a force


@dataclass(frozen=True)
class _LegGeometry:
    """Lengths and rest directions of one leg, read from the character spec."""

    upper: float
    lower: float
    upper_dir: np.ndarray     # hip -> knee in the thigh frame (unit)
    lower_dir: np.ndarray     # knee -> ankle in the shank frame (unit)
    knee_axis: np.ndarray     # knee hinge axis in the thigh frame
    ankle_height: float       # ankle centre above the sole with the foot flat
    ankle_sign: float         # +1 when the ankle's first hinge is +x, -1 for -x
    support: np.ndarray       # sole extent from the ankle: (half width, front, back), m

    @staticmethod
    def of(spec: CharacterSpec, side: str) -> _LegGeometry:
        leg = spec.roles.legs[side]
        upper, lower, foot = spec.body(leg.upper), spec.body(leg.lower), spec.body(leg.foot)
        hip_to_knee = np.subtract(lower.joint.anchor_parent, upper.joint.anchor_child)
        knee_to_ankle = np.subtract(foot.joint.anchor_parent, lower.joint.anchor_child)
        sole = min(min(g.start[2], g.end[2]) - (g.radius if g.kind != "box" else 0.0) for g in foot.geoms)
        ankle = np.asarray(foot.joint.anchor_child)
        xs = [x for g in foot.geoms for x in (g.start[0], g.end[0])]
        ys = [abs(y) for g in foot.geoms for y in (g.start[1], g.end[1])]
        return _LegGeometry(
            upper=float(np.linalg.norm(hip_to_knee)), lower=float(np.linalg.norm(knee_to_ankle)),
            upper_dir=hip_to_knee / np.linalg.norm(hip_to_knee),
            lower_dir=knee_to_ankle / np.linalg.norm(knee_to_ankle),
            knee_axis=np.asarray(lower.joint.axes[0], dtype=float),
            ankle_height=float(foot.joint.anchor_child[2] - sole),
            ankle_sign=float(np.sign(foot.joint.axes[0][0]) or 1.0),
            support=np.array([max(ys), max(xs) - ankle[0], ankle[0] - min(xs)]))


class GBWC:
    """The GBWC walking controller. Commands live in :attr:`command` and may change at any time."""

    name = "gbwc"
    capabilities = frozenset({"recovery_step"})   # strider.methods.registry.RECOVERY_STEP

    def __init__(self, command: LocomotionCommand | None = None, params: GBWCParams | None = None):
        self.command = command or LocomotionCommand()
        self.params = params = params or GBWCParams()
        self.control_period = params.control_period
        self.command_range = CommandRange(
            speed=params.speed_range, period=params.period_range, max_turn_rate=params.max_turn_rate,
            lateral_speed=(-params.lateral_speed_limit, params.lateral_speed_limit),
            step_width=(0.0, MAX_STEP_WIDTH), note="the walking envelope of seed 000, Sec. 5.5.1")
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
        self.legs = {s: _LegGeometry.of(spec, s) for s in SIDES}
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
        self._foot_bodies = {s: np.array([character.body(self.roles.legs[s].foot)]
                                         + ([character.body(self.roles.legs[s].toes)]
                                            if self.roles.legs[s].toes else []))
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

    def _pose_initial(self) -> None:
        """Start from the standing pose (arms down, knees soft), feet on the ground, at rest."""
        style = self.params.style
        self._set_joint_quat(self.roles.arms["left"].shoulder, quat.about_x(-style.arm_down))
        self._set_joint_quat(self.roles.arms["right"].shoulder, quat.about_x(style.arm_down))
        self._set_hinge(self.roles.arms["left"].elbow, -style.elbow_bend)
        self._set_hinge(self.roles.arms["right"].elbow, -style.elbow_bend)
        self.world.forward()

    def _set_joint_quat(self, joint: str, q: np.ndarray) -> None:
        self.character.set_joint_position(joint, q)
        self.character.servo_targets[self.character.joints[joint].servos] = quat.log(q)

    def _set_hinge(self, joint: str, angle: float) -> None:
        self.character.set_joint_position(joint, angle)
        self.character.servo_targets[self.character.joints[joint].servos[0]] = angle

    # --- the control update ------------------------------------------------------------------
    def set_command(self, command: LocomotionCommand) -> None:
        self.command = command
        self.target_heading.follow(command)

    def has_fallen(self) -> bool:
        return self.fallen

    def info(self) -> dict:
        return {"mode": self.mode, "stance": self.fsm.stance, "phase": self.fsm.phase, "steps": self.fsm.steps,
                "desired_speed": self.desired_speed, "heading": self.heading,
                "target_heading": self.target_heading.value, "recovery": self._recovery_kind()}

    def _recovery_kind(self) -> str | None:
        """How this push recovery steps (see :meth:`recovery_step`), or None outside one."""
        if not self._recovering:
            return None
        return "crossover" if self._crossover else "soft stance" if self._soft_stance else "step"

    def control(self, t: float) -> None:
        ch, p = self.character, self.params
        dt = self.control_period
        com = ch.com_position()
        com_vel = ch.com_velocity()
        root_q = ch.body_quat(self.roles.root)
        forces = ch.contact_normal_forces()
        # Summed as the array's .sum() adds one or two non-negative entries (no -0.0 there), so the same bits.
        foot_force = {s: sum(forces[self._foot_bodies[s]].tolist()) for s in SIDES}
        # Both ankles' positions as plain floats, read once: the swing placement, step timing and velocity
        # tuning all need the stance ankle, and the data do not change within an update.
        self._ankles = {s: ch.joint_anchor(self.roles.legs[s].ankle).tolist() for s in SIDES}
        self._check_fall()
        self._update_commands(dt)
        self._yield_heading(root_q)
        frame = CharacterFrame(self.heading, com)
        v_local = frame.to_local(com_vel)
        if self.mode == "walking":
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
        hip_vt = self._velocity_tuning(com, v_local, frame, support, foot_force, torques)
        self._root_control(root_q, support, foot_force, hip_vt, torques)
        ch.set_feedforward_torques(torques)

    # --- commands, modes and steps --------------------------------------------------------------
    def _update_commands(self, dt: float) -> None:
        c, p = self.command, self.params
        turn = quat.wrap_angle(self.target_heading.advance(c, dt) - self.heading)
        self.heading = quat.wrap_angle(self.heading + clamp(turn, -p.max_turn_rate * dt, p.max_turn_rate * dt))
        target = c.speed if (c.walking and self.mode == "walking") else 0.0
        step = p.max_acceleration * dt
        self.desired_speed += float(clamp(target - self.desired_speed, -step, step))
        lat_target = c.lateral_speed if (c.walking and self.mode == "walking") else 0.0
        self.desired_lateral_speed += float(clamp(lat_target - self.desired_lateral_speed, -step, step))
        if c.walking and self.mode == "standing":
            self._begin_walking()
        elif not c.walking and self.mode == "walking":
            self.mode = "stopping"
            # The speed error accumulated while walking would keep shifting the footholds and never let it stop.
            self._speed_error_integral = 0.0
        elif c.walking and self.mode == "stopping":
            self.mode = "walking"

    def _yield_heading(self, root_q: np.ndarray) -> None:
        """While walking, keep the heading target within reach of the pelvis' yaw.

        Beyond the source. A push that turns the body faster than the stance
        foot's twisting friction can resist would have the root PD press the
        stance hip against its limit, and the foot spins on the ground under it.
        Past ``hip limit / root kp`` of heading error the PD's stiffness asks for
        more than the hip has, so the target yields to the pelvis there and comes
        back at the turn rate (:meth:`_update_commands`).
        """
        if self.mode != "walking" or not self.params.yield_heading:
            return
        pelvis_yaw = quat.yaw(root_q)
        lag = clamp(quat.wrap_angle(self.heading - pelvis_yaw), -self._heading_lag_limit, self._heading_lag_limit)
        self.heading = quat.wrap_angle(pelvis_yaw + float(lag))

    def _begin_walking(self) -> None:
        """Start from standing (Sec. 5.5.1): shift the COM towards the future stance foot first.

        The foot nearer the COM becomes the stance foot; the other lifts once the
        COM has covered ``start_shift`` of the way to it.
        """
        ch = self.character
        com = ch.com_position()
        frame = CharacterFrame(self.heading, com)
        lat = {s: frame.to_local(self._ankle_position(s) - com)[1] for s in SIDES}
        self.fsm.begin(min(SIDES, key=lambda s: abs(lat[s])))
        self.mode = "starting"
        self._recovering = self._crossover = self._soft_stance = False
        self._start_offset = abs(lat[self.fsm.stance])

    def _maybe_lift_first_foot(self, com: np.ndarray, frame: CharacterFrame, foot_force: dict) -> None:
        stance_offset = abs(frame.to_local(self._ankle_position(self.fsm.stance) - com)[1])
        shifted = stance_offset <= (1.0 - self.params.start_shift) * self._start_offset
        unloaded = foot_force[self.fsm.swing] < self.params.start_unload * self.weight
        if shifted and unloaded:
            self.mode = "walking"
            self._begin_step()

    def _on_foot_strike(self, v_local: np.ndarray) -> None:
        if self.mode == "stopping" and abs(v_local[0]) <= self.params.stop_speed and self.desired_speed == 0.0:
            self.mode = "standing"
            self._release_hip_servos()

    def _maybe_start_stepping(self, com: np.ndarray, v_local: np.ndarray, frame: CharacterFrame) -> None:
        """Standing: take a step when the body could no longer stop over its feet (Sec. 5.5.1).

        The source steps when the COM nears the edge of the support or moves
        faster than epsilon. Testing the capture point, COM + v sqrt(h/g) (the
        linear IPM's resting point), joins both in one test: a natural sway at
        the end of a stop does not trigger a step, a push does.
        """
        p = self.params
        capture = capture_offset(v_local[:2], com[2] - self._ground_under_feet(), self.gravity)
        lo, hi = self._support_box(com, frame)
        outside = np.any(capture < lo + p.stand_support_margin) or np.any(capture > hi - p.stand_support_margin)
        if outside:
            self.recovery_step()

    def recovery_step(self) -> None:
        """Start a step now, with the foot on the side the body is falling towards, then stop (Sec. 5.5.1).

        Standing calls it when the capture point nears the support edge; a standing controller that
        hands a push over to GBWC calls it right after :meth:`reset` with ``start=AS_IS``.

        Beyond the source: a sideways push can tip the body onto the foot it is falling towards and lift the
        other, the one this rule would stand on. Stepping out with the loaded foot then leaves both feet in
        the air, and they land sliding. There the lifted foot takes the step instead (a crossover step): it
        crosses the loaded foot, which stays the stance foot, to the foothold beyond it
        (``recovery_crossover``, ``recovery_lifted_load``, ``recovery_crossover_ratio``); the next step is an
        ordinary one.
        A push backwards and sideways lifts the stance foot too, and there the whole recovery softens the stance
        hip (``recovery_backward_hip_scale``, :meth:`_root_control`).
        """
        com = self.character.com_position()
        frame = CharacterFrame(self.heading, com)
        v_local = frame.to_local(self.character.com_velocity())
        self.mode = "stopping"
        self._recovering = True
        swing = "left" if v_local[1] > 0 else "right"
        if abs(v_local[1]) < 0.5 * abs(v_local[0]):
            swing = min(SIDES, key=lambda s: frame.to_local(self._ankle_position(s) - com)[0] * np.sign(v_local[0]))
        crossing = abs(v_local[1]) >= self.params.recovery_crossover_ratio * abs(v_local[0])
        lifted = self._lifted_stance(other(swing))
        self._crossover = crossing and lifted and self.params.recovery_crossover
        self._soft_stance = lifted and not crossing and v_local[0] < 0.0
        if self._crossover:
            swing = other(swing)
        self.fsm.begin(other(swing))
        self._begin_step()

    def _lifted_stance(self, stance: str) -> bool:
        """Whether the push lifted ``stance``, the foot a recovery step would stand on, onto the other one."""
        threshold = self.params.recovery_lifted_load
        forces = self.character.contact_normal_forces()
        load = sum(forces[self._foot_bodies[stance]].tolist())
        return load < threshold * self.weight

    def _support_box(self, com: np.ndarray, frame: CharacterFrame) -> tuple[np.ndarray, np.ndarray]:
        """Axis-aligned bounds (character frame, relative to the COM) of both soles."""
        lows, highs = [], []
        for s in SIDES:
            ankle = frame.to_local(self._ankle_position(s) - com)[:2]
            half_width, front, back = self.legs[s].support
            lows.append(ankle - np.array([back, half_width]))
            highs.append(ankle + np.array([front, half_width]))
        return np.min(lows, axis=0), np.max(highs, axis=0)

    def _ground_under_feet(self) -> float:
        return min(float(self._ankle_position(s)[2]) - self.legs[s].ankle_height for s in SIDES)

    def _begin_step(self) -> None:
        ch = self.character
        com = ch.com_position()
        frame = CharacterFrame(self.heading, com)
        swing = self.fsm.swing
        self._swing_start = frame.to_local(self._ankle_position(swing) - com)[:2]
        self._lateral_strike = frame.to_local(com - self._ankle_position(self.fsm.stance))[1]
        if self._recovering:
            # The stance hip's angle as the step begins, held while that foot is still off the ground.
            self._stance_hold = ch.qpos[ch.joints[self.roles.legs[self.fsm.stance].hip].qpos].copy()
        if self.mode != "standing":
            self.character.set_servo_gains(self.roles.legs[self.fsm.stance].hip, 0.0, 0.0)
            g = self._hip_gains[swing]
            self.character.set_servo_gains(self.roles.legs[swing].hip, g.kp, g.kd)
        else:
            self._release_hip_servos()

    def _remaining_step_time(self, com: np.ndarray, v_local: np.ndarray, frame: CharacterFrame) -> float | None:
        stance = self.fsm.stance
        ax, ay, az = self._ankles[stance]
        cx, cy, cz = com.tolist()
        offset = frame.to_local_floats((cx - ax, cy - ay, cz - az))[:2]
        height = cz - (az - self.legs[stance].ankle_height)
        return remaining_step_time(offset, v_local.tolist()[:2], height, self.gravity, self.leg_length,
                                   self.params.step_timing, SIDE_SIGN[stance])

    def _step_width(self) -> float:
        style = self.params.style
        return style.step_width if style.step_width is not None else self.command.step_width

    def _release_hip_servos(self) -> None:
        for s in SIDES:
            self.character.set_servo_gains(self.roles.legs[s].hip, 0.0, 0.0)

    def _check_fall(self) -> None:
        if self._fall_judge():
            self.fallen = True

    # --- targets ------------------------------------------------------------------------------------
    def _ankle_position(self, side: str) -> np.ndarray:
        return self.character.joint_anchor(self.roles.legs[side].ankle)

    def _upper_body_targets(self, frame: CharacterFrame, targets: dict, hinges: dict) -> None:
        style, roles = self.params.style, self.roles
        chain, arm_down = self._upper_body_constants(style)
        heading_q = quat.about_z_floats(frame.heading)
        qpos = self.character.qpos
        # The chain of products runs on plain floats (quat.mul_floats, the same arithmetic as quat.mul);
        # targets are kept as float tuples, which _write_servos takes as they are.
        parent_q = self.character.body_quat(roles.root).tolist()
        for joint, q0, bend_q in chain:
            world_target = quat.mul_floats(heading_q, bend_q)
            pw, px, py, pz = parent_q
            targets[joint] = quat.mul_floats((pw, -px, -py, -pz), world_target)
            parent_q = quat.mul_floats(parent_q, qpos[q0:q0 + 4].tolist())
        swing = 0.0
        if self.mode != "standing":
            sign = 1.0 if self.fsm.stance == "left" else -1.0
            swing = style.arm_swing * (2.0 * self.fsm.phase - 1.0) * sign
        arms = roles.arms
        targets[arms["left"].shoulder] = quat.mul_floats(quat.about_y_floats(-swing), arm_down["left"])
        targets[arms["right"].shoulder] = quat.mul_floats(quat.about_y_floats(swing), arm_down["right"])
        hinges[arms["left"].elbow] = -style.elbow_bend
        hinges[arms["right"].elbow] = -style.elbow_bend

    def _upper_body_constants(self, style) -> tuple[list, dict[str, np.ndarray]]:
        """Per style, computed once: each spine/neck joint's qpos index and its share of the body bend
        (lower back, upper back and head pitch by 1/3, 2/3 and all of it, coros-walking.md, Sec. 4),
        and the arms' hanging rotations."""
        if self._upper_body_cache is None or self._upper_body_cache[0] is not style:
            ch, roles = self.character, self.roles
            names = list(roles.spine) + [roles.neck]
            chain = [(joint, int(ch.joints[joint].qpos[0]),
                      quat.about_y(style.body_bend * ((k + 1) / len(names))).tolist())
                     for k, joint in enumerate(names)]
            arm_down = {"left": quat.about_x(-style.arm_down).tolist(), "right": quat.about_x(style.arm_down).tolist()}
            self._upper_body_cache = (style, chain, arm_down)
        return self._upper_body_cache[1], self._upper_body_cache[2]

    def _foot_flat_target(self, frame: CharacterFrame, side: str) -> tuple[float, float, float, float]:
        toe_out = self.params.style.toe_out * SIDE_SIGN[side]
        return quat.about_z_floats(frame.heading + toe_out)

    def _ankle_hinges(self, side: str, shank_q: list[float], foot_q: tuple, hinges: dict) -> None:
        """The ankle angles turning the shank at ``shank_q`` into the foot at ``foot_q`` (plain floats)."""
        leg = self.roles.legs[side]
        sw, sx, sy, sz = shank_q
        a, b = universal_angles(quat.mul_floats((sw, -sx, -sy, -sz), foot_q), self.legs[side].ankle_sign)
        hinges[(leg.ankle, 0)] = a
        hinges[(leg.ankle, 1)] = b
        if leg.toe:
            hinges[leg.toe] = 0.0

    def _stance_leg_targets(self, frame: CharacterFrame, v_local: np.ndarray, targets: dict, hinges: dict) -> None:
        side = self.fsm.stance
        leg = self.roles.legs[side]
        hinges[leg.knee] = self.params.style.stance_knee + self._downhill_knee(frame, v_local)
        shank_q = self.character.body_quat(leg.lower).tolist()
        self._ankle_hinges(side, shank_q, self._foot_flat_target(frame, side), hinges)

    def _downhill_knee(self, frame: CharacterFrame, v_local: np.ndarray) -> float:
        """Extra stance-knee bend (rad) while the body moves down the ground under the stance foot.

        Beyond the source. Walking (or taking recovery steps) down a slope, the straight stance leg holds the hip
        so high above the lower ground ahead that the swing leg cannot reach forward of the body: the foothold is
        cut back to under the hip, nothing brakes the fall, and the gait runs away. Bending the stance knee by
        ``downhill_knee`` per unit of the ground's fall along the sagittal motion (capped at ``downhill_max_fall``)
        lowers the hip so the inverted-pendulum foothold lies within reach again. 0 on level ground and uphill.
        """
        p = self.params
        if p.downhill_knee == 0.0 or self.mode == "standing" or self.mode == "starting":
            return 0.0
        fx, fy, _ = frame.forward_floats
        (rise,) = self._stance_ground_rise(((fx, fy),))
        if rise == 0.0:
            return 0.0
        fall = -rise
        # Walking, down the commanded way (a start up a steep slope may slide back); stepping to a stop, down the motion.
        if (self.desired_speed if self.mode == "walking" else v_local[0]) < 0.0:
            fall = -fall
        if fall <= 0.0:
            return 0.0
        return p.downhill_knee * min(fall, p.downhill_max_fall)

    def _standing_leg_targets(self, frame: CharacterFrame, targets: dict, hinges: dict) -> None:
        for side in SIDES:
            leg = self.roles.legs[side]
            hinges[leg.knee] = self.params.style.stance_knee
            self._ankle_hinges(side, self.character.body_quat(leg.lower).tolist(), self._foot_flat_target(frame, side),
                               hinges)

    def _swing_leg_targets(self, frame: CharacterFrame, com: np.ndarray, v_local: np.ndarray,
                           targets: dict, hinges: dict) -> None:
        # The points and directions here are plain float tuples, in the array code's operations and order:
        # a handful of 3-vectors, where NumPy's per-call cost would be most of the update's.
        ch, p, style = self.character, self.params, self.params.style
        side, stance = self.fsm.swing, self.fsm.stance
        leg, geo = self.roles.legs[side], self.legs[side]
        phase = self.fsm.phase
        cx, cy, cz = com.tolist()
        ax, ay, az = self._ankles[stance]
        stance_lateral = frame.to_local_floats((ax - cx, ay - cy, az - cz))[1]
        height = cz - (az - self.legs[stance].ankle_height)
        # Inverted-pendulum footholds, sagittal and coronal (Sec. 5.3.2), relative to the COM.
        sag = step_offset(v_local[0], height, self.desired_speed, self.leg_length, p.ipm)
        # Speed feedback on foot placement: where the model behind the IPM is off, the
        # remaining speed error moves the foothold back (too slow) or forward (too fast).
        tracking = -(p.placement_speed_gain * (self.desired_speed - v_local[0])
                     + p.placement_speed_integral * self._speed_error_integral)
        if self.mode == "walking":
            # The walking gait's lead; stopping drops it at once, as it drops the integral, and lets the IPM stop.
            lead_limit = p.placement_lead_limit * self.leg_length
            tracking -= clamp(p.placement_speed_lead * self.desired_speed, -lead_limit, lead_limit)
        lat = step_offset(v_local[1], height, self.desired_lateral_speed, self.leg_length, p.ipm)
        if self._recovering and p.recovery_slope_uphill > 0.0:
            sag, lat = self._slope_offsets(frame, v_local, height, sag, lat)
        if not self._crossover:
            lat += SIDE_SIGN[side] * 0.5 * self._step_width()
            # Never cross the stance leg.
            lat = SIDE_SIGN[side] * max(SIDE_SIGN[side] * lat, SIDE_SIGN[side] * stance_lateral + p.min_lateral_clearance)
        # A crossover recovery step (recovery_step) lands on the inverted-pendulum foothold past the stance foot.
        hip = ch.joint_anchor(leg.hip).tolist()
        extension = p.max_leg_extension * (geo.upper + geo.lower)
        if p.placement_balance_first:
            sag += tracking * self._tracking_share(frame, com, hip, height, extension, sag, lat, tracking, geo)
        else:
            sag += tracking
        # The ankle's path reaches the foothold at ``swing_reach_phase`` (see GBWCParams).
        if self.mode == "walking":
            reach_phase = p.swing_reach_phase
        elif self._crossover:
            reach_phase = p.recovery_crossover_reach_phase
        elif self._recovering:
            reach_phase = p.recovery_swing_reach_phase
        else:
            reach_phase = p.stopping_swing_reach_phase
        reach = min(phase / reach_phase, 1.0)
        x = (1.0 - reach) * self._swing_start[0] + reach * sag
        y = (1.0 - reach) * self._swing_start[1] + reach * lat
        wx, wy, _ = frame.to_world_floats((x, y, 0.0))
        tx, ty = cx + wx, cy + wy
        ground = self.world.ground_height(tx, ty)
        target = (tx, ty, ground + geo.ankle_height + style.swing_height(phase))
        bend_dir = frame.forward_floats
        target = within_reach_floats(hip, target, extension) or target
        knee, knee_angle = two_link_floats(hip, target, geo.upper, geo.lower, bend_dir, style.swing_plane_twist)
        thigh_dir = (knee[0] - hip[0], knee[1] - hip[1], knee[2] - hip[2])
        shank_dir = (target[0] - knee[0], target[1] - knee[1], target[2] - knee[2])
        knee_axis = (bend_dir[1] * thigh_dir[2] - bend_dir[2] * thigh_dir[1],
                     bend_dir[2] * thigh_dir[0] - bend_dir[0] * thigh_dir[2],
                     bend_dir[0] * thigh_dir[1] - bend_dir[1] * thigh_dir[0])   # quat.cross's formula
        thigh_frame, shank_frame = self._segment_frames[side]
        thigh_q = orient_frame(thigh_frame, thigh_dir, knee_axis).tolist()
        shank_q = orient_frame(shank_frame, shank_dir, knee_axis).tolist()
        pw, px, py, pz = ch.body_quat(self.roles.root).tolist()
        targets[leg.hip] = quat.mul_floats((pw, -px, -py, -pz), thigh_q)
        hinges[leg.knee] = knee_angle
        self._ankle_hinges(side, shank_q, self._foot_flat_target(frame, side), hinges)

    def _stance_ground_rise(self, directions) -> list[float]:
        """How far the ground rises per m along each horizontal unit direction, from under the stance ankle to
        ``SLOPE_PROBE`` beyond it (0 on level ground)."""
        ax, ay, _ = self._ankles[self.fsm.stance]
        ground = self.world.ground_height
        here = ground(ax, ay)
        return [(ground(ax + SLOPE_PROBE * dx, ay + SLOPE_PROBE * dy) - here) / SLOPE_PROBE for dx, dy in directions]

    def _slope_offsets(self, frame: CharacterFrame, v_local: np.ndarray, height: float,
                       sag: float, lat: float) -> tuple[float, float]:
        """A recovery step's inverted-pendulum offsets on ground that rises along the motion.

        Beyond the source. Pushed up a slope, the flat-ground foothold lies so far up it that the body cannot
        lift its COM over the foot: it stops short, falls back, and the steps back downhill run away. Moving
        uphill along an axis, that axis' offset is scaled by :func:`slope_step_offset` over the flat linear
        offset, with the rise weighted by ``recovery_slope_uphill``. On level ground (no gradient under the
        stance foot) and moving downhill the offsets are returned as they are.
        """
        p = self.params
        fx, fy, _ = frame.forward_floats
        grad = self._stance_ground_rise(((fx, fy), (-fy, fx)))   # rise per m forward, leftward
        if grad[0] == 0.0 and grad[1] == 0.0:
            return sag, lat
        cap = p.ipm.max_fraction * self.leg_length
        out = []
        for offset, v, g in zip((sag, lat), v_local.tolist()[:2], grad):
            rise = g * math.copysign(1.0, v)
            flat = abs(slope_step_offset(v, height, 0.0, self.gravity))
            if rise > 0.0 and flat > MIN_SLOPE_OFFSET:
                offset *= abs(slope_step_offset(v, height, p.recovery_slope_uphill * rise, self.gravity)) / flat
                offset = float(clamp(offset, -cap, cap))
            out.append(offset)
        return out[0], out[1]

    def _tracking_share(self, frame: CharacterFrame, com: np.ndarray, hip: list[float], height: float,
                        extension: float, sag: float, lat: float, tracking: float, geo: _LegGeometry) -> float:
        """How much of the speed-tracking shift of the foothold the swing leg can still reach (0..1).

        Beyond the source. After a hard push the IPM foothold and the speed
        feedback point the same way (both want the body slowed or turned back),
        and together they can lie past the leg's reach; :func:`within_reach`
        then shortens the whole horizontal offset, giving up part of the
        sideways placement that keeps the body from toppling over the stance
        foot. The tracking shift yields first, so the IPM foothold is kept
        whenever the leg can reach it at the end of the swing.
        """
        cx, cy, cz = com.tolist()
        hx, hy, hz = hip
        hip_local = frame.to_local_floats((hx - cx, hy - cy, hz - cz))
        ground = cz - height
        dz = ground + geo.ankle_height + self.params.style.swing_height(1.0) - hz
        radius = math.sqrt(max(extension * extension - dz * dz, 0.0))
        return reachable_share((sag - hip_local[0], lat - hip_local[1]), (tracking, 0.0), radius)

    # --- writing servo targets ----------------------------------------------------------------------
    def _write_servos(self, targets: dict, hinges: dict) -> None:
        ch = self.character
        ctrl = ch.servo_targets
        # The ball joints among the targets, in the character's order, looked up once per set of targets.
        rows = self._ball_rows.get(tuple(targets))
        if rows is None:
            names = tuple(n for n in self._ball if n in targets)
            idx = np.array([self._ball_index[n] for n in names], dtype=int)
            rows = self._ball_rows[tuple(targets)] = (names, self._ball_qpos[idx], self._ball_servos[idx])
        names, qpos_rows, servo_rows = rows
        if names:
            ctrl[servo_rows] = servo_commands(ch.qpos[qpos_rows], [targets[n] for n in names])
        servo = self._hinge_servo
        for key, angle in hinges.items():
            ctrl[servo[key]] = angle

    def _track_swing_velocity(self, targets: dict, hinges: dict) -> None:
        """Feed the swing hip and knee servos their targets' velocity, so they follow a moving foothold.

        A servo's force is kp*(ctrl - q) - kd*qdot; adding (kd/kp)*qdot_target to
        ctrl damps the error velocity instead of the joint velocity. The target
        velocity is the finite difference of successive targets within a step.
        """
        ch = self.character
        leg = self.roles.legs[self.fsm.swing]
        key = (self.fsm.stance, self.fsm.steps)
        dt = self.control_period
        previous = self._previous_swing_targets if self._previous_swing_key == key else None
        current = {"hip": targets[leg.hip], "knee": hinges[leg.knee]}
        if previous is not None:
            # On plain floats, element by element as the array expressions did it.
            pw, px, py, pz = previous["hip"]
            hip_log = quat.log_floats(quat.mul_floats((pw, -px, -py, -pz), current["hip"]))
            knee_vel = (current["knee"] - previous["knee"]) / dt
            hip_gains, knee_gains = self._hip_gains[self.fsm.swing], self._knee_gains[self.fsm.swing]
            ctrl, k_hip = ch.servo_targets, hip_gains.kd / hip_gains.kp
            for servo, r in zip(ch.joints[leg.hip].servos.tolist(), hip_log):
                ctrl[servo] += k_hip * (r / dt)
            ctrl[ch.joints[leg.knee].servos[0]] += (knee_gains.kd / knee_gains.kp) * knee_vel
        self._previous_swing_targets = current
        self._previous_swing_key = key

    # --- torques ---------------------------------------------------------------------------------------
    def _gravity_compensation(self, support: tuple[str, ...]) -> np.ndarray:
        ch = self.character
        com, _ = ch.dof_subtree()
        tau = lifting_torques(ch.dof_axes(), ch.dof_anchors(), com, self._lift)
        for s in support:
            tau[self._stance_leg_mask[s]] = 0.0
        return tau

    def _velocity_tuning(self, com: np.ndarray, v_local: np.ndarray, frame: CharacterFrame,
                         support: tuple[str, ...], foot_force: dict, torques: np.ndarray) -> dict[str, np.ndarray]:
        """Add velocity-tuning torques on the supporting legs; return each support hip's share (local)."""
        ch, vt = self.character, self.params.velocity_tuning
        if self.mode in ("standing", "starting"):
            mid = 0.5 * sum(frame.to_local(self._ankle_position(s) - com) for s in SIDES)
            if self.mode == "starting":
                mid[1] = frame.to_local(self._ankle_position(self.fsm.stance) - com)[1]
            # The stance legs get no gravity compensation (Sec. 5.3.4), so without this the ankles would
            # hold the body's weight moment only through the COM PD, which then droops ahead of its target
            # (and, with the feet staggered after a stop, crept on until the character stepped again).
            # The moment m g x becomes a force at the COM's height above the ankles (-mid[2]).
            weight_lean_force = ch.mass * self.gravity * mid[0] / max(-mid[2], MIN_LEVER_HEIGHT)
            mid[0] += STANDING_COM_AHEAD_OF_ANKLES
            f_sag = standing_sagittal_force(ch.mass, mid[0], v_local[0], vt) + weight_lean_force
            f_lat = lateral_force(ch.mass, mid[1], v_local[1], vt)
        else:
            f_sag = sagittal_force(self.desired_speed, v_local[0], vt)
            ax, ay, az = self._ankles[self.fsm.stance]
            cx, cy, cz = com.tolist()
            offset = frame.to_local_floats((cx - ax, cy - ay, cz - az))[1]
            # The COM target ends over the stance foot: step width W = 0 (coros-walking.md, Sec. 4).
            goal = lateral_target(self._lateral_strike, 0.0, self.fsm.phase)
            f_lat = lateral_force(ch.mass, goal - offset, v_local[1] - self.desired_lateral_speed, vt, walking=True)
        if len(support) > 1:
            sagittal = frame.to_world(np.array([f_sag, 0.0, 0.0]))
            lateral = frame.to_world(np.array([0.0, f_lat, 0.0]))
            hips = self._double_support_push(lateral, support, foot_force, torques)
            total = sum(max(foot_force[s], 1e-6) for s in support)
            for s in support:
                share = max(foot_force[s], 1e-6) / total
                hips[s] = hips[s] + self._stance_leg_push(s, com, share * sagittal, foot_force[s], torques)
            return hips
        side = support[0]
        force = frame.to_world(np.array([f_sag, f_lat, 0.0]))
        return {side: self._stance_leg_push(side, com, force, foot_force[side], torques)}

    def _stance_leg_push(self, side: str, com: np.ndarray, force: np.ndarray, normal_force: float,
                         torques: np.ndarray) -> np.ndarray:
        """tau = J_V^T F through a planted leg; adds knee and ankle torques, returns the hip's (local)."""
        ch = self.character
        leg = self.roles.legs[side]
        # Only the leg's own columns of J_V: the knee's, the ankle's and the hip's, in that order.
        columns = self._leg_dof_columns[side]
        j_v = com_relative_to_foot(ch.com_jacobian()[:, columns], ch.point_jacobian(leg.foot, com)[:, columns])
        knee, ankle, hip = self._leg_dof_slots[side]
        if self.params.velocity_tuning_knee:
            self._add(torques, leg.knee, jacobian_transpose(j_v, force, knee))
        ankle_torque = self._ankle_torque_supported(side, jacobian_transpose(j_v, force, ankle), normal_force)
        self._add(torques, leg.ankle, ankle_torque)
        return jacobian_transpose(j_v, force, hip)

    def _double_support_push(self, force: np.ndarray, support: tuple[str, ...], foot_force: dict,
                             torques: np.ndarray) -> dict[str, np.ndarray]:
        """With both feet down, each leg pushes the ground with its share of -F (Sec. 5.5.1).

        Horizontal ground forces at both feet move the COM sideways without
        asking the ankles for torques the narrow soles cannot hold.
        """
        ch = self.character
        total = sum(max(foot_force[s], 1e-6) for s in support)
        hip_share: dict[str, np.ndarray] = {}
        for s in support:
            leg = self.roles.legs[s]
            share = max(foot_force[s], 1e-6) / total
            j_foot = ch.point_jacobian(leg.foot, ch.joint_anchor(leg.ankle))
            push = -share * force
            knee_dofs = ch.joints[leg.knee].dof
            self._add(torques, leg.knee, jacobian_transpose(j_foot, push, knee_dofs))
            hip_share[s] = jacobian_transpose(j_foot, push, ch.joints[leg.hip].dof)
        return hip_share

    def _add(self, torques: np.ndarray, joint: str, values: np.ndarray) -> None:
        torques[self._slots[joint]] += values

    def _ankle_torque_supported(self, side: str, tau: np.ndarray, normal_force: float) -> np.ndarray:
        """Clip an ankle's (inversion, flexion) torque to what the sole can push against.

        The source zeroes the ankle term once the toe lifts or the foot spins
        (Sec. 5.3.3); keeping the centre of pressure inside the sole is the same
        rule applied before the foot tips rather than after.
        """
        geo = self.legs[side]
        margin = self.params.sole_margin
        half_width, front, back = (x * margin for x in geo.support.tolist())
        f = max(normal_force, 0.0)
        inversion = clamp(tau[0], -f * half_width, f * half_width)
        # Positive flexion pitches the foot toes-down about +y, pressing on the toes.
        flexion = clamp(tau[1], -f * back, f * front)
        return np.array([inversion, flexion])

    def _root_control(self, root_q: np.ndarray, support: tuple[str, ...], foot_force: dict,
                      hip_vt: dict[str, np.ndarray], torques: np.ndarray) -> None:
        """Eq. 2.3 through the stance hip servo(s), so the root PD runs at the physics rate.

        Each supporting hip's servo tracks the hip angle that would put the pelvis
        at its target with the thigh where it is, with the root gains (split by
        load in double support). The swing hip's torque, which also acts on the
        pelvis, is cancelled as a feed-forward term, as in Eq. 2.3.

        Beyond the source: in a recovery step the stance foot may still hang in the air (a side push lifts
        the foot on its side, and the step is taken with the other). Through an unloaded foot the root PD
        and the feed-forward only swing the leg, which then lands moving and slides, so there they get the
        foot's load share of ``recovery_stance_load`` times body weight, and the rest of the hip servo holds
        the hip angle the step began with, bringing the foot down where it was. After a push backwards that
        lifted the stance foot without a crossover (:meth:`recovery_step`), the body falls away from that foot
        as it lands, and the whole recovery runs its stance hip at ``recovery_backward_hip_scale`` of the gains
        and feed-forward: through the full ones the pelvis' righting pushed the lightly loaded foot past friction.
        """
        ch = self.character
        target = quat.about_z_floats(self.heading)
        swing_world = np.zeros(3)
        if len(support) == 1:
            swing = other(support[0])
            j = ch.joints[self.roles.legs[swing].hip]
            local = ch.servo_forces[j.servos] + torques[self._slots[self.roles.legs[swing].hip]]
            swing_world = ch.body_rotation(self.roles.legs[swing].upper) @ local
        total = sum(max(foot_force[s], 1e-6) for s in support)
        for s in support:
            share = max(foot_force[s], 1e-6) / total if len(support) > 1 else 1.0
            leg = self.roles.legs[s]
            joint = ch.joints[leg.hip]
            thigh_q = ch.body_quat(leg.upper)
            hip_q = ch.qpos[joint.qpos]
            thigh_omega = ch.body_angular_velocity(leg.upper)
            kp, kd = self._root_axis_gains[(s, bool(self.command.walking))]
            command = stance_hip_servo_command(hip_q, target, thigh_q, thigh_omega, kp, kd)
            load = self._recovery_load(s, support, foot_force)
            # 1.0 (an exact factor) outside a softened recovery (recovery_step).
            soft = self.params.recovery_backward_hip_scale if self._soft_recovery(support) else 1.0
            if load < 1.0:
                own = self._hip_gains[s]
                k_root, k_hold = load * kp, (1.0 - load) * own.kp
                ch.set_servo_gains(leg.hip, soft * (k_root + k_hold), soft * (load * kd + (1.0 - load) * own.kd))
                hold = servo_command(hip_q, self._stance_hold)
                ch.servo_targets[joint.servos] = (k_root * command + k_hold * hold) / (k_root + k_hold)
            else:
                ch.set_servo_gains(leg.hip, soft * (share * kp), soft * (share * kd))
                ch.servo_targets[joint.servos] = command
            rot = ch.body_rotation(leg.upper)
            feedforward = rot.T @ (-share * swing_world) + hip_vt[s]
            torques[self._slots[leg.hip]] = soft * (feedforward if load == 1.0 else load * feedforward)

    def _soft_recovery(self, support: tuple[str, ...]) -> bool:
        """Whether this is a single-support step of a recovery that softens the stance hip (recovery_step)."""
        return self._soft_stance and self._recovering and self.mode == "stopping" and len(support) == 1

    def _recovery_load(self, side: str, support: tuple[str, ...], foot_force: dict) -> float:
        """The stance foot's share of the root control in a recovery step (0..1; 1 otherwise)."""
        if not (self.params.recovery_stance_share and self._recovering and self.mode == "stopping"
                and len(support) == 1):
            return 1.0
        return min(foot_force[side] / (self.params.recovery_stance_load * self.weight), 1.0)


def build(command: LocomotionCommand, style: str, config: str = "default") -> GBWC:
    """The registry's factory: GBWC with a named style or a style file in a named configuration (``default``,
    ``thesis``, ``without:ADDITION,...``; see :mod:`strider.methods.registry` and ``params.ADDITIONS``)."""
    from strider.methods.gbwc.params import load_style

    return GBWC(command, GBWCParams(style=load_style(style)).configured(config))
