"""Several characters playing learned skills in one scene (Liu et al. 2015, Sec. 6.2 and Fig. 11: characters that
charge each other).

Each walker is a copy of the deepmimic character with its own skill. The walkers stand on a circle facing its
centre, each in its skill's start state turned and moved there, so they walk at each other. Their fragments need
not line up: the scene runs, as one open-loop rollout, up to the next moment any walker ends a fragment; there that
walker reads its own 18-D state, takes its policy's action and starts its next fragment. A walker that falls (the
learner's own test, :func:`strider.methods.graphs.scoring.fell`) holds its last targets from then on; once every
walker is down the scene starts over.

With phase reset (where a skill was learned with it), a walker's fragment that the reference ends with a foot
strike ends when that walker's foot comes down, early or up to LATE_HOLD late, as a lone player's does
(:mod:`strider.methods.graphs.fragments`); while any walker waits for a strike the scene steps one step at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from strider.errors import UsageError, require_finite
from strider.methods.graphs.controller_file import LearnedSkill
from strider.methods.graphs.features import facing_yaw, features, read
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.reference import GAIN_SETS, TIMESTEP
from strider.methods.graphs.scoring import fell, summarize
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.character import Character
from strider.sim.dynamics import Dynamics
from strider.sim.rollout import OpenLoop


@dataclass(frozen=True)
class GroupResult:
    seconds: float                 # simulated time
    restarts: int                  # times every walker was down and the scene started over
    falls: int                     # walkers that fell, over all the scene's starts
    fragments: int                 # fragments played, over all walkers


class _Walker:
    """One character of the scene and where it is in its skill."""

    def __init__(self, skill: LearnedSkill, template: FragmentRunner, character: Character, heading: float,
                 spot: tuple[float, float]):
        self.skill, self.template, self.character = skill, template, character
        self.heading, self.spot = heading, spot
        self.gains = character.servo_gain_table(GAIN_SETS[skill.reference.gains])
        # the template's actuator columns -> this character's, joint by joint
        self.columns = np.empty(template.world.model.nu, dtype=int)
        for name, joint in template.character.joints.items():
            self.columns[joint.servos] = character.joints[name].servos
        self.fragment, self.rows, self.cursor = 0, np.empty((0, len(self.columns))), 0
        self.start_frame = None
        self.down = False
        self.strike: list[int] | None = None   # [the foot whose strike ends the fragment playing], phase reset
        self.last_row = np.empty((0, len(self.columns)))   # the last targets of its last fragment, held once down

    def place(self) -> None:
        """In its skill's start state, turned to its heading and moved to its spot."""
        self.character.apply_servo_gains(self.gains)
        self.template.world.set_integration_state(self.skill.reference.start_state)
        root, orientation = self.template.character.root_pose()
        turn = self.heading - facing_yaw(orientation)
        # about the world's origin, then along the ground so that the start's root lands over the spot
        c, s = math.cos(turn), math.sin(turn)
        shift = (self.spot[0] - (c * root[0] - s * root[1]), self.spot[1] - (s * root[0] + c * root[1]))
        self.character.take_state(self.template.character, turn, shift)
        self.fragment, self.rows, self.cursor, self.down = 0, np.empty((0, len(self.columns))), 0, False
        self.start_frame, self.strike = None, None

    @property
    def remaining(self) -> int:
        return len(self.rows) - self.cursor


class GroupPlayer:
    """``skills`` played by as many deepmimic characters in one world, on a circle of ``radius`` m facing its
    centre, with phase reset where a skill was learned with it (``phase_reset=False`` plays without)."""

    def __init__(self, skills: Sequence[LearnedSkill], radius: float, phase_reset: bool = True):
        if not skills:
            raise UsageError("a group scene needs at least one skill")
        require_finite("the group's circle radius", radius, "m", positive=True)
        once = [skill.name for skill in skills if not skill.reference.cyclic]
        if once:
            raise UsageError(f"a group scene plays cyclic skills; {', '.join(sorted(set(once)))} plays once")
        templates = {}
        for skill in skills:
            if skill.name not in templates:
                templates[skill.name] = FragmentRunner(skill.reference, joints=skill.joints)
        spec = next(iter(templates.values())).character.spec
        angles = [2.0 * math.pi * i / len(skills) for i in range(len(skills))]
        placements = tuple(CharacterPlacement(spec, name=f"walker{i}", x=radius * math.cos(a), y=radius * math.sin(a),
                                              heading=a + math.pi) for i, a in enumerate(angles))
        self.world = World(Scene(placements, timestep=TIMESTEP))
        self.phase_reset = phase_reset
        self.dynamics = Dynamics(self.world)
        self._open_loop = OpenLoop(self.world)
        self.on_step: Callable[[World], None] | None = None   # called after every physics step (a video)
        self.walkers = [_Walker(skill, templates[skill.name], self.world.character(p.name), p.heading, (p.x, p.y))
                        for skill, p in zip(skills, placements)]
        covered = np.concatenate([w.columns for w in self.walkers])
        if sorted(covered.tolist()) != list(range(self.world.model.nu)):
            raise UsageError("the group scene's actuators are not the walkers' servos one for one")

    def start(self) -> None:
        """Every walker in its start state at its spot (the world's clock runs on)."""
        for walker in self.walkers:
            walker.place()
        self.world.forward()

    def _begin_fragment(self, walker: _Walker) -> None:
        readout = read(walker.character, self.dynamics)
        previous = (walker.fragment - 1) % walker.skill.reference.fragments
        if walker.start_frame is not None and not walker.down:
            walker.down = fell(summarize(readout, walker.start_frame), walker.skill.reference.ends[previous],
                               walker.character.non_foot_contact())
        walker.strike = None
        if walker.down:   # hold the last targets for a fragment's length
            length = walker.skill.reference.fragment_rows(previous)
            walker.rows = np.repeat(walker.last_row, length.stop - length.start, axis=0)
        else:
            action = walker.skill.playing[walker.fragment].mean(features(readout))
            walker.rows = walker.template.rows(walker.fragment, action)
            foot = walker.skill.reference.strike_foot(walker.fragment) if self.phase_reset else None
            if foot is not None:
                walker.rows = walker.template.with_late_hold(walker.rows)
                walker.strike = [walker.character.body(foot)]
            walker.last_row = walker.rows[-1:]
            walker.fragment = (walker.fragment + 1) % walker.skill.reference.fragments
        walker.start_frame = readout.facing
        walker.cursor = 0

    def _strikes(self) -> bool:
        """End the fragment of every walker whose awaited foot has come down; True if any walker is waiting for
        a strike still (the scene then steps one step at a time)."""
        waiting = False
        for walker in self.walkers:
            if walker.strike is None:
                continue
            if walker.character.contact_normal_force(walker.strike) > walker.template.strike_force:
                walker.rows, walker.strike = walker.rows[:walker.cursor], None
            else:
                waiting = True
        return waiting

    def run(self, seconds: float) -> GroupResult:
        """Play for ``seconds`` of simulated time from the start, starting over whenever every walker is down."""
        require_finite("the scene's length", seconds, "s", positive=True)
        self.start()
        simulated, restarts, falls, fragments = 0.0, 0, 0, 0
        controls = np.empty((0, self.world.model.nu))
        while simulated < seconds - 1e-9:
            for walker in self.walkers:
                if walker.remaining == 0:
                    was_down = walker.down
                    self._begin_fragment(walker)
                    falls += walker.down and not was_down
                    fragments += not walker.down
            if all(w.down for w in self.walkers):
                restarts += 1
                self.start()
                continue
            waiting = self._strikes()
            if any(w.remaining == 0 for w in self.walkers):   # a strike ended a fragment: the next one begins
                continue
            steps = min(min(w.remaining for w in self.walkers), round((seconds - simulated) / TIMESTEP))
            if waiting:
                steps = min(steps, 1)
            if steps <= 0:
                break
            if controls.shape[0] != steps:
                controls = np.empty((steps, self.world.model.nu))
            for walker in self.walkers:
                controls[:, walker.columns] = walker.rows[walker.cursor:walker.cursor + steps]
                walker.cursor += steps
            self._play(controls)
            simulated += steps * TIMESTEP
        return GroupResult(simulated, restarts, falls, fragments)

    def _play(self, controls: np.ndarray) -> None:
        """The rows as one rollout, or step by step while something watches every step."""
        if self.on_step is None:
            self._open_loop.run(controls)
            return
        for row in controls:
            for walker in self.walkers:
                walker.character.servo_targets[walker.columns] = row[walker.columns]
            self.world.step(1)
            self.on_step(self.world)
