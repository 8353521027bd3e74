"""Running control fragments: one sample of a SAMCON stage, or one step of a learned controller at run time.

A fragment starts from a world state, reads the features there, plays its open-loop targets with the
action's offsets through MuJoCo's own rollout (no Python per physics step), then reads the character again
and scores the end against the reference. While a push is pending, or a video records every step, the rows
are stepped one by one instead (:class:`strider.sim.rollout.OpenLoop` refuses timed forces).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from strider.methods.graphs.actions import POLICY_JOINTS, ActionLayout, offset_rows
from strider.methods.graphs.features import features, read
from strider.methods.graphs.reference import Reference, graph_world
from strider.methods.graphs.scoring import DEFAULT_WEIGHTS, CostWeights, cost, fell, summarize
from strider.sim import World
from strider.sim.dynamics import Dynamics
from strider.sim.rollout import OpenLoop


@dataclass(frozen=True)
class Outcome:
    """What a fragment did: the features at its end, its cost, and whether it fell."""

    features: np.ndarray
    cost: float
    fell: bool


class FragmentRunner:
    """Plays a reference's fragments on the first character of a world."""

    def __init__(self, reference: Reference, weights: CostWeights = DEFAULT_WEIGHTS,
                 joints: tuple[str, ...] = POLICY_JOINTS, world: World | None = None, character: str | None = None):
        self.reference = reference
        self.weights = weights
        self.world = world or graph_world()
        self.character = self.world.character(character)
        self.dynamics = Dynamics(self.world)
        self.layout = ActionLayout.of(self.character, joints)
        self._open_loop = OpenLoop(self.world)
        self.on_step: Callable[[World], None] | None = None   # called after every physics step (a video)
        self._rows = [reference.targets[reference.fragment_rows(k)] for k in range(reference.fragments)]
        self._joint_targets = [{j: reference.joint_targets[j][reference.fragment_rows(k)] for j in joints}
                               for k in range(reference.fragments)]

    def features(self) -> np.ndarray:
        return features(read(self.character, self.dynamics))

    def rows(self, fragment: int, action: np.ndarray) -> np.ndarray:
        return offset_rows(self._rows[fragment], self._joint_targets[fragment], self.layout, self.character,
                           action)

    def play(self, fragment: int, action: np.ndarray) -> None:
        """Run one fragment from the world's current state."""
        rows = self.rows(fragment, action)
        if not self.world.pending_forces and self.on_step is None:
            self._open_loop.run(rows)
            return
        targets = self.character.servo_targets
        for row in rows:
            targets[:] = row
            self.world.step(1)
            if self.on_step is not None:
                self.on_step(self.world)

    def advance(self, fragment: int, action: np.ndarray, action_norm: float) -> Outcome:
        """Run one fragment from the world's current state with ``action``, scored against the reference."""
        start = read(self.character, self.dynamics).facing
        self.play(fragment, action)
        end = read(self.character, self.dynamics)
        summary = summarize(end, start)
        ref = self.reference.ends[fragment]
        return Outcome(features(end), cost(summary, ref, action_norm, self.weights),
                       fell(summary, ref, self.character.non_foot_contact()))

    def sample(self, state: np.ndarray, fragment: int, action: np.ndarray, action_norm: float
               ) -> tuple[np.ndarray, Outcome]:
        """One SAMCON sample: the fragment from ``state`` with ``action`` (noise included); the end state too."""
        self.world.set_integration_state(state)
        outcome = self.advance(fragment, action, action_norm)
        return self.world.integration_state(), outcome
