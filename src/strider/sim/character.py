"""A view of one character inside a world: named bodies and joints, with indices resolved once.

Controllers talk to MuJoCo only through this view (and :class:`World`). It
exposes what they read every control step (poses, velocities, centre of mass,
contacts) and what they write (servo targets, joint torques), as NumPy arrays
indexed by name lookups done at construction, never by magic numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import mujoco
import numpy as np

from strider import quat
from strider.characters.spec import CharacterSpec
from strider.errors import UsageError
from strider.sim.actuation import StablePD
from strider.sim.build import joint_names, root_joint_names, servo_names, sole_corner_sites
from strider.sim.scene import CharacterPlacement

PLANAR_PITCH = 2   # a planar root's coordinates are x, z and pitch


@dataclass(frozen=True)
class JointIndex:
    """Where one spec joint lives in MuJoCo's arrays."""

    name: str
    kind: str
    qpos: np.ndarray      # qpos addresses (4 for a ball joint, else one per hinge)
    dof: np.ndarray       # dof addresses (3 for a ball joint, else one per hinge)
    servos: np.ndarray    # actuator ids, aligned with ``dof``
    body: int             # child body id
    parent: int           # parent body id
    mj_joints: tuple[int, ...]  # MuJoCo joint ids (two for a universal joint)


class ServoGains(NamedTuple):
    """PD gains for a set of servos, by actuator id (:meth:`Character.servo_gain_table`)."""

    ids: np.ndarray
    kp: np.ndarray
    kd: np.ndarray


class Character:
    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, placement: CharacterPlacement):
        self.model, self.data = model, data
        self.placement = placement
        self.spec: CharacterSpec = placement.spec
        self.name = placement.name
        m = model
        self.body_ids = {b.name: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"{self.name}/{b.name}")
                         for b in self.spec.bodies}
        self.root_body = self.body_ids[self.spec.bodies[0].name]
        root_joints = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n) for n in root_joint_names(placement)]
        self.planar = self.spec.root == "planar"
        # The root's coordinates are contiguous: a free joint's 7 (position, quaternion) and 6 DOF, or the planar
        # root's x, z and pitch (3 and 3).
        self.root_qpos = int(m.jnt_qposadr[root_joints[0]])
        self.root_dof = int(m.jnt_dofadr[root_joints[0]])
        self.root_nq, self.root_nv = (3, 3) if self.planar else (7, 6)
        self._root_y = float(m.body_pos[self.root_body][1])
        self.sole_sites = {body: [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, name) for name, _ in sites]
                           for body, sites in sole_corner_sites(placement).items()}
        self.joints: dict[str, JointIndex] = {}
        for b in self.spec.bodies:
            if b.joint is None:
                continue
            jids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n) for n in joint_names(placement, b.joint)]
            if b.joint.kind == "ball":
                qpos = np.arange(m.jnt_qposadr[jids[0]], m.jnt_qposadr[jids[0]] + 4)
                dof = np.arange(m.jnt_dofadr[jids[0]], m.jnt_dofadr[jids[0]] + 3)
            else:
                qpos = np.array([m.jnt_qposadr[j] for j in jids])
                dof = np.array([m.jnt_dofadr[j] for j in jids])
            servos = np.array([mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, n)
                               for n in servo_names(placement, b.joint)])
            self.joints[b.joint.name] = JointIndex(b.joint.name, b.joint.kind, qpos, dof, servos,
                                                   self.body_ids[b.name], self.body_ids[b.parent], tuple(jids))
        self.internal_dofs = np.concatenate([j.dof for j in self.joints.values()])
        self.all_bodies = np.array(sorted(self.body_ids.values()))
        self.mass = float(m.body_subtreemass[self.root_body])
        feet = set()
        for leg in self.spec.roles.legs.values():
            feet.add(self.body_ids[leg.foot])
            if leg.toes:
                feet.add(self.body_ids[leg.toes])
        self.foot_bodies = np.array(sorted(feet))
        self._is_mine = np.zeros(m.nbody, dtype=bool)
        self._is_mine[self.all_bodies] = True
        self._not_mine = ~self._is_mine
        is_mine_not_foot = self._is_mine.copy()
        is_mine_not_foot[self.foot_bodies] = False
        # Plain lists for the per-contact loops of the contact queries.
        self._is_mine_not_foot = is_mine_not_foot.tolist()
        self._geom_body = m.geom_bodyid.tolist()
        self._is_mine_list = self._is_mine.tolist()
        # Per internal DOF: its joint, child body, and (for ball joints) which body axis it turns about.
        dof_joint, dof_body, dof_col = [], [], []
        for j in self.joints.values():
            for k in range(len(j.dof)):
                dof_joint.append(j.mj_joints[0] if j.kind == "ball" else j.mj_joints[k])
                dof_body.append(j.body)
                dof_col.append(k if j.kind == "ball" else -1)
        self._dof_joint = np.array(dof_joint)
        self._dof_body = np.array(dof_body)
        self._dof_col = np.array(dof_col)
        self._dof_is_ball = self._dof_col >= 0
        # For a ball DOF, its axis is column k of the body's rotation: flat xmat entries k, 3 + k, 6 + k.
        self._dof_xmat_cols = np.maximum(self._dof_col, 0)[:, None] + np.array([0, 3, 6])
        # The same picks as flat positions in xmat and xaxis laid end to end, so dof_axes is one gather.
        ball_index = self._dof_body[:, None] * 9 + self._dof_xmat_cols
        hinge_index = m.nbody * 9 + self._dof_joint[:, None] * 3 + np.arange(3)
        self._dof_axis_index = np.where(self._dof_is_ball[:, None], ball_index, hinge_index)
        self._dof_subtree_mass = m.body_subtreemass[self._dof_body].copy()
        self._jacp = np.zeros((3, m.nv))
        self._jacr = np.zeros((3, m.nv))
        # Read-only views of the engine's arrays, made once: MjData's buffers live as long as it does.
        self._qpos_view, self._qvel_view = _read_only(data.qpos), _read_only(data.qvel)
        self._servo_force_view = _read_only(data.actuator_force)
        self._servo_position_view = _read_only(data.actuator_length)
        self._servo_velocity_view = _read_only(data.actuator_velocity)
        self.actuation = self.spec.actuation
        self.stable_pd: StablePD | None = None
        if self.actuation == "spd":
            servos, kp, kd = [], [], []
            for j in self.joints.values():
                g = self.spec.joint_gains(j.name)
                servos += j.servos.tolist()
                kp += [g.kp] * len(j.servos)
                kd += [g.kd] * len(j.servos)
            self.stable_pd = StablePD(m, np.array(servos), np.array(kp), np.array(kd))

    # --- names -------------------------------------------------------------------------
    def body(self, name: str) -> int:
        return self.body_ids[name]

    def joint(self, name: str) -> JointIndex:
        return self.joints[name]

    # --- state ----------------------------------------------------------------------------
    @property
    def nv(self) -> int:
        """Length of the world's generalized velocity (all characters and props)."""
        return int(self.model.nv)

    @property
    def qpos(self) -> np.ndarray:
        """The world's generalized coordinates (read-only view; index with ``JointIndex.qpos``)."""
        return self._qpos_view

    @property
    def qvel(self) -> np.ndarray:
        """The world's generalized velocities (read-only view; index with ``JointIndex.dof``)."""
        return self._qvel_view

    def set_joint_position(self, joint: str, value) -> None:
        """Set one joint's coordinates (a quaternion for a ball joint, angles for hinges) without touching
        velocities; call ``World.forward`` afterwards."""
        self.data.qpos[self.joints[joint].qpos] = value

    def set_root_orientation(self, quat) -> None:
        """Turn the root to ``quat`` (w, x, y, z) in place; call ``World.forward`` afterwards. A planar root takes
        the pitch of ``quat`` (its rotation about y)."""
        if self.planar:
            self.data.qpos[self.root_qpos + PLANAR_PITCH] = _pitch(quat)
        else:
            self.data.qpos[self.root_qpos + 3:self.root_qpos + 7] = quat

    def set_root_height(self, z: float) -> None:
        """Move the root vertically to ``z`` (m); call ``World.forward`` afterwards."""
        self.data.qpos[self.root_qpos + (1 if self.planar else 2)] = z

    def set_root_position(self, pos) -> None:
        """Move the root's frame origin to ``pos`` (world, m; a planar root keeps its y); call ``World.forward``
        afterwards."""
        if self.planar:
            self.data.qpos[self.root_qpos:self.root_qpos + 2] = pos[0], pos[2]
        else:
            self.data.qpos[self.root_qpos:self.root_qpos + 3] = pos

    # --- kinematics ----------------------------------------------------------------------
    def com_position(self) -> np.ndarray:
        return self.data.subtree_com[self.root_body].copy()

    def com_velocity(self) -> np.ndarray:
        """Linear velocity of the whole-body centre of mass (world frame)."""
        # Recomputed on every call: a cache keyed on the time goes stale when a state is
        # restored, or qvel edited, at the same time.
        mujoco.mj_subtreeVel(self.model, self.data)
        return self.data.subtree_linvel[self.root_body].copy()

    def body_position(self, name: str) -> np.ndarray:
        return self.data.xipos[self.body_ids[name]].copy()

    def body_points(self, name: str, points: np.ndarray) -> np.ndarray:
        """World positions (k, 3) of points (k, 3) given in a body's frame."""
        i = self.body_ids[name]
        return self.data.xpos[i] + points @ self.data.xmat[i].reshape(3, 3).T

    def body_quat(self, name: str) -> np.ndarray:
        return self.data.xquat[self.body_ids[name]].copy()

    def body_quat_floats(self, name: str) -> list[float]:
        """:meth:`body_quat` as plain floats, for a controller that keeps its quaternion chains out of NumPy."""
        return self.data.xquat[self.body_ids[name]].tolist()

    def body_rotation(self, name: str) -> np.ndarray:
        return self.data.xmat[self.body_ids[name]].reshape(3, 3).copy()

    def body_up_floats(self, name: str) -> list[float]:
        """The body's z axis in the world (``body_rotation(name)[:, 2]``) as plain floats: the fall test reads it
        at every control tick."""
        return self.data.xmat[self.body_ids[name], 2::3].tolist()

    def body_position_floats(self, name: str) -> list[float]:
        """:meth:`body_position` as plain floats."""
        return self.data.xipos[self.body_ids[name]].tolist()

    def body_angular_velocity(self, name: str) -> np.ndarray:
        """World-frame angular velocity of a body."""
        out = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, self.body_ids[name], out, 0)
        return out[:3]

    def body_velocity(self, name: str) -> np.ndarray:
        """World-frame linear velocity of a body's centre of mass."""
        out = np.zeros(6)
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_XBODY, self.body_ids[name], out, 0)
        return out[3:]

    def joint_anchor(self, name: str) -> np.ndarray:
        """World position of a joint centre."""
        return self.data.xanchor[self.joints[name].mj_joints[0]].copy()

    def root_pitch(self) -> tuple[float, float]:
        """A planar root's pitch about y (rad; positive leans the top forward, towards +x) and its rate (rad/s)."""
        if not self.planar:
            raise UsageError(f"character {self.name!r} ({self.spec.name}) has a free root; its pitch is not one "
                             "coordinate")
        return (float(self.data.qpos[self.root_qpos + PLANAR_PITCH]),
                float(self.data.qvel[self.root_dof + PLANAR_PITCH]))

    def root_pose(self) -> tuple[np.ndarray, np.ndarray]:
        """The root's frame origin (world, m) and orientation (w, x, y, z)."""
        if self.planar:
            x, z, pitch = self.data.qpos[self.root_qpos:self.root_qpos + 3].tolist()
            return np.array([x, self._root_y, z]), np.array([np.cos(pitch / 2), 0.0, np.sin(pitch / 2), 0.0])
        q = self.data.qpos[self.root_qpos:self.root_qpos + 7]
        return q[:3].copy(), q[3:].copy()

    def sole_corners(self, body: str) -> np.ndarray:
        """World positions (k, 3) of the bottom corners of a foot's (or toes') box geoms, by their named sites."""
        return self.data.site_xpos[self.sole_sites[body]].copy()

    def dof_axes(self) -> np.ndarray:
        """World-frame rotation axis of every internal DOF (rows aligned with ``internal_dofs``)."""
        d = self.data
        return np.concatenate((d.xmat.ravel(), d.xaxis.ravel()))[self._dof_axis_index]

    def dof_anchors(self) -> np.ndarray:
        return self.data.xanchor[self._dof_joint]

    def dof_subtree(self) -> tuple[np.ndarray, np.ndarray]:
        """For every internal DOF: the centre of mass and mass of everything it moves."""
        return self.data.subtree_com[self._dof_body], self._dof_subtree_mass

    def com_jacobian(self) -> np.ndarray:
        """3 x nv Jacobian of the whole-body centre of mass."""
        mujoco.mj_jacSubtreeCom(self.model, self.data, self._jacp, self.root_body)
        return self._jacp.copy()

    def point_jacobian(self, body: str, point: np.ndarray) -> np.ndarray:
        """3 x nv Jacobian of a world point moving with ``body``."""
        mujoco.mj_jac(self.model, self.data, self._jacp, self._jacr, np.asarray(point, dtype=float),
                      self.body_ids[body])
        return self._jacp.copy()

    # --- kinematic poses ----------------------------------------------------------------------
    def set_pose(self, root_pos, root_quat, joints: dict[str, np.ndarray]) -> None:
        """Put the character in a pose at rest: root position and orientation (w, x, y, z), and joint
        coordinates by joint name (a quaternion for a ball joint, one angle per hinge; joints not given
        keep their values). Call ``World.forward`` afterwards to update positions and contacts."""
        d = self.data
        self.set_root_position(root_pos)
        self.set_root_orientation(root_quat)
        for name, value in joints.items():
            d.qpos[self.joints[name].qpos] = value
        d.qvel[self.root_dof:self.root_dof + self.root_nv] = 0.0
        d.qvel[self.internal_dofs] = 0.0

    def take_state(self, source: Character, yaw: float = 0.0, shift: tuple[float, float] = (0.0, 0.0)) -> None:
        """Take the pose, velocities and servo targets that ``source``, a character of the same spec in any world,
        has now, turned by ``yaw`` (rad) about the vertical through the world origin and then moved by ``shift``
        (x, y) along the ground: one character's state placed elsewhere, or several copies of it in one scene.
        Call ``World.forward`` afterwards."""
        if source.spec.name != self.spec.name:
            raise UsageError(f"character {self.name!r} ({self.spec.name}) cannot take the state of a "
                             f"{source.spec.name}")
        if self.planar and (yaw or shift[1]):
            raise UsageError(f"character {self.name!r} is planar: it can only be moved along x, not turned or "
                             "moved sideways")
        d, sd = self.data, source.data
        for name, joint in self.joints.items():
            theirs = source.joints[name]
            d.qpos[joint.qpos] = sd.qpos[theirs.qpos]
            d.qvel[joint.dof] = sd.qvel[theirs.dof]
            if self.actuation != "torque" and source.actuation != "torque":
                self.servo_targets[joint.servos] = source.servo_targets[theirs.servos]
        q0, v0 = source.root_qpos, source.root_dof
        root_q = sd.qpos[q0:q0 + self.root_nq].copy()
        root_v = sd.qvel[v0:v0 + self.root_nv].copy()
        if self.planar:
            root_q[0] += shift[0]
        else:
            turn = quat.about_z(yaw)
            root_q[:3] = quat.rotate(turn, root_q[:3]) + (shift[0], shift[1], 0.0)
            root_q[3:] = quat.mul(turn, root_q[3:])
            root_v[:3] = quat.rotate(turn, root_v[:3])   # a free joint's angular velocity is in its body's frame
        d.qpos[self.root_qpos:self.root_qpos + self.root_nq] = root_q
        d.qvel[self.root_dof:self.root_dof + self.root_nv] = root_v

    def joint_coordinates(self) -> dict[str, np.ndarray]:
        """Every joint's current coordinates, as :meth:`set_pose` takes them."""
        return {name: self.data.qpos[j.qpos].copy() for name, j in self.joints.items()}

    # --- contacts --------------------------------------------------------------------------
    def contact_normal_forces(self) -> np.ndarray:
        """Total contact normal force on each body of the model (N), for bodies of this character."""
        m, d = self.model, self.data
        out = [0.0] * m.nbody
        n = d.ncon
        if n:
            con = d.contact
            efc = d.efc_force
            forces = [float(efc[a]) if a >= 0 else 0.0 for a in con.efc_address[:n].tolist()]
            pairs = con.geom[:n].tolist()
            body = self._geom_body
            # All first bodies, then all second bodies: the order (and so the rounding) of the former
            # np.add.at / bincount sums. On plain floats, as a step touches only a handful of contacts.
            for k in (0, 1):
                for pair, f in zip(pairs, forces):
                    out[body[pair[k]]] += f
        out = np.array(out)
        out[self._not_mine] = 0.0
        return out

    def contact_normal_force(self, bodies: Sequence[int]) -> float:
        """Total contact normal force (N) on ``bodies``, distinct body ids of this character.

        ``contact_normal_forces()[bodies].sum()`` in the same order of additions, so the same bits, without
        building the whole model's array: a gait's foot-strike test asks this at every control update.
        """
        return self.contact_normal_force_each((bodies,))[0]

    def contact_normal_force_each(self, groups: Sequence[Sequence[int]]) -> list[float]:
        """:meth:`contact_normal_force` of each group of bodies (both feet, say), from one pass over the contacts:
        the same bits as one call per group."""
        d = self.data
        n = d.ncon
        if not n:
            return [0.0] * len(groups)
        if len(groups) == 1:
            per_body = dict.fromkeys(groups[0], 0.0)
        else:
            per_body = {}
            for bodies in groups:
                per_body.update(dict.fromkeys(bodies, 0.0))
        contacts = d.contact
        pairs = contacts.geom[:n].tolist()
        addresses = contacts.efc_address[:n].tolist()
        efc = d.efc_force
        geom_body = self._geom_body
        for k in (0, 1):
            for pair, a in zip(pairs, addresses):
                b = geom_body[pair[k]]
                if a >= 0 and b in per_body:
                    per_body[b] += float(efc[a])
        if len(groups) == 1:
            return [sum(per_body.values())]
        return [sum([per_body[b] for b in dict.fromkeys(bodies)]) for bodies in groups]

    def terrain_touching_bodies(self) -> set[int]:
        """Ids of this character's bodies that touch the terrain (ground or an obstacle: the world body's geoms)
        in the current state."""
        d = self.data
        n = d.ncon
        if n == 0:
            return set()
        body, mine = self._geom_body, self._is_mine_list
        out = set()
        for g1, g2 in d.contact.geom[:n].tolist():
            b1, b2 = body[g1], body[g2]
            if b1 == 0 and mine[b2]:
                out.add(b2)
            elif b2 == 0 and mine[b1]:
                out.add(b1)
        return out

    def bodies_near_terrain(self, distance: float) -> list[str]:
        """Names of this character's bodies with a geom within ``distance`` (m) of a terrain geom, touching or not:
        where a pose placed by hand (a motion-capture frame) rests on the ground, which need not press into it."""
        m, d = self.model, self.data
        terrain = [g for g in range(m.ngeom) if self._geom_body[g] == 0]
        near = set()
        for g in range(m.ngeom):
            b = self._geom_body[g]
            if b in near or not self._is_mine_list[b]:
                continue
            if any(mujoco.mj_geomDistance(m, d, g, t, distance, None) < distance for t in terrain):
                near.add(b)
        names = {i: name for name, i in self.body_ids.items()}
        return [names[b] for b in sorted(near)]

    def non_foot_contact(self) -> bool:
        """True when a body other than the feet and toes touches the terrain (ground or an obstacle).

        Contacts with loose props (a thrown ball, a carried crate) do not count: the fall
        definition (coros-walking.md, Sec. 5) is a non-foot geom touching the ground.
        """
        d = self.data
        n = d.ncon
        if n == 0:
            return False
        body, not_foot = self._geom_body, self._is_mine_not_foot
        for g1, g2 in d.contact.geom[:n].tolist():
            # The ground plane and obstacle boxes belong to the world body (0).
            b1, b2 = body[g1], body[g2]
            if (b1 == 0 and not_foot[b2]) or (b2 == 0 and not_foot[b1]):
                return True
        return False

    def terrain_contact_slip(self, bodies: list[int]) -> tuple[float, np.ndarray]:
        """Normal force (N) of ``bodies``' contacts with the terrain, and how fast they slip over it.

        The slip velocity is the normal-force-weighted mean, over those contacts, of the
        velocity of the body's own material point at the contact, less its component along
        the contact normal (world frame, m/s). A foot rolling onto its edge has no slip there;
        a foot dragged over the ground has.
        """
        m, d = self.model, self.data
        total, weighted = 0.0, np.zeros(3)
        for i in range(d.ncon):
            con = d.contact[i]
            b1, b2 = m.geom_bodyid[con.geom[0]], m.geom_bodyid[con.geom[1]]
            if b1 == 0 and b2 in bodies:
                body = b2
            elif b2 == 0 and b1 in bodies:
                body = b1
            else:
                continue
            fn = float(d.efc_force[con.efc_address]) if con.efc_address >= 0 else 0.0
            if fn <= 0.0:
                continue
            mujoco.mj_jac(m, d, self._jacp, self._jacr, con.pos, body)
            v = self._jacp @ d.qvel
            normal = con.frame[:3]
            weighted += fn * (v - normal * float(v @ normal))
            total += fn
        return total, (weighted / total if total > 0.0 else weighted)

    # --- actuation --------------------------------------------------------------------------
    @property
    def servo_targets(self) -> np.ndarray:
        """The servos' targets, indexed by actuator id (``JointIndex.servos``), for a controller to write.

        A hinge's target is its angle; a ball joint's three are the components of its rotation vector
        (see :mod:`strider.control.pd`). In ``position`` mode these are the PD servos' ctrl, in ``spd`` mode
        the stable-PD targets; a ``torque`` character has no servos.
        """
        if self.stable_pd is not None:
            return self.stable_pd.targets
        if self.actuation == "torque":
            raise self._wrong_mode("servo targets", "position or spd")
        return self.data.ctrl

    @property
    def motor_torques(self) -> np.ndarray:
        """Joint torques of a ``torque`` character, indexed by actuator id, for a controller to write (N m)."""
        if self.actuation != "torque":
            raise self._wrong_mode("joint torques through its motors", "torque")
        return self.data.ctrl

    def set_feedforward_torques(self, torques: np.ndarray) -> None:
        """Generalized forces added on the internal DOFs (aligned with ``internal_dofs``), in any mode: gravity
        compensation and virtual forces on top of the servos."""
        self.data.qfrc_applied[self.internal_dofs] = torques

    def set_joint_feedforward(self, joint: str, torques) -> None:
        """Feed-forward torques on one joint's DOFs and none on the others (the stance hip's in SIMBICON's
        Eq. 2.3), without building a whole-body vector."""
        applied = self.data.qfrc_applied
        applied[self.internal_dofs] = 0.0
        applied[self.joints[joint].dof] = torques

    def switch_off(self) -> None:
        """Every actuator off (a ragdoll): zero servo gains and targets, or zero motor torques, and zero
        feed-forward torques. Passive joint damping stays as the model has it."""
        if self.actuation == "torque":
            for joint in self.joints.values():
                self.motor_torques[joint.servos] = 0.0
        else:
            for name, joint in self.joints.items():
                self.set_servo_gains(name, 0.0, 0.0)
                self.servo_targets[joint.servos] = 0.0
        self.data.qfrc_applied[self.internal_dofs] = 0.0

    def _wrong_mode(self, what: str, modes: str) -> UsageError:
        return UsageError(f"character {self.name!r} ({self.spec.name}) uses {self.actuation} actuation, which takes "
                          f"no {what}: that needs {modes} actuation")

    def servo_lengths(self) -> np.ndarray:
        return self.data.actuator_length

    @property
    def servo_forces(self) -> np.ndarray:
        """Each actuator's force (N m) in the current state, indexed by actuator id (read-only view)."""
        return self._servo_force_view

    @property
    def servo_positions(self) -> np.ndarray:
        """Each actuator's joint coordinate, indexed by actuator id (read-only view): a hinge's angle, or for a
        ball joint the rotation-vector component about the actuator's axis."""
        return self._servo_position_view

    @property
    def servo_velocities(self) -> np.ndarray:
        """The rates of :attr:`servo_positions` (read-only view)."""
        return self._servo_velocity_view

    def servo_gains(self, joint: str) -> tuple[float, float]:
        """One joint's current PD gains (kp, kd) (its first axis'; all axes share them unless a controller
        set them apart)."""
        i = int(self.joints[joint].servos[0])
        if self.stable_pd is not None:
            return float(self.stable_pd.kp[i]), float(self.stable_pd.kd[i])
        if self.actuation == "torque":
            raise self._wrong_mode("servo gains", "position or spd")
        return float(self.model.actuator_gainprm[i, 0]), float(-self.model.actuator_biasprm[i, 2])

    def set_servo_force_limit(self, joint: str, axis: int, limit: float) -> None:
        """Bound one axis of a joint's servo force to +-``limit`` (kept in snapshots by ``World``)."""
        self.model.actuator_forcerange[self.joints[joint].servos[axis]] = (-limit, limit)

    def servo_gain_table(self, gains: Mapping[str, tuple[float, float]]) -> ServoGains:
        """Every servo's (kp, kd): ``gains`` (joint name -> kp, kd) where given, the character file's elsewhere;
        for :meth:`apply_servo_gains`."""
        unknown = sorted(set(gains) - set(self.joints))
        if unknown:
            raise UsageError(f"character {self.name!r} ({self.spec.name}) has no joint {', '.join(unknown)}")
        ids, kp, kd = [], [], []
        for name, joint in self.joints.items():
            own = self.spec.joint_gains(name)
            p, d = gains.get(name, (own.kp, own.kd))
            ids += joint.servos.tolist()
            kp += [float(p)] * len(joint.servos)
            kd += [float(d)] * len(joint.servos)
        return ServoGains(np.array(ids), np.array(kp), np.array(kd))

    def apply_servo_gains(self, table: ServoGains) -> None:
        """Set every servo's gains at once from a :meth:`servo_gain_table` (kept in snapshots by ``World``);
        nothing is written when they are set already."""
        ids, kp, kd = table
        if self.stable_pd is None and self.actuation != "torque":
            gain, bias = self.model.actuator_gainprm, self.model.actuator_biasprm
            if (np.array_equal(gain[ids, 0], kp) and np.array_equal(bias[ids, 1], -kp)
                    and np.array_equal(bias[ids, 2], -kd)):
                return
        self._write_servo_gains(ids, kp, kd)

    def set_servo_gains(self, joint: str, kp: float, kd: float) -> None:
        """Change one joint's PD servo gains (kept in snapshots by ``World``)."""
        ids = self.joints[joint].servos
        if self.stable_pd is None and self.actuation != "torque":
            # Controllers set the same gains at most updates (every control step): reading them, as plain floats
            # for one joint's few servos, is cheaper than writing.
            gain, bias = self.model.actuator_gainprm, self.model.actuator_biasprm
            n = len(ids)
            kps = kp.tolist() if isinstance(kp, np.ndarray) else [kp] * n
            kds = kd.tolist() if isinstance(kd, np.ndarray) else [kd] * n
            if all(gain[i, 0] == p and bias[i, 1] == -p and bias[i, 2] == -d
                   for i, p, d in zip(ids.tolist(), kps, kds)):
                return
        self._write_servo_gains(ids, kp, kd)

    def _write_servo_gains(self, ids: np.ndarray, kp: float | np.ndarray, kd: float | np.ndarray) -> None:
        if self.stable_pd is not None:
            self.stable_pd.kp[ids] = kp
            self.stable_pd.kd[ids] = kd
            return
        if self.actuation == "torque":
            raise self._wrong_mode("servo gains", "position or spd")
        gain, bias = self.model.actuator_gainprm, self.model.actuator_biasprm
        gain[ids, 0] = kp
        bias[ids, 1] = -kp
        bias[ids, 2] = -kd


def _pitch(quat) -> float:
    """The rotation angle about y of a quaternion (w, x, y, z) that turns about y alone."""
    w, _, y, _ = (float(v) for v in quat)
    return 2.0 * float(np.arctan2(y, w))


def _read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view
