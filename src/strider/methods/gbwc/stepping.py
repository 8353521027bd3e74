"""GBWC's step cycle (seed 000, Sec. 5.3.1, 5.5.1): the desired speed and heading, standing, starting, stepping
and stopping, the step timing, and the recovery steps that catch a push.

A part of :class:`strider.methods.gbwc.controller.GBWC`, which holds the state these methods share.
"""

from __future__ import annotations

import numpy as np

from strider import quat
from strider.control.capture import capture_offset
from strider.control.fastmath import clamp
from strider.control.frames import CharacterFrame
from strider.control.leg_geometry import SIDE_SIGN, SIDES
from strider.control.step_fsm import other
from strider.control.step_timing import remaining_step_time


class Stepping:
    """The stepping part of GBWC (see the module docstring)."""

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

    def _follow_heading_jump(self, root_q: np.ndarray) -> float:
        """Whether a commanded heading jump is still being turned (``_following_jump``); the pelvis' yaw.

        A new command whose heading lies beyond ``hip limit / root kp`` of the current
        heading is a commanded turn (:meth:`_note_heading_jump`); it is over once the
        pelvis has come within that reach of the target. Until then the body's
        lag behind the new heading is the turn itself, not a push, and neither the
        heading yield nor the speed feedback treat it as one.
        """
        pelvis_yaw = quat.yaw(root_q)
        if self._following_jump and abs(quat.wrap_angle(self.target_heading.value - pelvis_yaw)) <= self._heading_lag_limit:
            self._following_jump = False
        return pelvis_yaw

    def _note_heading_jump(self) -> None:
        self._following_jump = (self._following_jump or
                                abs(quat.wrap_angle(self.target_heading.value - self.heading)) > self._heading_lag_limit)

    def _yield_heading(self, pelvis_yaw: float) -> None:
        """While walking, keep the heading target within reach of the pelvis' yaw.

        Beyond the source. A push that turns the body faster than the stance
        foot's twisting friction can resist would have the root PD press the
        stance hip against its limit, and the foot spins on the ground under it.
        Past ``hip limit / root kp`` of heading error the PD's stiffness asks for
        more than the hip has, so the target yields to the pelvis there and comes
        back at the turn rate (:meth:`_update_commands`). It stands aside while a
        commanded heading jump is turned (:meth:`_follow_heading_jump`), which it
        would otherwise hold to the pelvis' pace.
        """
        if self.mode != "walking" or not self.params.yield_heading or self._following_jump:
            return
        lag = clamp(quat.wrap_angle(self.heading - pelvis_yaw), -self._heading_lag_limit, self._heading_lag_limit)
        self.heading = quat.wrap_angle(pelvis_yaw + float(lag))

    def _begin_walking(self) -> None:
        """Start from standing (Sec. 5.5.1): shift the COM towards the future stance foot first.

        The foot nearer the COM becomes the stance foot; the other lifts once the
        COM has covered ``start_shift`` of the way to it.
        """
        com = self.com_position()
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
        com, com_vel = self._com_state()
        frame = CharacterFrame(self.heading, com)
        v_local = frame.to_local(com_vel)
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
        load = self.character.contact_normal_force(self._foot_bodies[stance])
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
        com = self.com_position()
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

    def _recovery_kind(self) -> str | None:
        """How this push recovery steps (see :meth:`recovery_step`), or None outside one."""
        if not self._recovering:
            return None
        return "crossover" if self._crossover else "soft stance" if self._soft_stance else "step"

    def _soft_recovery(self, support: tuple[str, ...]) -> bool:
        """Whether this is a single-support step of a recovery that softens the stance hip (recovery_step)."""
        return self._soft_stance and self._recovering and self.mode == "stopping" and len(support) == 1

    def _recovery_load(self, side: str, support: tuple[str, ...], foot_force: dict) -> float:
        """The stance foot's share of the root control in a recovery step (0..1; 1 otherwise)."""
        if not (self.params.recovery_stance_share and self._recovering and self.mode == "stopping"
                and len(support) == 1):
            return 1.0
        return min(foot_force[side] / (self.params.recovery_stance_load * self.weight), 1.0)
