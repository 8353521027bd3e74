"""Hooks into the runner's episode loop: what a benchmark, a rollout or a recorder adds to an episode.

The :class:`~strider.runner.Runner` is the one loop that steps the physics and
calls the controller. Anything else that has to happen during an episode (record
a trace, sum an effort, stop early, watch for something) is an
:class:`EpisodeHook` handed to the runner, called at fixed points of every
control tick::

    begin            time 0 of the episode (after settling)
    before_control   each control tick, before the controller acts (the state the controller sees)
    after_control    each control tick, after the controller acted and the fall judge ruled
    end              once, when the episode ends (also after it stopped early)

A hook that wants the episode to end calls ``runner.stop()``. Hooks are called
in the order given; they are not part of an episode snapshot (they record, they
do not steer).
"""

from __future__ import annotations

import itertools
from typing import Any, Protocol

import numpy as np

from strider.control.step_fsm import StrikeParams
from strider.sim import Character, World


class RunningEpisode(Protocol):
    """What a hook sees of the runner driving the episode (:class:`strider.runner.Runner`)."""

    world: World
    character: Character
    scenario: Any      # the Scenario: its controller, pushes and plan

    @property
    def time(self) -> float: ...

    def facing(self) -> float: ...

    def stop(self) -> None: ...


class EpisodeHook:
    """Override the points you need; the others do nothing."""

    def begin(self, runner: RunningEpisode) -> None:
        pass

    def before_control(self, runner: RunningEpisode, t: float) -> None:
        pass

    def after_control(self, runner: RunningEpisode, t: float) -> None:
        pass

    def end(self, runner: RunningEpisode) -> None:
        pass


class TraceRecorder(EpisodeHook):
    """Per control tick, after the controller: time, centre of mass, its velocity and the facing (root yaw)."""

    def __init__(self) -> None:
        self.samples: dict[str, list] = {"t": [], "com": [], "com_vel": [], "heading": []}

    def after_control(self, runner: RunningEpisode, t: float) -> None:
        ch = runner.character
        self.samples["t"].append(t)
        self.samples["com"].append(ch.com_position())
        self.samples["com_vel"].append(ch.com_velocity())
        self.samples["heading"].append(runner.facing())

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in self.samples.items()}


class FinishLine(EpisodeHook):
    """Ends the episode once the centre of mass is ``distance`` m (horizontally) from where the episode began, the
    same measure as the result's ``distance_m``: a protocol decided at a finish line need not walk on past it."""

    def __init__(self, distance: float):
        self.distance = distance

    def begin(self, runner: RunningEpisode) -> None:
        self._start = runner.character.com_position()[:2].copy()

    def after_control(self, runner: RunningEpisode, t: float) -> None:
        if float(np.linalg.norm(runner.character.com_position()[:2] - self._start)) >= self.distance:
            runner.stop()


class FootfallRecorder(EpisodeHook):
    """Which feet bear weight at each control tick, and every footfall: (time, side, foot position).

    A foot bears weight when its normal force exceeds ``load_fraction`` of body weight (coros-walking.md,
    Sec. 4's foot-strike test); a footfall is a foot going from unloaded to loaded.
    """

    def __init__(self, load_fraction: float = StrikeParams().force_fraction):
        self.load_fraction = load_fraction
        self.loaded: list[tuple[bool, ...]] = []
        self.times: list[float] = []
        self.footfalls: list[tuple[float, str, tuple[float, float, float]]] = []

    def begin(self, runner: RunningEpisode) -> None:
        ch = runner.character
        legs = ch.spec.roles.legs
        self.sides = tuple(legs)
        self._bodies = [[ch.body(b) for b in (legs[s].foot, legs[s].toes) if b] for s in self.sides]
        self._feet = [legs[s].foot for s in self.sides]
        self._threshold = self.load_fraction * ch.mass * runner.world.scene.gravity
        self._was = self._now(ch)

    def _now(self, ch) -> tuple[bool, ...]:
        forces = ch.contact_normal_forces()
        return tuple(bool(forces[b].sum() > self._threshold) for b in self._bodies)

    def after_control(self, runner: RunningEpisode, t: float) -> None:
        ch = runner.character
        now = self._now(ch)
        for side, foot, was, loaded in zip(self.sides, self._feet, self._was, now):
            if loaded and not was:
                self.footfalls.append((t, side, tuple(float(v) for v in ch.body_position(foot))))
        self.times.append(t)
        self.loaded.append(now)
        self._was = now


def step_figures(footfalls, times, loaded, skip_seconds: float, min_flight: float) -> dict:
    """Steps between consecutive footfalls of alternating feet after ``skip_seconds`` (a :class:`FootfallRecorder`'s
    record): step lengths along x, durations, and the share of steps with both feet off the ground for at least
    ``min_flight`` s."""
    falls = [f for f in footfalls if f[0] >= skip_seconds]
    steps = [(a, b) for a, b in itertools.pairwise(falls) if a[1] != b[1]]
    times = np.asarray(times)
    airborne = ~np.asarray(loaded, dtype=bool).any(axis=1) if len(loaded) else np.zeros(0, dtype=bool)
    dt = float(np.median(np.diff(times))) if len(times) > 1 else 0.0
    flights = []
    for a, b in steps:
        inside = (times > a[0]) & (times <= b[0])
        flights.append(bool(airborne[inside].sum() * dt >= min_flight))
    lengths = [b[2][0] - a[2][0] for a, b in steps]
    durations = [b[0] - a[0] for a, b in steps]
    return {"steps": len(steps), "mean_step_length": float(np.mean(lengths)) if steps else None,
            "step_length_sd": float(np.std(lengths)) if steps else None,
            "mean_step_duration": float(np.mean(durations)) if steps else None,
            "flight_share": float(np.mean(flights)) if steps else None}
