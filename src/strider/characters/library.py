"""Reading character YAML files into validated :class:`CharacterSpec` objects.

A character is named (one of the files shipped in ``characters/data``) or given
by path. A file may ``extends:`` another and apply ``segments:`` edits and a
uniform ``scale:``; see ``robot.yaml``.
"""

from __future__ import annotations

from pathlib import Path

from strider.characters.scaling import edit_segments, scale_uniform
from strider.characters.spec import (
    ACTUATION_MODES,
    GAIN_SCALING_RULES,
    ROOT_KINDS,
    ArmRoles,
    BodySpec,
    CharacterSpec,
    Gains,
    GeomSpec,
    JointSpec,
    LegRoles,
    Roles,
    SegmentEdit,
)
from strider.datafile import Fields, load_yaml, resolve_data_file, shipped_names
from strider.errors import ConfigError, UsageError

DATA_DIR = Path(__file__).parent / "data"
_TOP_FIELDS = {"name", "source", "friction", "sole_torsional_friction", "gains", "root_gains", "bodies", "roles", "mirror",
               "extends", "segments", "scale", "actuation", "root"}
_DERIVED_FIELDS = {"name", "source", "extends", "segments", "scale", "actuation"}
"""A derived character changes its base's proportions and how it is driven only; other fields belong in a full
spec."""
UNLIMITED = "none"
"""The value of a gain group's ``limit`` for joints without a torque limit."""
_MAX_EXTENDS_DEPTH = 8
SCALE_RANGE = (0.2, 5.0)   # as scale_uniform accepts


def available_characters() -> list[str]:
    return shipped_names(DATA_DIR)


def resolve_character_path(name_or_path: str) -> Path:
    """A shipped character's name, or a path to a YAML file."""
    return resolve_data_file(name_or_path, DATA_DIR, "character")


def load_character(name_or_path: str = "bipv3", scale: float = 1.0, actuation: str | None = None,
                   gain_rule: str = "similarity") -> CharacterSpec:
    """Load, validate and derive a character, with gains rescaled to its mass by ``gain_rule`` (one of
    ``GAIN_SCALING_RULES``, see :meth:`CharacterSpec.with_gains_for_mass`); ``actuation`` (one of
    ``ACTUATION_MODES``) overrides the file's mode."""
    if gain_rule not in GAIN_SCALING_RULES:
        raise UsageError(f"unknown gain scaling rule {gain_rule!r} (expected one of {', '.join(GAIN_SCALING_RULES)})")
    if actuation is not None and actuation not in ACTUATION_MODES:
        raise UsageError(f"unknown actuation mode {actuation!r} (expected one of {', '.join(ACTUATION_MODES)})")
    spec = _load(resolve_character_path(name_or_path), depth=0)
    spec = scale_uniform(spec, scale)
    if actuation is not None:
        spec = spec.with_actuation(actuation)
    return spec.with_gains_for_mass(gain_rule)


def _load(path: Path, depth: int) -> CharacterSpec:
    source = str(path)
    fields = Fields(load_yaml(path), source)
    fields.reject_unknown(_TOP_FIELDS)
    if fields.has("extends"):
        # A derived file only renames, edits segments and scales; anything else would be ignored.
        for key in sorted(set(fields.data) - _DERIVED_FIELDS):
            raise fields.error(key, "cannot be set in a file that extends another "
                                    f"(allowed: {', '.join(sorted(_DERIVED_FIELDS))})")
        if depth >= _MAX_EXTENDS_DEPTH:
            raise fields.error("extends", "too deeply nested (cyclic extends?)")
        fields.reject_unknown(_DERIVED_FIELDS)
        parent_name = fields.string("extends")
        parent_path = (path.parent / parent_name) if parent_name.endswith((".yaml", ".yml")) else None
        if parent_path is not None and not parent_path.is_file():
            raise fields.error("extends", f"no character file {str(parent_path)!r}")
        try:
            base = _load(parent_path if parent_path is not None else resolve_character_path(parent_name), depth + 1)
        except UsageError as exc:
            raise fields.error("extends", str(exc)) from None
        spec = _derive(base, fields)
    else:
        # segments and scale apply to a full file too.
        spec = _derive(_parse_full(fields), fields)
    return spec


def _derive(base: CharacterSpec, fields: Fields) -> CharacterSpec:
    from dataclasses import replace

    edits = {}
    for body_name, edit in fields.mapping("segments", None).data.items():
        e = Fields(edit, fields.source, f"segments.{body_name}")
        e.reject_unknown({"length", "mass"})
        if body_name not in {b.name for b in base.bodies}:
            raise fields.error(f"segments.{body_name}", "no body of that name in the base character")
        edits[body_name] = SegmentEdit(length=e.number("length", 1.0, positive=True),
                                       mass=e.number("mass", 1.0, positive=True))
    spec = edit_segments(base, edits)
    spec = replace(spec, name=fields.string("name", base.name), source=fields.source,
                   actuation=fields.string("actuation", base.actuation, choices=ACTUATION_MODES))
    if fields.has("scale"):
        spec = scale_uniform(spec, fields.number("scale", min=SCALE_RANGE[0], max=SCALE_RANGE[1]))
    return spec


def _gains(f: Fields) -> Gains:
    f.reject_unknown({"kp", "kd", "limit"})
    if not f.has("limit"):
        raise f.error("limit", f"missing: a torque limit in N m, or {UNLIMITED!r}")
    unlimited = f.raw("limit") in (None, UNLIMITED)
    return Gains(kp=f.number("kp", min=0.0), kd=f.number("kd", min=0.0),
                 limit=None if unlimited else f.number("limit", positive=True))


def _geom(f: Fields) -> GeomSpec:
    f.reject_unknown({"capsule", "box", "sphere", "radius"})
    if f.has("capsule"):
        ends = f.raw("capsule")
        if not isinstance(ends, list) or len(ends) != 2:
            raise f.error("capsule", "expected [[x, y, z], [x, y, z]]")
        pts = Fields({"a": ends[0], "b": ends[1]}, f.source, f"{f.path}.capsule")
        return GeomSpec("capsule", pts.vector("a", 3), pts.vector("b", 3), f.number("radius", positive=True))
    if f.has("box"):
        corners = f.raw("box")
        if not isinstance(corners, list) or len(corners) != 2:
            raise f.error("box", "expected two corners [[x, y, z], [x, y, z]]")
        pts = Fields({"a": corners[0], "b": corners[1]}, f.source, f"{f.path}.box")
        a, b = pts.vector("a", 3), pts.vector("b", 3)
        if any(abs(x - y) < 1e-6 for x, y in zip(a, b)):
            raise f.error("box", "corners must differ on every axis")
        return GeomSpec("box", a, b)
    if f.has("sphere"):
        return GeomSpec("sphere", f.vector("sphere", 3), (0.0, 0.0, 0.0), f.number("radius", positive=True))
    raise f.error("", "a geom needs one of capsule, box or sphere")


def _joint(f: Fields, gain_groups: set[str]) -> JointSpec:
    f.reject_unknown({"name", "type", "anchor_parent", "anchor_child", "gains", "axis", "axes", "range", "ranges",
                      "cone"})
    kind = f.string("type", choices=("ball", "hinge", "universal"))
    gains = f.string("gains")
    if gains not in gain_groups:
        raise f.error("gains", f"unknown gain group {gains!r} (defined: {', '.join(sorted(gain_groups))})")
    common = {"name": f.string("name"), "kind": kind, "anchor_parent": f.vector("anchor_parent", 3),
                  "anchor_child": f.vector("anchor_child", 3), "gains": gains}
    if kind == "ball":
        return JointSpec(**common, ranges=((0.0, f.number("cone", 3.14159, positive=True)),))
    if kind == "hinge":
        lo, hi = f.vector("range", 2)
        if lo >= hi:
            raise f.error("range", f"lower bound {lo} must be below upper bound {hi}")
        return JointSpec(**common, axes=(_axis(f, "axis"),), ranges=((lo, hi),))
    axes = f.raw("axes")
    ranges = f.raw("ranges")
    if not (isinstance(axes, list) and len(axes) == 2 and isinstance(ranges, list) and len(ranges) == 2):
        raise f.error("axes", "a universal joint needs two axes and two ranges")
    pair = Fields({"a0": axes[0], "a1": axes[1], "r0": ranges[0], "r1": ranges[1]}, f.source, f.path)
    for i in (0, 1):
        if not any(pair.vector(f"a{i}", 3)):
            raise f.error(f"axes[{i}]", "a joint axis must have a non-zero length")
    return JointSpec(**common, axes=(pair.vector("a0", 3), pair.vector("a1", 3)),
                     ranges=(pair.vector("r0", 2), pair.vector("r1", 2)))  # type: ignore[arg-type]


def _axis(f: Fields, key: str) -> tuple[float, float, float]:
    axis = f.vector(key, 3)
    if not any(axis):
        raise f.error(key, f"a joint axis must have a non-zero length, got {list(axis)}")
    return axis


def _roles(f: Fields, bodies: set[str], joints: set[str]) -> Roles:
    def body(ff: Fields, key: str) -> str:
        name = ff.string(key)
        if name not in bodies:
            raise ff.error(key, f"no body named {name!r}")
        return name

    def joint(ff: Fields, key: str, optional: bool = False) -> str | None:
        name = ff.string(key, None if optional else ...)
        if name is None:
            return None
        if name not in joints:
            raise ff.error(key, f"no joint named {name!r}")
        return name

    f.reject_unknown({"root", "torso", "head", "spine", "neck", "legs", "arms"})
    legs_f = f.mapping("legs")
    legs = {}
    for side in ("left", "right"):
        leg = legs_f.mapping(side)
        leg.reject_unknown({"hip", "knee", "ankle", "toe", "foot", "toes", "upper", "lower"})
        ankle = joint(leg, "ankle", True)
        foot, lower = body(leg, "foot"), body(leg, "lower")
        if ankle is None and foot != lower:
            raise leg.error("ankle", "missing: only a point foot (foot: the lower leg itself) has no ankle")
        legs[side] = LegRoles(hip=joint(leg, "hip"), knee=joint(leg, "knee"), ankle=ankle,
                              toe=joint(leg, "toe", True), foot=foot,
                              toes=body(leg, "toes") if leg.has("toes") else None, upper=body(leg, "upper"),
                              lower=lower)
    arms_f = f.mapping("arms", None)
    arms = {side: ArmRoles(shoulder=joint(arms_f.mapping(side), "shoulder"), elbow=joint(arms_f.mapping(side), "elbow"))
            for side in ("left", "right") if arms_f.has(side)}
    spine = f.raw("spine", [])
    if not isinstance(spine, list) or not all(isinstance(s, str) and s in joints for s in spine):
        raise f.error("spine", "expected a list of joint names")
    return Roles(root=body(f, "root"), torso=body(f, "torso"), head=body(f, "head") if f.has("head") else None,
                 spine=tuple(spine), neck=joint(f, "neck", True), legs=legs, arms=arms)


def _parse_full(fields: Fields) -> CharacterSpec:
    gains = {name: _gains(Fields(g, fields.source, f"gains.{name}")) for name, g in fields.mapping("gains").data.items()}
    bodies: list[BodySpec] = []
    seen: set[str] = set()
    for bf in fields.items("bodies"):
        bf.reject_unknown({"name", "parent", "mass", "inertia", "geoms", "joint"})
        name = bf.string("name")
        if name in seen:
            raise bf.error("name", f"duplicate body name {name!r}")
        parent = bf.string("parent", None)
        if parent is None and bodies:
            raise bf.error("parent", "only the first body (the root) may have no parent")
        if parent is not None and parent not in seen:
            raise bf.error("parent", f"parent {parent!r} must be listed before its child")
        joint = None
        if parent is not None:
            joint = _joint(bf.mapping("joint"), set(gains))
        geoms = tuple(_geom(g) for g in bf.items("geoms"))
        if not geoms:
            raise bf.error("geoms", "a body needs at least one geom")
        inertia = bf.vector("inertia", 3)
        if min(inertia) <= 0:
            raise bf.error("inertia", "principal inertias must be > 0")
        bodies.append(BodySpec(name=name, parent=parent, mass=bf.number("mass", positive=True), inertia=inertia,
                               geoms=geoms, joint=joint))
        seen.add(name)
    if not bodies:
        raise fields.error("bodies", "a character needs at least one body")
    joint_names = [b.joint.name for b in bodies if b.joint is not None]
    if len(set(joint_names)) != len(joint_names):
        raise fields.error("bodies", "joint names must be unique")
    mirror: dict[str, str] = {}
    for left, right in fields.mapping("mirror", None).data.items():
        if not isinstance(right, str):
            raise fields.error(f"mirror.{left}", "expected a name")
        for n in (left, right):
            if n not in seen and n not in joint_names:
                raise fields.error(f"mirror.{left}", f"no body or joint named {n!r}")
        mirror[left] = right
        mirror[right] = left
    return CharacterSpec(
        name=fields.string("name"),
        bodies=tuple(bodies),
        gains=gains,
        root_gains=_gains(fields.mapping("root_gains")),
        roles=_roles(fields.mapping("roles"), seen, set(joint_names)),
        mirror=mirror,
        friction=fields.number("friction", 0.8, positive=True),
        sole_torsional_friction=fields.number("sole_torsional_friction", 0.04, positive=True),
        source=fields.source,
        actuation=fields.string("actuation", "position", choices=ACTUATION_MODES),
        root=fields.string("root", "free", choices=ROOT_KINDS),
    )


__all__ = ["ConfigError", "available_characters", "load_character", "resolve_character_path"]
