"""CW online planning (Coros 2010, Sec. 3.5) on the shipped example set: the footing geometry, the two model
regressions, planned stepping stones and a gap crossed on the real engine, and the CLI's refusals."""

from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from strider.cli.main import main
from strider.courses import load_course
from strider.methods.cw.model import ModelParams, load_model
from strider.methods.cw.planner import Footing, Planner, PlannerParams
from strider.methods.cw.stepping import StepRunner
from strider.methods.cw.synthesis import stepping_stones
from strider.methods.cw.walker import gap_course, gap_footfall_score, walk_course

FOOT = 0.2


@pytest.fixture(scope="module")
def model():
    return load_model("planar7")


def test_footing_measures_the_foot_against_the_course():
    course = load_course("gap-0.5")            # support (-2, 3) and (3.5, 23.5)
    footing = Footing(course.support_intervals(), FOOT)
    assert footing.clearance(np.array([2.5]))[0] == pytest.approx(0.3)
    assert footing.clearance(np.array([2.9]))[0] == pytest.approx(-0.1)
    assert footing.supported_share(2.9) == pytest.approx(0.5)
    assert footing.supported_share(3.1) == 0.0
    assert footing.next_gap(0.0) == (3.0, 3.5)
    assert footing.next_gap(4.0) is None
    # A footstep in the gap moves to the nearer edge: before it (heel 2.8) or onto its far side (heel 3.5).
    assert footing.footstep(2.95) == pytest.approx(2.8)
    assert footing.footstep(3.3) == pytest.approx(3.5)


def test_gap_course_lays_table_3_1_terrain():
    course = gap_course(0.4, 0.5, lead=2.0)
    intervals = course.support_intervals()
    gaps = [(a[1], b[0]) for a, b in itertools.pairwise(intervals)]
    assert len(gaps) == 5
    assert gaps[0][0] == pytest.approx(2.0)
    assert all(end - start == pytest.approx(0.4) for start, end in gaps)
    assert all(b[0] - a[1] == pytest.approx(0.5) for a, b in itertools.pairwise(gaps))


def test_local_linear_model_predicts_better_than_the_sources_blend(model):
    knn = load_model("planar7", params=ModelParams(regression="knn"))
    # Leave-one-out uncertainty (state + step length error): the local fit should roughly halve it.
    assert model.uncertainty.mean() < 0.6 * knn.uncertainty.mean()
    near = model.near(model.examples.states[0])
    lo, hi = model.capability(model.examples.states[0], near)
    codes = np.linspace(lo, hi, 4)
    many = model.predict_many(model.examples.states[0], codes, near)
    one = model.predict(model.examples.states[0], codes[2], near)
    assert one.length == pytest.approx(many.lengths[2])
    assert many.actions.shape == (4, 6) and many.next_states.shape == (4, 5)


def test_the_shipped_sets_say_which_action_weight_made_them():
    from strider.methods.cw.model import shipped_examples
    from strider.methods.cw.synthesis import SOURCE_GAMMA, SynthesisParams, load_examples

    for character in ("planar7", "bipv3"):
        assert load_examples(shipped_examples(character))[1]["gamma"] == SynthesisParams().gamma == SOURCE_GAMMA


def test_planned_stepping_stones_land_near_their_stones(model):
    planner = Planner(model)
    runner = StepRunner(seed=1000)
    assert runner.warm_up(6)
    stones = stepping_stones(runner.last.heel, 1000, 22)
    errors = []
    for i in range(20):
        plan = planner.stones(runner.last.state, runner.last.heel, stones[i:i + 2])
        assert plan.samples > 81 and plan.search == "regular"
        out = runner.step(plan.action)
        assert not out.fell
        errors.append(abs(out.strike.heel - stones[i]))
    # The base gait alone would miss stones drawn from 0.1-0.9 m by ~0.2 m on average.
    assert np.mean(errors) < 0.06


def test_walk_crosses_a_gap_planning_near_it(model):
    course = load_course("gap-0.5")
    walk = walk_course(model, course, until=5.0)
    assert not walk.fell
    assert all(f.success for f in walk.footfalls)
    planned = [f for f in walk.footfalls if f.search != "base"]
    assert planned and planned[0].heel > 3.0 - 1.0 - 0.5   # planning starts within reach of the gap
    ok, total = gap_footfall_score(walk, course.support_intervals())
    assert ok == total > 0


def test_cw_walk_cli_reports_footfalls(capsys):
    assert main(["cw", "walk", "--course", "gap-0.5", "--max-steps", "12", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"] == 12 and len(report["footfalls"]) == 12
    assert report["config"] == "default" and report["search"] == "hybrid" and report["early_touchdown_s"] == 0.2
    assert report["preferred_step_m"] == 0.36    # the source's footsteps for the planar walker
    assert main(["cw", "walk", "--character", "bipv3", "--course", "gaps-3d", "--max-steps", "8", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["character"] == "bipv3" and report["steps"] == 8 and not report["fell"]
    assert report["preferred_step_m"] == 0.3     # strider's for the 3-D humanoid


def test_the_hybrid_plans_footsteps_of_the_preferred_length(model):
    """Footsteps of ``PlannerParams.preferred_step`` until one would land over the gap (1.0-1.4 m); that one moves
    to the nearer edge: at 0.9 m, back to 0.8 m, where the 0.2 m foot ends at the gap."""
    footing = Footing([(-5.0, 1.0), (1.4, 10.0)], foot_length=0.2)
    for step in (0.3, 0.36):
        targets = Planner(model, PlannerParams(preferred_step=step)).footsteps(0.0, footing)
        assert targets == pytest.approx([step, 2 * step])
    assert Planner(model, PlannerParams(preferred_step=0.45)).footsteps(0.0, footing) == pytest.approx([0.45, 0.8])


@pytest.mark.parametrize("argv, words", [
    (["cw", "walk", "--character", "deepmimic"], "no CW example set ships for 'deepmimic'"),
    (["cw", "walk", "--max-steps", "0"], "--max-steps"),
    (["cw", "walk", "--start", "2.9"], "--start 2.9 m is not on the support"),
    (["cw", "walk", "--start", "nan"], "--start"),
    (["cw", "walk", "--course", "no-such-course"], "no-such-course"),
    (["cw", "synthesize", "--examples", "0"], "--examples"),
    (["cw", "synthesize", "--gamma", "-0.1"], "--gamma"),
    (["cw", "synthesize", "--gamma", "nan"], "--gamma"),
    (["cw", "synthesize", "--early-touchdown", "-0.2"], "--early-touchdown must be >= 0 s"),
    (["cw", "synthesize", "--early-touchdown", "inf"], "--early-touchdown"),
    (["cw", "synthesize", "--character", "nobody"], "nobody"),
    # Characters SIMBICON cannot drive, or with no box sole to measure a heel on: refused before any worker runs.
    (["cw", "synthesize", "--character", "planar5"], "has none ankles"),
    (["cw", "synthesize", "--character", "deepmimic"], "has ball ankles"),
    (["cw", "synthesize", "--character", "bipv3-torque"], "actuation"),
    (["cw", "synthesize", "--character", "planar14"], "box foot"),
    (["walk", "--controller", "simbicon", "--character", "planar5"], "has none ankles"),
])
def test_cw_cli_refuses_bad_input(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


@pytest.mark.parametrize("change, words", [
    ({"character": "bipv3"}, "made for 'planar7', not 'bipv3'"),
    ({"start_x": 3.2}, "start_x 3.2 m is not on the support"),
    ({"start_x": float("nan")}, "start_x must be a finite position"),
    ({"max_steps": 0}, "max_steps must be a whole number >= 1"),
    ({"seed": -1}, "seed must be a whole number >= 0"),
    ({"until": float("nan")}, "until must be a finite position"),
    ({"search": "nope"}, "unknown gap search 'nope'"),
])
def test_walk_course_refuses_what_it_cannot_walk_before_simulating(model, change, words):
    from strider.errors import UsageError

    with pytest.raises(UsageError, match=re.escape(words)):
        walk_course(model, load_course("gap-0.5"), **change)


def test_cw_walk_refuses_an_example_set_of_another_character(tmp_path, capsys):
    from strider.methods.cw.synthesis import load_examples, save_examples

    examples, _ = load_examples("src/strider/methods/cw/data/planar7.examples.npz")
    path = tmp_path / "other.examples.npz"
    save_examples(path, examples, {"character": "planar14"})
    assert main(["cw", "walk", "--examples", str(path)]) == 2
    assert "planar14" in capsys.readouterr().err
    bad = tmp_path / "bad.npz"
    bad.write_text("not an archive")
    assert main(["cw", "walk", "--examples", str(bad)]) == 2


def test_the_3d_humanoid_plans_its_steps_across_a_gap_from_the_shipped_set():
    """bipv3 from its shipped 1000-example set (9-D actions, Sec. 3.3.3) walks up to and over the first gap of
    gaps-3d: steps within 1 m of the gap are planned, each in far less than a step's time, land where the plan
    put them to within 10 cm, and none lands over the gap."""
    model3 = load_model("bipv3")
    assert len(model3.examples) == 1000 and model3.examples.actions.shape[1] == 9
    course = load_course("gaps-3d")
    first_gap_end = course.support_intervals()[1][0]
    walk = walk_course(model3, course, character="bipv3", until=first_gap_end)
    assert not walk.fell and walk.footfalls[-1].heel > first_gap_end
    planned = [f for f in walk.footfalls if f.search != "base"]
    assert len(planned) >= 2
    assert all(f.success for f in walk.footfalls)
    assert max(f.plan_seconds for f in planned) < 0.1
    assert max(abs(f.heel - f.planned) for f in planned) < 0.1


def test_early_touchdown_ends_a_step_whose_swing_foot_lands_in_the_timed_state():
    """SIMBICON's first state runs its dwell whatever the swing foot does; with early touchdown a foot that lands
    in it, 0.2 s or more into the step, ends the step there. A first state holding the swing leg down for 0.6 s
    puts the foot back on the ground early: the step lasts the dwell without the switch, 0.2 s with it. The base
    walk's own steps land in the second state, so the switch leaves them as they were."""
    import dataclasses

    durations, warm_up = {}, {}
    for early in (None, 0.2):
        runner = StepRunner("bipv3", early_touchdown=early)
        warm_up[early] = [runner.last.time for _ in range(5) if not runner.step().fell]
        first, second = runner.base.states
        held_down = dataclasses.replace(first, swing_hip=second.swing_hip, swing_knee=second.swing_knee, dwell=0.6)
        ctrl = runner.controller
        ctrl.set_gait(dataclasses.replace(runner.base, states=(held_down, second)))
        steps, start = ctrl.steps, runner.time
        assert runner.runner.advance_until(lambda c=ctrl, n=steps: c.steps != n, 1.5, runner.period)
        durations[early] = runner.time - start
        runner.close()
    assert len(warm_up[None]) == 5 and warm_up[None] == warm_up[0.2]
    assert durations[None] >= 0.6
    assert 0.2 - 1e-9 <= durations[0.2] < 0.3


def test_early_touchdown_must_be_a_time():
    from strider.errors import UsageError
    from strider.methods.simbicon.controller import SIMBICON

    for bad in (-0.1, float("nan")):
        with pytest.raises(UsageError, match="early_touchdown"):
            SIMBICON(early_touchdown=bad)


def test_the_hybrid_search_falls_back_to_the_clearing_plan_nearest_its_footsteps(model):
    """When no sparse-grid plan lands within the tolerance of the hybrid's footsteps (here a tolerance of 0), the
    full grid's plan that keeps both feet out of the gap and lands nearest them is taken, before any random
    sampling; it is at least as near as the sparse grid's best, whose points the full grid contains."""
    from strider.methods.cw.planner import PlannerParams

    runner = StepRunner("planar7")
    assert runner.warm_up(4)
    state = runner.last.state
    runner.close()
    footing = Footing(load_course("gap-0.5").support_intervals(), FOOT)   # the gap: 3.0 to 3.5 m
    planner = Planner(model, PlannerParams(stone_tolerance=0.0))
    heel = 2.6
    plan = planner.gaps(state, heel, footing, "hybrid")
    assert plan.search == "nearest" and plan.accepted and len(plan.heels) == 2
    assert (footing.clearance(np.array(plan.heels)) >= 0).all()
    targets = planner.footsteps(heel, footing)
    sparse = planner._regular(state, heel, targets, footing, planner.params.sparse_samples, "hybrid",
                              tolerance=np.inf)
    assert sparse.accepted   # the sparse grid's best clearing plan: the full grid's must be as near or nearer
    miss = (lambda heels: sum(abs(h - t) for h, t in zip(heels, targets)))
    assert miss(plan.heels) <= miss(sparse.heels) + 1e-12


def test_the_3d_humanoid_crosses_gaps_with_early_touchdown():
    """From the shipped 3-D set, bipv3 crosses the first 9 m of gaps-3d (six gaps of 0.23-0.44 m) with strider's
    configuration, every footfall on support; with SIMBICON's own state machine it falls before 9 m: after a
    long step over a gap the swing foot lands in the timed state with its knee still bent, and the leg folds."""
    model3 = load_model("bipv3")
    course = load_course("gaps-3d")
    walks = {early: walk_course(model3, course, character="bipv3", early_touchdown=early, start_x=-0.5, until=9.0)
             for early in (None, 0.2)}
    assert not walks[0.2].fell and walks[0.2].footfalls[-1].heel > 9.0
    assert all(f.success for f in walks[0.2].footfalls)
    assert walks[None].fell and walks[None].footfalls[-1].heel < 9.0


def test_the_realtime_bench_times_the_walk_against_bare_stepping_of_its_own_motion(tmp_path):
    """P10's baseline for CW: the walk run again with every tick's state kept (the same footfalls: watching does
    not change it), and MuJoCo alone stepping those ticks; both that and stepping from standing are reported."""
    from strider.bench.cw import run_realtime
    from strider.bench.protocol import load_protocol
    from strider.bench.speed import TickStates
    from strider.methods.simbicon.controller import CONTROL_PERIOD as SIMBICON_PERIOD

    model3 = load_model("bipv3")
    course = load_course("gaps-3d")
    ticks = TickStates()
    watched = walk_course(model3, course, character="bipv3", until=0.5, hooks=(ticks,))
    plain = walk_course(model3, course, character="bipv3", until=0.5)
    assert [(f.time, f.heel) for f in watched.footfalls] == [(f.time, f.heel) for f in plain.footfalls]
    assert len(ticks.ticks) == pytest.approx(plain.sim_seconds / SIMBICON_PERIOD, abs=1)   # one state per tick

    path = tmp_path / "cw-realtime.yaml"
    path.write_text("bench: cw-realtime\nparams: {course: gaps-3d, walks: 1, start: [-1, 0], max_steps: 3,"
                    " configs: {a: {regression: local-linear, search: hybrid}}}\n")
    out = run_realtime(load_protocol("cw-realtime", path))
    walk = out.trials[0]
    assert walk["steps"] == 3 and walk["replay_wall_seconds"] > 0
    assert out.summary["replay_realtime_factor"] > 0 and out.summary["overhead"] > 0
    assert out.summary["overhead"] == pytest.approx((walk["wall_seconds"] - walk["replay_wall_seconds"])
                                                    / walk["replay_wall_seconds"])
    assert any("own motion" in row.what for row in out.rows)
