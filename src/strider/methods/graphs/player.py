"""A learned skill at run time (Liu et al. 2015, Sec. 2, "online loop"): at each fragment's start read the
18-D state, take a = M_k s + â_k, play the fragment's targets with that offset, and go on to the next
fragment of the cycle (a one-pass skill, such as a get-up, ends after its last). A fall (a body on the
ground that the reference keeps off it, or the root 0.3 m off the reference's height: the learner's own
test) ends the run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from strider.errors import require_finite
from strider.methods.graphs.controller_file import LearnedSkill
from strider.methods.graphs.fragments import FragmentRunner
from strider.sim import World


@dataclass(frozen=True)
class PlayResult:
    seconds: float     # simulated time survived
    fell: bool
    fragments: int


class SkillPlayer:
    """Plays a learned skill on a character of ``world`` (a fresh flat-ground world by default), with phase reset
    at the foot strikes where the skill was learned with it (``phase_reset=False`` plays without)."""

    def __init__(self, skill: LearnedSkill, world: World | None = None, character: str | None = None,
                 phase_reset: bool = True):
        self.skill = skill
        self.runner = FragmentRunner(skill.reference, joints=skill.joints, world=world, character=character,
                                     phase_reset=phase_reset)
        self.world = self.runner.world
        self.fragment = 0
        self.finished = False   # a one-pass skill (a get-up) has played its last fragment

    def start(self) -> None:
        """Put the character in the reference's start state, at time zero."""
        self.world.set_integration_state(self.skill.reference.start_state)
        self.begin()

    def begin(self) -> None:
        """Start the skill's first fragment next, from wherever the character is (a get-up after a fall)."""
        self.fragment = 0
        self.finished = False

    def action(self) -> np.ndarray:
        return self.skill.playing[self.fragment].mean(self.runner.features())

    def step(self) -> bool:
        """Play one fragment under its policy; True when the character fell during it."""
        action = self.action()
        outcome = self.runner.advance(self.fragment, action, float(np.linalg.norm(action)))
        self.fragment = (self.fragment + 1) % self.skill.reference.fragments
        self.finished = self.fragment == 0 and not self.skill.reference.cyclic
        return outcome.fell

    def run(self, seconds: float, on_fragment: Callable[[SkillPlayer], None] | None = None) -> PlayResult:
        """From the start state, play until ``seconds`` of simulated time have passed or the character falls (a
        one-pass skill: or its pass ends)."""
        require_finite("the play's length", seconds, "s", positive=True)
        self.start()
        count = 0
        while self.world.time < seconds - 1e-9 and not self.finished:
            fell = self.step()
            count += 1
            if on_fragment is not None:
                on_fragment(self)
            if fell:
                return PlayResult(self.world.time, True, count)
        return PlayResult(self.world.time, False, count)
