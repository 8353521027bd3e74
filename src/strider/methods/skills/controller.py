"""The skill controller: runs a :class:`~strider.methods.skills.skill.Skill` on one character (seed 003, Ch. 3-6).

Every control step (C11): check the current state's transitions in order
(time, contact, direct, fall), then compute joint targets (the state's base
pose, overridden by its knot trajectories, E3/E4), write them to the PD servos
(C2), and run the state's components:

``balance``     COM virtual force through both legs (C5, E7, Decision 7-8)
``upright``     world-frame pelvis through both hips (Eq. 2.3) and spine/neck in the character frame
``foot_flat``   ankles keep the soles parallel to the ground under them (slopes, P2)
``ragdoll``     all torques and servo gains off, latched (Sec. 4.2, Decision 10)
``locomotion``  a registered walking controller by name (the ``walk`` skill runs GBWC this way); with
                ``mode: recover`` it takes the character over as it is and steps to stop a push

Transitions ``capture`` (the capture point has left the support polygon by ``margin``) and
``recovered`` (a recovery step has landed with the capture point back inside) compose
standing and stepping: the ``stand`` skill balances by the COM virtual force and hands a
push it cannot absorb to GBWC's stepping, then takes over again (issue 2: "survives a
push, stepping if needed").
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from strider import quat
from strider.control.capture import capture_margin, sole_corners
from strider.control.com_balance import COMBalanceParams, com_balance_force, plant_force
from strider.control.controller import AS_IS, CommandRange, begin_from
from strider.control.frames import CharacterFrame
from strider.control.ik import universal_angles
from strider.control.leg_geometry import SIDES
from strider.control.pd import servo_command
from strider.control.ragdoll import FallCone, go_limp
from strider.control.stance_hip import stance_hip_servo_command
from strider.control.support import Sole, limit_ankle_torque
from strider.control.trajectory import CatmullRom
from strider.control.virtual_force import com_relative_to_foot, jacobian_transpose
from strider.methods.skills.skill import JointTarget, Skill, State, resolve_target
from strider.sim import Character, World
from strider.sim import State as PhysicsState

SETTLE_HEIGHT_SEARCH = (0.0, 2.5)   # m: root heights bracketing first ground contact when placing a lying start
SETTLE_SEARCH_STEPS = 30            # bisections: below 3 micrometres over that bracket
SUPPORT_SPLIT = 0.5                 # each leg carries half the COM force with both feet down (Decision 7)
SOLE_MARGIN = 0.7                   # fraction of the sole the centre of pressure may use (as GBWC)
STILL = np.zeros(3)                 # rad/s: an angular velocity of zero
FOOT_SLOPE_PROBE = 0.1              # m ahead/behind and beside the ankle where the ground height is sampled


def mirror_axis(axis: Sequence[float]) -> np.ndarray:
    """A rotation axis reflected through the sagittal plane (y -> -y): a pseudo-vector becomes (-x, y, -z)."""
    return np.array([-axis[0], axis[1], -axis[2]], dtype=float)


class _Trajectory:
    """One joint target of a state, prepared for fast evaluation."""

    def __init__(self, target: JointTarget, character: Character):
        self.target = target
        self.curve = CatmullRom(target.times, target.values)
        axis = np.asarray(target.axis, dtype=float)
        axis /= np.linalg.norm(axis)
        share = 1.0 / len(target.joints)
        self.entries: list[tuple[str, np.ndarray]] = [(j, axis * share) for j in target.joints]
        if target.mirror:
            mirrored = [(character.spec.mirrored(j), mirror_axis(axis) * share) for j in target.joints]
            self.entries += [(j, a) for j, a in mirrored if j not in target.joints]

    def rotation_vectors(self, t: float) -> list[tuple[str, np.ndarray]]:
        angle = self.curve(t)
        return [(j, a * angle) for j, a in self.entries]


class SkillController:
    """A :class:`~strider.control.controller.Controller` interpreting a skill file."""

    name = "skill"
    capabilities: frozenset[str] = frozenset()
    # The skill itself holds still; a plan's commands go on to the walking controller it hands over to, which
    # declares its own range.
    command_range = CommandRange()

    def __init__(self, skill: Skill, perturb: float = 0.0, perturb_seed: int | None = None,
                 command=None):
        self.skill = skill
        self.control_period = skill.control_period
        self.perturb = perturb
        self.perturb_seed = perturb_seed
        self.command = command          # handed on to a walking delegate; the skill itself ignores it
        self.cone = FallCone()
        self.balance_defaults = COMBalanceParams()
        self.world: World | None = None
        self.character: Character | None = None

    # --- setup -----------------------------------------------------------------------------------
    def reset(self, world: World, character: Character, start: PhysicsState | str | None = None) -> None:
        """Bind to ``character`` and begin from ``start`` (the controller contract): None places it in the skill's
        start pose; a physics state (a snapshot of that pose, settled) is restored; ``AS_IS`` takes it as it is."""
        self.world, self.character = world, character
        spec = character.spec
        self.roles = spec.roles
        for name in character.joints:
            group = next(jj.gains for jj in spec.joints() if jj.name == name)
            if group in self.skill.gains:
                character.set_servo_gains(name, *self.skill.gains[group])
        self._base_gains = {n: character.servo_gains(n) for n in character.joints}
        self._hinge_axes = {n: [np.asarray(a, dtype=float) for a in jj.axes]
                            for jj in spec.joints() for n in [jj.name] if jj.kind != "ball"}
        self._soles = {s: Sole.of(spec, s) for s in SIDES}
        self._feet = {s: [character.body(b) for b in (self.roles.legs[s].foot, self.roles.legs[s].toes) if b]
                      for s in SIDES}
        self._kind = {n: j.kind for n, j in character.joints.items()}
        self._parent_name = {b.joint.name: b.parent for b in spec.bodies if b.joint is not None}
        self._prepared: dict[tuple[str, str], tuple[list[_Trajectory], list[_Trajectory]]] = {}
        self.fallen = False
        self.finished = False
        self.limp = False
        self.delegate = None
        self.recoveries = 0
        self._delegate_steps = 0        # steps taken by finished delegates (recoveries)
        self._skill_period = self.skill.control_period
        self.heading = quat.yaw(character.body_quat(self.roles.root))
        first = self.skill.actions[0]
        self.action, self.state = first.name, first.states[0]
        self.state_start = 0.0
        self.transitions = 0
        self.settle_seconds = 0.0
        if begin_from(world, start):
            self._place_start()
            self.settle_seconds = self.skill.start.settle
        # A start pose still to settle enters its first state after the runner settled it (see settle()).
        self._entry_pending = self.settle_seconds > 0
        if not self._entry_pending:
            self._enter(self.state, 0.0)

    def _place_start(self) -> None:
        """Put the character in the skill's start pose (Decision 24): upright, or lying and settled."""
        world, ch, start = self.world, self.character, self.skill.start
        targets = self._targets(self.state, 0.0)
        for name, value in targets.items():
            ch.set_joint_position(name, value)
        if self.perturb > 0 and self.perturb_seed is not None:
            self._perturb_pose(np.random.default_rng(self.perturb_seed))
        if start.pose != "stand":
            pitch = -math.pi / 2 if start.pose == "supine" else math.pi / 2   # front faces +z (supine) or -z
            ch.set_root_orientation(quat.mul(quat.about_z(self.heading), quat.about_y(pitch)))
            self._drop_onto_ground(start.drop)
        world.set_at_rest()
        world.forward()
        self._write_servos(targets)
        # The servo targets change the actuator and contact forces the first control tick reads: recompute them,
        # so a run from here and a run from a snapshot of here (which recomputes on restore) are the same run.
        world.forward()

    def settle(self, t: float) -> None:
        """One control tick of settling the start pose (Decision 24), before the skill's time 0: the runner calls it
        every control period for ``settle_seconds``. The first state's targets are held; nothing else runs."""
        self._write_servos(self._targets(self.state, 0.0))
        self._run_components(self.state, 0.0, targets_only=True)

    def _perturb_pose(self, rng: np.random.Generator) -> None:
        """Every internal DOF moved by U(-p, p) rad (torres-skills.md, P6), in a fixed joint order."""
        ch, p = self.character, self.perturb
        for name, j in ch.joints.items():
            if self._kind[name] == "ball":
                ch.set_joint_position(name, quat.normalize(quat.mul(ch.qpos[j.qpos], quat.exp(rng.uniform(-p, p, 3)))))
            else:
                ch.set_joint_position(name, ch.qpos[j.qpos] + rng.uniform(-p, p, len(j.qpos)))

    def _drop_onto_ground(self, drop: float) -> None:
        """Raise the root until nothing touches the ground, then lift it ``drop`` more (bisection on contact)."""
        world, ch = self.world, self.character
        lo, hi = SETTLE_HEIGHT_SEARCH
        for _ in range(SETTLE_SEARCH_STEPS):
            mid = 0.5 * (lo + hi)
            ch.set_root_height(mid)
            world.forward()
            if world.contact_count > 0:
                lo = mid
            else:
                hi = mid
        ch.set_root_height(hi + drop)

    # --- the controller protocol -----------------------------------------------------------------
    def set_command(self, command) -> None:
        self.command = command
        # A walking delegate shares the skill's command; a recovery step keeps its own.
        if self.delegate is not None and not self._recovering_step():
            self.delegate.set_command(command)

    def _recovering_step(self) -> bool:
        return self.state.components.get("locomotion", {}).get("mode", "walk") == "recover"

    def has_fallen(self) -> bool:
        return self.fallen

    def info(self) -> dict:
        return {"action": self.action, "state": self.state.name, "steps": self._steps(),
                "transitions": self.transitions, "finished": self.finished, "recoveries": self.recoveries}

    def _steps(self) -> int:
        running = self.delegate.info().get("steps", 0) if self.delegate is not None else 0
        return self._delegate_steps + int(running)

    def control(self, t: float) -> None:
        if self._entry_pending:
            self._entry_pending = False
            self._enter(self.state, 0.0)
        self._follow_transitions(t)
        if self.limp:
            go_limp(self.character)
            return
        state_time = t - self.state_start
        if "locomotion" in self.state.components:
            # The delegate keeps its own control period; a skill ticking faster calls it on its own ticks only.
            if state_time >= self._delegate_next - 1e-9:
                self._delegate_next += self.delegate.control_period
                steps = self.delegate.info().get("steps", 0)
                self.delegate.control(state_time)
                self._delegate_struck = self.delegate.info().get("steps", 0) > steps
            return
        targets = self._targets(self.state, state_time)
        self._write_servos(targets)
        self._run_components(self.state, state_time)

    # --- state machine (C11) ----------------------------------------------------------------------
    def _follow_transitions(self, t: float) -> None:
        for _ in range(len(self.skill.actions) * 8):
            fired = self._fired(t)
            if fired is None:
                return
            target = resolve_target(self.action, fired.to)
            if target is None:
                self.finished = True
                return
            self.action = target[0]
            self._enter(self.skill.state(*target), t)

    def _fired(self, t: float):
        ch = self.character
        for tr in self.state.transitions:
            if tr.on == "time" and t - self.state_start >= tr.after - 1e-9:
                return tr
            if tr.on == "direct":
                return tr
            if tr.on == "fall" and self.cone.left(ch):
                return tr
            if tr.on == "contact" and self._touching(tr.bodies):
                return tr
            if tr.on == "capture" and self._capture_margin() > tr.margin:
                return tr
            if tr.on == "recovered" and self._recovered(tr.feet_within):
                return tr
        return None

    def _capture_margin(self) -> float:
        """How far the capture point lies outside the polygon spanned by both soles (m; < 0 inside)."""
        ch = self.character
        ankles = {s: ch.joint_anchor(self.roles.legs[s].ankle) for s in SIDES}
        soles = [sole_corners(ankles[s], ch.body_rotation(self.roles.legs[s].foot), self._soles[s]) for s in SIDES]
        ground = min(float(ankles[s][2]) - self._soles[s].ankle_height for s in SIDES)
        return capture_margin(ch.com_position(), ch.com_velocity(), ground, self.world.scene.gravity, soles)

    def _recovered(self, feet_within: float | None = None) -> bool:
        """A recovery step has just landed with the capture point inside the feet (and, if ``feet_within`` is
        given, the ankles at most that far apart), or the stepper stands again."""
        if self.delegate is None or self._delegate_next == 0.0:
            return False
        if self.delegate.info().get("mode") == "standing":
            return True
        if not (self._delegate_struck and self._capture_margin() <= 0.0):
            return False
        if feet_within is None:
            return True
        left, right = (self.character.joint_anchor(self.roles.legs[s].ankle) for s in SIDES)
        return float(np.linalg.norm((left - right)[:2])) <= feet_within

    def _touching(self, bodies: tuple[str, ...]) -> bool:
        forces = self.character.contact_normal_forces()
        return any(forces[self.character.body(b)] > 0.0 for b in bodies)

    def _enter(self, state: State, t: float) -> None:
        if self.delegate is not None:
            self._delegate_steps += int(self.delegate.info().get("steps", 0))
            self.delegate = None
            self.control_period = self._skill_period
        self.state, self.state_start = state, t
        self.transitions += 1
        if "ragdoll" in state.components:
            self.limp = self.fallen = True
            go_limp(self.character)
            return
        # Leaving a root-through-hips state gives the hips their own gains back.
        for name, (kp, kd) in self._base_gains.items():
            self.character.set_servo_gains(name, kp, kd)
        if "locomotion" in state.components:
            from strider.control.controller import LocomotionCommand
            from strider.methods.registry import make_controller

            c = state.components["locomotion"]
            recover = self._recovering_step()
            base = LocomotionCommand(heading=self.heading) if recover else (self.command or LocomotionCommand())
            command = dataclasses.replace(base, speed=c.get("speed", 0.0 if recover else base.speed),
                                          period=c.get("period", base.period), walking=not recover)
            if not recover:
                self.command = command    # the skill's plan changes go on to the walking delegate
            self.delegate = make_controller(c["controller"], command, c.get("style"))
            self._delegate_next = 0.0
            self._delegate_struck = False
            if recover:
                # Mid-motion: take the character as it is and step at once; the skill keeps its own tick,
                # so the fall cone is still checked every skill control step.
                self.delegate.reset(self.world, self.character, start=AS_IS)
                self.delegate.recovery_step()
                self.recoveries += 1
            else:
                self.delegate.reset(self.world, self.character)
                self.control_period = self.delegate.control_period

    # --- targets -----------------------------------------------------------------------------------
    def _prepare(self, state: State) -> tuple[list[_Trajectory], list[_Trajectory]]:
        key = (self.action, state.name)
        if key not in self._prepared:
            pose = [_Trajectory(t, self.character) for t in self.skill.poses.get(state.pose, ())] if state.pose else []
            self._prepared[key] = (pose, [_Trajectory(t, self.character) for t in state.joints])
        return self._prepared[key]

    def _targets(self, state: State, t: float) -> dict[str, np.ndarray]:
        """Per joint: a parent-relative quaternion (ball) or hinge angles, from the pose and trajectories."""
        pose, trajectories = self._prepare(state)
        layers: list[dict[str, np.ndarray]] = []
        frames: dict[str, str] = {}
        for group in (pose, trajectories):
            layer: dict[str, np.ndarray] = {}
            for traj in group:
                for joint, r in traj.rotation_vectors(t):
                    layer[joint] = layer.get(joint, 0.0) + r
                    frames[joint] = traj.target.frame
            layers.append(layer)
        base, offsets = layers
        out: dict[str, np.ndarray] = {}
        ch = self.character
        heading_q = quat.about_z(self.heading)
        zero = np.zeros(3)
        for name in ch.joints:
            if self._kind[name] == "ball":
                # Knot angles turn the joint away from its pose (K0): q = q_pose * exp(theta a).
                q = quat.mul(quat.exp(base.get(name, zero)), quat.exp(offsets.get(name, zero)))
                if frames.get(name) == "character":
                    parent_q = ch.body_quat(self._parent_name[name])
                    q = quat.mul(quat.conj(parent_q), quat.mul(heading_q, q))
                out[name] = q
            else:
                r = base.get(name, zero) + offsets.get(name, zero)
                out[name] = np.array([float(np.dot(r, a)) for a in self._hinge_axes[name]])
        return out

    def _write_servos(self, targets: dict[str, np.ndarray]) -> None:
        ch = self.character
        ctrl = ch.servo_targets
        for name, value in targets.items():
            j = ch.joints[name]
            if self._kind[name] == "ball":
                ctrl[j.servos] = servo_command(ch.qpos[j.qpos], value)
            else:
                ctrl[j.servos] = value

    # --- components ----------------------------------------------------------------------------------
    def _run_components(self, state: State, t: float, targets_only: bool = False) -> None:
        comps = state.components
        ch = self.character
        torques = np.zeros(ch.nv)
        if "foot_flat" in comps:
            self._feet_flat()
        if "upright" in comps:
            self._upright(comps["upright"])
        if "balance" in comps and not targets_only:
            self._balance(comps["balance"], torques)
        ch.set_feedforward_torques(torques[ch.internal_dofs])

    def _feet_flat(self) -> None:
        """Ankle targets that keep each sole parallel to the ground beneath it (slopes, P2)."""
        ch, w = self.character, self.world
        for side in SIDES:
            leg = self.roles.legs[side]
            ankle = ch.joint_anchor(leg.ankle)
            frame = CharacterFrame(self.heading, ankle)
            fwd, left = frame.forward * FOOT_SLOPE_PROBE, frame.left * FOOT_SLOPE_PROBE
            pitch = math.atan2(w.ground_height(*(ankle + fwd)[:2]) - w.ground_height(*(ankle - fwd)[:2]),
                               2 * FOOT_SLOPE_PROBE)
            roll = math.atan2(w.ground_height(*(ankle + left)[:2]) - w.ground_height(*(ankle - left)[:2]),
                              2 * FOOT_SLOPE_PROBE)
            # Toes up on an uphill: a negative rotation about the character's lateral axis.
            target = quat.mul(quat.about_z(self.heading), quat.mul(quat.about_y(-pitch), quat.about_x(roll)))
            sign = float(np.sign(self._hinge_axes[leg.ankle][0][0]) or 1.0)
            a, b = universal_angles(quat.mul(quat.conj(ch.body_quat(leg.lower)), target), sign)
            ch.servo_targets[ch.joints[leg.ankle].servos] = (a, b)

    def _upright(self, params: dict) -> None:
        """Pelvis upright in the world through both hips' servos (Eq. 2.3, root gains split between the legs)."""
        ch = self.character
        g = ch.spec.root_gains
        scale = params.get("kp_scale", 1.0) * SUPPORT_SPLIT
        target = quat.about_z(self.heading)
        for side in SIDES:
            leg = self.roles.legs[side]
            joint = ch.joints[leg.hip]
            kp, kd = scale * g.kp, scale * g.kd
            ch.set_servo_gains(leg.hip, kp, kd)
            # No thigh-velocity feed-forward (zero below): with both feet planted the thighs hardly turn, so the
            # servo's own damping of the hip's relative velocity already damps the pelvis. Sampled every
            # control step and held, the feed-forward drove a 100 Hz hip chatter that walked the feet
            # downhill on slopes and apart on flat ground (P2).
            ch.servo_targets[joint.servos] = stance_hip_servo_command(
                ch.qpos[joint.qpos], target, ch.body_quat(leg.upper), STILL, kp, kd)

    def _balance(self, params: dict, torques: np.ndarray) -> None:
        """F = M[kp(Xd - x) - kd x'] over the middle of the ankles, half through each leg (E7, Decisions 7-8)."""
        ch = self.character
        d = self.balance_defaults
        p = COMBalanceParams(params.get("kp", d.kp), params.get("kd", d.kd), params.get("limit", d.limit),
                             params.get("plant", d.plant))
        com = ch.com_position()
        ankles = [ch.joint_anchor(self.roles.legs[s].ankle) for s in SIDES]
        target = 0.5 * (ankles[0] + ankles[1])
        target[:2] += CharacterFrame(self.heading, target).forward[:2] * params.get("ankle_offset", 0.0)
        force = com_balance_force(ch.mass, com, ch.com_velocity(), target, p)
        j_com = ch.com_jacobian()
        normal = ch.contact_normal_forces()
        share = SUPPORT_SPLIT * ch.mass * self.world.scene.gravity
        # Along the line between the feet, shifting load from one foot to the other moves the centre of
        # pressure as far as the feet are apart; across it only the soles' length is available.
        between = ankles[0][:2] - ankles[1][:2]
        axis = np.array([between[0], between[1], 0.0]) / max(float(np.linalg.norm(between)), 1e-9)
        lateral = axis * float(force @ axis)
        sagittal = force - lateral
        for side in SIDES:
            leg = self.roles.legs[side]
            # Both feet down: each leg pushes the ground with half of -F at its ankle (hips and knees only),
            # so the ground pushes the body with F without asking the narrow soles for torque.
            j_foot = ch.point_jacobian(leg.foot, ch.joint_anchor(leg.ankle))
            dofs = np.concatenate([ch.joints[n].dof for n in (leg.hip, leg.knee)])
            load = float(normal[self._feet[side]].sum())
            press = np.array([0.0, 0.0, -plant_force(load, share, p.plant)])
            torques[dofs] += jacobian_transpose(j_foot, press - SUPPORT_SPLIT * lateral, dofs)
            # Sagittally the ankles carry it (Decision 8), within what the sole can react.
            j_v = com_relative_to_foot(j_com, ch.point_jacobian(leg.foot, com))
            torques[dofs] += jacobian_transpose(j_v, SUPPORT_SPLIT * sagittal, dofs)
            ankle = ch.joints[leg.ankle].dof
            tau = jacobian_transpose(j_v, SUPPORT_SPLIT * sagittal, ankle)
            torques[ankle] += limit_ankle_torque(tau[0], tau[1], load, self._soles[side],
                                                 params.get("sole_margin", SOLE_MARGIN))


def build(command, style: str) -> SkillController:
    """The registry's factory: a skill (``style`` is a skill name or file) run as a controller."""
    from strider.methods.skills.skill import load_skill

    return SkillController(load_skill(style), command=command)
