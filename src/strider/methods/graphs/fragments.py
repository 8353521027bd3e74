"""Running control fragments: one sample of a SAMCON stage, or one step of a learned controller at run time.

A fragment starts from a world state, reads the features there, plays its open-loop targets with the
action's offsets through MuJoCo's own rollout (no Python per physics step), then reads the character again
and scores the end against the reference. While a push is pending, or a video records every step, the rows
are stepped one by one instead (:class:`strider.sim.rollout.OpenLoop` refuses timed forces).

Phase reset (control-graphs.md Sec. 4; seed 002, Sec. 6.1: "contact-aligned phase-resetting for walking and
running controllers"): a fragment that the reference ends with a foot strike is stepped one step at a time and
ends as soon as that foot carries STRIKE_LOAD of the body's weight, so an early strike starts the next fragment
at once; a late one holds the fragment's last targets up to LATE_HOLD longer, waiting for it. Either way the end
is scored against the reference's end, the strike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from strider.control.frames import CharacterFrame
from strider.methods.graphs.actions import POLICY_JOINTS, ActionLayout, offset_rows
from strider.methods.graphs.features import features, read
from strider.methods.graphs.reference import GAIN_SETS, Reference, graph_world
from strider.methods.graphs.scoring import DEFAULT_WEIGHTS, CostWeights, Summary, cost, fell, summarize
from strider.sim import World
from strider.sim.dynamics import Dynamics
from strider.sim.rollout import OpenLoop


@dataclass(frozen=True)
class Outcome:
    """What a fragment did: the features at its end, its cost, whether it fell, and its end as the cost saw it."""

    features: np.ndarray
    cost: float
    fell: bool
    summary: Summary


STRIKE_LOAD = 0.1   # share of the body's weight on a foot that makes its contact a strike (strider's decision)
LATE_HOLD = 0.05    # s: a late strike is waited for this long at most (control-graphs.md Sec. 4, "Phase reset")


class FragmentRunner:
    """Plays a reference's fragments on the first character of a world; with ``phase_reset`` (and a reference
    that records its strikes) the fragments that end in a foot strike end at the character's strike."""

    def __init__(self, reference: Reference, weights: CostWeights = DEFAULT_WEIGHTS,
                 joints: tuple[str, ...] = POLICY_JOINTS, world: World | None = None, character: str | None = None,
                 phase_reset: bool = True):
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
        feet = [reference.strike_foot(k) if phase_reset else None for k in range(reference.fragments)]
        self._strike_bodies = [[self.character.body(f)] if f else None for f in feet]
        foot_ids = set(self.character.foot_bodies.tolist())
        self._may_touch = [foot_ids | {self.character.body(b) for b in reference.resting_bodies(k)}
                           for k in range(reference.fragments)]
        self.strike_force = STRIKE_LOAD * self.character.mass * -float(self.world.model.opt.gravity[2])
        self._hold_steps = round(LATE_HOLD / self.world.model.opt.timestep)
        self._gains = self.character.servo_gain_table(GAIN_SETS[reference.gains])

    def apply_gains(self) -> None:
        """The character's servos at the reference's gain set (a world's skills may play with different ones)."""
        self.character.apply_servo_gains(self._gains)

    def features(self) -> np.ndarray:
        return features(read(self.character, self.dynamics))

    def rows(self, fragment: int, action: np.ndarray) -> np.ndarray:
        return offset_rows(self._rows[fragment], self._joint_targets[fragment], self.layout, self.character,
                           action)

    def with_late_hold(self, rows: np.ndarray) -> np.ndarray:
        """A strike fragment's rows and its last row again for LATE_HOLD, while a late strike is waited for."""
        return np.concatenate([rows, np.repeat(rows[-1:], self._hold_steps, axis=0)])

    def play(self, fragment: int, action: np.ndarray) -> None:
        """Run one fragment from the world's current state (to the foot's strike, where phase reset ends it)."""
        self.apply_gains()
        rows = self.rows(fragment, action)
        foot = self._strike_bodies[fragment]
        if foot is None and not self.world.pending_forces and self.on_step is None:
            self._open_loop.run(rows)
            return
        if foot is not None:
            rows = self.with_late_hold(rows)
        targets = self.character.servo_targets
        for row in rows:
            if foot is not None and self.character.contact_normal_force(foot) > self.strike_force:
                return
            targets[:] = row
            self.world.step(1)
            if self.on_step is not None:
                self.on_step(self.world)

    def advance(self, fragment: int, action: np.ndarray, action_norm: float,
                heading: float | None = None) -> Outcome:
        """Run one fragment from the world's current state with ``action``, scored against the reference: in
        the character's facing frame at the fragment's start, or turned to ``heading`` (rad) where one is given
        (the reference then asks the fragment to end as it would had it started facing that way)."""
        start = read(self.character, self.dynamics).facing
        if heading is not None:
            start = CharacterFrame(heading, start.origin)
        self.play(fragment, action)
        end = read(self.character, self.dynamics)
        summary = summarize(end, start)
        ref = self.reference.ends[fragment]
        return Outcome(features(end), cost(summary, ref, action_norm, self.weights),
                       fell(summary, ref, self.touches_outside_reference(fragment)), summary)

    def touches_outside_reference(self, fragment: int) -> bool:
        """A body touches the ground that neither is a foot nor rests on it in the reference around ``fragment``."""
        return not self.character.terrain_touching_bodies() <= self._may_touch[fragment]

    def sample(self, state: np.ndarray, fragment: int, action: np.ndarray, action_norm: float,
               heading: float | None = None) -> tuple[np.ndarray, Outcome]:
        """One SAMCON sample: the fragment from ``state`` with ``action`` (noise included), scored as
        :meth:`advance` scores it; the end state too."""
        self.world.set_integration_state(state)
        outcome = self.advance(fragment, action, action_norm, heading)
        return self.world.integration_state(), outcome
