"""DeepMimic clips: JSON ``{"Loop": "wrap"|"none", "Frames": [[dt, root_pos(3), root_rot(4), ...], ...]}``.

The format is described in ``../shared/mocap/README.md``: per frame a duration,
the root position (m, Y up), then quaternions (w, x, y, z, local to the
parent) for spherical joints and single angles (rad) for the knees and
elbows, which turn about their joint's z axis. The files carry no skeleton;
:data:`SKELETON` is the DeepMimic humanoid's, from the joint attachments of
``humanoid3d_character.txt`` (x forward, y up, z to the right).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from strider import quat
from strider.motion.axes import Axes
from strider.motion.bvh import read_text
from strider.motion.clip import Clip
from strider.motion.errors import MotionFormatError
from strider.motion.skeleton import Skeleton

AXES = Axes(up="+y", forward="+x", unit=1.0)
REVOLUTE_AXIS = np.array([0.0, 0.0, 1.0])
"""Knees and elbows of the DeepMimic humanoid turn about their local z (its revolute joints' convention)."""

# name, parent, offset (m), kind: "ball" (4 values), "hinge" (1), "root" or "site" (none in a frame).
# Offsets are the joints' AttachX/Y/Z in humanoid3d_character.txt, listed depth first as BVH writes them. End
# sites (named as the BVH reader names them) mark chain ends from its body shapes: the wrists (fixed joints
# there), the front edge of each foot box's sole, the top of the head sphere.
_JOINTS = (
    ("root", None, (0.0, 0.0, 0.0), "root"),
    ("chest", "root", (0.0, 0.236151, 0.0), "ball"),
    ("neck", "chest", (0.0, 0.223894, 0.0), "ball"),
    ("neck_End", "neck", (0.0, 0.2775, 0.0), "site"),
    ("right_shoulder", "chest", (-0.02405, 0.2435, 0.18311), "ball"),
    ("right_elbow", "right_shoulder", (0.0, -0.274788, 0.0), "hinge"),
    ("right_elbow_End", "right_elbow", (0.0, -0.258947, 0.0), "site"),
    ("left_shoulder", "chest", (-0.02405, 0.2435, -0.18311), "ball"),
    ("left_elbow", "left_shoulder", (0.0, -0.274788, 0.0), "hinge"),
    ("left_elbow_End", "left_elbow", (0.0, -0.258947, 0.0), "site"),
    ("right_hip", "root", (0.0, 0.0, 0.084887), "ball"),
    ("right_knee", "right_hip", (0.0, -0.421546, 0.0), "hinge"),
    ("right_ankle", "right_knee", (0.0, -0.40987, 0.0), "ball"),
    ("right_ankle_End", "right_ankle", (0.1335, -0.05, 0.0), "site"),
    ("left_hip", "root", (0.0, 0.0, -0.084887), "ball"),
    ("left_knee", "left_hip", (0.0, -0.421546, 0.0), "hinge"),
    ("left_ankle", "left_knee", (0.0, -0.40987, 0.0), "ball"),
    ("left_ankle_End", "left_ankle", (0.1335, -0.05, 0.0), "site"),
)
FRAME_ORDER = ("chest", "neck", "right_hip", "right_knee", "right_ankle", "right_shoulder", "right_elbow",
               "left_hip", "left_knee", "left_ankle", "left_shoulder", "left_elbow")
"""Joint order within a frame, after dt, root position and root rotation (../shared/mocap/README.md)."""

_NAMES = tuple(j[0] for j in _JOINTS)
SKELETON = Skeleton(_NAMES, tuple(-1 if j[1] is None else _NAMES.index(j[1]) for j in _JOINTS),
                    np.array([j[2] for j in _JOINTS]), tuple(j[3] == "site" for j in _JOINTS))
_KIND = {j[0]: j[3] for j in _JOINTS}
FRAME_SIZE = 1 + 3 + 4 + sum(4 if _KIND[n] == "ball" else 1 for n in FRAME_ORDER)
LOOP_VALUES = {"wrap": True, "none": False}
FRAME_TIME_TOLERANCE = 0.01
"""Relative spread of frame durations taken as one constant frame rate; beyond it the clip is resampled."""
MIN_QUATERNION_NORM = 1e-6


def _frame_lines(text: str) -> list[int]:
    """The line on which each frame's '[' opens (only computed to report an error)."""
    start = text.find('"Frames"')
    lines: list[int] = []
    if start < 0:
        return lines
    depth, in_string, escaped = 0, False, False
    line = text.count("\n", 0, start) + 1
    for ch in text[start + len('"Frames"'):]:
        if ch == "\n":
            line += 1
        if in_string:
            escaped = not escaped and ch == "\\"
            if ch == '"' and not escaped:
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch == "[":
            depth += 1
            if depth == 2:
                lines.append(line)
        elif ch == "]":
            depth -= 1
            if depth == 0:
                break
    return lines


def parse_deepmimic(text: str, source: str = "<deepmimic>", name: str = "") -> Clip:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MotionFormatError(source, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    except RecursionError:
        raise MotionFormatError(source, "not a DeepMimic clip: arrays nested too deeply", line=1) from None
    if not isinstance(data, dict):
        raise MotionFormatError(source, "expected a JSON object with \"Loop\" and \"Frames\"", line=1)
    loop_value = data.get("Loop", "none")
    if loop_value not in LOOP_VALUES:
        raise MotionFormatError(source, f"Loop must be \"wrap\" or \"none\", got {loop_value!r}",
                                line=_key_line(text, "Loop"), field="Loop")
    frames = data.get("Frames")
    if not isinstance(frames, list):
        raise MotionFormatError(source, "missing \"Frames\" list" if frames is None else
                                "\"Frames\" must be a list of frames", line=_key_line(text, "Frames"), field="Frames")
    if not frames:
        raise MotionFormatError(source, "the motion is empty (no frames)", line=_key_line(text, "Frames"),
                                field="Frames")

    def fail(k: int, problem: str) -> MotionFormatError:
        lines = _frame_lines(text)
        return MotionFormatError(source, f"frame {k + 1}: {problem}", line=lines[k] if k < len(lines) else None)

    for k, frame in enumerate(frames):
        if not isinstance(frame, list):
            raise fail(k, "expected a list of numbers")
        if len(frame) != FRAME_SIZE:
            raise fail(k, f"has {len(frame)} values, expected {FRAME_SIZE} (dt, root position, root rotation, "
                          f"then {', '.join(FRAME_ORDER)})")
        for col, v in enumerate(frame):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise fail(k, f"value {col + 1} is not a number: {json.dumps(v)[:40]}")
    values = np.array(frames, dtype=float)
    bad = ~np.isfinite(values)
    if bad.any():
        k, col = np.argwhere(bad)[0]
        raise fail(int(k), f"value {col + 1} is not finite ({values[k, col]})")
    return _clip_from_values(values, source, LOOP_VALUES[loop_value], name, fail)


def _key_line(text: str, key: str) -> int:
    at = text.find(f'"{key}"')
    return text.count("\n", 0, at) + 1 if at >= 0 else 1


def _clip_from_values(values: np.ndarray, source: str, loop: bool, name: str, fail) -> Clip:
    dts = values[:, 0] if len(values) == 1 else values[:-1, 0]  # the last frame's duration is unused (often 0)
    if (dts <= 0).any():
        k = int(np.argmax(dts <= 0))
        raise fail(k, f"frame duration must be > 0 s, got {dts[k]}")
    dt = float(np.median(dts))
    frames = len(values)
    rotations = np.zeros((frames, len(SKELETON), 4))
    rotations[..., 0] = 1.0
    quats = [(0, 4)]  # dt, root position (3), root rotation (4), then the joints
    column = 8
    for joint in FRAME_ORDER:
        j = SKELETON.index(joint)
        if _KIND[joint] == "ball":
            quats.append((j, column))
            column += 4
        else:
            rotations[:, j] = quat.from_axis_angle(REVOLUTE_AXIS, values[:, column])
            column += 1
    for j, col in quats:
        q = values[:, col:col + 4]
        norms = np.linalg.norm(q, axis=1)
        if (norms < MIN_QUATERNION_NORM).any():
            k = int(np.argmax(norms < MIN_QUATERNION_NORM))
            raise fail(k, f"values {col + 1}-{col + 4} ({SKELETON.names[j]}) are not a rotation: a zero quaternion")
        rotations[:, j] = q / norms[:, None]
    clip = Clip.from_root(SKELETON, 1.0 / dt, values[:, 1:4], rotations, loop=loop, axes=AXES, name=name)
    if np.abs(dts / dt - 1.0).max() <= FRAME_TIME_TOLERANCE:
        return clip
    # Some clips change frame duration part-way (e.g. humanoid3d_roll): resample them at the usual rate.
    times = np.concatenate([[0.0], np.cumsum(values[:-1, 0])])
    uniform = np.arange(int(np.floor(times[-1] / dt + 1e-9)) + 1) * dt
    return clip.resample(np.interp(uniform, times, np.arange(frames)) * dt, fps=1.0 / dt)


def read_deepmimic(path: str | Path) -> Clip:
    """Read a DeepMimic clip (its own axes: Y up, facing +X, metres)."""
    path = Path(path)
    return parse_deepmimic(read_text(path), str(path), path.stem)


ROOT_CENTRE_OF_MASS = np.array([0.0, 0.0, 0.07])
"""Where the DeepMimic humanoid's root body has its centre of mass, above its root joint, in strider axes
(humanoid3d_character.txt, BodyDefs[0].AttachY): a clip moves the joint, the character's root frame sits there."""


def deepmimic_motion(clip: Clip, spec):
    """A DeepMimic clip as a motion of the ``deepmimic`` character (whose joints carry the clip's names): each
    joint takes the clip's local rotation, the root frame sits at the root body's centre of mass."""
    from strider.motion.character_motion import CharacterMotion

    motion = CharacterMotion.from_clip(spec, clip.to_strider())
    return motion.shifted(quat.rotate(motion.root_quat, ROOT_CENTRE_OF_MASS))


def lowest_sole_heights(motion) -> np.ndarray:
    """Per frame, the height of the lowest sole corner of either foot (m): 0 when a foot stands on flat ground."""
    soles = motion.sole_points()
    return np.minimum(*(points[..., 2].min(axis=1) for points in soles.values()))
