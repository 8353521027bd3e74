"""Task-level control (Coros 2010, Ch. 4) on the real engine: the strike state and its distance, GBWC steps
as actions, a small exploration (the same on one process and on two), fitted value iteration, the shipped GLT
policy walking to a goal, and the CLI's refusals."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from strider.cli.main import main
from strider.methods.tlc.explore import FELL, KEPT, UNTRUSTED, Exploration, explore, worker_setup
from strider.methods.tlc.policy import Policy, PolicyRunner, solve
from strider.methods.tlc.state import DistanceWeights, StrikeStates, distances
from strider.methods.tlc.stepper import StepAction, TaskStepper
from strider.methods.tlc.tasks import load_task
from strider.methods.tlc.walker import shipped_policy, walk_task
from strider.optimize.value_iteration import (
    InterpolatedTransitions,
    SeparableTransitions,
    fitted_value_iteration,
    separable_value_iteration,
)
from strider.parallel import Executor

WEIGHTS = DistanceWeights()


@pytest.fixture(scope="module")
def stepper():
    return TaskStepper("bipv3")


def _stack(states: list[StrikeStates]) -> StrikeStates:
    return StrikeStates.unpacked(np.concatenate([s.packed() for s in states]))


def test_mirrored_strikes_of_a_steady_walk_are_near_and_the_distance_is_a_metric(stepper):
    """Left and right strikes of a steady walk, the right one mirrored, lie closer together than either lies to a
    strike of a fast walk: the mirror makes one kind of strike of both."""
    root = stepper.snapshot()
    walk = [stepper.step(StepAction(0.6)).strike for _ in range(10)]
    stepper.restore(root)
    fast = [stepper.step(StepAction(1.4)).strike for _ in range(10)]
    stepper.restore(root)
    assert {walk[-1].stance, walk[-2].stance} == {"left", "right"}
    steady = _stack([s.state for s in walk[-4:]])
    within = distances(steady.row(0), steady, WEIGHTS)
    across = distances(steady.row(0), _stack([s.state for s in fast[-4:]]), WEIGHTS)
    assert within[0] == pytest.approx(0.0, abs=1e-12)
    assert within[1:].max() < across.min()
    back = distances(steady.row(1), steady.row(0), WEIGHTS)[0]
    assert back == pytest.approx(within[1], rel=1e-12)


def test_a_step_action_moves_the_walker_its_way_and_branches_bit_for_bit(stepper):
    root = stepper.snapshot()
    forward = stepper.step(StepAction(1.0))
    again = stepper.step(StepAction(1.0))
    stepper.restore(root)
    backward = [stepper.step(StepAction(-0.6)) for _ in range(3)][-1]
    stepper.restore(root)
    replay = stepper.step(StepAction(1.0))
    stepper.restore(root)
    assert forward.shift[0] > 0.2 and again.shift[0] > 0.2
    assert backward.shift[0] < -0.05
    assert 0.2 < forward.duration < 0.8
    assert np.array_equal(replay.strike.state.packed(), forward.strike.state.packed())
    assert np.array_equal(replay.shift, forward.shift)


@pytest.fixture(scope="module")
def tiny_task():
    task = load_task("GLT")
    return dataclasses.replace(task, exploration=dataclasses.replace(task.exploration, max_states=10, batch=6))


@pytest.fixture(scope="module")
def tiny_exploration(tiny_task, tmp_path_factory):
    checkpoint = tmp_path_factory.mktemp("tlc") / "glt.checkpoint.pkl"
    with Executor("serial", setup=worker_setup(tiny_task)) as ex:
        return explore(tiny_task, ex, checkpoint=checkpoint), checkpoint


def test_exploration_is_the_same_on_one_process_and_on_two_and_resumes(tiny_task, tiny_exploration):
    serial, checkpoint = tiny_exploration
    assert len(serial) == 10 and serial.outcome.shape == (10, len(tiny_task.actions))
    assert set(np.unique(serial.outcome)) <= {KEPT, UNTRUSTED, FELL}
    kept = serial.outcome == KEPT
    assert kept.any()
    assert np.isfinite(serial.next_states[kept]).all() and np.isnan(serial.next_states[~kept]).all()
    # from the same states, 1.4 m/s commanded strikes faster forward than -0.4 m/s
    both = kept[:, 10] & kept[:, 1]
    assert both.any() and np.all(serial.next_states[both, 10, 0] > serial.next_states[both, 1, 0])
    with Executor("processes", workers=2, setup=worker_setup(tiny_task)) as ex:
        pooled = explore(tiny_task, ex)
    for field in ("states", "outcome", "next_states", "shift", "turn", "duration"):
        assert np.array_equal(getattr(serial, field), getattr(pooled, field), equal_nan=True), field
    with Executor("serial") as ex:     # the checkpoint holds the finished exploration: nothing is re-simulated
        resumed = explore(tiny_task, ex, checkpoint=checkpoint)
    assert np.array_equal(resumed.next_states, serial.next_states, equal_nan=True)


def test_an_exploration_file_round_trips_and_solves(tiny_task, tiny_exploration, tmp_path):
    exploration = tiny_exploration[0]
    loaded = Exploration.load(exploration.save(tmp_path / "e.npz"))
    assert np.array_equal(loaded.next_states, exploration.next_states, equal_nan=True)
    sweeps = []
    policy = solve(loaded, tiny_task, progress=lambda: sweeps.append(1))   # what moves `tlc solve`'s bar
    assert len(sweeps) == tiny_task.solve.sweeps == policy.info["sweeps"]
    assert policy.best.shape == (10, len(tiny_task.samples))
    assert np.isfinite(policy.values).all()
    # far ahead of the goal the best actions walk forward; far behind it, backward
    speeds = np.array([a.speed for a in tiny_task.actions])
    assert speeds[policy.best[:, -1]].mean() > 0.3
    assert speeds[policy.best[:, 0]].mean() < 0.0
    back = Policy.load(policy.save(tmp_path / "p.npz"))
    assert np.array_equal(back.best, policy.best)


def test_fitted_value_iteration_matches_hand_worked_values():
    """Two states, one action each: 0 earns 1 and lands on 1 (half discounted); 1 earns 0 and stays (0.5)."""
    index = np.array([[[1, 0]], [[1, 0]]])
    weight = np.array([[[1.0, 0.0]], [[1.0, 0.0]]])
    reward = np.array([[1.0], [2.0]])
    discount = np.array([[0.5], [0.5]])
    result = fitted_value_iteration(InterpolatedTransitions(index, weight, reward, discount), sweeps=200,
                                    smoothing=0.8)
    v1 = 2.0 / (1 - 0.5)
    assert result.values == pytest.approx([1.0 + 0.5 * v1, v1], rel=1e-9)


def test_separable_value_iteration_equals_the_general_solver_on_the_same_grid():
    """The product-grid solver against fitted_value_iteration given every grid point's k x c weights spelled out
    (the summation order differs: equal to rounding)."""
    rng = np.random.default_rng(3)
    n, a, m, k, c = 7, 3, 5, 2, 2
    near = rng.integers(0, n, (n, a, k))
    near_w = rng.dirichlet(np.ones(k), (n, a))
    near_w[0, 1] = 0.0                                   # a terminal outcome
    corner = rng.integers(0, m, (n, a, m, c))
    corner_w = rng.dirichlet(np.ones(c), (n, a, m))
    reward = rng.normal(size=(n, a, m))
    discount = rng.uniform(0.3, 0.9, (n, a))
    grid = separable_value_iteration(SeparableTransitions(near, near_w, corner, corner_w, reward, discount),
                                     sweeps=40, smoothing=0.8)
    index = (near[:, :, None, :, None] * m + corner[:, :, :, None, :]).reshape(n, a, m, k * c)
    weight = (near_w[:, :, None, :, None] * corner_w[:, :, :, None, :]).reshape(n, a, m, k * c)
    flat = fitted_value_iteration(InterpolatedTransitions(
        index.transpose(0, 2, 1, 3).reshape(n * m, a, k * c), weight.transpose(0, 2, 1, 3).reshape(n * m, a, k * c),
        reward.transpose(0, 2, 1).reshape(n * m, a), np.repeat(discount[:, None, :], m, axis=1).reshape(n * m, a)),
        sweeps=40, smoothing=0.8)
    np.testing.assert_allclose(grid.values.ravel(), flat.values, rtol=1e-12, atol=1e-12)
    assert np.array_equal(grid.policy.ravel(), flat.policy)


def test_a_goal_point_is_carried_through_a_step_and_interpolated_bilinearly():
    task = load_task("GPT")
    assert task.samples.shape == (27 * 27, 2)
    # a step 0.3 m ahead brings a goal 1 m ahead to 0.7 m; a quarter turn left puts it on the right
    moved = task.after(np.array([[1.0, 0.0], [1.0, 0.0]]), np.array([[0.3, 0.0], [0.0, 0.0]]),
                       np.array([0.0, np.pi / 2]))
    np.testing.assert_allclose(moved, [[0.7, 0.0], [0.0, -1.0]], atol=1e-12)
    # multilinear weights reproduce a linear function of w exactly, inside the grid
    w = np.random.default_rng(0).uniform(-3, 3, (50, 2))
    corner, weight = task.corners(w)
    f = task.samples @ np.array([2.0, -0.5]) + 1.0
    np.testing.assert_allclose((weight * f[corner]).sum(axis=1), w @ np.array([2.0, -0.5]) + 1.0, atol=1e-9)
    # the turn penalty applies near the goal only
    near_r = task.reward(np.array([0.5, 0.0]), np.array([0.4, 0.0]), np.array(0.5), np.array(0.6))
    far_r = task.reward(np.array([2.5, 0.0]), np.array([2.4, 0.0]), np.array(0.5), np.array(0.6))
    assert near_r == pytest.approx(-0.5 * 0.6) and far_r == 0.0


def test_a_periodic_task_parameter_wraps_between_its_samples():
    task = dataclasses.replace(load_task("GLT"), kind="heading", axes=(np.array([-2.0, 0.0, 2.0]),))
    lo, hi, t = task.bracket(np.array([3.0, -3.0, 1.0]))
    span = 2 * np.pi - 4.0                     # from 2 round to -2
    assert lo.tolist() == [2, 2, 1] and hi.tolist() == [0, 0, 2]
    assert t == pytest.approx([1.0 / span, (2 * np.pi - 5.0) / span, 0.5])   # -3 is 2 pi - 3 round


@pytest.mark.parametrize("goal", [-1.5, 2.5])
def test_the_shipped_glt_policy_walks_to_the_goal_and_stops(goal):
    task = load_task("GLT")
    run = walk_task(shipped_policy(task), task, goal, 15.0)
    assert run.succeeded and not run.fell
    assert abs(run.final_w) <= task.success.within
    speeds = [s.action[0] for s in run.strikes]
    assert (max(speeds) > 0.3) if goal > 0 else (min(speeds) < -0.1)


@pytest.mark.parametrize("goal", [-2.9, 1.2])
def test_the_shipped_ht_policy_turns_the_body_to_the_heading_and_walks_on(goal):
    from strider import quat

    task = load_task("HT")
    run = walk_task(shipped_policy(task), task, goal, 10.0, stop_on_success=False)
    assert run.succeeded and not run.fell
    turns = [s.action[1] for s in run.strikes]
    assert max(np.abs(turns)) > 0.3                     # it turned, not waited for a lucky drift
    start = run.strikes[0].facing
    for s in run.strikes[-3:]:                          # and still walks forward that way seconds later
        assert abs(quat.wrap_angle(start + goal - s.facing)) < 2 * task.success.within
        assert s.forward_speed > task.success.speed_above


def test_the_shipped_gpt_policy_walks_to_a_point_behind_and_to_the_side_and_stops():
    task = load_task("GPT")
    run = walk_task(shipped_policy(task), task, (-1.5, 1.0), 20.0)
    assert run.succeeded and not run.fell
    assert run.final_distance <= task.success.within
    assert max(abs(s.action[1]) for s in run.strikes) >= 0.3      # it turned toward a point off its line


def test_policy_runner_blends_the_commands_of_the_two_nearest_samples():
    task = load_task("GLT")
    policy = shipped_policy(task)
    runner = PolicyRunner(policy, task)
    state = StrikeStates.unpacked(policy.states[:1])
    lo, hi = 25, 26
    w = 0.25 * task.samples[lo] + 0.75 * task.samples[hi]
    a_lo, a_hi = policy.actions[policy.best[0, lo]], policy.actions[policy.best[0, hi]]
    assert runner.act(state, w).speed == pytest.approx(0.25 * a_lo.speed + 0.75 * a_hi.speed)


def test_policy_runner_blends_the_commands_of_the_nearest_explored_states_when_asked():
    """strider's runtime_neighbours: the commands of the k explored states nearest a strike, weighted 1/d^2, with
    the nearest states found by brute force over the true distance; k = 1 is the nearest state's command."""
    task = load_task("VRWT")
    policy = shipped_policy(task)
    packed = policy.states[:1].astype(float).copy()
    packed[0, 0] += 0.07                              # forward speed: between explored states, not on one
    state = StrikeStates.unpacked(packed)
    d = distances(state, StrikeStates.unpacked(policy.states.astype(float)), WEIGHTS)
    order = np.argsort(d, kind="stable")[:3]
    speeds = np.array([policy.actions[policy.best[i, 0]].speed for i in order])
    assert len(set(speeds.tolist())) > 1, "the three nearest states agree: the blend would not show"
    assert PolicyRunner(policy, task.with_runtime_neighbours(1)).act(state, ()).speed == speeds[0]
    near = 1.0 / d[order] ** 2
    assert PolicyRunner(policy, task.with_runtime_neighbours(3)).act(state, ()).speed == pytest.approx(
        near @ speeds / near.sum(), abs=1e-9)


def test_tlc_run_cli_reports_json(capsys):
    assert main(["tlc", "run", "GLT", "--goal", "1.0", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["succeeded"] and report["strikes"]


@pytest.mark.parametrize(("argv", "words"), [
    (["tlc", "run", "GLT", "--goal", "40"], "--goal must lie in"),
    (["tlc", "run", "HT", "--goal", "3.5"], "--goal must lie in [-3.142, 3.142]"),
    (["tlc", "run", "GPT", "--goal", "1.0"], "--goal takes 2 number(s) for GPT"),
    (["tlc", "run", "NOPE"], "unknown task"),
    (["tlc", "run", "GLT", "--seconds", "0"], "--seconds must be > 0"),
    (["tlc", "explore", "GLT", "--workers", "0"], "--workers"),
    (["tlc", "solve", "GLT", "--exploration", "missing.npz"], "no such file"),
])
def test_tlc_cli_refuses_bad_input(argv, words, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("task_name, goal, seconds, words", [
    ("HT", None, 1.0, "goal takes 1 number(s) for HT, got 0"),
    ("HT", float("nan"), 1.0, "goal must lie in"),
    ("HT", [1.0, 2.0], 1.0, "goal takes 1 number(s)"),
    ("HT", 4.0, 1.0, "goal must lie in [-3.142, 3.142]"),
    ("HT", 1.0, float("nan"), "seconds must be a time > 0 s"),
    ("HT", 1.0, -1.0, "seconds must be a time > 0 s"),
    ("VRWT", 1.0, 1.0, "VRWT has no goal"),
])
def test_walk_task_refuses_what_it_cannot_walk_before_walking(task_name, goal, seconds, words):
    from strider.errors import UsageError

    task = load_task(task_name)
    with pytest.raises(UsageError, match=re.escape(words)):
        walk_task(shipped_policy(task), task, goal, seconds)


def test_walk_task_refuses_a_policy_of_another_task():
    from strider.errors import UsageError

    with pytest.raises(UsageError, match="a policy for task GLT, not HT"):
        walk_task(shipped_policy(load_task("GLT")), load_task("HT"), 1.0, 1.0)


def test_a_policy_file_that_is_not_one_is_refused(tmp_path, capsys):
    bad = tmp_path / "bad.npz"
    bad.write_text("not a policy")
    assert main(["tlc", "run", "GLT", "--policy", str(bad)]) == 2
    assert "not a strider TLC policy" in capsys.readouterr().err


@pytest.mark.parametrize(("field", "value"), [("actions", "5"), ("trusted", "{cycles: [x]}"),
                                            ("solve", "{runtime_neighbours: 0}")])
def test_a_malformed_task_file_is_one_message(field, value, tmp_path, capsys):
    from strider.methods.tlc.tasks import TASK_DIR

    text = (TASK_DIR / "glt.yaml").read_text()
    lines, out, skipping = text.splitlines(), [], False
    for line in lines:          # replace the field's whole block with the bad value
        if line.startswith(f"{field}:"):
            out.append(f"{field}: {value}")
            skipping = True
        elif skipping and line.startswith((" ", "#")):
            continue
        else:
            skipping = False
            out.append(line)
    bad = tmp_path / "bad.yaml"
    bad.write_text("\n".join(out) + "\n")
    assert main(["tlc", "run", str(bad)]) == 2
    assert field in capsys.readouterr().err


def test_a_thrown_ball_hits_the_walker_and_once_parked_stays_out_of_the_way():
    from strider.runner.throws import Throw

    ball = Throw(0.1, 90.0, distance=1.0, flight=1.0 / 6.0, radius=0.12, mass=10.0)
    stepper = TaskStepper("bipv3", balls=(ball,))
    walk = StepAction(0.6)
    for _ in range(4):
        stepper.step(walk)
    hits = [stepper.step(walk, ball).hit]
    hits += [stepper.step(walk).hit for _ in range(2)]
    assert hits[0] or hits[1]
    stepper.park_ball()
    assert not any(stepper.step(walk).hit for _ in range(3))
    resting = stepper.world.body_position("ball0")
    assert np.linalg.norm(resting[:2] - stepper.character.com_position()[:2]) > 10.0


def test_a_steady_walk_task_seeds_hits_and_solves_toward_its_limit_cycle(tmp_path):
    from strider.methods.tlc.explore import HIT

    task = load_task("VRWT")
    seeds = dataclasses.replace(task.trusted, cycles=(6,), cycle_steps=4, sequences=0,
                                hits=dataclasses.replace(task.trusted.hits, count=1))
    task = dataclasses.replace(task, trusted=seeds,
                               exploration=dataclasses.replace(task.exploration, max_states=8, batch=8))
    with Executor("serial", setup=worker_setup(task)) as ex:
        exploration = explore(task, ex)
    assert (exploration.trusted_origin == HIT).sum() >= 1 and len(exploration.cycle_states(6)) == 3
    loaded = Exploration.load(exploration.save(tmp_path / "v.npz"))
    assert np.array_equal(loaded.trusted_origin, exploration.trusted_origin)
    policy = solve(loaded, task)
    assert policy.best.shape == (8, 1) and np.isfinite(policy.values).all()
    # from the steady walk's own strikes, steady walking pays: the value is positive there
    steady = [i for i, s in enumerate(exploration.states) if any(np.array_equal(s, c) for c in
                                                                 exploration.cycle_states(6))]
    assert steady and (policy.values[steady, 0] > 0).all()


def test_a_task_file_with_a_bad_ball_mass_is_one_message(tmp_path, capsys):
    from strider.methods.tlc.tasks import TASK_DIR

    text = (TASK_DIR / "vrwt.yaml").read_text()
    assert "masses: [10.0, 15.0]" in text
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("masses: [10.0, 15.0]", "masses: [10.0, -1]"))
    assert main(["tlc", "run", str(bad)]) == 2
    assert "masses[1]: expected a finite number > 0" in capsys.readouterr().err
