"""The sagittal-plane kinematics and momentum of a planar character, read from its character file.

The character file is the one parameter table (phase-tracking.md Sec. 4, "Solver"): the simulator's model is
built from it by ``strider.sim``, and this module reads the same bodies, anchors, masses and inertias, so the
rectifier's model and the simulated one cannot disagree.

Coordinates ``q`` are the root's world x and z and pitch, then every hinge in the file's body order. Angles follow
MuJoCo's hinges about +y: a positive angle turns +z toward +x. Every function takes ``q`` (and ``qd``) as a
sequence of scalars, each a float, a NumPy array over frames, or a CasADi expression, with the matching ``sin``
and ``cos``, so one piece of code serves the simulator's checks, the mocap import and the NLP.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from strider.characters.spec import CharacterSpec
from strider.errors import UsageError

CONTACT_NAMES = ("heel", "toe")
ROOT_COORDS = ("x", "z", "pitch")


@dataclass(frozen=True)
class Trig:
    sin: Callable
    cos: Callable
    atan2: Callable


NUMPY_TRIG = Trig(np.sin, np.cos, np.arctan2)


@dataclass(frozen=True)
class PlanarLink:
    name: str
    parent: int                       # index of the parent link; -1 for the root
    coord: int                        # index in q of the hinge that turns this link (the root: its pitch)
    anchor_parent: tuple[float, float]   # joint centre in the parent's frame (x, z)
    anchor_child: tuple[float, float]    # joint centre in this link's frame (x, z)
    mass: float
    inertia: float                    # about y, at the link's centre of mass (its frame origin)


@dataclass(frozen=True)
class ContactPoint:
    side: str                         # "left" or "right"
    name: str                         # "heel" or "toe"
    link: int
    local: tuple[float, float]        # the point under the sole sphere, in the foot's frame


@dataclass(frozen=True)
class PlanarModel:
    links: tuple[PlanarLink, ...]
    coords: tuple[str, ...]           # names of q: "x", "z", "pitch", then the hinges
    contacts: tuple[ContactPoint, ...]
    mirror: tuple[int, ...]           # q index -> the index of its left/right counterpart
    hip_link: dict[str, int]          # side -> the thigh's link index
    foot_link: dict[str, int]         # side -> the foot's link index
    torso_link: int
    point_feet: bool = False          # each leg ends in one contact point (heel and toe coincide), with no ankle

    @property
    def n(self) -> int:
        return len(self.coords)

    @property
    def mass(self) -> float:
        return float(sum(link.mass for link in self.links))

    @classmethod
    def from_spec(cls, spec: CharacterSpec) -> PlanarModel:
        if spec.root != "planar":
            raise UsageError(f"character {spec.name!r} is not planar (root: {spec.root}); phase tracking needs a "
                             "planar character such as planar14")
        index = {b.name: i for i, b in enumerate(spec.bodies)}
        coords = list(ROOT_COORDS)
        links = []
        for b in spec.bodies:
            if b.joint is None:
                links.append(PlanarLink(b.name, -1, 2, (0.0, 0.0), (0.0, 0.0), b.mass, b.inertia[1]))
                continue
            if b.joint.kind != "hinge" or tuple(b.joint.axes[0]) != (0.0, 1.0, 0.0):
                raise UsageError(f"joint {b.joint.name!r} of {spec.name!r} is not a hinge about y; a planar "
                                 "character's joints must all turn in the sagittal plane")
            coords.append(b.joint.name)
            ap, ac = b.joint.anchor_parent, b.joint.anchor_child
            links.append(PlanarLink(b.name, index[b.parent], len(coords) - 1, (ap[0], ap[2]), (ac[0], ac[2]),
                                    b.mass, b.inertia[1]))
        contacts = []
        for side, leg in spec.roles.legs.items():
            for name, (x, _, z) in sole_points(spec, leg.foot).items():
                contacts.append(ContactPoint(side, name, index[leg.foot], (x, z)))
        names = {b.joint.name: b.name for b in spec.bodies if b.joint is not None}
        body_mirror = {**spec.mirror, **{v: k for k, v in spec.mirror.items()}}
        joint_of = {b.name: b.joint.name for b in spec.bodies if b.joint is not None}
        mirror = list(range(len(coords)))
        for i, c in enumerate(coords):
            if c in names and names[c] in body_mirror:
                mirror[i] = coords.index(joint_of[body_mirror[names[c]]])
        legs = spec.roles.legs
        return cls(tuple(links), tuple(coords), tuple(contacts), tuple(mirror),
                   {side: index[leg.upper] for side, leg in legs.items()},
                   {side: index[leg.foot] for side, leg in legs.items()}, index[spec.roles.torso],
                   has_point_feet(spec))

    def contact(self, side: str, name: str) -> int:
        for i, c in enumerate(self.contacts):
            if c.side == side and c.name == name:
                return i
        raise KeyError(f"no contact {side} {name}")

    def poses(self, q: Sequence, trig: Trig = NUMPY_TRIG) -> list[tuple]:
        """Per link: (x, z, angle) of its frame origin (its centre of mass) and its world pitch."""
        out: list[tuple] = []
        for link in self.links:
            if link.parent < 0:
                out.append((q[0], q[1], q[2]))
                continue
            px, pz, pa = out[link.parent]
            ax, az = _turn(link.anchor_parent, pa, trig)
            angle = pa + q[link.coord]
            cx, cz = _turn(link.anchor_child, angle, trig)
            out.append((px + ax - cx, pz + az - cz, angle))
        return out

    def velocities(self, q: Sequence, qd: Sequence, trig: Trig = NUMPY_TRIG, poses: list | None = None) -> list[tuple]:
        """Per link: (vx, vz, pitch rate) of its centre of mass."""
        poses = poses or self.poses(q, trig)
        out: list[tuple] = []
        for link, (_, _, angle) in zip(self.links, poses):
            if link.parent < 0:
                out.append((qd[0], qd[1], qd[2]))
                continue
            pvx, pvz, pw = out[link.parent]
            ax, az = _turn(link.anchor_parent, poses[link.parent][2], trig)
            w = pw + qd[link.coord]
            cx, cz = _turn(link.anchor_child, angle, trig)
            # d/dt of R(a) r is a_dot * (r'_z, -r'_x) with r' = R(a) r
            out.append((pvx + pw * az - w * cz, pvz - pw * ax + w * cx, w))
        return out

    def point(self, q: Sequence, contact: int, trig: Trig = NUMPY_TRIG, poses: list | None = None) -> tuple:
        c = self.contacts[contact]
        x, z, a = (poses or self.poses(q, trig))[c.link]
        dx, dz = _turn(c.local, a, trig)
        return x + dx, z + dz

    def com(self, q: Sequence, trig: Trig = NUMPY_TRIG, poses: list | None = None) -> tuple:
        poses = poses or self.poses(q, trig)
        m = self.mass
        return (sum(link.mass * p[0] for link, p in zip(self.links, poses)) / m,
                sum(link.mass * p[1] for link, p in zip(self.links, poses)) / m)

    def momentum(self, q: Sequence, qd: Sequence, trig: Trig = NUMPY_TRIG, poses: list | None = None) -> tuple:
        """(px, pz, L): linear momentum, and the angular momentum about the centre of mass (its y component)."""
        poses = poses or self.poses(q, trig)
        vels = self.velocities(q, qd, trig, poses)
        cx, cz = self.com(q, trig, poses)
        px = sum(link.mass * v[0] for link, v in zip(self.links, vels))
        pz = sum(link.mass * v[1] for link, v in zip(self.links, vels))
        # (r x v)_y = r_z v_x - r_x v_z
        ang = sum(link.inertia * v[2] + link.mass * ((p[1] - cz) * v[0] - (p[0] - cx) * v[1])
                  for link, p, v in zip(self.links, poses, vels))
        return px, pz, ang

    def kinetic_energy(self, q: Sequence, qd: Sequence, trig: Trig = NUMPY_TRIG, poses: list | None = None):
        """The kinetic energy, qd' M(q) qd / 2; its Hessian in qd is the mass matrix (the rectifier's impact rows)."""
        vels = self.velocities(q, qd, trig, poses or self.poses(q, trig))
        return sum(0.5 * link.mass * (v[0] * v[0] + v[1] * v[1]) + 0.5 * link.inertia * v[2] * v[2]
                   for link, v in zip(self.links, vels))

    def mirrored(self, q: Sequence, shift: float = 0.0) -> list:
        """The same pose with left and right exchanged, moved ``shift`` m forward."""
        out = [q[self.mirror[i]] for i in range(self.n)]
        out[0] = out[0] + shift
        return out

    def stance_angle(self, q: Sequence, side: str, trig: Trig = NUMPY_TRIG, poses: list | None = None):
        """The phase variable of a walk: the angle from vertical of the line from the stance ankle to the hip
        (phase-tracking.md Sec. 4, "theta"), increasing as the body passes over the foot. A leg with a point foot
        has no ankle: its line runs from the foot point, as the stance leg angle of a point-footed walker does."""
        poses = poses or self.poses(q, trig)
        if self.point_feet:
            ankle = self.point(q, self.contact(side, "toe"), trig, poses)
        else:
            ankle = self.joint_centre(self.foot_link[side], trig, poses)
        hip = self.joint_centre(self.hip_link[side], trig, poses)
        return trig.atan2(hip[0] - ankle[0], hip[1] - ankle[1])

    def jump_phase(self, q: Sequence, anchor, trig: Trig = NUMPY_TRIG, poses: list | None = None):
        """The phase variable of a jump: how far the centre of mass is ahead of the feet (Abe 2012, Sec. 3.4.3),
        measured from ``anchor``, the x where the toes came down at the landing that began the jump (they stay
        there until they leave). It rises through the ground phase and the flight, and starts over, negative, at
        the next landing."""
        return self.com(q, trig, poses or self.poses(q, trig))[0] - anchor

    def joint_centre(self, link: int, trig: Trig, poses: list) -> tuple:
        """World (x, z) of the joint that connects ``link`` to its parent."""
        x, z, a = poses[link]
        dx, dz = _turn(self.links[link].anchor_child, a, trig)
        return x + dx, z + dz


def sole_points(spec: CharacterSpec, foot: str) -> dict[str, tuple[float, float, float]]:
    """The heel and toe points of a foot, in its frame: the bottoms of its two contact spheres, hindmost first. A
    point foot (one sphere) has both at the bottom of its sphere: it only ever touches down on its "toe"."""
    spheres = sorted((g for g in spec.body(foot).geoms if g.kind == "sphere"), key=lambda g: g.start[0])
    if len(spheres) == 1:
        spheres = spheres * 2
    if len(spheres) != 2:
        raise UsageError(f"foot {foot!r} of {spec.name!r} needs two contact spheres (heel and toe) or one (a point "
                         f"foot), found {len(spheres)}")
    return {name: (g.start[0], g.start[1], g.start[2] - g.radius) for name, g in zip(CONTACT_NAMES, spheres)}


def has_point_feet(spec: CharacterSpec) -> bool:
    """Whether the character's legs end in point feet (one contact sphere each, no ankle), like planar5's."""
    return all(leg.ankle is None and sum(g.kind == "sphere" for g in spec.body(leg.foot).geoms) == 1
               for leg in spec.roles.legs.values())


def _turn(r: tuple, angle, trig: Trig) -> tuple:
    """R_y(angle) applied to (x, z): +z turns toward +x."""
    c, s = trig.cos(angle), trig.sin(angle)
    return c * r[0] + s * r[1], -s * r[0] + c * r[1]
