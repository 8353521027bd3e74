"""Batched rollouts (issue 13, part 6): open loop through MuJoCo's rollout, closed loop through the runner, on
resident workers; the same results bit for bit on every backend and worker count."""

from __future__ import annotations

import hashlib
from functools import partial

import numpy as np
import pytest

from strider.bench.rollout import forward_progress_cost, walking_scenario
from strider.characters import load_character
from strider.control.controller import LocomotionCommand
from strider.errors import UsageError
from strider.runner import Runner
from strider.runner.batch import BatchRollouts, RolloutSpec, RolloutTask, override
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.rollout import OpenLoop, bare_rollouts

SPEC = RolloutSpec(partial(walking_scenario, "bipv3", "gbwc", 0.8, 20.0), features=("com", "heading"),
                   sample_every=0.1, cost=forward_progress_cost)


@pytest.fixture(scope="module")
def start():
    return SPEC.start(1.0)


def _noise_controls(start, seconds: float, noise: float, seed: int, n: int) -> list[np.ndarray]:
    world = World(SPEC.scenario().scene)
    world.restore(start.physics)
    steps = round(seconds / world.timestep)
    targets = world.character().servo_targets.copy()
    rng = np.random.default_rng(seed)
    return [targets + noise * rng.standard_normal((steps, len(targets))) for _ in range(n)]


def _tasks(start) -> list[RolloutTask]:
    open_loop = [RolloutTask(start, 0.3, controls=c) for c in _noise_controls(start, 0.3, 0.05, 1, 3)]
    closed_loop = [RolloutTask(start, 0.5, params={"command": LocomotionCommand(speed=s)}) for s in (0.5, 0.9, 1.2)]
    return open_loop + closed_loop


def _digest(outcomes) -> str:
    h = hashlib.sha256()
    for o in outcomes:
        h.update(o.end.physics.physics.tobytes())
        h.update(o.end.controller)
        for name in sorted(o.features):
            h.update(np.ascontiguousarray(o.features[name], dtype=float).tobytes())
        h.update(repr((o.cost, o.fell, o.steps)).encode())
    return h.hexdigest()


def _run(start, backend: str, workers: int) -> str:
    with BatchRollouts(SPEC, backend=backend, workers=workers) as batch:
        return _digest(batch.run(_tasks(start)))


def test_open_loop_rollout_is_stepping_without_python_per_step():
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    begin = world.snapshot()
    targets = world.character().servo_targets.copy()
    controls = targets + 0.05 * np.random.default_rng(0).standard_normal((400, len(targets)))
    open_loop = OpenLoop(world)
    open_loop.run(controls)
    whole = world.state_vector()
    world.restore(begin)
    open_loop.run(controls[:150])
    open_loop.run(controls[150:])
    assert np.array_equal(world.state_vector(), whole)
    world.restore(begin)
    for row in controls:
        world.character().servo_targets[:] = row
        world.step(1)
    assert np.array_equal(world.state_vector(), whole)
    world.restore(begin)
    bare = bare_rollouts(world, np.stack([controls, controls[::-1]]), threads=2)
    open_loop.run(controls)
    assert np.array_equal(world.full_physics(), bare[0]) and not np.array_equal(bare[0], bare[1])


def test_open_loop_rows_are_stable_pd_targets_for_an_spd_character():
    world = World(Scene((CharacterPlacement(load_character("bipv3", actuation="spd")),)))
    begin = world.snapshot()
    targets = world.character().servo_targets.copy()
    controls = targets + 0.05 * np.random.default_rng(1).standard_normal((200, len(targets)))
    OpenLoop(world).run(controls)
    whole = world.state_vector()
    world.restore(begin)
    for row in controls:
        world.character().servo_targets[:] = row
        world.step(1)
    assert np.array_equal(world.state_vector(), whole)


def test_a_closed_loop_rollout_continues_the_episode_bit_for_bit(start):
    runner = Runner(SPEC.scenario())
    runner.restore(start)
    runner.advance(0.5)
    with BatchRollouts(SPEC, backend="serial") as batch:
        [outcome] = batch.run([RolloutTask(start, 0.5)])
    assert np.array_equal(outcome.end.physics.physics, runner.snapshot().physics.physics)
    assert outcome.features["com"].shape == (5, 3) and outcome.steps == round(0.5 / runner.world.timestep) and not outcome.fell
    assert outcome.cost == pytest.approx(-(outcome.features["com"][-1, 0] - outcome.features["com"][0, 0]))
    assert outcome.cost < -0.2   # it walked forwards


def test_results_are_bit_identical_on_every_backend_and_worker_count(start):
    serial = _run(start, "serial", 1)
    assert _run(start, "processes", 1) == serial
    assert _run(start, "processes", 2) == serial


@pytest.mark.ray
def test_results_on_ray_are_the_serial_ones(start):
    pytest.importorskip("ray")
    assert _run(start, "ray", 2) == _run(start, "serial", 1)


def test_parameters_change_the_rollout_and_falls_are_reported(start):
    slow, fast = (RolloutTask(start, 1.0, params={"command": LocomotionCommand(speed=s)}) for s in (0.4, 1.2))
    wild = RolloutTask(start, 1.5, controls=_noise_controls(start, 1.5, 1.0, 2, 1)[0])
    held = RolloutTask(start, 0.2, controls=_noise_controls(start, 0.2, 0.0, 2, 1)[0])
    with BatchRollouts(SPEC, backend="serial") as batch:
        slow_out, fast_out, wild_out, held_out = batch.run([slow, fast, wild, held])
    assert fast_out.cost < slow_out.cost < 0
    assert wild_out.fell and not held_out.fell and not fast_out.fell


def test_bad_tasks_are_refused_with_one_line(start):
    batch = BatchRollouts(SPEC, backend="serial")
    with pytest.raises(UsageError, match=r"open-loop controls must have shape \(100, \d+\) for a 0.1 s rollout"):
        batch.run([RolloutTask(start, 0.1, controls=np.zeros((5, 3)))])
    with pytest.raises(UsageError, match="runs past the scenario's 20 s"):
        batch.run([RolloutTask(start, 30.0)])
    with pytest.raises(UsageError, match="seconds must be a number >= 0"):
        batch.run([RolloutTask(start, float("nan"))])
    with pytest.raises(UsageError, match="unknown rollout feature 'elbow'"):
        RolloutSpec(SPEC.scenario, features=("com", "elbow"))
    controller = SPEC.scenario().controller
    with pytest.raises(UsageError, match="no parameter 'params.style.nope'"):
        override(controller, {"params.style.nope": 1.0})
    override(controller, {"params.style.step_width": 0.2})
    assert controller.params.style.step_width == 0.2
