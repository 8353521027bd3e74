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
from strider.methods.graphs.search import SearchParams, play_path, search_path

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


# --- the kick's push: one push of a fixed size per pass ----------------------------------------------
@dataclass(frozen=True)
class CyclePushParams:
    force: float = 400.0     # N, on the chest (seed 002, Sec. 6.1: the kick withstands 400 N for 0.2 s); 0: none
    duration: float = 0.2    # s
    cycles: int = 10         # passes of the skill per trial (control-graphs spec, P4)

    def __post_init__(self) -> None:
        if not self.force >= 0:
            raise ValueError(f"cycle push: force must be >= 0 (0: unpushed), got {self.force}")
        if not self.duration > 0:
            raise ValueError(f"cycle push: duration must be positive, got {self.duration}")
        if self.cycles < 1:
            raise ValueError(f"cycle push: cycles must be at least 1, got {self.cycles}")


@dataclass(frozen=True)
class CyclePushTrial:
    seed: int
    fell: bool
    cycles: int          # passes ended without a fall
    seconds: float       # simulated time at the fall or the last pass's end
    gave_up: bool        # a search gave up (counted as a fall, where the graph runner counts one too)
    searched_fragments: int


def peak_fragment(skill: LearnedSkill) -> int:
    """The fragment at whose start a foot is highest in the skill's unperturbed pass from its start state: the
    peak of a kick, where the source pushes it (control-graphs spec, P4: "at the airborne/peak-kick phase")."""
    player = SkillPlayer(skill)
    player.start()
    feet = [leg.foot for leg in player.runner.character.spec.roles.legs.values()]
    heights = []
    for _ in range(skill.reference.fragments):
        heights.append(max(float(player.world.body_position(foot)[2]) for foot in feet))
        if player.step():
            break
    return int(np.argmax(heights))


def cycle_push_trial(skill: LearnedSkill, seed: int, push_fragment: int, params: CyclePushParams = CyclePushParams(),
                     search: SearchParams | None = None, backend: str = "serial", workers: int = 1) -> CyclePushTrial:
    """``params.cycles`` passes of a skill (the cycles of a cyclic one; a one-pass skill's passes each from where
    the last one ended), with one push per pass at the start of fragment ``push_fragment``, in a random horizontal
    direction. The pushed fragments play under the skill's policies; with ``search`` (strider's), every other
    fragment of a pass is searched from the state the character is in (:mod:`strider.methods.graphs.search`) and
    its path played."""
    player = SkillPlayer(skill)
    player.start()
    world, reference = player.world, skill.reference
    torso = player.runner.character.spec.roles.torso
    rng = np.random.default_rng(seed)
    searched, searches = 0, 0

    def run(stop: int) -> tuple[bool, bool]:
        """Play from the player's fragment to ``stop`` (exclusive): (fell, a search gave up)."""
        nonlocal searched, searches
        count = stop - player.fragment
        if search is None or count <= 0:
            for _ in range(count):   # counted: a cyclic skill's fragment index wraps to 0 at the cycle's end
                if player.step():
                    return True, False
            return False, False
        path = search_path(reference, np.arange(player.fragment, stop), world, search, seed, searches, backend,
                           workers)
        searches += 1
        play_path(reference, world, path)
        searched += len(path.fragments)
        player.fragment = (player.fragment + len(path.fragments)) % reference.fragments
        player.finished = player.fragment == 0 and not reference.cyclic
        return not path.complete, not path.complete

    for cycle in range(params.cycles):
        player.begin()
        fell, gave_up = run(push_fragment)
        if not fell:
            angle = float(rng.uniform(0.0, 2.0 * np.pi))
            world.apply_force(torso, (params.force * np.cos(angle), params.force * np.sin(angle), 0.0),
                              duration=params.duration)
            push_end = world.time + params.duration
            while world.time < push_end - 1e-9 and not fell:
                fell = player.step()
                if player.fragment == 0:   # the pass is over
                    break
            if not fell and player.fragment != 0:
                fell, gave_up = run(reference.fragments)
        if fell:
            return CyclePushTrial(seed, True, cycle, world.time, gave_up, searched)
    return CyclePushTrial(seed, False, params.cycles, world.time, False, searched)
