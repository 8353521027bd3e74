"""The push test of Liu et al. 2015 (Sec. 6.1), with the details the source leaves open fixed as in the
control-graphs spec (Sec. 5): from t = 2 s, every 2 s, a 0.2 s horizontal push on the chest's centre of mass
in a uniformly random direction, of size |N(0, σ²)| with σ growing as 1 N/s · t, scaled by the character's
mass over the source's 62 kg. The pushes grow until one topples the character; t_f is the time of that fall
(or the trial's end), averaged over seeds.

A learned skill runs fragment by fragment, so a push starts at the first fragment boundary at or after its
time (at most one fragment, 0.1 s, late); its fragments are stepped one by one, the others run open loop.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from strider.methods.graphs.controller_file import LearnedSkill
from strider.methods.graphs.player import SkillPlayer

SOURCE_MASS = 62.0   # kg, the source's character (seed 002, Sec. 6)


@dataclass(frozen=True)
class PushTestParams:
    first: float = 2.0            # s (control-graphs.md Sec. 5, PT)
    every: float = 2.0            # s
    duration: float = 0.2         # s
    growth: float = 1.0           # N/s: σ = growth · t · (m / SOURCE_MASS)
    max_seconds: float = 1000.0   # a trial ends at its first fall or here

    def __post_init__(self) -> None:
        for name in ("first", "every", "duration", "growth", "max_seconds"):
            if not getattr(self, name) > 0:
                raise ValueError(f"push test: {name} must be positive, got {getattr(self, name)}")


@dataclass(frozen=True)
class PushTrial:
    seed: int
    seconds: float           # t_f: simulated time at the fall, or max_seconds
    fell: bool
    pushes: int
    last_force: float        # N, the last push's size (the one that toppled it, when it fell)


def push_trial(skill: LearnedSkill, seed: int, params: PushTestParams = PushTestParams()) -> PushTrial:
    """One trial of the push test on ``skill`` from its start state."""
    player = SkillPlayer(skill)
    player.start()
    return push_until_fall(player, seed, params)


def push_until_fall(player: SkillPlayer, seed: int, params: PushTestParams = PushTestParams()) -> PushTrial:
    """The push test on a player that has started: it plays, pushed on schedule, until its fall (the player's
    world is left at the fall) or ``max_seconds``."""
    world = player.world
    character = player.runner.character
    torso = character.spec.roles.torso
    scale = character.mass / SOURCE_MASS
    rng = np.random.default_rng(seed)
    next_push, pushes, force = params.first, 0, 0.0
    while world.time < params.max_seconds - 1e-9:
        if world.time >= next_push - 1e-9:
            force = abs(float(rng.normal(0.0, params.growth * world.time * scale)))
            angle = float(rng.uniform(0.0, 2.0 * np.pi))
            world.apply_force(torso, (force * np.cos(angle), force * np.sin(angle), 0.0), duration=params.duration)
            pushes += 1
            next_push += params.every
        if player.step():
            return PushTrial(seed, world.time, True, pushes, force)
    return PushTrial(seed, world.time, False, pushes, force)
