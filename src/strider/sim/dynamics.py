"""Rigid-body dynamics of a world's current state: mass matrix, bias forces, Jacobians and their
derivatives, momentum, contact forces and inverse dynamics.

:class:`Dynamics` is a read-only view over a :class:`~strider.sim.world.World`. Every quantity
describes the state the world's last ``step``, ``restore`` or ``forward`` left, which is when the
engine's derived data is current; none of them changes the world's future. Each accessor takes an
optional ``out`` array so that a controller calling it every step allocates nothing (NumPy's own
convention); without ``out`` a new array is returned.

Conventions: generalized quantities are length ``nv`` (MuJoCo's DOF order); Jacobians are
``3 x nv`` and map ``qvel`` to world-frame velocities; a contact force is the force the first body
exerts on the second, in world coordinates. The equation of motion reads

    M(q) q̈ + h(q, q̇) = τ_actuator + τ_passive + τ_applied + Σ Jᵀ f_contact (+ joint limits),

with ``h`` the bias forces (Coriolis, centrifugal, gravity) and ``τ_passive`` the passive forces
(joint springs, damping, fluid) kept separate, as a whole-body QP wants them. The results hold for
the MuJoCo series strider pins (``engine_version()`` names the one in use).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from strider.sim.world import World

_FULL_PHYSICS = mujoco.mjtState.mjSTATE_FULLPHYSICS


@dataclass(frozen=True)
class Contact:
    """One contact between two geoms, with its force in world coordinates.

    ``frame`` rows are the contact normal (pointing from the first geom to the second) and the two
    tangent directions. ``force`` is what the first body exerts on the second: ``normal_force``
    along the normal plus ``friction_force`` in the tangent plane. ``torque`` is the torsional and
    rolling friction torque on the second body (zero for plain point contacts).
    """

    geoms: tuple[int, int]
    bodies: tuple[int, int]
    point: np.ndarray
    frame: np.ndarray
    distance: float
    normal_force: float
    friction_force: np.ndarray
    torque: np.ndarray

    @property
    def normal(self) -> np.ndarray:
        return self.frame[0]

    @property
    def force(self) -> np.ndarray:
        """Total force (normal and friction) on the second body, world frame, N."""
        return self.normal_force * self.frame[0] + self.friction_force


@dataclass(frozen=True)
class Momentum:
    """Linear momentum (kg m/s) and angular momentum about the centre of mass (kg m²/s), world frame."""

    linear: np.ndarray
    angular: np.ndarray
    com: np.ndarray
    mass: float


class Dynamics:
    """Dynamics accessors for one world.

    >>> from strider.characters import load_character
    >>> from strider.sim import CharacterPlacement, Scene, World
    >>> world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    >>> dyn = Dynamics(world)
    >>> dyn.mass_matrix().shape == (dyn.nv, dyn.nv)
    True
    """

    def __getstate__(self) -> dict:
        # Pickled with its world by reference (an episode snapshot), it binds again to the world it is restored
        # into: MuJoCo's model and data would otherwise be copied, and the stale copy read from then on.
        state = dict(vars(self))
        for name in ("_model", "_data", "_scratch"):
            del state[name]
        return state

    def __setstate__(self, state: dict) -> None:
        vars(self).update(state)
        self._model, self._data = self.world.model, self.world.data
        self._scratch = mujoco.MjData(self._model)

    def __init__(self, world: World):
        self.world = world
        self._model, self._data = world.model, world.data
        m = self._model
        self.nv = int(m.nv)
        self._scratch = mujoco.MjData(m)   # inverse dynamics runs here, so the world's data is left alone
        self._state = np.empty(mujoco.mj_stateSize(m, _FULL_PHYSICS))
        self._jacp = np.zeros((3, self.nv))
        self._jacr = np.zeros((3, self.nv))
        self._wrench = np.zeros(6)
        self._geom_body = m.geom_bodyid.tolist()
        # Bodies with mass in a subtree, for the subtree COM's J̇q̇; found on first use of each root.
        self._subtree_bodies: dict[int, list[int]] = {}

    # --- generalized quantities --------------------------------------------------------------
    def mass_matrix(self, out: np.ndarray | None = None) -> np.ndarray:
        """The dense joint-space inertia matrix M(q), nv x nv (armature included)."""
        out = _out(out, (self.nv, self.nv))
        mujoco.mj_fullM(self._model, self._data, out)
        return out

    def solve_mass(self, b: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """M⁻¹ b through the engine's sparse factorization of M (``b``: nv, or k x nv for k right-hand sides)."""
        b = np.ascontiguousarray(b, dtype=float)
        out = _out(out, b.shape)
        mujoco.mj_solveM(self._model, self._data, out.reshape(-1, self.nv), b.reshape(-1, self.nv))
        return out

    def mass_times(self, v: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """M v, without forming M."""
        out = _out(out, (self.nv,))
        mujoco.mj_mulM(self._model, self._data, out, np.ascontiguousarray(v, dtype=float))
        return out

    def bias_forces(self, out: np.ndarray | None = None) -> np.ndarray:
        """h(q, q̇): Coriolis, centrifugal and gravity forces, nv."""
        return self._copy(self._data.qfrc_bias, out)

    def passive_forces(self, out: np.ndarray | None = None) -> np.ndarray:
        """Passive forces (joint springs and damping, fluid), nv; they act on the right-hand side."""
        return self._copy(self._data.qfrc_passive, out)

    def actuator_forces(self, out: np.ndarray | None = None) -> np.ndarray:
        """Generalized forces the actuators produce in this state, nv."""
        return self._copy(self._data.qfrc_actuator, out)

    def actuator_moments(self, out: np.ndarray | None = None) -> np.ndarray:
        """The nu x nv matrix that maps actuator forces to generalized forces (S^T of a whole-body QP is its
        transpose): the engine's sparse moment arms, made dense."""
        m, d = self._model, self._data
        out = _out(out, (int(m.nu), self.nv))
        mujoco.mju_sparse2dense(out, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
        return out

    def actuator_force_limits(self) -> tuple[np.ndarray, np.ndarray]:
        """Each actuator's force range (lower, upper; N or N m), infinite where it has none."""
        m = self._model
        limited = m.actuator_forcelimited.astype(bool)
        return (np.where(limited, m.actuator_forcerange[:, 0], -np.inf),
                np.where(limited, m.actuator_forcerange[:, 1], np.inf))

    def constraint_forces(self, out: np.ndarray | None = None) -> np.ndarray:
        """Generalized forces of every constraint (contacts and joint limits), nv."""
        return self._copy(self._data.qfrc_constraint, out)

    def accelerations(self, out: np.ndarray | None = None) -> np.ndarray:
        """q̈ the engine computes for this state, nv."""
        return self._copy(self._data.qacc, out)

    # --- Jacobians ---------------------------------------------------------------------------
    def point_jacobian(self, body: int | str, point, out: np.ndarray | None = None) -> np.ndarray:
        """Translational Jacobian (3 x nv) of the world point ``point`` moving with ``body``."""
        out = _out(out, (3, self.nv))
        mujoco.mj_jac(self._model, self._data, out, None, _vec3(point), self._body(body))
        return out

    def rotation_jacobian(self, body: int | str, out: np.ndarray | None = None) -> np.ndarray:
        """Rotational Jacobian (3 x nv) of ``body``: q̇ to its world angular velocity."""
        out = _out(out, (3, self.nv))
        mujoco.mj_jacBody(self._model, self._data, None, out, self._body(body))
        return out

    def body_com_jacobian(self, body: int | str, out: np.ndarray | None = None) -> np.ndarray:
        """Translational Jacobian (3 x nv) of ``body``'s centre of mass."""
        out = _out(out, (3, self.nv))
        mujoco.mj_jacBodyCom(self._model, self._data, out, None, self._body(body))
        return out

    def subtree_com_jacobian(self, body: int | str, out: np.ndarray | None = None) -> np.ndarray:
        """Translational Jacobian (3 x nv) of the centre of mass of ``body`` and everything it carries
        (a character's root body: the whole-body COM)."""
        out = _out(out, (3, self.nv))
        mujoco.mj_jacSubtreeCom(self._model, self._data, out, self._body(body))
        return out

    def point_jacobian_dot(self, body: int | str, point, out: np.ndarray | None = None,
                           rotation_out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Time derivatives J̇ (3 x nv each) of a point's translational and its body's rotational Jacobian."""
        out = _out(out, (3, self.nv))
        rotation_out = _out(rotation_out, (3, self.nv))
        mujoco.mj_jacDot(self._model, self._data, out, rotation_out, _vec3(point), self._body(body))
        return out, rotation_out

    def point_bias_acceleration(self, body: int | str, point) -> tuple[np.ndarray, np.ndarray]:
        """J̇q̇ of a point (3) and of its body's rotation (3): the accelerations when q̈ = 0."""
        mujoco.mj_jacDot(self._model, self._data, self._jacp, self._jacr, _vec3(point), self._body(body))
        qvel = self._data.qvel
        return self._jacp @ qvel, self._jacr @ qvel

    def point_bias_linear(self, body: int | str, point) -> np.ndarray:
        """J̇q̇ of a point (3) alone: :meth:`point_bias_acceleration` without the rotation's, for a control step
        that needs only the point's."""
        mujoco.mj_jacDot(self._model, self._data, self._jacp, None, _vec3(point), self._body(body))
        return self._jacp @ self._data.qvel

    def subtree_com_bias_acceleration(self, body: int | str) -> np.ndarray:
        """J̇q̇ of the subtree centre of mass of ``body`` (3): the mass-weighted sum over its bodies."""
        m, d = self._model, self._data
        root = self._body(body)
        members = self._subtree_bodies.get(root)
        if members is None:
            members = self._subtree_bodies[root] = [b for b in range(m.nbody) if m.body_mass[b] > 0.0
                                                    and _is_descendant(m.body_parentid, b, root)]
        total = np.zeros(3)
        qvel = d.qvel
        for b in members:
            mujoco.mj_jacDot(m, d, self._jacp, None, d.xipos[b], b)
            total += m.body_mass[b] * (self._jacp @ qvel)
        return total / m.body_subtreemass[root]

    # --- momentum ----------------------------------------------------------------------------
    def momentum(self, body: int | str) -> Momentum:
        """Linear momentum, and angular momentum about the subtree COM (centroidal), of ``body``'s subtree."""
        m, d = self._model, self._data
        i = self._body(body)
        mujoco.mj_subtreeVel(m, d)
        mass = float(m.body_subtreemass[i])
        return Momentum(mass * d.subtree_linvel[i].copy(), d.subtree_angmom[i].copy(), d.subtree_com[i].copy(), mass)

    def angular_momentum_matrix(self, body: int | str, out: np.ndarray | None = None) -> np.ndarray:
        """The 3 x nv matrix A with L = A q̇: angular momentum about the subtree COM of ``body``."""
        out = _out(out, (3, self.nv))
        mujoco.mj_angmomMat(self._model, self._data, out, self._body(body))
        return out

    # --- contacts ----------------------------------------------------------------------------
    def contacts(self) -> list[Contact]:
        """Every active contact with its force (world frame)."""
        arrays = self._contact_arrays()
        if arrays is None:
            return []
        geoms, bodies, points, frames, dists, wrenches, friction, torques = arrays
        return [Contact((g[0], g[1]), (b[0], b[1]), points[i], frames[i], dists[i], float(wrenches[i, 0]),
                        friction[i], torques[i])
                for i, (g, b) in enumerate(zip(geoms.tolist(), bodies.tolist()))]

    def ground_contacts(self, *bodies: int | str) -> list[list[tuple[np.ndarray, float]]]:
        """(world point, normal force N) of each contact between each of ``bodies`` and the world body (ground,
        static boxes), one list per body: the cheap query a controller makes every step to tell which part of a
        foot is down. A walker has a handful of contacts, so plain lists beat array masks here (and a loop over
        contact structs, 3x), and one pass serves both feet."""
        which = {self._body(body): k for k, body in enumerate(bodies)}
        if len(which) != len(bodies):
            raise ValueError(f"ground_contacts takes each body once, got {bodies}")
        found: list[list[tuple[np.ndarray, float]]] = [[] for _ in bodies]
        d = self._data
        if d.ncon == 0:
            return found
        con = d.contact
        owner = self._geom_body
        force = d.efc_force
        for i, ((g1, g2), address) in enumerate(zip(con.geom.tolist(), con.efc_address.tolist())):
            if address < 0:
                continue
            b1, b2 = owner[g1], owner[g2]
            k = which.get(b2) if b1 == 0 else which.get(b1) if b2 == 0 else None
            if k is not None:
                found[k].append((con.pos[i], float(force[address])))
        return found

    def body_contact_forces(self, out: np.ndarray | None = None) -> np.ndarray:
        """Net contact force on every body of the model (nbody x 3, world frame, N)."""
        out = _out(out, (self._model.nbody, 3))
        out[:] = 0.0
        arrays = self._contact_arrays()
        if arrays is not None:
            _, bodies, _, frames, _, wrenches, friction, _ = arrays
            forces = frames[:, 0] * wrenches[:, :1] + friction
            np.add.at(out, bodies[:, 1], forces)
            np.subtract.at(out, bodies[:, 0], forces)
        return out

    def contact_generalized_forces(self, out: np.ndarray | None = None) -> np.ndarray:
        """Σ Jᵀ f over the contacts: their generalized force, nv (joint limits not included)."""
        out = _out(out, (self.nv,))
        out[:] = 0.0
        arrays = self._contact_arrays()
        if arrays is None:
            return out
        m, d = self._model, self._data
        _, bodies, points, frames, _, wrenches, friction, torques = arrays
        forces = frames[:, 0] * wrenches[:, :1] + friction
        for i, pair in enumerate(bodies.tolist()):
            for sign, body in ((1.0, pair[1]), (-1.0, pair[0])):
                if body == 0:
                    continue   # the world body does not move
                mujoco.mj_jac(m, d, self._jacp, self._jacr, points[i], body)
                out += sign * (self._jacp.T @ forces[i] + self._jacr.T @ torques[i])
        return out

    def _contact_arrays(self):
        """(geoms, bodies, points, frames, distances, wrenches in the contact frame, friction forces and
        torques in the world frame) of the active contacts, or None when there are none."""
        m, d = self._model, self._data
        n = d.ncon
        if n == 0:
            return None
        con = d.contact
        geoms = con.geom[:n].copy()
        frames = con.frame[:n].reshape(n, 3, 3).copy()
        wrenches = np.zeros((n, 6))
        for i, address in enumerate(con.efc_address[:n].tolist()):
            if address >= 0:
                mujoco.mj_contactForce(m, d, i, wrenches[i])
        friction = frames[:, 1] * wrenches[:, 1:2] + frames[:, 2] * wrenches[:, 2:3]
        torques = np.einsum("nij,ni->nj", frames, wrenches[:, 3:])
        return (geoms, m.geom_bodyid[geoms], con.pos[:n].copy(), frames, con.dist[:n].tolist(), wrenches, friction,
                torques)

    # --- inverse dynamics --------------------------------------------------------------------
    def inverse(self, qacc: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The generalized force that produces ``qacc`` from this state with its current contacts.

        It equals actuator plus applied forces when ``qacc`` is what the engine computed; the
        world's own data is not touched (the engine runs on a scratch copy of the state).
        """
        m, d, s = self._model, self._data, self._scratch
        mujoco.mj_getState(m, d, self._state, _FULL_PHYSICS)
        mujoco.mj_setState(m, s, self._state, _FULL_PHYSICS)
        s.qacc[:] = qacc
        mujoco.mj_inverse(m, s)
        out = _out(out, (self.nv,))
        out[:] = s.qfrc_inverse
        return out

    # --- linearization ------------------------------------------------------------------------
    def transition_jacobians(self, epsilon: float = 1e-6, centered: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """A and B of one physics step linearized at this state and its current controls (``mjd_transitionFD``):
        δx⁺ = A δx + B δu, with x = (position in the tangent space, velocity, actuator activations), so
        ``(2 nv + na) x (2 nv + na)`` and ``(2 nv + na) x nu``. Contacts, applied forces and the integrator are
        the engine's own; the world's data is left alone (the differences run on a scratch copy)."""
        m, d, s = self._model, self._data, self._scratch
        mujoco.mj_getState(m, d, self._state, _FULL_PHYSICS)
        mujoco.mj_setState(m, s, self._state, _FULL_PHYSICS)
        s.ctrl[:] = d.ctrl
        s.qfrc_applied[:] = d.qfrc_applied
        s.xfrc_applied[:] = d.xfrc_applied
        s.qacc_warmstart[:] = d.qacc_warmstart
        n = 2 * self.nv + int(m.na)
        A = np.zeros((n, n))
        B = np.zeros((n, int(m.nu)))
        mujoco.mjd_transitionFD(m, s, epsilon, centered, A, B, None, None)
        return A, B

    def position_difference(self, reference: np.ndarray, qpos: np.ndarray) -> np.ndarray:
        """The tangent-space displacement (length ``nv``) that takes ``reference`` to ``qpos``: what A's position
        rows act on (quaternions differ by a rotation vector, everything else by subtraction)."""
        out = np.zeros(self.nv)
        mujoco.mj_differentiatePos(self._model, out, 1.0, np.asarray(reference, dtype=float),
                                   np.asarray(qpos, dtype=float))
        return out

    # --- helpers -----------------------------------------------------------------------------
    def _copy(self, source: np.ndarray, out: np.ndarray | None) -> np.ndarray:
        out = _out(out, (self.nv,))
        out[:] = source
        return out

    def _body(self, body: int | str) -> int:
        return self.world.body_id(body) if isinstance(body, str) else int(body)


def _is_descendant(parent: np.ndarray, body: int, root: int) -> bool:
    while True:
        if body == root:
            return True
        if body == 0:
            return False
        body = int(parent[body])


def _out(out: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    if out is None:
        return np.zeros(shape)
    if out.shape != tuple(shape) or out.dtype != np.float64 or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 array of shape {tuple(shape)}, got {out.shape} "
                         f"{out.dtype}")
    return out


def _vec3(point) -> np.ndarray:
    return np.asarray(point, dtype=float).reshape(3)
