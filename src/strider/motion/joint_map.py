"""Which source joint drives which body of a strider character.

A :class:`JointMap` names, for each *role* of a character (``pelvis``,
``torso``, ``left_upper_leg``, ...; see :func:`character_roles`) or for a
character body by name, the source joint whose world orientation that body
takes, as a list of candidate names (the first one the skeleton has wins).
``align`` marks the bones whose rest direction the reference-pose fix may
change (limbs and spine); feet, toes, head and pelvis keep their own rest
orientation, because their shapes differ from rig to rig by design.

Built-in maps: the CMU BVH rig (both of its naming schemes), the DeepMimic
humanoid, and ``strider`` (a BVH written by strider: body names map to
themselves). User maps are YAML files::

    name: my-rig
    joints:
      pelvis: hip                      # a role or a character body : a source joint
      left_upper_leg: [lThigh, LeftUpLeg]
      left_foot: {joint: lFoot, align: false}
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from strider.characters.spec import CharacterSpec
from strider.datafile import Fields, load_yaml
from strider.errors import UsageError
from strider.motion.skeleton import Skeleton

SIDES = ("left", "right")
LIMB_ROLES = ("upper_leg", "lower_leg", "foot", "toes", "upper_arm", "lower_arm")
ALIGNED_ROLES = {"lower_back", "torso", "upper_leg", "lower_leg", "upper_arm", "lower_arm"}

BONE_END = {"lower_back": "torso", "torso": "head", "upper_leg": "lower_leg", "lower_leg": "foot",
            "upper_arm": "lower_arm"}
"""The role whose joint a role's bone points to in the rest pose (roles not listed point to their chain's end)."""


def character_roles(spec: CharacterSpec) -> dict[str, str]:
    """Role name -> body name for a strider character."""
    r = spec.roles
    child_of = {b.joint.name: b.name for b in spec.bodies if b.joint is not None}
    roles = {"pelvis": r.root, "torso": r.torso, "head": r.head}
    spine_bodies = [child_of[j] for j in r.spine if child_of[j] != r.torso]
    if spine_bodies:
        roles["lower_back"] = spine_bodies[0]
    for side in SIDES:
        leg, arm = r.legs[side], r.arms[side]
        roles[f"{side}_upper_leg"] = leg.upper
        roles[f"{side}_lower_leg"] = leg.lower
        roles[f"{side}_foot"] = leg.foot
        if leg.toes:
            roles[f"{side}_toes"] = leg.toes
        roles[f"{side}_upper_arm"] = child_of[arm.shoulder]
        roles[f"{side}_lower_arm"] = child_of[arm.elbow]
    return roles


def role_kind(role: str) -> str:
    """``left_upper_leg`` -> ``upper_leg``; midline roles are their own kind."""
    for side in SIDES:
        if role.startswith(side + "_"):
            return role[len(side) + 1:]
    return role


@dataclass(frozen=True)
class MapEntry:
    candidates: tuple[str, ...]
    align: bool


@dataclass(frozen=True)
class JointMap:
    name: str
    entries: dict[str, MapEntry]     # role or body name -> source joints
    identity: bool = False           # every character body maps to the source joint of the same name

    def resolve(self, skeleton: Skeleton, spec: CharacterSpec) -> dict[str, tuple[int, bool]]:
        """Character body -> (source joint index, align) for every entry the skeleton can satisfy."""
        names = {n: i for i, n in enumerate(skeleton.names) if not skeleton.sites[i]}
        if self.identity:
            return {b.name: (names[b.name], False) for b in spec.bodies if b.name in names}
        roles = character_roles(spec)
        out: dict[str, tuple[int, bool]] = {}
        for key, entry in self.entries.items():
            body = roles.get(key, key)
            for candidate in entry.candidates:
                if candidate in names:
                    out[body] = (names[candidate], entry.align)
                    break
        return out

    def covers_legs(self, skeleton: Skeleton, spec: CharacterSpec) -> bool:
        resolved = self.resolve(skeleton, spec)
        roles = character_roles(spec)
        needed = [roles["pelvis"]] + [roles[f"{s}_{k}"] for s in SIDES for k in ("upper_leg", "lower_leg", "foot")]
        return all(b in resolved for b in needed)


def _entries(table: dict[str, tuple[str, ...]]) -> dict[str, MapEntry]:
    out = {}
    for role, candidates in table.items():
        for side, other in (("left", "Left"), ("right", "Right")):
            if "{side}" in role:
                out[role.format(side=side)] = MapEntry(
                    tuple(c.format(Side=other, S=other[0], side=side) for c in candidates),
                    role_kind(role.format(side=side)) in ALIGNED_ROLES)
        if "{side}" not in role:
            out[role] = MapEntry(candidates, role in ALIGNED_ROLES)
    return out


CMU = JointMap("cmu", _entries({
    # The CMU release's BVH conversion names limbs two ways (cmu_02_01_walk vs scaled_131_01 in ../shared/mocap/bvh).
    "pelvis": ("Hips",),
    "lower_back": ("LowerBack", "lowerback"),
    "torso": ("Spine1", "Chest2"),
    "head": ("Head",),
    "{side}_upper_leg": ("{Side}UpLeg", "{Side}Hip"),
    "{side}_lower_leg": ("{Side}Leg", "{Side}Knee"),
    "{side}_foot": ("{Side}Foot", "{Side}Ankle"),
    "{side}_toes": ("{Side}ToeBase", "{Side}Toe"),
    "{side}_upper_arm": ("{Side}Arm", "{Side}Shoulder"),
    "{side}_lower_arm": ("{Side}ForeArm", "{Side}Elbow"),
}))

DEEPMIMIC = JointMap("deepmimic", _entries({
    # Joint names of the DeepMimic humanoid (../shared/mocap/deepmimic/humanoid3d_character.txt).
    "pelvis": ("root",),
    "torso": ("chest",),
    "head": ("neck",),
    "{side}_upper_leg": ("{side}_hip",),
    "{side}_lower_leg": ("{side}_knee",),
    "{side}_foot": ("{side}_ankle",),
    "{side}_upper_arm": ("{side}_shoulder",),
    "{side}_lower_arm": ("{side}_elbow",),
}))

STRIDER = JointMap("strider", {}, identity=True)

BUILT_IN_MAPS = {m.name: m for m in (STRIDER, CMU, DEEPMIMIC)}


def detect_map(skeleton: Skeleton, spec: CharacterSpec) -> JointMap:
    """The built-in map that resolves the most bodies (and at least the pelvis and legs) of ``skeleton``."""
    fitting = [m for m in BUILT_IN_MAPS.values() if m.covers_legs(skeleton, spec)]
    if not fitting:
        raise UsageError(f"no built-in joint map ({', '.join(BUILT_IN_MAPS)}) fits this skeleton's joint names "
                         f"({', '.join(skeleton.names[:6])}, ...); give one with --map FILE.yaml")
    return max(fitting, key=lambda m: len(m.resolve(skeleton, spec)))


def load_joint_map(name_or_path: str | Path) -> JointMap:
    """A built-in map by name, or a YAML map file."""
    if str(name_or_path) in BUILT_IN_MAPS:
        return BUILT_IN_MAPS[str(name_or_path)]
    path = Path(name_or_path)
    if not path.is_file():
        raise UsageError(f"joint map {str(name_or_path)!r} is neither a built-in map ({', '.join(BUILT_IN_MAPS)}) "
                         "nor a file")
    fields = Fields(load_yaml(path), str(path))
    fields.reject_unknown({"name", "joints"})
    joints = fields.mapping("joints")
    entries = {}
    for key, value in joints.data.items():
        align = role_kind(str(key)) in ALIGNED_ROLES
        if isinstance(value, dict):
            item = Fields(value, str(path), f"joints.{key}")
            item.reject_unknown({"joint", "align"})
            value = item.raw("joint")
            raw_align = item.raw("align", align)
            if not isinstance(raw_align, bool):
                raise item.error("align", f"expected true or false, got {raw_align!r}")
            align = raw_align
        candidates = [value] if isinstance(value, str) else value
        if not isinstance(candidates, list) or not candidates or not all(isinstance(c, str) for c in candidates):
            raise joints.error(str(key), "expected a source joint name or a list of names")
        entries[str(key)] = MapEntry(tuple(candidates), align)
    if not entries:
        raise fields.error("joints", "a joint map needs at least one entry")
    return JointMap(fields.string("name", path.stem), entries)
