"""Batched rollouts: many independent continuations of one episode, on resident workers.

A sampling or planning method asks the same question thousands of times: from this snapshot, with these
controls (or these controller parameters), for this long, where does the character end up, what does it
cost, and does it fall? :class:`BatchRollouts` answers a list of such :class:`RolloutTask` at once on an
:class:`~strider.parallel.Executor`:

* **Resident workers.** Each worker builds the scenario of the :class:`RolloutSpec` once (model, character,
  controller) and only restores snapshots into it afterwards.
* **Open loop** (``controls`` given): one row of controls per physics step (servo targets or torques, by
  actuator id), run by MuJoCo's own rollout with no Python per step (:mod:`strider.sim.rollout`). The
  controller does not run; the end snapshot carries the start's controller state unchanged.
* **Closed loop** (``controls`` None): the scenario's controller runs, with ``params`` overriding its
  parameters (``"params.style.step_width": 0.12``; see :func:`override`).
* **Features** are named (:data:`FEATURES`), sampled every ``sample_every`` seconds of the rollout and at its
  end; the spec's ``cost`` (a module-level function, so it pickles) turns them into one number.
* **Deterministic.** A rollout depends only on its task and the spec, never on which worker ran it or what it
  ran before, so results are bit-identical for any number of workers and on every backend. Anything random
  belongs to the caller, who draws the tasks.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from strider import quat
from strider.control.falls import FallJudge
from strider.errors import UsageError
from strider.parallel.executor import DEFAULT_BACKEND, ClosedOnExit, Executor
from strider.progress import progress_bar
from strider.runner.scenario import EpisodeSnapshot, Runner, Scenario
from strider.sim import Character, World
from strider.sim.rollout import OpenLoop

FeatureFn = Callable[[World, Character], Any]

FEATURES: dict[str, FeatureFn] = {
    "time": lambda w, c: w.time,
    "com": lambda w, c: c.com_position(),
    "com_velocity": lambda w, c: c.com_velocity(),
    "root_position": lambda w, c: c.body_position(c.spec.roles.root),
    "root_quat": lambda w, c: c.body_quat(c.spec.roles.root),
    "heading": lambda w, c: quat.yaw(c.body_quat(c.spec.roles.root)),
    "qpos": lambda w, c: c.qpos.copy(),
    "qvel": lambda w, c: c.qvel.copy(),
    "contacts": lambda w, c: w.contact_count,
}


def check_features(names: Iterable[str]) -> tuple[str, ...]:
    names = tuple(names)
    unknown = [n for n in names if n not in FEATURES]
    if unknown:
        raise UsageError(f"unknown rollout feature {unknown[0]!r}; known features: {', '.join(FEATURES)}")
    return names


def override(target: Any, changes: Mapping[str, Any]) -> None:
    """Set dotted parameter paths on a controller: ``{"params.style.step_width": 0.12}``; ``command`` is handed
    over with ``set_command``. Frozen dataclasses on
    the way are replaced by edited copies; an unknown name is a usage error naming it."""
    for path, value in changes.items():
        if path == "command" and hasattr(target, "set_command"):
            target.set_command(value)   # a command is handed over, so the controller can take its heading
        else:
            _replaced(target, path.split("."), value, path)


def _replaced(obj: Any, parts: list[str], value: Any, path: str) -> Any:
    head = parts[0]
    if isinstance(obj, Mapping):
        if head not in obj:
            raise UsageError(f"no parameter {path!r}: {head!r} is not one of {', '.join(map(str, obj))}")
        new = value if len(parts) == 1 else _replaced(obj[head], parts[1:], value, path)
        return {**obj, head: new}
    if not hasattr(obj, head):
        raise UsageError(f"no parameter {path!r}: {type(obj).__name__} has no {head!r}")
    new = value if len(parts) == 1 else _replaced(getattr(obj, head), parts[1:], value, path)
    if dataclasses.is_dataclass(obj) and obj.__dataclass_params__.frozen:
        return dataclasses.replace(obj, **{head: new})
    setattr(obj, head, new)
    return obj


@dataclass(frozen=True)
class RolloutSpec:
    """What every worker builds once, and what it reports of each rollout.

    ``scenario`` is a picklable zero-argument callable (a module-level function, or a ``functools.partial`` of
    one) returning the :class:`Scenario` to branch: its scene, character and controller. Its ``seconds`` bound
    how far any rollout may reach into the episode.
    """

    scenario: Callable[[], Scenario]
    features: tuple[str, ...] = ("com", "com_velocity")
    sample_every: float = 0.0                                   # s; 0: features at the end only
    cost: Callable[[Mapping[str, np.ndarray]], float] | None = None   # from the sampled features; None: 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "features", check_features(self.features))
        if not (self.sample_every >= 0 and math.isfinite(self.sample_every)):
            raise UsageError(f"sample_every must be a number of seconds >= 0, got {self.sample_every}")

    def start(self, seconds: float = 0.0) -> EpisodeSnapshot:
        """A snapshot of the scenario's episode after ``seconds`` (run here, in this process): a first task's
        start."""
        runner = Runner(self.scenario())
        runner.start()
        if seconds > 0:
            runner.advance(seconds)
        return runner.snapshot()


@dataclass(frozen=True)
class RolloutTask:
    start: EpisodeSnapshot
    seconds: float
    controls: np.ndarray | None = field(default=None, repr=False)   # (steps, actuators): open loop
    params: Mapping[str, Any] | None = None                         # closed loop: parameter overrides


@dataclass(frozen=True)
class RolloutOutcome:
    end: EpisodeSnapshot
    features: dict[str, np.ndarray]   # each (samples, ...): every sample_every seconds, the last at the end
    cost: float
    fell: bool                        # fallen by the end (open loop: judged at each sample)
    steps: int                        # physics steps run


class RolloutWorker:
    """A worker's resident context: the scenario's runner, built once."""

    def __init__(self, spec: RolloutSpec):
        self.spec = spec
        self.runner = Runner(spec.scenario())
        self.runner.start()
        self.world, self.character = self.runner.world, self.runner.character
        self.judge = FallJudge(self.world, self.character)   # measured on the fresh, standing character
        self.open_loop = OpenLoop(self.world)

    def run(self, task: RolloutTask) -> RolloutOutcome:
        spec, runner, world = self.spec, self.runner, self.world
        dt = world.timestep
        check_task(task, self.open_loop.controls_width, dt, round(runner.scenario.seconds / dt))
        total = round(task.seconds / dt)
        every = round(spec.sample_every / dt) if spec.sample_every > 0 else total
        every = max(every, 1)
        cuts = list(range(every, total, every)) + [total]
        samples: dict[str, list] = {name: [] for name in spec.features}
        fell = False
        if task.controls is not None:
            controls = self.open_loop.check(task.controls)
            world.restore(task.start.physics)
            done = 0
            for cut in cuts:
                self.open_loop.run(controls[done:cut])
                done = cut
                self._sample(samples)
                fell = fell or self.judge()
            end = dataclasses.replace(task.start, physics=world.snapshot(), steps=task.start.steps + total)
        else:
            runner.restore(task.start)
            if task.params:
                override(runner.scenario.controller, task.params)
            done = 0
            for cut in cuts:
                runner.advance((cut - done) * dt)
                done = cut
                self._sample(samples)
            fell = runner.fall_time is not None or runner.unstable is not None or not world.is_finite()
            end = runner.snapshot()
        features = {name: np.asarray(values) for name, values in samples.items()}
        cost = float(spec.cost(features)) if spec.cost is not None else 0.0
        return RolloutOutcome(end, features, cost, bool(fell), total)

    def _sample(self, samples: dict[str, list]) -> None:
        for name, values in samples.items():
            values.append(FEATURES[name](self.world, self.character))


def check_task(task: RolloutTask, width: int, dt: float, length: int) -> None:
    """Refuse a task that cannot run on a world of ``width`` actuators stepping ``dt`` s, in a scenario of ``length``
    steps: a one-line usage error naming what is wrong."""
    if not isinstance(task.start, EpisodeSnapshot):
        raise UsageError(f"a rollout starts from an EpisodeSnapshot, got {type(task.start).__name__}")
    if not (task.seconds >= 0 and math.isfinite(task.seconds)):
        raise UsageError(f"a rollout's seconds must be a number >= 0, got {task.seconds}")
    steps = round(task.seconds / dt)
    if task.controls is not None:
        shape = np.shape(task.controls)
        if shape != (steps, width):
            raise UsageError(f"open-loop controls must have shape ({steps}, {width}) for a {task.seconds:g} s "
                             f"rollout (one row per {dt:g} s step, one value per actuator), got {shape}")
        if task.params:
            raise UsageError("a rollout takes open-loop controls or controller parameters, not both")
    elif task.start.steps + steps > length:
        raise UsageError(f"a {task.seconds:g} s rollout from {task.start.steps * dt:g} s runs past the scenario's "
                         f"{length * dt:g} s; build the scenario longer")


CHUNKS_PER_WORKER = 4   # tasks travel in this many chunks per worker: fewer messages, and still balanced


def _run_chunk(tasks: list[RolloutTask], worker: RolloutWorker) -> list[RolloutOutcome]:
    return [worker.run(task) for task in tasks]


class BatchRollouts(ClosedOnExit):
    """Runs :class:`RolloutTask` lists on resident workers; results come back in the tasks' order.

    >>> with BatchRollouts(spec, backend="processes", workers=2) as batch:   # doctest: +SKIP
    ...     outcomes = batch.run([RolloutTask(start, 0.5, controls=u) for u in candidates])
    """

    def __init__(self, spec: RolloutSpec, backend: str = DEFAULT_BACKEND, workers: int | None = None):
        self.spec = spec
        self.executor = Executor(backend, workers, setup=partial(RolloutWorker, spec))
        self._shape: tuple[int, float, int] | None = None   # actuators, time step, steps in the scenario

    def check(self, task: RolloutTask) -> None:
        """Refuse, here and with one line, a task no worker could run."""
        if self._shape is None:
            scenario = self.spec.scenario()
            world = World(scenario.scene)
            self._shape = (int(OpenLoop(world).controls_width), world.timestep, round(scenario.seconds / world.timestep))
        check_task(task, *self._shape)

    def run(self, tasks: Iterable[RolloutTask], progress: bool = False,
            description: str = "rollouts") -> list[RolloutOutcome]:
        tasks = list(tasks)
        for task in tasks:
            self.check(task)
        outcomes: list[RolloutOutcome | None] = [None] * len(tasks)
        with progress_bar(len(tasks), description, unit="rollout", enabled=progress) as bar:
            size = max(1, math.ceil(len(tasks) / (CHUNKS_PER_WORKER * self.workers)))
            chunks = [tasks[i:i + size] for i in range(0, len(tasks), size)]
            for index, chunk in self.executor.map(_run_chunk, chunks):
                outcomes[index * size:index * size + len(chunk)] = chunk
                bar.update(len(chunk))
        return outcomes   # type: ignore[return-value]

    @property
    def workers(self) -> int:
        return self.executor.workers

    def close(self) -> None:
        self.executor.close()
