"""Open-loop rollouts: a world's state driven through a sequence of controls by MuJoCo's own rollout, with no
Python per physics step.

A control row holds one value per actuator, indexed by actuator id, exactly what a controller writes each
step: servo targets for ``position`` characters, torques for ``torque`` characters. ``spd`` servos compute
their torque from each step's mass matrix in Python (:mod:`strider.sim.actuation`), so a world with stable-PD
characters runs its rows one step at a time through :meth:`World.step` instead, with the rows as the servos'
targets; the result is the same kind of thing, only slower.

The engine's warm start is carried in and out, so a rollout cut into pieces ends bit for bit where the whole
one does, and where stepping the world with the same controls does.
"""

from __future__ import annotations

import mujoco
import mujoco.rollout
import numpy as np

from strider.errors import UsageError
from strider.sim.world import World


class OpenLoop:
    """Runs control sequences from a world's current state, leaving the world at the end state.

    >>> from strider.characters import load_character
    >>> from strider.sim import CharacterPlacement, Scene, World
    >>> world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    >>> hold = np.tile(world.character().servo_targets, (100, 1))
    >>> OpenLoop(world).run(hold); round(world.time, 3)
    0.05
    """

    def __init__(self, world: World):
        self.world = world
        self._engine = mujoco.rollout.Rollout(nthread=0)   # in the calling thread: workers parallelize, not it
        self._stable_pd = [c.stable_pd for c in world.characters.values() if c.stable_pd is not None]

    @property
    def controls_width(self) -> int:
        """Values per control row: the world's actuator count."""
        return int(self.world.model.nu)

    def check(self, controls: np.ndarray) -> np.ndarray:
        """``controls`` as a C-contiguous float array of shape (steps, actuators), or a one-line usage error."""
        controls = np.ascontiguousarray(controls, dtype=float)
        if controls.ndim != 2 or controls.shape[1] != self.controls_width:
            raise UsageError(f"open-loop controls must have shape (steps, {self.controls_width}) (one value per "
                             f"actuator), got {controls.shape}")
        if not np.isfinite(controls).all():
            raise UsageError("open-loop controls must be finite numbers")
        return controls

    def run(self, controls: np.ndarray) -> None:
        """Apply one row of ``controls`` per physics step from the world's current state.

        Timed forces are not carried through an open-loop rollout: a world with one pending is refused.
        """
        world = self.world
        controls = self.check(controls)
        if world.pending_forces:
            raise UsageError("an open-loop rollout cannot start with timed forces pending (pushes are applied by "
                             "the episode loop); start it from a state without them")
        if len(controls) == 0:
            return
        if self._stable_pd:
            for row in controls:
                for servos in self._stable_pd:
                    servos.targets[servos.actuators] = row[servos.actuators]
                world.step(1)
            return
        m, d = world.model, world.data
        initial = world.full_physics()[None]
        warmstart = d.qacc_warmstart.reshape(1, -1).copy()
        # The engine writes every step's state; only the last one (left in d) is kept.
        states = np.empty((1, len(controls), initial.shape[1]))
        sensors = np.empty((1, len(controls), m.nsensordata))
        self._engine.rollout(m, d, initial, controls[None], initial_warmstart=warmstart, state=states,
                             sensordata=sensors)
        world.forward()


def bare_rollouts(world: World, controls: np.ndarray, threads: int) -> np.ndarray:
    """MuJoCo's rollout alone, for comparison: every row of ``controls`` (rollouts × steps × actuators) from the
    world's current state on ``threads`` threads; the end states (rollouts × FULLPHYSICS size)."""
    m = world.model
    n = controls.shape[0]
    initial = world.full_physics()
    datas = [mujoco.MjData(m) for _ in range(max(1, threads))]
    warmstart = np.tile(world.data.qacc_warmstart, (n, 1))
    with mujoco.rollout.Rollout(nthread=threads if threads > 1 else 0) as engine:
        states, _ = engine.rollout(m, datas, np.tile(initial, (n, 1)), controls, initial_warmstart=warmstart)
    return states[:, -1]
