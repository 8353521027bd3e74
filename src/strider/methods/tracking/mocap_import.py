"""C1: a motion-capture clip as sagittal joint angles and timed foot contact modes (phase-tracking.md Sec. 4,
"Mocap input").

The clip's 3-D joint positions are projected on the plane of its walk (the direction it travels, and up). Each
segment's pitch comes from its projected bone; joint angles are differences of pitches, so only angles carry
over, and the planar character keeps its own proportions. Contacts come from the source's ankle (the heel) and
ball of the foot (the toe): down where low and slow. The root is then placed on the character's own legs: its
height puts the lowest foot point in contact on the ground, its travel is the source's, scaled by leg length.
A character with point feet (planar5) has a foot down while the source's heel or toe is, and one foot at a time.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.ndimage import median_filter, minimum_filter1d
from scipy.signal import savgol_filter

from strider import quat
from strider.characters import load_character
from strider.characters.spec import CharacterSpec
from strider.errors import UsageError
from strider.methods.tracking.planar_model import NUMPY_TRIG, PlanarModel
from strider.motion.anatomy import find_legs
from strider.motion.clip import Clip
from strider.motion.joint_map import character_roles, detect_map

FREE, HEEL, TOE, FLAT = 0, 1, 2, 3
MODE_NAMES = ("free", "heel", "toe", "flat")
SIDES = ("left", "right")


@dataclass(frozen=True)
class ImportParams:
    min_frames: int = 10             # fewer frames than this cannot hold a step
    min_travel: float = 0.1          # m the source must travel over the clip to define the walk's direction
    contact_height: float = 0.02     # m above the point's lowest: down (phase-tracking.md Sec. 4, "Mocap input")
    contact_speed: float = 0.4       # m/s: ... and slower than this. The spec's 0.2 m/s leaves CMU 02_01 two frames
                                     # (17 ms) of double support, since a toe rolling off moves at ~0.3 m/s; 0.4 finds
                                     # 16 frames (0.13 s), a walk's usual share; with it the tracker walks at the
                                     # clip's speed and takes harder pushes (docs/tracking.md, decisions)
    ground_window: float = 1.2       # s: a point's ground is its lowest height within this window (about a
                                     # stride), so a floor that drifts in the capture volume does not hide steps
    despike_frames: int = 5          # median filter against single-frame glitches (CMU 02_01's first frame)
    min_mode_frames: int = 3         # shorter runs of a contact state are noise and join their neighbours
    smoothing_window: float = 0.1    # s: Savitzky-Golay window of the angle smoothing (the spec's smoothing spline)
    smoothing_order: int = 3
    bridge_flight: float = 0.05      # s: a moment with both feet up shorter than this is marker noise in a walk;
                                     # the foot that was down stays down through it (a decision)
    min_swing: float = 0.1           # s: a foot up for less than this between two contacts grazed the ground before
                                     # landing (a heel dipping into the contact band); it counts as down (a decision)


@dataclass(frozen=True)
class PlanarClip:
    """A clip on a planar character: coordinates per frame (PlanarModel order) and contact modes per foot."""

    name: str
    fps: float
    q: np.ndarray                                  # (T, n)
    modes: dict[str, np.ndarray] = field(default_factory=dict)   # side -> (T,) FREE/HEEL/TOE/FLAT
    speed: float = 0.0                             # m/s: mean forward speed of the source, scaled to the character

    @property
    def n_frames(self) -> int:
        return len(self.q)

    def velocities(self) -> np.ndarray:
        return np.gradient(self.q, 1.0 / self.fps, axis=0)


def pitch_between(rest: np.ndarray, bone: np.ndarray) -> np.ndarray:
    """The rotation about +y (positive turns +z toward +x) taking direction ``rest`` (x, z) to ``bone`` (..., 2)."""
    return np.arctan2(rest[1] * bone[..., 0] - rest[0] * bone[..., 1], rest[0] * bone[..., 0] + rest[1] * bone[..., 1])


def import_clip(clip: Clip, spec: CharacterSpec, params: ImportParams = ImportParams()) -> PlanarClip:
    model = PlanarModel.from_spec(spec)
    source = clip.to_strider()
    if source.n_frames < params.min_frames:
        raise UsageError(f"{clip.name or 'the clip'} has {source.n_frames} frames; a walk needs at least one step")
    joints = _source_joints(source)
    pos, world_quats = source.world()
    forward = pos[-1, 0, :2] - pos[0, 0, :2]
    travel = float(np.linalg.norm(forward))
    if travel < params.min_travel:
        raise UsageError(f"{clip.name or 'the clip'} travels {travel:.2f} m; phase tracking needs a walk that moves")
    forward /= travel
    plane = np.stack([pos[..., :2] @ forward, pos[..., 2]], axis=-1)      # (T, J, 2) sagittal x, z
    rest = source.skeleton.rest_positions()
    rest_plane = np.stack([rest[:, :2] @ forward, rest[:, 2]], axis=-1)

    def bone(a: str, b: str) -> np.ndarray:
        return plane[:, joints[b]] - plane[:, joints[a]]

    up = quat.rotate(world_quats[:, joints["pelvis"]], np.array([0.0, 0.0, 1.0]))
    pitch = {"pelvis": pitch_between(np.array([0.0, 1.0]), np.stack([up[:, :2] @ forward, up[:, 2]], axis=-1))}
    spine = rest_plane[joints["head"]] - rest_plane[joints["lower_back"]]
    pitch["torso"] = pitch_between(spine, bone("lower_back", "head"))
    down = np.array([0.0, -1.0])
    legs = find_legs(source.skeleton)
    # a point foot's leg reaches the ground, so it stands for the capture's leg down to the ankle
    leg_length = _point_leg_length(model) if model.point_feet else spec.leg_length()
    scale = leg_length / legs.length(source.skeleton) if legs is not None else 1.0
    heel = model.contacts[model.contact("left", "heel")]
    heel_back = model.links[heel.link].anchor_child[0] - heel.local[0]   # m the heel lies behind the ankle
    contacts = {}
    for side in SIDES:
        pitch[f"{side}_thigh"] = pitch_between(down, bone(f"{side}_hip", f"{side}_knee"))
        pitch[f"{side}_shank"] = pitch_between(down, bone(f"{side}_knee", f"{side}_ankle"))
        pitch[f"{side}_upper_arm"] = pitch_between(down, bone(f"{side}_shoulder", f"{side}_elbow"))
        pitch[f"{side}_forearm"] = pitch_between(down, bone(f"{side}_elbow", f"{side}_wrist"))
        ankle, tip = plane[:, joints[f"{side}_ankle"]], plane[:, joints[f"{side}_toe_tip"]]
        contacts[side] = _contact_modes(_heel_point(ankle, tip, heel_back / scale), tip, source.fps, params)
        foot = pitch_between(np.array([1.0, 0.0]), bone(f"{side}_ankle", f"{side}_toe"))
        flat = contacts[side] == FLAT
        # The source's foot bone is not the character's sole: level is what the foot shows while flat on the ground
        pitch[f"{side}_foot"] = foot - (np.median(foot[flat]) if flat.any() else 0.0)

    _bridge_flights(contacts, round(params.bridge_flight * source.fps))
    if model.point_feet:
        contacts = _point_contacts(contacts)
    q = np.zeros((source.n_frames, model.n))
    r = spec.roles
    angles = {}
    if r.spine:
        q[:, 2] = pitch["pelvis"]
        angles[r.spine[0]] = pitch["torso"] - pitch["pelvis"]
    else:   # one trunk body from the hips up (planar5's): it leans as the capture's spine does
        q[:, 2] = pitch["pelvis"] = pitch["torso"]
    for side in SIDES:
        leg = r.legs[side]
        angles[leg.hip] = pitch[f"{side}_thigh"] - pitch["pelvis"]
        angles[leg.knee] = pitch[f"{side}_shank"] - pitch[f"{side}_thigh"]
        if leg.ankle is not None:
            angles[leg.ankle] = pitch[f"{side}_foot"] - pitch[f"{side}_shank"]
        arm = r.arms.get(side)
        if arm is not None:
            angles[arm.shoulder] = pitch[f"{side}_upper_arm"] - pitch["torso"]
            angles[arm.elbow] = pitch[f"{side}_forearm"] - pitch[f"{side}_upper_arm"]
    joint_ranges = {b.joint.name: b.joint.ranges[0] for b in spec.bodies if b.joint is not None}
    for name, value in angles.items():
        lo, hi = joint_ranges[name]
        q[:, model.coords.index(name)] = np.clip(np.unwrap(value), lo, hi)
    window = max(params.smoothing_order + 2, round(params.smoothing_window * source.fps) | 1)
    if window < source.n_frames:
        q[:, 2:] = savgol_filter(q[:, 2:], window, params.smoothing_order, axis=0)

    hips = 0.5 * (plane[:, joints["left_hip"], 0] + plane[:, joints["right_hip"], 0])
    q[:, 0] = scale * (hips - hips[0])
    hip_height = 0.5 * (plane[:, joints["left_hip"], 1] + plane[:, joints["right_hip"], 1])
    q[:, 1] = _root_height(model, q, contacts, scale * hip_height)
    duration = (source.n_frames - 1) / source.fps
    return PlanarClip(source.name or "clip", source.fps, q, contacts, float(scale * travel / duration))


def _point_leg_length(model: PlanarModel) -> float:
    """Hip centre to the foot point in the zero pose, m."""
    zero = [0.0] * model.n
    poses = model.poses(zero)
    hip = model.joint_centre(model.hip_link["left"], NUMPY_TRIG, poses)
    foot = model.point(zero, model.contact("left", "toe"), poses=poses)
    return float(np.hypot(hip[0] - foot[0], hip[1] - foot[1]))


def _point_contacts(modes: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """A capture's contact modes for point feet: a foot is down (on its one point, TOE) while any of its heel and
    toe is, and the double support is instantaneous (phase-tracking.md Sec. 4, "5-link model"): the trailing foot
    leaves the ground the frame the leading one lands."""
    down = {side: modes[side] != FREE for side in SIDES}
    out = {side: np.where(down[side], TOE, FREE).astype(np.int8) for side in SIDES}
    both = down["left"] & down["right"]
    for s, e in constant_runs(both):
        if not both[s]:
            continue
        # the foot that was down before this double support is the trailing one; at the clip's start, the one
        # that stays down longer afterwards is the leading one
        if s > 0:
            trailing = "left" if down["left"][s - 1] else "right"
        else:
            after = {side: int(np.argmin(np.append(down[side][e:], False))) for side in SIDES}
            trailing = min(SIDES, key=after.get)
        out[trailing][s:e] = FREE
    return out


def legs_together(clip: PlanarClip, model: PlanarModel, params: ImportParams = ImportParams()) -> PlanarClip:
    """The clip with both legs (and arms) doing the same: each joint the mean of its left and right, and a foot
    point down only while both feet have it down. In the plane the two legs of a two-footed jump coincide; a
    capture's feet leave and land a few frames apart, which the planar character could not tell from a step."""
    q = clip.q.copy()
    for i, j in enumerate(model.mirror):
        if j != i:
            q[:, i] = 0.5 * (clip.q[:, i] + clip.q[:, j])
    left, right = clip.modes["left"], clip.modes["right"]

    def both(point: int) -> np.ndarray:
        return np.isin(left, (point, FLAT)) & np.isin(right, (point, FLAT))

    heel, toe = both(HEEL), both(TOE)
    modes = np.where(heel & toe, FLAT, np.where(heel, HEEL, np.where(toe, TOE, FREE))).astype(np.int8)
    # a mode the two feet share for a frame or two (one heel lands a frame before the other's toe) is no stage
    for s, e in constant_runs(modes):
        if e - s < params.min_mode_frames and 0 < s and e < len(modes):
            modes[s:e] = modes[e]
    q[:, 1] = _root_height(model, q, {"left": modes, "right": modes}, clip.q[:, 1])
    return PlanarClip(clip.name, clip.fps, q, {"left": modes, "right": modes.copy()}, clip.speed)


def load_planar_clip(path: str | Path, character: str = "planar14", params: ImportParams = ImportParams()) -> PlanarClip:
    from strider.motion.files import load_clip

    return import_clip(load_clip(path), load_character(character), params)


def _source_joints(source: Clip) -> dict[str, int]:
    """Source joint index per landmark, found through the built-in joint maps."""
    spec = load_character("bipv3")
    resolved = detect_map(source.skeleton, spec).resolve(source.skeleton, spec)
    roles = character_roles(spec)
    want = {"pelvis": "pelvis", "head": "head", "lower_back": "lower_back"}
    for side in SIDES:
        want |= {f"{side}_hip": f"{side}_upper_leg", f"{side}_knee": f"{side}_lower_leg",
                 f"{side}_ankle": f"{side}_foot", f"{side}_toe": f"{side}_toes",
                 f"{side}_shoulder": f"{side}_upper_arm", f"{side}_elbow": f"{side}_lower_arm"}
    # a skeleton with no lower-back joint (DeepMimic's) bends its spine at the torso's; one with no toe joint ends
    # its foot in a site, which stands in for the ball of the foot
    if roles["lower_back"] not in resolved and roles["torso"] in resolved:
        want["lower_back"] = "torso"
    out = {}
    for landmark, role in want.items():
        body = roles.get(role)
        if landmark.endswith("_toe") and body not in resolved:
            foot = resolved.get(roles[role.replace("_toes", "_foot")])
            ends = source.skeleton.children(foot[0]) if foot is not None else []
            if ends:
                out[landmark] = ends[0]
                continue
        if body is None or body not in resolved:
            raise UsageError(f"{source.name or 'the clip'}: no joint found for the {landmark.replace('_', ' ')}; "
                             "phase tracking needs legs with toes, arms, a lower back and a head")
        out[landmark] = resolved[body][0]
    for side in SIDES:
        kids = source.skeleton.children(out[f"{side}_elbow"])
        if not kids:
            raise UsageError(f"{source.name or 'the clip'}: the {side} elbow has no child joint to give the forearm")
        out[f"{side}_wrist"] = kids[0]
        tips = source.skeleton.children(out[f"{side}_toe"])
        out[f"{side}_toe_tip"] = tips[0] if tips else out[f"{side}_toe"]
    return out


def _heel_point(ankle: np.ndarray, tip: np.ndarray, back: float) -> np.ndarray:
    """The source's heel (sagittal x, z per frame), which no joint marks: a point fixed in the foot, ``back`` behind
    the ankle and level with the toe tip when the foot is flattest (the frame where ankle and tip are lowest).

    The ankle itself is a poor heel: when the foot rolls about its heel after a strike, the ankle moves at
    the foot's rate times its height, fast enough to read as a foot in the air for most of that roll."""
    along = tip - ankle
    along /= np.linalg.norm(along, axis=1, keepdims=True)
    normal = np.stack([-along[:, 1], along[:, 0]], axis=1)          # the foot's "up", +90 deg from its length
    flat = int(np.argmin(ankle[:, 1] + tip[:, 1]))
    offset = np.array([ankle[flat, 0] - back, tip[flat, 1]]) - ankle[flat]
    a, b = offset @ along[flat], offset @ normal[flat]
    return ankle + a * along + b * normal


def _contact_modes(heel: np.ndarray, toe: np.ndarray, fps: float, params: ImportParams) -> np.ndarray:
    """Per frame, FREE/HEEL/TOE/FLAT from the heel and toe points' sagittal (x, z): down where low and slow."""

    def down(p: np.ndarray) -> np.ndarray:
        p = median_filter(p, size=(params.despike_frames, 1), mode="mirror")
        ground = minimum_filter1d(p[:, 1], size=max(1, int(params.ground_window * fps)), mode="nearest")
        window = max(3, round(params.smoothing_window * fps) | 1)
        smooth = savgol_filter(p, window, 2, axis=0, mode="interp") if window < len(p) else p
        speed = np.linalg.norm(np.gradient(smooth, 1.0 / fps, axis=0), axis=1)
        return _debounced((p[:, 1] < ground + params.contact_height) & (speed < params.contact_speed),
                          params.min_mode_frames)

    modes = np.where(down(heel) & down(toe), FLAT, np.where(down(heel), HEEL, np.where(down(toe), TOE, FREE)))
    for s, e in constant_runs(modes == FREE):
        if modes[s] == FREE and 0 < s and e < len(modes) and e - s < params.min_swing * fps:
            modes[s:e] = modes[e]
    return modes.astype(np.int8)


def constant_runs(values: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of each maximal run of equal values, end exclusive, in order."""
    edges = np.flatnonzero(values[1:] != values[:-1]) + 1
    bounds = [0, *edges.tolist(), len(values)]
    return list(itertools.pairwise(bounds))


def _debounced(flags: np.ndarray, min_frames: int) -> np.ndarray:
    """Inner runs shorter than ``min_frames`` take the value before them."""
    out = flags.copy()
    for s, e in constant_runs(flags):
        if e - s < min_frames and s > 0 and e < len(out):
            out[s:e] = out[s - 1]
    return out


def _bridge_flights(modes: dict[str, np.ndarray], max_frames: int) -> None:
    left, right = modes["left"], modes["right"]
    up = (left == FREE) & (right == FREE)
    for s, e in constant_runs(up):
        if up[s] and s > 0 and e < len(up) and e - s <= max_frames:
            trailing = left if left[s - 1] != FREE else right
            trailing[s:e] = trailing[s - 1]


def _root_height(model: PlanarModel, q: np.ndarray, modes: dict[str, np.ndarray], source: np.ndarray) -> np.ndarray:
    """Per frame, the root height that sets the lowest foot point in contact on the ground (z = 0). Frames with
    no contact (a flight) take the height interpolated from their neighbours, plus the rise of the ``source``'s
    own height (scaled) over the same interpolation, so a jump keeps its arc."""
    at_zero = q.copy()
    at_zero[:, 1] = 0.0
    cols = list(at_zero.T)
    poses = model.poses(cols)
    lowest = np.full(len(q), np.inf)
    for i, c in enumerate(model.contacts):
        mode = modes[c.side]
        active = (mode == FLAT) | (mode == (HEEL if c.name == "heel" else TOE))
        z = model.point(cols, i, poses=poses)[1]
        lowest = np.where(active, np.minimum(lowest, z), lowest)
    known = np.isfinite(lowest)
    if not known.any():
        raise UsageError("the clip has no detectable foot contacts; phase tracking needs a walk with stance phases")
    frames = np.arange(len(q))
    arc = source - np.interp(frames, frames[known], source[known])
    return np.interp(frames, frames[known], -lowest[known]) + np.where(known, 0.0, arc)
