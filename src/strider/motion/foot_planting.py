"""Planting stance feet on the ground, leg by leg, with analytic two-link IK.

Lifting or lowering the whole motion (the retargeting's foot-height
correction) cannot put both feet on the ground when the source's legs differ
left to right: one foot floats or sinks. This step fixes each leg on its own.
In every stance frame the ankle moves straight up or down by the height that
puts the foot's lowest sole point on z = 0; the hip stays where it is and the
foot keeps its world orientation, so the hip and knee take the change:

- the knee angle comes from the hip-ankle distance (:mod:`strider.motion.limb_triangle`),
  never straighter than the knee's range allows, so it never hyperextends;
- the thigh turns by the smallest rotation that points the leg at the new
  ankle, which keeps the knee in the plane it was in, and then the whole leg
  by the small turn about the hip-ankle line that lets a two-hinge ankle give
  the foot its orientation back;
- the ankle's coordinates are recomputed so the foot's orientation stays.

Legs whose knee is not a hinge are left as they are.

The correction fades in before each stance phase and out after it over
``blend_seconds`` (a raised cosine of the distance in frames to stance), so
the foot does not pop; frames farther from stance are not changed at all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec, JointSpec
from strider.motion.character_motion import CharacterMotion
from strider.motion.character_skeleton import (
    coordinates_from_rotation,
    joint_centre,
    rotation_from_coordinates,
)
from strider.motion.limb_triangle import limb_triangle

UP = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class FootPlanting:
    """Per-leg stance-foot correction, after the whole motion's foot-height shift."""

    enabled: bool = True
    blend_seconds: float = 0.1
    """s: the correction fades in before a stance phase and out after it over this long. A few frames at the
    usual 30-120 fps, and well inside a walk's swing phase (about 0.4 s), so it touches only its edges."""


@dataclass(frozen=True)
class PlantedFeet:
    motion: CharacterMotion
    lift: dict[str, np.ndarray]    # per leg, (T,) m the ankle was moved up (negative: down)


@dataclass(frozen=True)
class _Leg:
    """One leg's joints and, in the zero pose, its links (thigh frame = shank frame there)."""

    hip: JointSpec
    knee: JointSpec
    ankle: JointSpec
    upper: str                 # body names: thigh, shank, foot
    lower: str
    foot: str
    parent: str                # the body the hip hangs from
    hip_to_knee: np.ndarray    # in the thigh frame
    knee_to_ankle: np.ndarray  # in the shank frame
    knee_axis: np.ndarray      # unit

    @staticmethod
    def of(spec: CharacterSpec, side: str) -> _Leg | None:
        """The leg, or None where its knee is not a hinge (the knee angle would not follow from the reach)."""
        roles = spec.roles.legs[side]
        upper, lower, foot = spec.body(roles.upper), spec.body(roles.lower), spec.body(roles.foot)
        if lower.joint.kind != "hinge":
            return None
        axis = np.asarray(lower.joint.axes[0], dtype=float)
        return _Leg(upper.joint, lower.joint, foot.joint, upper.name, lower.name, foot.name, upper.parent,
                    np.subtract(lower.joint.anchor_parent, joint_centre(spec, upper.name)),
                    np.subtract(foot.joint.anchor_parent, joint_centre(spec, lower.name)),
                    axis / np.linalg.norm(axis))


def plant_stance_feet(motion: CharacterMotion, stance: dict[str, np.ndarray],
                      params: FootPlanting | None = None) -> PlantedFeet:
    """The motion with each leg's stance sole on z = 0 (see the module docstring), and the ankle lifts made."""
    params = params or FootPlanting()
    lift = {side: np.zeros(motion.n_frames) for side in stance}
    if not params.enabled:
        return PlantedFeet(motion, lift)
    ramp = max(0, round(params.blend_seconds * motion.fps))
    weights = {side: stance_weight(mask, ramp) for side, mask in stance.items()}
    soles = motion.sole_points()
    clip = motion.to_clip()
    pos, quats = clip.world()

    def world(body: str) -> tuple[np.ndarray, np.ndarray]:
        j = clip.skeleton.index(body)
        return pos[:, j], quats[:, j]

    coords = dict(motion.coords)
    for side, weight in weights.items():
        moved = weight > 0
        leg = _Leg.of(motion.spec, side)
        if leg is None or not moved.any():
            continue
        lowest = soles[side][..., 2].min(axis=1)
        # Within the fade, never push a sole below the ground (or deeper into it, where it already is).
        lift[side] = weight * np.maximum(_held(-lowest, stance[side]), np.minimum(-lowest, 0.0))
        hip, thigh = world(leg.upper)
        ankle, foot = world(leg.foot)
        target = ankle[moved] + lift[side][moved, None] * UP
        solved = _reach(leg, world(leg.parent)[1][moved], hip[moved], thigh[moved], foot[moved], target)
        for joint, values in zip((leg.hip, leg.knee, leg.ankle), solved):
            coords[joint.name] = coords[joint.name].copy()
            coords[joint.name][moved] = values
    return PlantedFeet(replace(motion, coords=coords), lift)


def stance_weight(stance: np.ndarray, ramp_frames: int) -> np.ndarray:
    """(T,) 1 in stance, easing to 0 over ``ramp_frames`` either side (raised cosine), 0 beyond."""
    frames = np.arange(len(stance))
    down = np.flatnonzero(stance)
    if down.size == 0:
        return np.zeros(len(stance))
    # Distance in frames to the nearest stance frame, from the stance frames either side.
    after = np.searchsorted(down, frames)
    before = down[np.maximum(after - 1, 0)]
    after = down[np.minimum(after, down.size - 1)]
    distance = np.minimum(np.abs(frames - before), np.abs(after - frames))
    fraction = np.minimum(distance / (ramp_frames + 1), 1.0)
    return 0.5 * (1.0 + np.cos(np.pi * fraction))


def _held(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``values`` where ``where`` is set, interpolated between those frames and held beyond them."""
    frames = np.arange(len(values))
    return np.interp(frames, frames[where], values[where])


def _reach(leg: _Leg, parent: np.ndarray, hip: np.ndarray, thigh: np.ndarray, foot: np.ndarray,
           target: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hip, knee and ankle coordinates (N, k) putting the ankle centre on ``target`` (N, 3).

    ``parent``, ``thigh`` and ``foot`` are world orientations (N, 4), ``hip`` the hip centre (N, 3); the
    hip stays and the foot keeps its orientation.
    """
    axis = leg.knee_axis
    upper_perp = leg.hip_to_knee - (leg.hip_to_knee @ axis) * axis
    lower_perp = leg.knee_to_ankle - (leg.knee_to_ankle @ axis) * axis
    # The links' offsets along the knee axis do not turn with the knee: the triangle is the part across it.
    along_axis = (leg.hip_to_knee + leg.knee_to_ankle) @ axis
    across = np.sqrt(np.maximum(np.sum((target - hip) ** 2, axis=1) - along_axis**2, 0.0))
    bend = limb_triangle(np.linalg.norm(upper_perp), np.linalg.norm(lower_perp), across).bend
    # Knee angle = the links' bend less the angle between them at zero, on the side the knee's range bends to.
    at_zero = np.arctan2(np.cross(upper_perp, lower_perp) @ axis, upper_perp @ lower_perp)
    side = _knee_side(leg.knee, at_zero)
    knee = side * bend - at_zero
    if leg.knee.ranges:
        # Only the straight end of the range binds: a source that folds the knee further than the character's
        # range (kneeling, squatting) keeps doing so, as it does in every frame the correction leaves alone.
        lo, hi = leg.knee.ranges[0]
        knee = np.maximum(knee, lo) if side > 0 else np.minimum(knee, hi)
    shank_in_thigh = rotation_from_coordinates(leg.knee, knee[:, None])
    reach = leg.hip_to_knee + quat.rotate(shank_in_thigh, leg.knee_to_ankle)
    thigh = quat.mul(quat.between_vectors(quat.rotate(thigh, reach), target - hip), thigh)
    if leg.ankle.kind == "universal":
        swivel = _ankle_swivel(leg.ankle, quat.mul(thigh, shank_in_thigh), foot, target - hip)
        thigh = quat.mul(swivel, thigh)
    hip_coords = coordinates_from_rotation(leg.hip, quat.mul(quat.conj(parent), thigh))
    # What the hip joint makes (a ball joint: exactly this) is what the shank and foot hang from.
    thigh = quat.mul(parent, rotation_from_coordinates(leg.hip, hip_coords))
    shank = quat.mul(thigh, shank_in_thigh)
    ankle_coords = coordinates_from_rotation(leg.ankle, quat.mul(quat.conj(shank), foot))
    return hip_coords, knee[:, None], ankle_coords


def _knee_side(knee: JointSpec, at_zero: float) -> float:
    """+1 or -1: the sign of the links' bend that the knee's range allows (flexion, not hyperextension)."""
    if not knee.ranges:
        return 1.0
    middle = 0.5 * sum(knee.ranges[0])
    return 1.0 if middle + at_zero >= 0.0 else -1.0


def _ankle_swivel(ankle: JointSpec, shank: np.ndarray, foot: np.ndarray, leg_line: np.ndarray) -> np.ndarray:
    """The smallest turn (N, 4) of the whole leg about the hip-ankle line after which a universal ankle can
    give the foot its orientation.

    A universal joint's first axis (fixed in the shank) stays perpendicular to its second (fixed in the
    foot); turning the leg about that line moves the first and leaves the ankle centre where it is, and
    a small turn restores the right angle that the new knee bend and thigh swing upset. Without it the
    ankle would drop the twist about the sole's normal, turning the foot about it. Where no turn can
    (never for a correction of centimetres), the closest is taken.
    """
    line = leg_line / np.linalg.norm(leg_line, axis=1, keepdims=True)
    first = quat.rotate(shank, np.asarray(ankle.axes[0], dtype=float))
    second = quat.rotate(foot, np.asarray(ankle.axes[1], dtype=float))
    # Rodrigues: (R(line, a) first) . second = cos_part cos a + sin_part sin a + fixed.
    first_along = np.sum(line * first, axis=1)
    fixed = first_along * np.sum(line * second, axis=1)
    cos_part = np.sum(first * second, axis=1) - fixed
    sin_part = np.sum(np.cross(line, first) * second, axis=1)
    amplitude = np.hypot(cos_part, sin_part)
    phase = np.arctan2(sin_part, cos_part)
    spread = np.arccos(np.clip(-fixed / np.maximum(amplitude, 1e-12), -1.0, 1.0))
    turns = np.stack([phase - spread, phase + spread])
    turns = (turns + np.pi) % (2.0 * np.pi) - np.pi
    angle = np.take_along_axis(turns, np.argmin(np.abs(turns), axis=0)[None], axis=0)[0]
    return quat.from_axis_angle(line, angle)
