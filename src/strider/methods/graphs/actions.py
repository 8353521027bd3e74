"""A fragment's action: constant offsets to some joints' targets over the fragment (Liu et al. 2015, Sec. 4).

The policy's action is 11-D: exp-map offsets of the waist (3) and the hips (3 + 3) and angle offsets of the
knees (1 + 1); every other joint keeps its open-loop target (seed 002, Sec. 4). A ball joint's offset a turns
its target q̂ into exp(a) ⊗ q̂, a hinge's adds to its angle (control-graphs.md Sec. 4, "⊕ order").

:func:`mirror_actions` is the action of the mirror image (control-graphs.md Sec. 4, "Mirroring"): left and
right swap, exp-map components negate x and z; a knee's angle is about the pitch axis, which the mirror keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from strider import quat
from strider.sim.character import Character

POLICY_JOINTS = ("chest", "left_hip", "right_hip", "left_knee", "right_knee")
MIRRORED = {"left_hip": "right_hip", "right_hip": "left_hip", "left_knee": "right_knee", "right_knee": "left_knee"}


@dataclass(frozen=True)
class ActionLayout:
    """Which joints an action offsets, in order, and where each one's components sit in the action vector."""

    joints: tuple[str, ...]
    widths: tuple[int, ...]

    @staticmethod
    def of(character: Character, joints: tuple[str, ...] = POLICY_JOINTS) -> ActionLayout:
        return ActionLayout(joints, tuple(3 if character.joints[j].kind == "ball" else 1 for j in joints))

    @property
    def size(self) -> int:
        return sum(self.widths)

    @cached_property
    def slices(self) -> dict[str, slice]:
        ends = np.cumsum((0,) + self.widths)
        return {j: slice(int(a), int(b)) for j, a, b in zip(self.joints, ends[:-1], ends[1:])}


def offset_coordinates(joint_targets: dict, layout: ActionLayout, action: np.ndarray) -> dict:
    """The offset joints' targets (rows of quaternions or angles) with ``action`` applied: exp(a) ⊗ q̂ for a
    ball joint, q̂ + a for a hinge."""
    out = {}
    for joint, part in layout.slices.items():
        a = action[part]
        out[joint] = quat.mul(quat.exp(a), joint_targets[joint]) if len(a) == 3 else joint_targets[joint] + a
    return out


def offset_rows(rows: np.ndarray, joint_targets: dict, layout: ActionLayout, character: Character,
                action: np.ndarray) -> np.ndarray:
    """The control rows of a fragment with ``action`` applied (a new array; ``rows`` is left alone).

    ``joint_targets`` holds the same rows' targets as joint coordinates (a quaternion per row for a ball joint).
    """
    return rows_with(rows, offset_coordinates(joint_targets, layout, action), character)


def rows_with(rows: np.ndarray, coordinates: dict, character: Character) -> np.ndarray:
    """Control rows with some joints' targets replaced by ``coordinates`` (rows of quaternions or angles, by
    joint): a ball joint's servos take the rotation vector (a new array; ``rows`` is left alone)."""
    out = rows.copy()
    for joint, coords in coordinates.items():
        out[:, character.joints[joint].servos] = quat.log(coords) if coords.shape[-1] == 4 else coords
    return out


def mirror_actions(actions: np.ndarray, layout: ActionLayout) -> np.ndarray:
    """Action vector(s) (..., size) of the mirror image."""
    actions = np.asarray(actions)
    out = np.empty_like(actions)
    slices = layout.slices
    for joint, part in slices.items():
        value = actions[..., slices[MIRRORED.get(joint, joint)]]
        out[..., part] = value * np.array([-1.0, 1.0, -1.0]) if part.stop - part.start == 3 else value
    return out
