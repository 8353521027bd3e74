"""The simulated world: one MuJoCo model and data, stepped at a fixed rate.

``World`` is the only object that owns MuJoCo state. It steps, snapshots and
restores exactly, applies timed external forces, and answers the questions
controllers ask every step (contacts per body, centre of mass, Jacobians).
"""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass

import mujoco
import numpy as np

from strider.errors import UsageError
from strider.sim.build import TERRAIN_GROUP, build_model, grip_site_names, placement_height
from strider.sim.character import Character
from strider.sim.scene import Scene

_STATE_SPEC = mujoco.mjtState.mjSTATE_INTEGRATION
# MuJoCo's warnings that the state went bad, as its own messages name them (engine_io.c).
_BAD_STATE_WARNINGS = (
    (mujoco.mjtWarning.mjWARN_BADQACC, "Nan, Inf or huge value in QACC"),
    (mujoco.mjtWarning.mjWARN_BADQVEL, "Nan, Inf or huge value in QVEL"),
    (mujoco.mjtWarning.mjWARN_BADQPOS, "Nan, Inf or huge value in QPOS"),
    (mujoco.mjtWarning.mjWARN_BADCTRL, "Nan, Inf or huge value in CTRL"),
)
_BAD_STATE_INDICES = tuple(int(warning) for warning, _ in _BAD_STATE_WARNINGS)
_TERRAIN_ONLY = np.array([1 if g == TERRAIN_GROUP else 0 for g in range(6)], dtype=np.uint8)


ENGINE_LOG = logging.getLogger("strider.mujoco")


def _log_engine_warning(message: str) -> None:
    ENGINE_LOG.info("MuJoCo: %s", message.strip())


def route_engine_warnings() -> None:
    """Send MuJoCo's warning messages to the ``strider.mujoco`` logger (level INFO) instead of its default, which
    prints them and appends them to ``MUJOCO_LOG.TXT`` in the working directory. The warnings that end an episode
    are reported by :meth:`World.instability` in MuJoCo's words; MuJoCo still counts every warning in
    ``data.warning``. A handler the program set itself is left in place."""
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(_log_engine_warning)


def model_signature(model: mujoco.MjModel) -> str:
    """A short description of a model's sizes and a digest of its names, masses, geometry, joint ranges and
    time step: two worlds built from the same scene have the same signature."""
    digest = hashlib.sha256()
    digest.update(bytes(model.names))
    for array in (model.body_mass, model.body_inertia, model.body_pos, model.geom_size, model.geom_pos,
                  model.jnt_range, np.array([model.opt.timestep])):
        digest.update(np.ascontiguousarray(array).tobytes())
    return (f"nq={model.nq} nv={model.nv} nu={model.nu} nbody={model.nbody} dt={model.opt.timestep:g} "
            f"#{digest.hexdigest()[:10]}")


def engine_version() -> str:
    """The physics engine's version, for benchmark records."""
    return mujoco.__version__


@dataclass(frozen=True)
class TimedForce:
    """A force (N, world frame) on a body at a point (body frame, m), on during [start, start + duration)."""

    body: int
    force: tuple[float, float, float]
    point: tuple[float, float, float]
    start: float
    duration: float

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclass(frozen=True)
class State:
    """An exact copy of everything that determines how the world evolves."""

    physics: np.ndarray
    forces: tuple[TimedForce, ...]
    servo_gains: np.ndarray
    servo_limits: np.ndarray | None = None   # each servo's force bound (a controller may change them)
    stable_pd: tuple = ()                     # (targets, kp, kd) of each spd character, in scene order
    model: str = ""                           # the world's model signature: a state restores only into it


# The integration half of mj_step for each integrator (the implicit ones share mj_implicit), keyed by the plain
# int the model reports: comparing it against mjtIntegrator's members costs about a microsecond a time.
_INTEGRATORS = {int(mujoco.mjtIntegrator.mjINT_EULER): mujoco.mj_Euler,
                int(mujoco.mjtIntegrator.mjINT_RK4): lambda m, d: mujoco.mj_RungeKutta(m, d, 4)}


class World:
    """A MuJoCo world built from a :class:`Scene`.

    >>> from strider.characters import load_character
    >>> from strider.sim import Scene, CharacterPlacement, World
    >>> world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    >>> world.step(10); round(world.time, 3)
    0.01
    """

    def __init__(self, scene: Scene):
        route_engine_warnings()
        self.scene = scene
        self.model = build_model(scene)
        self.data = mujoco.MjData(self.model)
        self._forces: list[TimedForce] = []
        self._lever_active = False
        self._kinematics: mujoco.MjData | None = None
        self.signature = model_signature(self.model)
        self._characters = {p.name: Character(self.model, self.data, p) for p in scene.characters}
        for p in scene.characters:
            if p.spec.root == "planar":
                # A planar root's slides hold world coordinates; stand it on the terrain as a free root stands.
                self._characters[p.name].set_root_position((p.x, p.y, placement_height(p.spec, p, scene)))
        self._stable_pd = [c.stable_pd for c in self._characters.values() if c.stable_pd is not None]
        for prop in scene.props:
            # Props start with their scene velocity (e.g. a thrown ball).
            joint = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_JOINT, f"{prop.name}/free")
            adr = self.model.jnt_dofadr[joint]
            self.data.qvel[adr:adr + 3] = prop.velocity
        self._forwarded: tuple | None = None
        # Views into the engine's buffers, made once: each read of an MjData attribute builds a new array
        # object, and the episode loop reads these at every control tick.
        self._qpos, self._qvel, self._act = self.data.qpos, self.data.qvel, self.data.act
        self._warning_counts = self.data.warning.number
        # A plane with nothing on it: the terrain's own formula is the ray's answer, without the ray.
        self._ground_is_plane = (scene.terrain.kind in ("flat", "slope") and not scene.obstacles
                                 and scene.course is None)
        self._forward()

    # --- time and stepping -------------------------------------------------------------
    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def time(self) -> float:
        return float(self.data.time)

    def step(self, n: int = 1) -> None:
        """Advance ``n`` physics steps, switching timed forces on and off on the exact step.

        While a force acts at a point off its body's centre of mass, the world steps one
        physics step at a time so that the force's moment follows the body's current pose
        (the result does not depend on how the caller splits ``n`` into calls).

        Afterwards every derived quantity (body poses, COM, contacts and contact forces)
        describes the current state, exactly as after :meth:`restore`: ``mj_step`` alone
        leaves them one step behind, so a controller would see different inputs after a
        restore than when running on, and branches from a snapshot would not be exact.
        """
        m, d = self.model, self.data
        if self._stable_pd:
            self._step_stable_pd(n)
            return
        if n > 0 and self._forward_is_current():
            # The position and velocity stages of this state were computed by the last mj_forward and
            # the controller only changed controls, gains and applied forces since: redo the rest.
            if self._forces:
                self._apply_active_forces()
            mujoco.mj_forwardSkip(m, d, mujoco.mjtStage.mjSTAGE_VEL, 0)
            mujoco.mj_checkAcc(m, d)
            self._integrate()
            n -= 1
        while n > 0:
            if not self._forces:
                mujoco.mj_step(m, d, nstep=n)
                break
            self._apply_active_forces()
            chunk = 1 if self._lever_active else min(n, self._steps_until_next_force_event())
            mujoco.mj_step(m, d, nstep=chunk)
            n -= chunk
        if self._forces:
            self._apply_active_forces()
        self._forward()

    def step_bare(self, n: int) -> None:
        """``n`` physics steps by MuJoCo alone, in one call: no timed forces, no stable-PD torques, and no refresh
        of derived quantities afterwards. For timing the engine against itself (a benchmark's baseline), never
        for running an episode."""
        if self._stable_pd:
            raise UsageError("a world with stable-PD characters cannot step bare: their torques need every step")
        mujoco.mj_step(self.model, self.data, nstep=n)
        self._forwarded = None

    def _step_stable_pd(self, n: int) -> None:
        """Steps of a world with stable-PD characters: their torques need each step's own mass matrix and
        bias forces, which ``mj_step1`` computes before ``mj_step2`` applies the actuators and integrates."""
        m, d = self.model, self.data
        for _ in range(n):
            if self._forces:
                self._apply_active_forces()
            mujoco.mj_step1(m, d)
            for servos in self._stable_pd:
                servos.apply(m, d)
            mujoco.mj_step2(m, d)
        if self._forces:
            self._apply_active_forces()
        self._forward()

    def _forward(self) -> None:
        """mj_forward, remembering the state it described (see :meth:`_forward_is_current`).

        With the checks mj_step makes around it: a NaN, infinite or huge qpos, qvel or acceleration raises the
        engine's bad-state warning (:meth:`instability`) and resets the state, so every state a step or a
        restore leaves is finite or flagged. mj_forward alone checks nothing.
        """
        m, d = self.model, self.data
        mujoco.mj_checkPos(m, d)
        mujoco.mj_checkVel(m, d)
        mujoco.mj_forward(m, d)
        mujoco.mj_checkAcc(m, d)
        # As bytes: comparing them costs a twentieth of np.array_equal, and equal bytes are the same state.
        self._forwarded = (self.data.time, self._qpos.tobytes(), self._qvel.tobytes(), self._act.tobytes())

    def _forward_is_current(self) -> bool:
        """True while the state is the one the last :meth:`_forward` saw: anything that edits qpos, qvel or
        act by hand (a new pose, a perturbation) makes the next step recompute every stage."""
        if self._forwarded is None:
            return False
        t, qpos, qvel, act = self._forwarded
        return (t == self.data.time and self._qpos.tobytes() == qpos and self._qvel.tobytes() == qvel
                and self._act.tobytes() == act)

    def _integrate(self) -> None:
        """The integration half of mj_step, for the model's integrator."""
        m, d = self.model, self.data
        _INTEGRATORS.get(m.opt.integrator, mujoco.mj_implicit)(m, d)

    def set_at_rest(self) -> None:
        """Zero every velocity in the world (characters and props); call :meth:`forward` afterwards."""
        self.data.qvel[:] = 0.0

    def forward(self) -> None:
        """Recompute derived quantities (positions, contacts) after editing the state by hand."""
        self._forward()

    # --- snapshots ---------------------------------------------------------------------
    def snapshot(self) -> State:
        size = mujoco.mj_stateSize(self.model, _STATE_SPEC)
        buf = np.empty(size)
        mujoco.mj_getState(self.model, self.data, buf, _STATE_SPEC)
        gains = np.concatenate([self.model.actuator_gainprm[:, 0], self.model.actuator_biasprm[:, 2]])
        return State(buf, tuple(self._forces), gains, self.model.actuator_forcerange[:, 1].copy(),
                     tuple(servos.state() for servos in self._stable_pd), self.signature)

    def full_physics(self) -> np.ndarray:
        """Time, positions, velocities and actuator states as one array (MuJoCo's FULLPHYSICS state, the layout
        ``mujoco.rollout`` reports)."""
        buf = np.empty(mujoco.mj_stateSize(self.model, mujoco.mjtState.mjSTATE_FULLPHYSICS))
        mujoco.mj_getState(self.model, self.data, buf, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        return buf

    def integration_state(self) -> np.ndarray:
        """Everything ``mj_step`` reads, as one array (MuJoCo's INTEGRATION state: time, positions, velocities,
        controls, applied forces and the solver's warm start). Smaller and cheaper than :meth:`snapshot`, which
        also keeps gains and timed forces: the state a sampler ships between processes."""
        buf = np.empty(mujoco.mj_stateSize(self.model, _STATE_SPEC))
        mujoco.mj_getState(self.model, self.data, buf, _STATE_SPEC)
        return buf

    def set_integration_state(self, state: np.ndarray) -> None:
        """Set the world to an :meth:`integration_state` of this model, derived quantities updated."""
        state = np.asarray(state, dtype=float)
        size = mujoco.mj_stateSize(self.model, _STATE_SPEC)
        if state.shape != (size,):
            raise UsageError(f"an integration state of this model has {size} values, got shape {state.shape}")
        mujoco.mj_setState(self.model, self.data, state, _STATE_SPEC)
        self._forward()

    def restore(self, state: State) -> None:
        if state.model and state.model != self.signature:
            raise UsageError(f"cannot restore a state of another model: the state is of {state.model}, this world "
                             f"is {self.signature}")
        mujoco.mj_setState(self.model, self.data, state.physics, _STATE_SPEC)
        for warning, _ in _BAD_STATE_WARNINGS:
            self.data.warning[warning].number = 0
        nu = self.model.nu
        self.model.actuator_gainprm[:, 0] = state.servo_gains[:nu]
        self.model.actuator_biasprm[:, 1] = -state.servo_gains[:nu]
        self.model.actuator_biasprm[:, 2] = state.servo_gains[nu:]
        if state.servo_limits is not None:
            self.model.actuator_forcerange[:, 0] = -state.servo_limits
            self.model.actuator_forcerange[:, 1] = state.servo_limits
        for servos, saved in zip(self._stable_pd, state.stable_pd):
            servos.set_state(saved)
        self._forces = list(state.forces)
        self._forward()

    # --- external forces ---------------------------------------------------------------
    def apply_force(self, body: str | int, force, point=(0.0, 0.0, 0.0), duration: float = 0.1,
                    start: float | None = None) -> TimedForce:
        """Push ``body`` with ``force`` (world frame, N) at ``point`` (body frame, m) for ``duration`` s."""
        body_id = self.body_id(body) if isinstance(body, str) else int(body)
        timed = TimedForce(body_id, tuple(map(float, force)), tuple(map(float, point)),
                           self.time if start is None else float(start), float(duration))
        self._forces.append(timed)
        self._apply_active_forces()
        return timed

    @property
    def pending_forces(self) -> tuple[TimedForce, ...]:
        """Timed forces acting now or still to come."""
        return tuple(self._forces)

    def _steps_until_next_force_event(self) -> int:
        dt, now = self.timestep, self.time
        events = [t for f in self._forces for t in (f.start, f.end) if t > now + 1e-12]
        if not events:
            return 1 << 30
        return max(1, round((min(events) - now) / dt))

    def _apply_active_forces(self) -> None:
        m, d, now, half = self.model, self.data, self.time, 0.5 * self.timestep
        d.xfrc_applied[:] = 0.0
        keep = []
        rotations = None
        self._lever_active = False
        for f in self._forces:
            if now + half >= f.end:
                continue
            keep.append(f)
            if now + half >= f.start:
                d.xfrc_applied[f.body, :3] += f.force
                lever_local = np.asarray(f.point) - m.body_ipos[f.body]
                if np.any(lever_local != 0.0):
                    # A force at a point off the centre of mass also carries a torque about it. The
                    # body's orientation comes from the current qpos: after mj_step, data.xmat still
                    # holds the pose from before the last integration.
                    if rotations is None:
                        rotations = self._current_rotations()
                    r = rotations[f.body] @ lever_local
                    d.xfrc_applied[f.body, 3:] += np.cross(r, f.force)
                    self._lever_active = True
        self._forces = keep

    def _current_rotations(self) -> np.ndarray:
        """Body rotation matrices for the current qpos, computed without touching ``data``."""
        if self._kinematics is None:
            self._kinematics = mujoco.MjData(self.model)
        kin = self._kinematics
        kin.qpos[:] = self.data.qpos
        kin.mocap_pos[:] = self.data.mocap_pos
        kin.mocap_quat[:] = self.data.mocap_quat
        mujoco.mj_kinematics(self.model, kin)
        return kin.xmat.reshape(-1, 3, 3)

    # --- queries -----------------------------------------------------------------------
    def character(self, name: str | None = None) -> Character:
        if name is None:
            return next(iter(self._characters.values()))
        return self._characters[name]

    @property
    def characters(self) -> dict[str, Character]:
        return dict(self._characters)

    def body_id(self, name: str) -> int:
        """A body's index by its name in the model: a character's bodies are ``CHARACTER/BODY`` (``hero/torso``);
        with one character in the scene its bare body name (``torso``) also works."""
        i = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, name)
        if i < 0 and len(self.scene.characters) == 1 and "/" not in name:
            i = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_BODY, f"{self.scene.characters[0].name}/{name}")
        if i < 0:
            known = [mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, self.model.nbody)]
            raise KeyError(f"no body named {name!r}; this world's bodies: {', '.join(known)}")
        return i

    def body_position(self, body: str | int) -> np.ndarray:
        i = self.body_id(body) if isinstance(body, str) else body
        return self.data.xpos[i].copy()

    def body_velocity(self, body: str | int) -> np.ndarray:
        """The linear velocity (world frame) of ``body``'s centre of mass."""
        i = self.body_id(body) if isinstance(body, str) else body
        out = np.zeros(6)
        # mjOBJ_BODY: at the body's inertial frame (its centre of mass), in world axes.
        mujoco.mj_objectVelocity(self.model, self.data, mujoco.mjtObj.mjOBJ_BODY, i, out, 0)
        return out[3:]

    def set_free_motion(self, body: str, position, velocity) -> None:
        """Place a loose prop (a body on a free joint) at ``position`` moving at ``velocity`` (world frame, no
        spin), as a throw does; call :meth:`forward` afterwards."""
        i = self.body_id(body)
        joint = int(self.model.body_jntadr[i])
        if joint < 0 or self.model.jnt_type[joint] != mujoco.mjtJoint.mjJNT_FREE:
            raise ValueError(f"body {body!r} is not loose (it has no free joint)")
        q, v = int(self.model.jnt_qposadr[joint]), int(self.model.jnt_dofadr[joint])
        self.data.qpos[q:q + 3] = position
        self.data.qpos[q + 3:q + 7] = (1.0, 0.0, 0.0, 0.0)
        self.data.qvel[v:v + 6] = (*velocity, 0.0, 0.0, 0.0)

    def bodies_touching(self, body: str | int) -> set[str]:
        """The names of the bodies (not the ground) in contact with ``body`` now."""
        i = self.body_id(body) if isinstance(body, str) else body
        m, d = self.model, self.data
        touching = set()
        for g1, g2 in d.contact.geom[:d.ncon].tolist():
            b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
            other = b2 if b1 == i else b1 if b2 == i else 0
            if other > 0:
                touching.add(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, other))
        return touching

    # --- grips (hand holds, Scene.grips) ---------------------------------------------------------
    def _grip_index(self, name: str) -> int:
        i = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_EQUALITY, f"grip/{name}")
        if i < 0:
            raise KeyError(f"no grip named {name!r}")
        return i

    def set_grip(self, name: str, closed: bool) -> None:
        """Close (or open) the grip ``name``: its spring-damper starts (stops) pulling the hand onto the handle."""
        self.data.eq_active[self._grip_index(name)] = 1 if closed else 0

    def grip_closed(self, name: str) -> bool:
        return bool(self.data.eq_active[self._grip_index(name)])

    def grip_points(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Where the grip ``name``'s hand point and its handle are now (world)."""
        self._grip_index(name)
        hand, handle = grip_site_names(name)
        return self.site_position(hand), self.site_position(handle)

    def grip_gap(self, name: str) -> float:
        """How far apart (m) the grip's hand point and handle are now."""
        hand, handle = self.grip_points(name)
        return float(np.linalg.norm(hand - handle))

    def site_position(self, name: str) -> np.ndarray:
        i = mujoco.mj_name2id(self.model, mujoco.mjtObj.mjOBJ_SITE, name)
        if i < 0:
            raise KeyError(f"no site named {name!r}")
        return self.data.site_xpos[i].copy()

    def jacobian(self, body: str | int, point=None) -> tuple[np.ndarray, np.ndarray]:
        """Translational and rotational Jacobians (3 x nv) of a world point fixed to ``body``."""
        i = self.body_id(body) if isinstance(body, str) else body
        jacp = np.zeros((3, self.model.nv))
        jacr = np.zeros((3, self.model.nv))
        p = self.data.xipos[i] if point is None else np.asarray(point, dtype=float)
        mujoco.mj_jac(self.model, self.data, jacp, jacr, p, i)
        return jacp, jacr

    def ground_height(self, x: float, y: float, above: float = 3.0) -> float:
        """Height of the terrain (ground and obstacles) under (x, y), found by a ray cast downwards.

        The ray starts ``above`` metres over the ground surface at (x, y), so it finds the ground
        however far up a slope the point is, and obstacles up to that tall.
        """
        if self.scene.course is not None and not self.scene.obstacles:
            return self.scene.course.height(x, y)   # the course answers exactly what the ray would find
        base = self.scene.ground(x, y)
        if self._ground_is_plane:
            return base
        top = base + above
        geom_id = np.array([-1], dtype=np.int32)
        dist = mujoco.mj_ray(self.model, self.data, np.array([x, y, top]), np.array([0.0, 0.0, -1.0]),
                             _TERRAIN_ONLY, 1, -1, geom_id)
        return top - dist if dist >= 0 else base

    def cast_down(self, x: float, y: float, top: float) -> tuple[float, str | None]:
        """Cast a ray straight down from (x, y, top) against the terrain (ground, obstacles, course geometry; not
        characters or loose props): the height it hits and the geom's name, or (-inf, None)."""
        geom_id = np.array([-1], dtype=np.int32)
        dist = mujoco.mj_ray(self.model, self.data, np.array([x, y, top]), np.array([0.0, 0.0, -1.0]),
                             _TERRAIN_ONLY, 1, -1, geom_id)
        if dist < 0:
            return -math.inf, None
        return top - dist, mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, int(geom_id[0]))

    @property
    def contact_count(self) -> int:
        """How many contacts the current state has (any geoms)."""
        return int(self.data.ncon)

    def state_vector(self) -> np.ndarray:
        """(time, qpos, qvel) as one array, for comparing trajectories bit for bit."""
        return np.concatenate([[self.data.time], self.data.qpos, self.data.qvel])

    def instability(self) -> str | None:
        """The engine's own verdict that the simulation blew up: the first of its bad-state warnings raised
        since this world was built or last restored, in its words, or None. MuJoCo resets the state to the
        model's initial one when it raises these, so a finite state after a step proves nothing."""
        counts = self._warning_counts
        if not any(counts[i] for i in _BAD_STATE_INDICES):   # the common case, checked every control tick
            return None
        for warning, text in _BAD_STATE_WARNINGS:
            if self.data.warning[warning].number > 0:
                return text
        return None

    def is_finite(self) -> bool:
        # A sum is NaN or infinite when any term is (or when it overflows, which is no finite state either).
        return math.isfinite(self._qpos.sum()) and math.isfinite(self._qvel.sum())
