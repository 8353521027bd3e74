"""Constrained walking (seed 000, Ch. 3): the action space, step branching, windowed synthesis on the real engine,
and the step-to-step model."""

from __future__ import annotations

import numpy as np
import pytest

from strider.errors import ConfigError, UsageError
from strider.methods.cw.actions import HUMANOID, PLANAR
from strider.methods.cw.model import ModelParams, StepModel
from strider.methods.cw.stepping import StepRunner
from strider.methods.cw.synthesis import (
    SOURCE_GAMMA,
    Examples,
    SynthesisParams,
    WindowOptimizer,
    load_examples,
    save_examples,
    synthesize,
)
from strider.optimize.knn import principal_components

QUICK = SynthesisParams(max_iterations=1, warmup_steps=4)


@pytest.mark.parametrize("space, gait", [(PLANAR, "planar"), (HUMANOID, "humanoid")])
def test_the_base_action_round_trips_through_the_gait(space, gait):
    from strider.methods.simbicon.gait import load_gait

    base_gait = load_gait("walk", gait)
    a = space.base(base_gait)
    assert len(a) == space.size and np.array_equal(space.base(space.apply(base_gait, a)), a)
    assert np.all((space.low <= a) & (a <= space.high))
    moved = a + 0.05
    assert np.allclose(space.base(space.apply(base_gait, moved)), moved)


def test_a_branched_step_replays_bit_for_bit_and_an_action_moves_the_landing():
    runner = StepRunner()
    for _ in range(4):
        assert not runner.step().fell
    snap = runner.snapshot()
    base = runner.actions.base(runner.base)
    first = runner.step(base).strike
    runner.restore(snap)
    again = runner.step(base).strike
    assert first.heel == again.heel and np.array_equal(first.state, again.state)
    runner.restore(snap)
    longer = base.copy()
    longer[3] += 0.3      # the swing hip reaching further forward in the contact state lands further on
    assert runner.step(longer).strike.heel > first.heel + 0.02


@pytest.mark.parametrize("character", ["planar7", "bipv3"])
def test_the_window_optimization_brings_the_landings_closer_to_the_stones(character):
    runner = StepRunner(character)
    for _ in range(5):
        runner.step()
    opt = WindowOptimizer(runner, SynthesisParams(max_iterations=2))
    stones = runner.last.heel + np.cumsum([0.6, 0.2, 0.5])     # far from the base gait's 0.36 m steps
    start = runner.snapshot()
    plan = np.tile(opt.base, (3, 1))
    landings, r = opt.evaluate(start, plan, stones)
    # A 3-D walker's residuals also hold each step's lateral spacing against 15 cm (Sec. 3.3.3).
    assert len(r) == len(stones) * (1 if character == "planar7" else 2) + plan.size
    solved, cost = opt.solve(start, plan, stones)
    assert cost < float(r @ r)
    after, _ = opt.evaluate(start, solved, stones)
    assert np.abs(after[:, 0] - stones).sum() < np.abs(landings[:, 0] - stones).sum()


def test_a_smaller_action_weight_than_the_sources_lands_nearer_far_stones():
    runner = StepRunner("planar7")
    for _ in range(5):
        runner.step()
    start = runner.snapshot()
    stones = runner.last.heel + np.cumsum([0.8, 0.7, 0.8])     # long steps, which the source's gamma holds back
    misses = {}
    for gamma in (SOURCE_GAMMA, 0.1 * SOURCE_GAMMA):
        opt = WindowOptimizer(runner, SynthesisParams(max_iterations=2, gamma=gamma))
        solved, _ = opt.solve(start, np.tile(opt.base, (3, 1)), stones)
        landings, _ = opt.evaluate(start, solved, stones)
        misses[gamma] = np.abs(landings[:, 0] - stones).sum()
    assert SynthesisParams().gamma == SOURCE_GAMMA
    assert misses[0.1 * SOURCE_GAMMA] < misses[SOURCE_GAMMA]


def test_a_3d_strike_reports_the_sagittal_state_and_the_feet_spacing():
    """bipv3 at its limit cycle: the centre of mass behind the new stance ankle and moving forward at the gait's
    speed, the stance thigh ahead of the pelvis and the swing thigh behind, the feet apart sideways."""
    runner = StepRunner("bipv3")
    assert runner.warm_up(12)
    before = runner.last
    strike = runner.step().strike
    d, v, torso, stance_hip, swing_hip = strike.state
    assert -0.3 < d < 0.0 and 0.6 < v < 1.4 and abs(torso) < 0.2
    assert stance_hip > 0.2 and swing_hip < 0.0
    assert 0.25 < strike.heel - before.heel < 0.5 and 0.1 < abs(strike.lateral - before.lateral) < 0.35
    assert strike.stance != before.stance


def test_synthesis_is_the_same_resumed_and_on_any_worker_count(tmp_path):
    """Sequences are tasks: a real pool of 2 processes, a serial run and a resumed run give the same examples."""
    from strider.parallel import Executor

    with Executor("serial") as serial:
        one, info = synthesize(4, serial, seed=3, params=QUICK, steps_per_sequence=2,
                               checkpoint=str(tmp_path / "ck.jsonl"))
        resumed, _ = synthesize(4, serial, seed=3, params=QUICK, steps_per_sequence=2,
                                checkpoint=str(tmp_path / "ck.jsonl"))
    with Executor("processes", workers=2) as pool:
        two, _ = synthesize(4, pool, seed=3, params=QUICK, steps_per_sequence=2)
    assert len(one) == 4 and info["sequences"] >= 2
    for k in ("states", "actions", "next_states", "lengths", "errors"):
        assert np.array_equal(getattr(one, k), getattr(two, k))
        assert np.array_equal(getattr(one, k), getattr(resumed, k))
    save_examples(tmp_path / "ex.npz", one, {"character": "planar7"})
    back, header = load_examples(tmp_path / "ex.npz")
    assert header["character"] == "planar7" and np.array_equal(back.actions, one.actions)


def test_a_file_that_is_not_an_example_set_is_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_text("not numpy")
    with pytest.raises(UsageError, match="not a strider CW example set"):
        load_examples(bad)


def _linear_examples(n: int, seed: int = 0) -> Examples:
    """Steps whose length is a known smooth function of state and action, for the model's arithmetic alone."""
    rng = np.random.default_rng(seed)
    states = rng.normal(size=(n, 5)) * 0.1
    actions = rng.normal(size=(n, 6)) * np.array([0.1, 0.1, 0.2, 0.2, 0.01, 0.01])
    lengths = 0.36 + 0.5 * actions[:, 2] + 0.3 * actions[:, 3] + 0.2 * states[:, 0]
    next_states = states * 0.5 + actions[:, :5] * 0.1
    return Examples(states, actions, next_states, lengths, lengths, np.zeros(n))


def test_the_step_model_predicts_a_smooth_step_from_its_neighbours():
    ex = _linear_examples(2000)
    model = StepModel(ex)
    assert model.components.explained.sum() > 0.75    # the two big action axes: 0.08 of the 0.1 total variance
    test = _linear_examples(50, seed=1)
    errors = []
    for s, a, l in zip(test.states, test.actions, test.lengths):
        p = model.predict(s, model.components.encode(a))
        errors.append(abs(p.length - l))
        assert p.uncertainty >= 0.0
    spread = np.std(test.lengths)
    assert np.mean(errors) < 0.5 * spread        # far better than predicting the mean
    low, high = model.capability(test.states[0])
    assert np.all(low <= high)


def test_the_step_model_needs_enough_examples():
    with pytest.raises(ValueError, match="more than 25 examples"):
        StepModel(_linear_examples(10), ModelParams(regression="knn"))
    with pytest.raises(ValueError, match="more than 60 examples"):
        StepModel(_linear_examples(50), ModelParams())


def test_principal_components_decode_what_they_encode():
    rng = np.random.default_rng(2)
    data = rng.normal(size=(200, 2)) @ rng.normal(size=(2, 6))     # rank 2
    pcs = principal_components(data, 2)
    np.testing.assert_allclose(pcs.decode(pcs.encode(data)), data, atol=1e-9)   # NumPy's SVD vs exact rank 2
    assert abs(pcs.explained.sum() - 1.0) < 1e-9


@pytest.mark.parametrize("regression", ["knn", "local-linear"])
def test_many_states_are_predicted_to_the_bit_as_each_state_alone(regression):
    """The planner asks for a whole grid of second steps at once: every state's neighbourhood, box and
    predictions must be what asking for it alone gives, to the last bit, or a plan would change."""
    model = StepModel(_linear_examples(400), ModelParams(regression=regression))
    rng = np.random.default_rng(5)
    states = model.examples.next_states[rng.choice(len(model.examples), 7, replace=False)]
    near = model.near(states)
    lo, hi = model.capability(states, near)
    codes = lo[:, None, :] + rng.uniform(size=(7, 12, 2)) * (hi - lo)[:, None, :]
    many = model.predict_many(states, codes, near)
    assert many.lengths.shape == (7, 12) and many.actions.shape[:2] == (7, 12)
    for e, state in enumerate(states):
        alone = model.predict_many(state, codes[e])
        one_lo, one_hi = model.capability(state)
        assert one_lo.tobytes() == lo[e].tobytes() and one_hi.tobytes() == hi[e].tobytes()
        for field in ("next_states", "lengths", "uncertainty", "actions"):
            assert getattr(alone, field).tobytes() == getattr(many, field)[e].tobytes(), (e, field)


def test_the_k_nearest_actions_come_in_a_stable_sorts_order_with_ties_and_nan():
    from strider.optimize.knn import _smallest

    rng = np.random.default_rng(3)
    values = rng.integers(0, 6, size=(400, 25)).astype(float)   # many ties, at the k-th place too
    values[::7, 4] = np.nan
    values[::11] = np.nan
    for k in (1, 3, 25, 30):
        np.testing.assert_array_equal(_smallest(values, k), np.argsort(values, axis=-1, kind="stable")[..., :k])
    smooth = rng.normal(size=(3, 50, 25))
    np.testing.assert_array_equal(_smallest(smooth, 3), np.argsort(smooth, axis=-1, kind="stable")[..., :3])


def test_synthesis_gives_up_naming_the_gait_when_the_walker_cannot_walk(tmp_path):
    """A gait the walker falls with gives no example; synthesis stops after a few barren sequences in a row
    instead of drawing new ones for ever."""
    from pathlib import Path

    import yaml

    from strider.methods.cw.synthesis import BARREN_SEQUENCES
    from strider.methods.simbicon.gait import gait_path
    from strider.parallel import Executor

    gait = yaml.safe_load(Path(gait_path("walk", "planar")).read_text())
    for state in gait["states"]:
        state["torso"] = 1.0           # the trunk pitched far forward: the walker topples in its warm-up
    bad = tmp_path / "topple.yaml"
    bad.write_text(yaml.safe_dump(gait))
    with Executor("serial") as serial, pytest.raises(UsageError, match="cannot walk gait") as info:
        synthesize(10, serial, seed=1, params=QUICK, steps_per_sequence=2, gait=str(bad))
    barren = int(str(info.value).split("the last ")[1].split()[0])
    assert BARREN_SEQUENCES <= barren <= 2 * BARREN_SEQUENCES   # it stops at the end of the batch that reached it
    bad.write_text(yaml.safe_dump({**gait, "states": [{**s, "torso": 1.4} for s in gait["states"]]}))
    with Executor("serial") as serial, pytest.raises(ConfigError, match="torso"):
        synthesize(10, serial, seed=1, params=QUICK, steps_per_sequence=2, gait=str(bad))   # before any task runs
