"""GBWC's foot placement and swing leg (seed 000, Sec. 5.3.2): the inverted-pendulum foothold with the speed
feedback, the slope allowances and the reach limits, the swing ankle's path there, and the swing servos' feed of
their targets' velocity.

A part of :class:`strider.methods.gbwc.controller.GBWC`, which holds the state these methods share.
"""

from __future__ import annotations

import math

import numpy as np

from strider import quat
from strider.control.fastmath import clamp
from strider.control.frames import CharacterFrame
from strider.control.ik import (
    orient_frame,
    reachable_share,
    two_link_floats,
    within_reach_floats,
)
from strider.control.ipm import slope_step_offset, step_offset
from strider.control.leg_geometry import SIDE_SIGN, LegGeometry

SLOPE_PROBE = 0.1   # m between the ground-height samples that give the slope under the stance foot
MIN_SLOPE_OFFSET = 1e-6   # m: below this flat IPM offset the slope's scaling is left out (no division by ~0)


class FootPlacement:
    """The placement part of GBWC (see the module docstring)."""

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
        # remaining speed error moves the foothold back (too slow) or forward (too fast). While a heading jump
        # is turned, the speed along the new heading is not yet an error.
        speed_error = 0.0 if self._following_jump else self.desired_speed - v_local[0]
        tracking = -(p.placement_speed_gain * speed_error + p.placement_speed_integral * self._speed_error_integral)
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
                        extension: float, sag: float, lat: float, tracking: float, geo: LegGeometry) -> float:
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
