"""Headless skill rollouts, their end conditions (torres-skills.md, P6) and CMA costs (E14, E15, Decisions 19-20).

A rollout runs a skill from its start pose (optionally perturbed) and samples,
every control step, what the checks and costs need: the torso's front and up
vectors, the pelvis height and travel, the heights of named bodies and the joint effort.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from strider.characters import load_character
from strider.methods.skills.controller import SkillController
from strider.methods.skills.skill import Check, CostTerm, Skill
from strider.runner.hooks import EpisodeHook
from strider.runner.scenario import Runner, Scenario
from strider.sim import CharacterPlacement, Scene, World

DIRECTION = {"up": np.array([0.0, 0.0, 1.0]), "down": np.array([0.0, 0.0, -1.0])}
AXIS = {"front": 0, "up": 2}   # columns of the torso's rotation matrix: its x (front) and z (up) axes


@dataclass
class Trace:
    t: np.ndarray            # s since the skill started
    front: np.ndarray        # torso x axis (world), per sample
    up: np.ndarray           # torso z axis (world)
    pelvis: np.ndarray       # pelvis height above the ground, m
    heights: dict[str, np.ndarray]
    effort: float            # sum over samples of |servo torque|_1 * control period (E_torque, Decision 19)
    finite: bool
    heading: float = 0.0     # rad, the character's yaw at the start: its frame's forward and lateral axes
    travel: np.ndarray | None = None   # m, the pelvis's displacement along the start's forward axis since t = 0

    def vector(self, which: str) -> np.ndarray:
        return self.front if which == "front" else self.up

    def pitch(self) -> np.ndarray:
        """The torso's forward rotation about the start's lateral axis since t = 0, rad, per sample.

        Summed from the rotation between consecutive samples, so it counts whole turns: standing up is
        0, a roll over the head onto the back about +3/2 pi, sitting down backwards onto it about -pi/2.
        """
        left = np.cross(self.up, self.front)
        turns = Rotation.from_matrix(np.stack([self.front, left, self.up], axis=2))
        lateral = np.array([-np.sin(self.heading), np.cos(self.heading), 0.0])
        # Rotating about +y turns up towards forward (x): forward pitch is positive about the lateral axis.
        steps = (turns[1:] * turns[:-1].inv()).as_rotvec() @ lateral
        return np.concatenate([[0.0], np.cumsum(steps)])


class _SkillSampler(EpisodeHook):
    """What the checks and costs need, sampled before every control tick and once at the end."""

    def __init__(self, bodies: tuple[str, ...]):
        self.bodies = bodies
        self.ts: list[float] = []
        self.fronts: list[np.ndarray] = []
        self.ups: list[np.ndarray] = []
        self.pelvis: list[float] = []
        self.heights: list[list[float]] = []
        self.ahead: list[float] = []
        self.effort = 0.0

    def begin(self, runner: Runner) -> None:
        ch = runner.character
        self.t0 = runner.world.time
        self.roles = ch.spec.roles
        self.servos = np.concatenate([j.servos for j in ch.joints.values()])
        heading = runner.scenario.controller.heading
        self.forward = np.array([np.cos(heading), np.sin(heading)])

    def _add_effort(self, runner: Runner) -> None:
        """The joint effort of the control period just stepped (E_torque, Decision 19)."""
        if self.ts:
            ch, period = runner.character, runner.scenario.controller.control_period
            self.effort += float(np.abs(ch.servo_forces[self.servos]).sum()) * period

    def _sample(self, runner: Runner) -> None:
        ch = runner.character
        rot = ch.body_rotation(self.roles.torso)
        pelvis = ch.body_position(self.roles.root)
        self.ts.append(runner.world.time - self.t0)
        self.fronts.append(rot[:, 0].copy())
        self.ups.append(rot[:, 2].copy())
        self.pelvis.append(float(pelvis[2]))
        self.ahead.append(float(pelvis[:2] @ self.forward))
        self.heights.append([float(ch.body_position(b)[2]) for b in self.bodies])

    def before_control(self, runner: Runner, t: float) -> None:
        self._add_effort(runner)
        self._sample(runner)

    def end(self, runner: Runner) -> None:
        self._add_effort(runner)
        if runner.world.is_finite() and runner.unstable is None:
            self._sample(runner)


def rollout(skill: Skill, seconds: float | None = None, perturb: float = 0.0, seed: int | None = None,
            bodies: tuple[str, ...] = (), cache: dict | None = None) -> Trace:
    """Run ``skill`` headless through the shared runner. ``cache`` (a worker's dict) keeps the compiled world and
    settled start poses.

    The settled start depends only on the start pose, the t = 0 targets and the
    perturbation, so candidates that differ in later knots or axes share it.
    """
    if cache is None:
        cache = {}
    world = cache.get(("world", skill.character))
    if world is None:
        # Parsing the character file costs a fifth of a 3 s rollout, so a worker reads it once.
        spec = cache[("spec", skill.character)] = load_character(skill.character)
        world = cache[("world", skill.character)] = World(Scene((CharacterPlacement(spec),)))
        cache[("initial", skill.character)] = world.snapshot()
    world.restore(cache[("initial", skill.character)])
    controller = SkillController(skill, perturb=perturb, perturb_seed=seed)
    first = skill.actions[0].states[0]
    key = ("start", skill.start, skill.gains.__repr__(), first.pose, perturb, seed,
           tuple((t.joints, t.values[0], t.axis if t.values[0] else None) for t in first.joints))
    seconds = skill.seconds if seconds is None else seconds
    per = max(1, round(controller.control_period / world.timestep))
    ticks = round(seconds / controller.control_period)
    sampler = _SkillSampler(bodies)
    scenario = Scenario(world.scene, controller, seconds=ticks * per * world.timestep, start=cache.get(key))
    runner = Runner(scenario, hooks=(sampler,), world=world)
    runner.start()
    if key not in cache:
        cache[key] = world.snapshot()
    runner.advance(scenario.seconds)
    runner.finish()
    h = np.asarray(sampler.heights).reshape(len(sampler.ts), len(bodies))
    return Trace(np.asarray(sampler.ts), np.asarray(sampler.fronts), np.asarray(sampler.ups),
                 np.asarray(sampler.pelvis), {b: h[:, k] for k, b in enumerate(bodies)}, sampler.effort,
                 world.is_finite() and runner.unstable is None, controller.heading, np.asarray(sampler.ahead) - sampler.ahead[0])


def angles(vectors: np.ndarray, direction: str) -> np.ndarray:
    return np.arccos(np.clip(vectors @ DIRECTION[direction], -1.0, 1.0))


def _within(trace: Trace, window: tuple[float, float]) -> np.ndarray:
    """Samples with t in the window, ends included (times are sums of control periods, hence the tolerance)."""
    return (trace.t >= window[0] - 1e-9) & (trace.t <= window[1] + 1e-9)


def check_passes(check: Check, trace: Trace) -> bool:
    inside = _within(trace, check.window)
    if not inside.any() or not trace.finite:
        return False
    ok = np.ones(int(inside.sum()), dtype=bool)
    if check.direction is not None:
        ok &= angles(trace.vector(check.vector)[inside], check.direction) <= check.within
    if check.pelvis_below is not None:
        ok &= trace.pelvis[inside] < check.pelvis_below
    if check.pitch_above is not None:
        ok &= trace.pitch()[inside] > check.pitch_above
    return bool(ok.all() if check.mode == "all" else ok.any())


def reaches_end(skill: Skill, trace: Trace) -> bool:
    """All of the skill's end checks pass (P6)."""
    return all(check_passes(c, trace) for c in skill.checks)


def cost_bodies(skill: Skill) -> tuple[str, ...]:
    if skill.optimize is None:
        return ()
    return tuple(dict.fromkeys(b for term in skill.optimize.cost for b in term.bodies))


def cost(terms: tuple[CostTerm, ...], trace: Trace) -> float:
    """Ka E_height + Kb E_torso + Kc E_torque, term by term as the skill lists them (Decisions 19-20)."""
    if not trace.finite:
        return float("inf")
    total = 0.0
    for term in terms:
        if term.term == "angle" and term.window is not None:
            a = angles(trace.vector(term.vector)[_within(trace, term.window)], term.direction)
            total += term.weight * float(a.min() if term.reduce == "min" else a.mean())
        elif term.term == "angle":
            i = int(np.argmin(np.abs(trace.t - term.at)))
            total += term.weight * float(angles(trace.vector(term.vector)[i:i + 1], term.direction)[0])
        elif term.term == "height":
            total += term.weight * float(sum(trace.heights[b].mean() for b in term.bodies))
        elif term.term == "pitch":
            pitch = trace.pitch()[_within(trace, term.window)]
            total += term.weight * max(0.0, term.target - float(pitch[-1] - pitch[0]))
        else:
            total += term.weight * trace.effort
    return total
