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

from typing import Any, Protocol

import numpy as np

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
