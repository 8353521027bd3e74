"""Retargeting a source clip onto a strider character.

Steps (issue 4):

1. Convert the clip to strider axes (z up, x forward, metres) and scale it by
   the ratio of the character's leg length (hip to ankle) to the source's.
2. Match bodies to source joints with a joint map (built-in or YAML), and
   compute the source's reference pose (:mod:`strider.motion.reference_pose`),
   so that the character's zero pose corresponds to it.
3. Each mapped body takes its source joint's world rotation away from the
   reference pose, G_body = G_joint G_ref^-1; unmapped bodies follow their
   parent. Local rotations become joint coordinates: ball joints take the
   quaternion, hinges its projection on their axis, the two-hinge ankle its
   decomposition (:mod:`strider.motion.character_skeleton`).
4. The pelvis is placed so that the midpoint of the character's hips lies on
   the midpoint of the source's hips.
5. Foot-height correction: the whole motion is lifted or lowered so that the
   feet, while in stance, stand on the ground (z = 0), neither floating nor
   sinking.
6. Foot planting: what that leaves, because the source's legs differ from each
   other (or from the character's in proportion), each leg takes on its own
   with two-link IK, so every stance sole sits on the ground
   (:mod:`strider.motion.foot_planting`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec
from strider.errors import UsageError
from strider.motion.anatomy import Legs
from strider.motion.character_motion import CharacterMotion
from strider.motion.character_skeleton import coordinates_from_rotation, rotation_from_coordinates
from strider.motion.clip import Clip
from strider.motion.foot_planting import FootPlanting, plant_stance_feet
from strider.motion.joint_map import JointMap, character_roles, detect_map
from strider.motion.reference_pose import ReferencePoseReport, reference_pose

STANCE_SPEED = 0.3
"""A foot whose lowest point moves slower than this (m/s, horizontally) may be in stance."""
STANCE_BAND = 0.05
"""... and whose lowest point is within this height (m) of that foot's ground level over the clip."""
CONTACT_BAND = 0.01
"""Sole points within this height (m) of a foot's lowest point count as the part touching the ground."""
SMOOTHING_SECONDS = 0.1
"""Moving-average window of the foot-height correction, s: shorter than a stance phase (about 0.6 s at a walk)."""
GROUND_PERCENTILE = 5.0
"""A foot's ground level: this percentile of its lowest point's height (robust to a few outlying frames)."""


@dataclass(frozen=True)
class Retargeted:
    motion: CharacterMotion
    source: Clip                   # the source in strider axes, scaled by ``scale`` (what the character follows)
    scale: float                   # character leg length / source leg length (metres)
    joint_map: str
    bodies: dict[str, str]         # character body -> source joint
    reference: ReferencePoseReport
    foot_offset: np.ndarray        # (T,) m added to each frame's height by the foot-height correction
    stance: dict[str, np.ndarray]  # per leg, (T,) True where the source's foot is down
    ankle_lift: dict[str, np.ndarray]  # per leg, (T,) m its ankle was moved up by foot planting (down if < 0)


def stance_mask(points: np.ndarray, fps: float) -> np.ndarray:
    """(T,) True where a foot (sole points (T, P, 3)) is down: its lowest points low and nearly still.

    Speeds are per sole point, so a foot rolling from heel to toe counts as in
    stance while the part touching the ground stays put.
    """
    height = points[..., 2]
    lowest = height.min(axis=1)
    if len(points) < 2:
        return np.ones(len(points), dtype=bool)
    speed = np.linalg.norm(np.gradient(points[..., :2], 1.0 / fps, axis=0), axis=2)     # (T, P)
    touching = height < lowest[:, None] + CONTACT_BAND
    still = np.where(touching, speed, np.inf).min(axis=1) < STANCE_SPEED
    ground = np.percentile(lowest, GROUND_PERCENTILE)
    return still & (lowest < ground + STANCE_BAND)


def retarget(clip: Clip, spec: CharacterSpec, joint_map: JointMap | None = None,
             foot_correction: bool = True, planting: FootPlanting | None = None) -> Retargeted:
    """The clip on the character (steps 1 to 6 above).

    ``foot_correction=False`` skips steps 5 and 6, leaving the joint
    coordinates and heights as the source gives them (an exported strider
    motion replays exactly); ``planting`` sets or switches off step 6 alone
    (default: :class:`FootPlanting`'s defaults, on).
    """
    planting = planting or FootPlanting()
    source = clip.to_strider()
    joint_map = joint_map or detect_map(source.skeleton, spec)
    resolved = joint_map.resolve(source.skeleton, spec)
    roles = character_roles(spec)
    hips = [roles[f"{s}_upper_leg"] for s in ("left", "right")]
    if roles["pelvis"] not in resolved or not all(h in resolved for h in hips):
        raise UsageError(f"joint map {joint_map.name!r} does not give the pelvis and both upper legs for this clip")
    legs = _legs(resolved, roles)
    scale = spec.leg_length() / legs.length(source.skeleton) if legs is not None else 1.0
    source = source.transformed(np.eye(3), scale)
    ref_world, report = reference_pose(source.skeleton, spec, resolved)
    pos, world = source.world()

    frames = source.n_frames
    body_world: dict[str, np.ndarray] = {}
    coords: dict[str, np.ndarray] = {}
    for b in spec.bodies:
        if b.name in resolved:
            j = resolved[b.name][0]
            want = quat.mul(world[:, j], quat.conj(ref_world[j]))
        else:
            want = body_world[b.parent] if b.parent else np.broadcast_to(quat.IDENTITY, (frames, 4))
        if b.joint is None:
            body_world[b.name] = want
            continue
        parent = body_world[b.parent]
        coords[b.joint.name] = coordinates_from_rotation(b.joint, quat.mul(quat.conj(parent), want))
        # What the joint actually makes (a hinge drops rotation off its axis) is what the children build on.
        body_world[b.name] = quat.mul(parent, rotation_from_coordinates(b.joint, coords[b.joint.name]))
    pelvis = roles["pelvis"]
    root_quat = body_world[pelvis]
    source_hips = pos[:, [resolved[h][0] for h in hips]].mean(axis=1)
    character_hips = np.mean([spec.body(h).joint.anchor_parent for h in hips], axis=0)
    root_pos = source_hips - quat.rotate(root_quat, character_hips)
    motion = CharacterMotion(spec, source.fps, root_pos, quat.canonical(root_quat), coords, source.loop,
                             source.name)
    stance = source_stance(source, resolved, spec)
    offset = foot_height_offset(motion, stance) if foot_correction else np.zeros(frames)
    motion = motion.shifted(np.stack([np.zeros(frames), np.zeros(frames), offset], axis=1))
    planted = plant_stance_feet(motion, stance, planting if foot_correction else replace(planting, enabled=False))
    bodies = {b: source.skeleton.names[j] for b, (j, _) in resolved.items()}
    return Retargeted(planted.motion, source, scale, joint_map.name, bodies, report, offset, stance, planted.lift)


def source_stance(source: Clip, resolved: dict[str, tuple[int, bool]], spec: CharacterSpec) -> dict[str, np.ndarray]:
    """Per leg: (T,) True where the source's foot (its foot joint and everything below it) is down."""
    roles = character_roles(spec)
    pos = source.world_positions()
    out = {}
    for side in spec.roles.legs:
        foot = resolved.get(roles[f"{side}_foot"])
        if foot is None:
            continue
        below = [j for j in range(len(source.skeleton)) if foot[0] in source.skeleton.path_to_root(j)]
        out[side] = stance_mask(pos[:, below], source.fps)
    return out


def foot_height_offset(motion: CharacterMotion, stance: dict[str, np.ndarray]) -> np.ndarray:
    """Per-frame height (m) to add so that the feet in stance stand on z = 0.

    At each frame with a foot in stance, the offset puts the mean lowest point
    of the stance feet on the ground; frames in flight interpolate between
    their neighbours, and a moving average over ``SMOOTHING_SECONDS`` keeps
    the root's vertical velocity from jumping. A clip with no stance at all
    (a backflip, a roll) is only lifted so that its lowest point touches.
    """
    lows, masks = [], []
    for side, points in motion.sole_points().items():
        lows.append(points[..., 2].min(axis=1))
        masks.append(stance.get(side, np.zeros(motion.n_frames, dtype=bool)))
    lows_a, masks_a = np.array(lows), np.array(masks)
    any_stance = masks_a.any(axis=0)
    if not any_stance.any():
        return np.full(motion.n_frames, -float(lows_a.min()))
    mean_low = (lows_a * masks_a).sum(axis=0)[any_stance] / masks_a.sum(axis=0)[any_stance]
    frames = np.arange(motion.n_frames)
    offset = -np.interp(frames, frames[any_stance], mean_low)
    width = max(1, round(SMOOTHING_SECONDS * motion.fps) | 1)
    padded = np.pad(offset, width // 2, mode="edge")
    return np.convolve(padded, np.ones(width) / width, mode="valid")


def _legs(resolved: dict[str, tuple[int, bool]], roles: dict[str, str]) -> Legs | None:
    try:
        def pair(kind: str) -> tuple[int, int]:
            return resolved[roles[f"left_{kind}"]][0], resolved[roles[f"right_{kind}"]][0]

        return Legs(pair("upper_leg"), pair("lower_leg"), pair("foot"), "")
    except KeyError:
        return None
