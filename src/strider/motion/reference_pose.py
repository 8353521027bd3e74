"""The reference-pose check and fix: does the source rig's zero pose match the character's?

Retargeting copies each bone's rotation *away from a reference pose*. The
character's reference is its zero pose (bipv3: a T-pose, legs straight down),
but a source rig's zero pose may differ: DeepMimic's humanoid stands with its
arms down, the CMU rig's legs splay 20 degrees outwards. The check measures,
for every aligned bone of the joint map (spine and limbs), the angle between
the source's rest direction and the character's; the fix is a reference pose
of the source that turns each such bone onto the character's direction by the
smallest rotation, parents first. Feet, toes, head and pelvis keep their own
rest orientation (their shapes differ by design).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec
from strider.motion.character_skeleton import character_skeleton
from strider.motion.joint_map import BONE_END, character_roles, role_kind
from strider.motion.skeleton import Skeleton

REST_POSE_TOLERANCE = np.radians(10.0)
"""A bone whose rest direction differs from the character's by more than this is reported as a different
reference pose (smaller differences are proportions, and are fixed silently)."""
MIN_BONE = 1e-9


@dataclass(frozen=True)
class BoneCheck:
    body: str
    source_joint: str
    angle: float   # rad between the source's rest direction and the character's zero-pose direction


@dataclass(frozen=True)
class ReferencePoseReport:
    bones: tuple[BoneCheck, ...]

    @property
    def differing(self) -> list[BoneCheck]:
        return [b for b in self.bones if b.angle > REST_POSE_TOLERANCE]

    @property
    def matches(self) -> bool:
        return not self.differing

    def summary(self) -> str:
        if not self.bones:
            return "reference pose: no bones to compare"
        if self.matches:
            worst = max(b.angle for b in self.bones)
            return f"reference pose matches the character's (largest difference {np.degrees(worst):.0f} deg)"
        items = ", ".join(f"{b.source_joint}->{b.body} {np.degrees(b.angle):.0f} deg" for b in self.differing)
        return f"reference pose differs from the character's zero pose, fixed: {items}"


def _bone_ends(spec: CharacterSpec, skeleton: Skeleton, resolved: dict[str, tuple[int, bool]],
               body: str, joint: int) -> tuple[int, str] | None:
    """(source end joint, character end joint name) of the bone that starts at ``body`` / ``joint``."""
    body_role = {b: r for r, b in character_roles(spec).items()}.get(body)
    roles = character_roles(spec)
    end_role = BONE_END.get(role_kind(body_role)) if body_role else None
    if end_role is not None:
        side = body_role[: -len(role_kind(body_role))]
        end_body = roles.get(side + end_role)
        if end_body in resolved:
            return resolved[end_body][0], end_body
    kids = skeleton.children(joint)
    target = character_skeleton(spec)
    target_kids = target.children(target.index(body))
    if len(kids) != 1 or len(target_kids) != 1:
        return None
    return kids[0], target.names[target_kids[0]]


def reference_pose(skeleton: Skeleton, spec: CharacterSpec,
                   resolved: dict[str, tuple[int, bool]]) -> tuple[np.ndarray, ReferencePoseReport]:
    """World rotations (J, 4) of the source skeleton in its reference pose, and the check's report.

    ``skeleton`` must be in strider axes (z up, x forward).
    """
    target = character_skeleton(spec)
    target_rest = dict(zip(target.names, target.rest_positions()))
    source_rest = skeleton.rest_positions()
    aligned = {j: body for body, (j, align) in resolved.items() if align}
    world = np.empty((len(skeleton), 4))
    checks = []
    for j in range(len(skeleton)):
        parent = world[skeleton.parents[j]] if j else quat.IDENTITY
        world[j] = parent
        if j not in aligned:
            continue
        ends = _bone_ends(spec, skeleton, resolved, aligned[j], j)
        if ends is None:
            continue
        end, target_end = ends
        rest_dir = source_rest[end] - source_rest[j]
        want = target_rest[target_end] - target_rest[aligned[j]]
        if np.linalg.norm(rest_dir) < MIN_BONE or np.linalg.norm(want) < MIN_BONE:
            continue
        checks.append(BoneCheck(aligned[j], skeleton.names[j], float(quat.angle_between(
            quat.between_vectors(rest_dir, want), quat.IDENTITY))))
        have = quat.rotate(parent, rest_dir)
        world[j] = quat.mul(quat.between_vectors(have, want), parent)
    return world, ReferencePoseReport(tuple(checks))
