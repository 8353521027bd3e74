"""Falling and getting up (Liu et al. 2015, Sec. 6.2: "falls trigger rising"), as control-graphs.md Sec. 4,
"Fall and ragdoll thresholds", decides what the source leaves open:

1. **Ragdoll.** Once a skill falls, the servos, at the get-up's gains (set (a)), track the first pose of the
   get-up that fits how the character lies, face up or face down, while it comes to rest.
2. **Get-up.** At a joint RMS error under 0.3 rad from that pose and a centre-of-mass speed under 0.3 m/s, or
   after 2 s, the one-pass get-up skill plays from wherever the character lies. Its last frame is held for the
   reference's end hold: the stand.
3. A get-up that does not end standing (its own fall test on its last fragment: no body but the feet on the
   ground, the root within 0.3 m of the clip's height) goes back to the ragdoll and tries again, until
   ``give_up_seconds``. Only the end is judged: a character that fell its own way touches the ground where
   the clip does not until it is up. A ragdoll after a failed get-up runs its whole 2 s.

``search`` (strider's, off: not in the source, and not real time) replaces the learned get-up by a search: from
where the ragdoll left the character, original SAMCON reconstructs the get-up clip, and the path it finds is
played (:mod:`strider.methods.graphs.search`). A search that gives up counts as a failed get-up; after
``search_attempts`` the recovery gives up. On 2 workers a search takes about as long as the get-up it finds
(measured: 6-7 s of wall time for 4.7-5.5 s of get-up).

Which get-up fits is measured, not assumed: each get-up's reference says which way its chest faces at its start
(the chest-frame vector that points up there); the one whose vector points most nearly up now is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from strider import quat
from strider.errors import UsageError
from strider.methods.graphs.controller_file import LearnedSkill
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.reference import graph_world
from strider.methods.graphs.samcon import SamconPath
from strider.methods.graphs.search import SearchParams, play_path, search_path
from strider.sim import World

RAGDOLL_POSE_ERROR = 0.3    # rad, joint RMS (control-graphs.md Sec. 4, "Fall and ragdoll thresholds")
RAGDOLL_COM_SPEED = 0.3     # m/s
RAGDOLL_MAX_SECONDS = 2.0   # s
CHEST = "chest"
GETUPS = ("getup_faceup", "getup_facedown")   # the shipped get-ups, face up and face down


@dataclass(frozen=True)
class RecoveryParams:
    pose_error: float = RAGDOLL_POSE_ERROR
    com_speed: float = RAGDOLL_COM_SPEED
    ragdoll_seconds: float = RAGDOLL_MAX_SECONDS
    give_up_seconds: float = 10.0   # P5 (b): standing within 10 s of the fall
    search: bool = False            # strider: each get-up searched by SAMCON from where the character lies
    search_particles: int = 400     # as a one-pass refinement (LearnParams.refine_particles)
    search_sigma: float = 0.15      # rad, on every servo target (LearnParams.refine_sigma)
    search_retries: int = 10        # rollbacks before a search gives up (a learning walk's allows 30)
    search_attempts: int = 3        # searches after one fall, each after the ragdoll again
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("pose_error", "com_speed", "ragdoll_seconds", "give_up_seconds"):
            if not getattr(self, name) > 0:
                raise UsageError(f"recovery: {name.replace('_', ' ')} must be positive, got {getattr(self, name)}")
        if self.search_attempts < 1:
            raise UsageError(f"recovery: search attempts must be at least 1, got {self.search_attempts}")
        _ = self.searching   # the search's own checks

    @property
    def searching(self) -> SearchParams:
        return SearchParams(self.search_particles, self.search_sigma, self.search_retries)


@dataclass(frozen=True)
class RecoveryResult:
    stood: bool              # a get-up played through to its stand
    seconds: float           # from the fall to the end of the stand (or to giving up)
    attempts: int            # get-ups begun
    getups: tuple[str, ...]  # which get-up each attempt took
    ragdoll_seconds: float   # time spent in the ragdoll, all attempts


def joint_rms_error(coordinates: dict, pose: dict) -> float:
    """RMS over joints of the angle between two poses' joint coordinates (ball joints by quaternion)."""
    errors = [float(quat.angle_between(np.asarray(q), np.asarray(pose[j]))) if len(q) == 4
              else float(abs(q[0] - pose[j][0])) for j, q in coordinates.items()]
    return float(np.sqrt(np.mean(np.square(errors))))


def _up_vector(skill: LearnedSkill) -> np.ndarray:
    """The chest-frame vector that points up at the get-up's start (measured in a world of its own)."""
    world = graph_world()
    world.set_integration_state(skill.reference.start_state)
    return world.character().body_rotation(CHEST).T @ np.array([0.0, 0.0, 1.0])


class Recovery:
    """Gets the deepmimic humanoid of ``world`` up after a fall, with the get-up skills given (face up, face
    down, or any one-pass skills that start lying)."""

    def __init__(self, getups: list[LearnedSkill], world: World, params: RecoveryParams = RecoveryParams(),
                 backend: str = "serial", workers: int = 1):
        if not getups:
            raise UsageError("recovery needs at least one get-up skill")
        for skill in getups:
            if skill.reference.cyclic:
                raise UsageError(f"{skill.name} is a cyclic skill; a get-up plays once (getup_faceup, "
                                 "getup_facedown)")
        self.world, self.params = world, params
        self.backend, self.workers = backend, workers
        self.samples = 0   # fragments simulated by searches
        self.players = [SkillPlayer(skill, world=world) for skill in getups]
        self.character = self.players[0].runner.character
        self.on_step: Callable[[World], None] | None = None
        self._up_in_chest = [_up_vector(skill) for skill in getups]
        self._first_pose = [{j: c[0] for j, c in skill.reference.joint_targets.items()} for skill in getups]

    def choose(self) -> int:
        """The get-up whose start lies the way the character lies now."""
        rotation = self.character.body_rotation(CHEST)
        return int(np.argmax([(rotation @ up)[2] for up in self._up_in_chest]))

    def ragdoll(self, which: int, until: float, settle: bool = False) -> None:
        """Track the get-up's first pose until the character is near it and slow, the ragdoll time is up, or
        ``until`` (world time); with ``settle``, for the whole ragdoll time (after a get-up that failed from a
        state that met the thresholds, the same state would fail again)."""
        p = self.params
        self.players[which].runner.apply_gains()   # the get-up's: set (a) (control-graphs.md Sec. 4, "Ragdoll")
        targets = self.players[which].skill.reference.targets[0]
        servo = self.character.servo_targets
        end = min(until, self.world.time + p.ragdoll_seconds)
        while self.world.time < end - 1e-9:
            if not settle and (joint_rms_error(self.character.joint_coordinates(), self._first_pose[which]) < p.pose_error
                    and float(np.linalg.norm(self.character.com_velocity())) < p.com_speed):
                return
            servo[:] = targets
            self._step()

    def _step(self) -> None:
        self.world.step(1)
        if self.on_step is not None:
            self.on_step(self.world)

    def search(self, which: int, attempt: int) -> SamconPath | None:
        """A SAMCON path through the get-up from the current state (the one-pass refinement's search, started where
        the character lies), or None when the search gave up."""
        skill = self.players[which].skill
        path = search_path(skill.reference, np.arange(skill.reference.fragments), self.world, self.params.searching,
                           self.params.seed, attempt, self.backend, self.workers)
        self.samples += path.samples
        return path if path.complete else None

    def replay(self, which: int, path: SamconPath) -> bool:
        """Play a searched path from the current state (the state it was searched from); True if it ends
        standing."""
        return not play_path(self.players[which].skill.reference, self.world, path, self.on_step)

    def get_up(self, which: int, until: float) -> bool:
        """Play the get-up from where the character lies; True if it stands at the end, by ``until``.

        Only the end is judged (the get-up's own fall test on its last fragment, the stand): a character that
        fell its own way touches the ground where the clip does not until it is up."""
        player = self.players[which]
        player.runner.on_step = self.on_step
        player.begin()
        fell = True
        while not player.finished:
            if self.world.time >= until - 1e-9:
                return False
            fell = player.step()
        return not fell

    def recover(self) -> RecoveryResult:
        """From a fall (now), ragdoll and get up, again after a failed get-up, until standing or out of time."""
        start = self.world.time
        until = start + self.params.give_up_seconds
        chosen, ragdolled = [], 0.0
        while self.world.time < until - 1e-9 and not (self.params.search
                                                      and len(chosen) >= self.params.search_attempts):
            which = self.choose()
            chosen.append(self.players[which].skill.name)
            before = self.world.time
            self.ragdoll(which, until, settle=len(chosen) > 1)
            ragdolled += self.world.time - before
            if self.params.search:
                while self.world.pending_forces and self.world.time < until - 1e-9:   # a search starts unpushed
                    self._step()
                path = self.search(which, len(chosen)) if self.world.time < until - 1e-9 else None
                if path is not None and self.replay(which, path) and self.world.time <= until + 1e-9:
                    return RecoveryResult(True, self.world.time - start, len(chosen), tuple(chosen), ragdolled)
                continue
            if self.get_up(which, until):
                return RecoveryResult(True, self.world.time - start, len(chosen), tuple(chosen), ragdolled)
        return RecoveryResult(False, self.world.time - start, len(chosen), tuple(chosen), ragdolled)
