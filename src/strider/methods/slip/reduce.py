"""From the full body to what the planner sees (Mordatch et al. 2010, Sec. 4.1, 5.2, 5.3, 6).

``body_geometry`` reads the constants once from the standing pose: rest leg length, its limits, the COM
height, the hips' offsets from the COM and the sole's rectangle. ``reduce`` turns the current state into the
plan's start: COM and its velocity, pelvis yaw and its rate, which feet are down, and the memory of the last
touchdown the step-timing decision needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from strider.control.frames import CharacterFrame
from strider.methods.slip.schedule import BodyGeometry, FootOnGround, PlanStart, SoleBox
from strider.quat import rotate, yaw
from strider.sim.character import Character


@dataclass(frozen=True)
class ReduceParams:
    contact_share: float = 0.01     # a foot is down above 1 % of body weight (slip-planning.md Sec. 4)
    contact_ticks: int = 2          # ... for this many control steps in a row (same decision)
    landing_hold: float = 0.0       # s; beyond the source: a foot that landed this recently and that the plan
                                    # keeps down does not count as lifted when it sheds its load (0: the source)
    leg_min_share: float = 0.75     # L_min as a share of the rest length (a decision: the source names L_min only)
    leg_max_share: float = 1.05     # L_max as a share of the rest length (a decision): with the SLIP controller's
                                    # crouched stance this is about the straight leg


def body_geometry(character: Character, params: ReduceParams = ReduceParams()) -> BodyGeometry:
    """Constants of the reduced model from the character standing as it is now (call after settling)."""
    legs = character.spec.roles.legs
    com = character.com_position()
    frame = CharacterFrame.of(character.root_pose()[1], com)
    hips, rest = {}, []
    for side, leg in legs.items():
        hip = character.joint_anchor(leg.hip)
        ankle = character.joint_anchor(leg.ankle)
        hips[side] = tuple(float(v) for v in frame.to_local(hip - com))
        rest.append(float(np.linalg.norm(hip - ankle)))
    leg = legs["left"]
    corners = character.sole_corners(leg.foot)
    foot_rot = character.body_rotation(leg.foot)
    centre = corners.mean(axis=0)
    local = (corners - centre) @ foot_rot
    ankle_local = (character.joint_anchor(leg.ankle) - centre) @ foot_rot
    sole = SoleBox(half_length=float(np.abs(local[:, 0]).max()), half_width=float(np.abs(local[:, 1]).max()),
                   ankle=(float(ankle_local[0]), 0.0, float(ankle_local[2])))
    ground = float(corners[:, 2].mean())
    rest_leg = float(np.mean(rest))
    return BodyGeometry(rest_leg=rest_leg, leg_min=params.leg_min_share * rest_leg,
                        leg_max=params.leg_max_share * rest_leg,
                        standing_com_height=float(com[2] - ground), hips=hips, sole=sole)


@dataclass
class ContactMemory:
    """Which feet are down (debounced), which landed last, and when and where the COM was then."""

    params: ReduceParams = field(default_factory=ReduceParams)
    down: dict[str, bool] = field(default_factory=lambda: {"left": True, "right": True})
    streak: dict[str, int] = field(default_factory=lambda: {"left": 0, "right": 0})
    last_planted: str = "left"
    landed_at: dict[str, float] = field(default_factory=lambda: {"left": -np.inf, "right": -np.inf})
    touchdown_time: float = 0.0
    touchdown_com: tuple[float, float, float] | None = None

    def update(self, character: Character, t: float, gravity: float, held: tuple[str, ...] = ()) -> list[str]:
        """Read the feet's loads; the sides whose contact changed this tick (a contact event). ``held`` are the
        feet the plan keeps down: a landing foot sheds its load for a moment as the other takes it, and
        counting that as a lift-off made the next plan lift the foot that had just landed."""
        forces = character.contact_normal_forces()
        weight = character.mass * gravity
        changed = []
        for side, leg in character.spec.roles.legs.items():
            load = forces[character.body(leg.foot)] + (forces[character.body(leg.toes)] if leg.toes else 0.0)
            now = load > self.params.contact_share * weight
            settling = side in held and t - self.landed_at[side] < self.params.landing_hold
            if now == self.down[side] or (settling and not now):
                self.streak[side] = 0
                continue
            self.streak[side] += 1
            if self.streak[side] >= self.params.contact_ticks:
                self.down[side] = now
                self.streak[side] = 0
                changed.append(side)
                if now:
                    self.last_planted = side
                    self.landed_at[side] = t
                    self.touchdown_time = t
                    self.touchdown_com = tuple(float(v) for v in character.com_position())
        return changed


def foot_on_ground(character: Character, side: str, geometry: BodyGeometry) -> FootOnGround:
    foot = character.spec.roles.legs[side].foot
    corners = character.sole_corners(foot)
    centre = corners.mean(axis=0)
    forward = rotate(character.body_quat(foot), np.array([1.0, 0.0, 0.0]))
    return FootOnGround(centre=(float(centre[0]), float(centre[1]), float(corners[:, 2].min())),
                        yaw=float(np.arctan2(forward[1], forward[0])))


def reduce(character: Character, memory: ContactMemory, geometry: BodyGeometry, t: float) -> PlanStart:
    """The plan's start from the current state (Eq. 16: start phase 1, 2 or 3 by the feet down)."""
    down = [side for side in ("left", "right") if memory.down[side]]
    start_phase = {2: 1, 1: 2, 0: 3}[len(down)]
    stance = down[0] if len(down) == 1 else memory.last_planted
    _, root_quat = character.root_pose()
    omega = character.body_angular_velocity(character.spec.roles.root)
    return PlanStart(com=tuple(float(v) for v in character.com_position()),
                     com_velocity=tuple(float(v) for v in character.com_velocity()),
                     heading=yaw(root_quat), heading_rate=float(omega[2]), start_phase=start_phase,
                     stance_side=stance, feet={side: foot_on_ground(character, side, geometry)
                                               for side in ("left", "right")},
                     time_since_touchdown=t - memory.touchdown_time, com_at_touchdown=memory.touchdown_com
                     ).with_quad(geometry.sole)
