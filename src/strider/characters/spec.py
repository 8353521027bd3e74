"""Declarative character specs: bodies, joints, shapes, PD gains and limb roles.

A :class:`CharacterSpec` is pure data. ``strider.sim`` turns it into a MuJoCo
model; controllers read its limb roles and gains. Conventions (DESIGN.md): SI
units, z up, x forward, y left; every body frame sits at the body's centre of
mass with a diagonal inertia, and the character is described in its zero pose.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

# How PD gains follow a character's mass when it is scaled; see CharacterSpec.with_gains_for_mass.
GAIN_SCALING_RULES = ("similarity", "mass")

ACTUATION_MODES = ("position", "torque", "spd")
"""How a character's joints are driven (``CharacterSpec.actuation``):

``position``
    PD servos inside the physics step, their damping integrated implicitly; a controller sets targets.
``torque``
    motors; a controller sets joint torques itself (a QP, a Jacobian-transpose law).
``spd``
    stable PD (Tan et al. 2011): a controller sets targets and the simulation computes each step's torque
    from the state one step ahead, so stiff gains stay stable at a large step.
"""
Actuation = Literal["position", "torque", "spd"]

ROOT_KINDS = ("free", "planar")
"""How the root body moves (``CharacterSpec.root``): ``free`` (6 DOF, a free joint) or ``planar`` (pinned to the
sagittal x-z plane: a slide along x, a slide along z and a pitch hinge about y, in that order)."""
RootKind = Literal["free", "planar"]
ROOT_DOF = {"free": 6, "planar": 3}
GeomKind = Literal["capsule", "box", "sphere"]
JointKind = Literal["ball", "hinge", "universal"]


@dataclass(frozen=True)
class GeomSpec:
    """A collision shape in its body's frame.

    Capsules run ``start`` → ``end`` with ``radius``; boxes span the corners
    ``start`` and ``end``; spheres sit at ``start``.
    """

    kind: GeomKind
    start: tuple[float, float, float]
    end: tuple[float, float, float] = (0.0, 0.0, 0.0)
    radius: float = 0.0


@dataclass(frozen=True)
class Gains:
    """Joint-space PD gains and the torque limit (N m, per axis; None: unlimited) of one joint group."""

    kp: float
    kd: float
    limit: float | None


@dataclass(frozen=True)
class JointSpec:
    """The joint connecting a body to its parent.

    ``anchor_parent``/``anchor_child`` locate the joint centre in each body's
    frame. Hinges have one axis, universal joints two (applied parent-first),
    ball joints none. ``range`` is (lo, hi) per axis for hinges and universal
    joints, or (0, cone) for a ball joint.
    """

    name: str
    kind: JointKind
    anchor_parent: tuple[float, float, float]
    anchor_child: tuple[float, float, float]
    gains: str
    axes: tuple[tuple[float, float, float], ...] = ()
    ranges: tuple[tuple[float, float], ...] = ()

    @property
    def dof(self) -> int:
        return {"ball": 3, "hinge": 1, "universal": 2}[self.kind]


@dataclass(frozen=True)
class BodySpec:
    name: str
    parent: str | None
    mass: float
    inertia: tuple[float, float, float]
    geoms: tuple[GeomSpec, ...]
    joint: JointSpec | None = None


@dataclass(frozen=True)
class LegRoles:
    hip: str
    knee: str
    ankle: str | None     # None: a point foot at the end of the lower leg (``foot`` is then the lower leg)
    toe: str | None
    foot: str
    toes: str | None
    upper: str
    lower: str


@dataclass(frozen=True)
class ArmRoles:
    shoulder: str
    elbow: str


@dataclass(frozen=True)
class Roles:
    """Which bodies and joints play which part, so controllers never hard-code names. A planar walker has no
    head, neck or arms: those roles are then None (or empty)."""

    root: str
    torso: str
    head: str | None
    spine: tuple[str, ...]
    neck: str | None
    legs: dict[str, LegRoles]
    arms: dict[str, ArmRoles]

    @property
    def upper_body(self) -> bool:
        """True when the character has a head, a neck and both arms (what a full-body walking controller poses)."""
        return self.head is not None and self.neck is not None and set(self.arms) == {"left", "right"}


@dataclass(frozen=True)
class CharacterSpec:
    name: str
    bodies: tuple[BodySpec, ...]
    gains: dict[str, Gains]
    root_gains: Gains
    roles: Roles
    mirror: dict[str, str]
    friction: float = 0.8
    # Torsional friction of the soles, m: the spin torque a foot resists per newton of load. MuJoCo's point
    # contacts on a sole's corners resist spin only through their spread, which vanishes when a foot rolls
    # onto an edge or its toes; a real sole's contact patch resists it. For a uniformly loaded disk it is
    # (2/3) mu r: mu = 0.8 and r = 7.5 cm, the radius of a disk of the sole's area (20 x 9 cm), give 0.04 m.
    # Without it the stance foot spun 20-80 deg on its toes in a step and the walkers wobbled in yaw by up
    # to 40 deg at 1.4 m/s (measured).
    sole_torsional_friction: float = 0.04
    source: str = ""
    reference_mass: float | None = None
    actuation: Actuation = "position"
    root: RootKind = "free"

    def __post_init__(self) -> None:
        if self.reference_mass is None:
            object.__setattr__(self, "reference_mass", self.total_mass)
        if self.actuation not in ACTUATION_MODES:
            raise ValueError(f"unknown actuation mode {self.actuation!r} (expected one of {', '.join(ACTUATION_MODES)})")
        if self.root not in ROOT_KINDS:
            raise ValueError(f"unknown root kind {self.root!r} (expected one of {', '.join(ROOT_KINDS)})")

    def with_actuation(self, mode: str) -> CharacterSpec:
        """The same character driven another way (one of ``ACTUATION_MODES``)."""
        return replace(self, actuation=mode)

    @property
    def total_mass(self) -> float:
        return float(sum(b.mass for b in self.bodies))

    @property
    def dof(self) -> int:
        return ROOT_DOF[self.root] + sum(b.joint.dof for b in self.bodies if b.joint is not None)

    def sole_bodies(self) -> set[str]:
        """The feet and toes: the bodies that stand on the ground."""
        return {name for leg in self.roles.legs.values() for name in (leg.foot, leg.toes) if name}

    def body(self, name: str) -> BodySpec:
        for b in self.bodies:
            if b.name == name:
                return b
        raise KeyError(name)

    def joints(self) -> list[JointSpec]:
        return [b.joint for b in self.bodies if b.joint is not None]

    def joint_gains(self, joint: str) -> Gains:
        for j in self.joints():
            if j.name == joint:
                return self.gains[j.gains]
        raise KeyError(joint)

    def mirrored(self, name: str) -> str:
        """The left/right counterpart of a body or joint name (itself on the midline)."""
        return self.mirror.get(name, name)

    def zero_pose_offsets(self) -> dict[str, np.ndarray]:
        """Each body's frame origin relative to the root's, in the zero pose (all joints at rest)."""
        offsets: dict[str, np.ndarray] = {}
        for b in self.bodies:
            if b.parent is None:
                offsets[b.name] = np.zeros(3)
            else:
                offsets[b.name] = offsets[b.parent] + np.subtract(b.joint.anchor_parent, b.joint.anchor_child)
        return offsets

    def leg_length(self) -> float:
        """Hip centre to ankle centre (to the lower leg's centre of mass, for a point foot) in the zero pose, for
        the left leg."""
        leg = self.roles.legs["left"]
        upper, lower = self.body(leg.upper), self.body(leg.lower)
        hip_to_knee = np.subtract(upper.joint.anchor_child, lower.joint.anchor_parent)
        ankle = self.body(leg.foot).joint.anchor_parent if leg.foot != leg.lower else np.zeros(3)
        knee_to_ankle = np.subtract(lower.joint.anchor_child, ankle)
        return float(np.linalg.norm(hip_to_knee) + np.linalg.norm(knee_to_ankle))

    def with_gains_for_mass(self, rule: str = "similarity") -> CharacterSpec:
        """Rescale every PD gain (and torque limit) to this spec's mass.

        ``rule="mass"`` is the source's: kp x M'/M, and kd keeping its ratio to
        sqrt(kp), so x sqrt(M'/M) (seed 000, Sec. 5.4).

        ``rule="similarity"`` (the default, beyond the source) keeps the scaled
        character dynamically similar to the reference: with lengths scaling by
        s = (M'/M)^(1/3), torques scale with m g L, so kp and the limits take
        (M'/M) s, and times with sqrt(L / g), so kd takes (M'/M) s^1.5. Under
        the source's rule a 0.75x humanoid's servos are relatively too strong
        and slow, a 1.25x one's too weak; in MuJoCo both fell within 10 s,
        standing or walking (measured).
        """
        if rule not in GAIN_SCALING_RULES:
            raise ValueError(f"unknown gain scaling rule {rule!r} (expected one of {', '.join(GAIN_SCALING_RULES)})")
        ratio = self.total_mass / self.reference_mass
        if abs(ratio - 1.0) < 1e-12:
            return self
        if rule == "mass":
            kp_factor, kd_factor = ratio, float(np.sqrt(ratio))
        else:
            length = ratio ** (1.0 / 3.0)
            kp_factor, kd_factor = ratio * length, ratio * length**1.5

        def scale(g: Gains) -> Gains:
            return Gains(kp=g.kp * kp_factor, kd=g.kd * kd_factor,
                         limit=None if g.limit is None else g.limit * kp_factor)

        return replace(
            self,
            gains={n: scale(g) for n, g in self.gains.items()},
            root_gains=scale(self.root_gains),
            reference_mass=self.total_mass,
        )


@dataclass(frozen=True)
class SegmentEdit:
    """Per-body edit: stretch a segment along its own geometry and/or change its mass."""

    length: float = 1.0
    mass: float = 1.0
