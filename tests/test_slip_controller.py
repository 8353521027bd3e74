"""The SLIP preview controller on the engine (Mordatch et al. 2010): standing emerges from the stand gait's goals,
runs repeat bit for bit, gait files and configurations are checked, and a non-finite torque stops the episode."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import numpy as np
import pytest

from strider.bench.protocol import load_protocol
from strider.bench.slip import step_figures
from strider.characters import load_character
from strider.errors import ConfigError, UsageError
from strider.methods.slip.controller import PlanDiverged, ReplanRule, SlipController, SlipParams, build
from strider.methods.slip.gait import load_gait
from strider.sim import CharacterPlacement, Scene, World


def _run(gait: str, seconds: float, config: str = "default", **changes):
    params = SlipParams(goals=load_gait(gait)).configured(config)
    params = dataclasses.replace(params, settle_seconds=0.2, **changes)
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),)))
    ctrl = SlipController(params)
    ctrl.reset(world, world.character())
    for i in range(round(params.settle_seconds / ctrl.control_period)):
        ctrl.settle(i * ctrl.control_period)
        world.step(4)
    t = 0.0
    for _ in range(round(seconds / ctrl.control_period)):
        ctrl.control(t)
        world.step(4)
        t += ctrl.control_period
        if ctrl.has_fallen():
            break
    return world, ctrl


def test_the_stand_gait_keeps_the_humanoid_up_and_near_where_it_stood():
    world, ctrl = _run("stand", 1.5)
    hero = world.character()
    assert not ctrl.has_fallen()
    assert ctrl.stats.plans >= 1500 // 40        # every 10 control steps at least
    assert ctrl.qp.solver.stats.failures == 0
    assert np.linalg.norm(hero.com_position()[:2]) < 0.3


def test_the_hip_task_when_weighted_keeps_the_hips_at_their_standing_offsets():
    """The QP's hip task (off by default, see WholeBodyWeights) on a standing body: the hips stay within 3 cm of
    the offsets from the COM they were measured at, in the heading frame."""
    from strider import quat
    from strider.methods.slip.wbc import WholeBodyWeights

    world, ctrl = _run("stand", 1.0, weights=WholeBodyWeights(hip=0.5))
    hero = world.character()
    assert not ctrl.has_fallen() and ctrl.qp.solver.stats.failures == 0
    heading = quat.yaw(hero.root_pose()[1])
    for side, joint in ctrl.qp.hips.items():
        offset = quat.rotate(quat.about_z(-heading), hero.joint_anchor(joint) - hero.com_position())
        assert np.linalg.norm(offset - ctrl.qp.hip_offsets[side]) < 0.03


def test_a_run_repeats_bit_for_bit():
    runs = [_run("walk", 0.3)[0].character().qpos.copy() for _ in range(2)]
    assert np.array_equal(runs[0], runs[1])


def test_a_non_finite_torque_stops_the_episode_with_a_named_error():
    _, ctrl = _run("stand", 0.02)
    ctrl.qp.torques = lambda targets: np.full(ctrl.qp.nu, np.nan)
    with pytest.raises(PlanDiverged, match="non-finite torques"):
        ctrl.control(0.02)


def test_a_diverged_episode_stops_with_its_state_kept_and_the_cli_saves_it(tmp_path, monkeypatch):
    """A runner that meets a non-finite plan stops with PlanDiverged carrying the physics state of that moment;
    the CLI's handler writes it to a file a user can load."""
    from strider.cli.main import DIVERGED_STATE_FILE, _save_diverged
    from strider.runner import Runner, Scenario

    world_scene = Scene((CharacterPlacement(load_character("bipv3-torque")),))
    ctrl = SlipController(dataclasses.replace(SlipParams(goals=load_gait("stand")), settle_seconds=0.04))
    real_begin = ctrl._begin

    def begin_then_poison(t):
        real_begin(t)
        real_plan = ctrl.planner.plan
        ctrl.planner.plan = lambda *a, **k: dataclasses.replace(real_plan(*a, **k), x=np.full(26, np.nan))

    ctrl._begin = begin_then_poison
    runner = Runner(Scenario(world_scene, ctrl, 0.1))
    with pytest.raises(PlanDiverged, match="not finite") as caught:
        runner.run()
    exc = caught.value
    assert exc.time == pytest.approx(0.0) and np.all(np.isfinite(exc.state)) and exc.state.size > 10
    monkeypatch.chdir(tmp_path)
    assert DIVERGED_STATE_FILE in _save_diverged(exc)
    saved = np.load(tmp_path / DIVERGED_STATE_FILE)
    assert np.array_equal(saved["full_physics"], exc.state) and float(saved["time"]) == exc.time


def test_gait_files_configurations_and_replan_rules_are_checked(tmp_path):
    assert load_gait("run").w_apex > 0 and load_gait("stand").step_length == 0
    bad = tmp_path / "bad.yaml"
    for line, problem in (("step_duration: -0.4", "step_duration: must be >= 0.05"),     # a negative step time
                          ("apex_height: 0.9", "apex_height: must be <= 0.5"),           # beyond the leg's reach
                          ("stride: 2", "stride"),
                          ("heading_each_step: 1", "heading_each_step: expected true or false, got 1")):
        bad.write_text(f"goals:\n  {line}\n")
        with pytest.raises(ConfigError, match=problem):
            load_gait(str(bad))
    bad.write_text("goals:\n  heading_each_step: true\n")
    assert load_gait(str(bad)).heading_each_step
    with pytest.raises(UsageError, match="unknown SLIP configuration 'fast'"):
        SlipParams().configured("fast")
    with pytest.raises(ValueError, match="positive interval"):
        ReplanRule(every=0, on_contact=False)
    source = SlipParams().configured("source")
    assert not source.goals.flight_accel and source.goals.w_drift == 0 and source.ramp_seconds == 0
    source_planner = SlipParams().configured("source").planner
    assert source_planner.refine_iterations == 0 and source_planner.max_evaluations == 5000
    assert source_planner.continuity_weight == 0 < SlipParams().configured("default").planner.continuity_weight
    from strider.control.controller import LocomotionCommand
    assert build(LocomotionCommand(speed=0.5), "walk").params.goals.step_length == pytest.approx(0.3)
    assert load_gait("jump,apex_height=0.4").apex_height == 0.4
    for style, problem in (("jump,apex_height=0.8", "outside"), ("walk,stride=2", "FIELD=VALUE"),
                           ("walk,step_length=far", "needs a number")):
        with pytest.raises(UsageError, match=problem):
            load_gait(style)


@pytest.mark.parametrize(("argv", "problem"), [
    (["slip", "jump", "--height", "0.8"], "apex_height = 0.8 is outside"),    # beyond the paper's highest jump
    (["slip", "walk", "--height", "0.3"], "--height sets a jump's apex"),
    (["slip", "run", "--course", "nowhere"], "unknown course 'nowhere'"),
])
def test_strider_slip_refuses_impossible_commands_before_simulating(argv, problem):
    out = subprocess.run([sys.executable, "-m", "strider", *argv], check=False, capture_output=True, text=True)
    assert out.returncode == 2 and problem in out.stderr and "Traceback" not in out.stderr


def test_the_planner_sees_the_course_the_engine_built():
    from strider.courses import load_course
    from strider.methods.slip.schedule import CourseTerrain, terrain_of

    course = load_course("step-up-0.1")
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),), course=course))
    terrain = terrain_of(world.scene)
    assert isinstance(terrain, CourseTerrain)
    xy = np.array([[[0.0, 0.0], [5.0, 0.0]], [[2.9, 0.1], [3.1, -0.1]]])
    expected = np.array([[course.height(x, y) for x, y in row] for row in xy])
    assert np.array_equal(terrain.heights(xy), expected)
    assert expected[0, 1] - expected[0, 0] == pytest.approx(0.1)
    assert np.array_equal(terrain.sdf(xy), np.array([[course.sdf(x, y) for x, y in row] for row in xy]))


def test_the_cli_refuses_a_position_actuated_character_for_slip():
    out = subprocess.run([sys.executable, "-m", "strider", "walk", "--controller", "slip", "--seconds", "1"],
                         check=False, capture_output=True, text=True)
    assert out.returncode == 2 and "torque" in out.stderr and "Traceback" not in out.stderr


def test_bench_protocols_load_and_steps_are_read_from_touchdowns():
    assert load_protocol("slip-speed").params.cases[0] == (0.0, 1.0, 10.0)
    assert load_protocol("slip-speed").params.strider_cases[0] == (0.0, 1.0, 10.0)
    assert load_protocol("slip-gaits").params.gaits == ("walk", "run", "jump", "jump,apex_height=0.5", "stand")
    dt = 0.004
    touchdowns = [(3.0 + 0.6 * i, "left" if i % 2 else "right", [0.7 * i, 0.0, 1.0]) for i in range(5)]
    ticks = round(6.0 / dt)
    airborne = [False] * ticks
    for i in range(5):                 # 0.04 s of flight before each touchdown after the first
        start = round((3.0 + 0.6 * i - 0.04) / dt)
        airborne[start:start + 10] = [True] * 10
    # the controller's flight log: (start, end, rise); the first flight starts before skip_seconds, the last is
    # one control step (shorter than min_flight)
    flight_log = [(2.96, 2.996, 0.5), (3.56, 3.596, 0.02), (4.16, 4.196, 0.04), (5.0, 5.0, 0.9)]
    trial = {"touchdowns": touchdowns, "heading": 0.0, "control_period": dt, "airborne": airborne,
             "double": [False] * ticks, "flight_log": flight_log}
    figures = step_figures(trial, skip_seconds=3.0, min_flight=0.02)
    assert figures["steps"] == 4
    assert figures["mean_step_length"] == pytest.approx(0.7) and figures["mean_step_duration"] == pytest.approx(0.6)
    assert figures["flight_share"] == 1.0 and figures["double_support_share"] == 0.0
    assert figures["flights"] == 2 and figures["mean_apex_rise"] == pytest.approx(0.03)
    trial["flight_log"] = []
    assert step_figures(trial, 3.0, 0.02)["mean_apex_rise"] is None


def test_the_flight_log_measures_each_flights_rise_above_its_higher_end():
    """h_eps as the planner's Eq. 23 reads it: the COM's highest point in a flight above the higher of its take-off
    and landing heights; a flight still under way counts as it stands."""
    from strider.methods.slip.flights import FlightLog

    dt, log = 0.004, FlightLog()
    heights = [1.0 + 0.02 * math.sin(math.pi * k / 6) - 0.01 * (k == 9) for k in range(10)]   # lands 3 cm lower
    for k in range(14):
        up = 2 <= k < 12
        log.observe(k * dt, up, heights[k - 2] if up else 1.0)
    log.observe(14 * dt, True, 0.5)                     # a one-step flight, still under way
    (flight,) = log.flights
    assert flight.start == pytest.approx(2 * dt) and flight.seconds(dt) == pytest.approx(10 * dt)
    assert flight.rise == pytest.approx(0.02)           # 1.02 m at its top, over the 1.00 m take-off
    assert len(log.all()) == 2 and log.all()[1].rise == 0.0
    assert log.lasting(0.02, dt) == [flight] and log.lasting(0.02, dt, since=3 * dt) == []


def test_the_controller_keeps_one_clock_when_the_runner_restarts_its_own_after_a_settling_walk():
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import locomotion_scenario
    from strider.runner import Runner

    scenario = locomotion_scenario("slip", LocomotionCommand(speed=0.6), load_character("bipv3-torque"),
                                   style="walk", seconds=0.1, settle_seconds=0.2, config="source")
    ctrl = scenario.controller
    runner = Runner(scenario)
    runner.start()                      # 1 s of the controller's own settle, then 0.2 s of walking
    walked_until = ctrl._last_t
    assert walked_until == pytest.approx(ctrl.settle_seconds + 0.2 - ctrl.control_period)
    runner.advance(0.1)                 # the runner's clock is back at 0; the controller's goes on
    assert ctrl._last_t == pytest.approx(walked_until + 0.1)
    assert all(t <= walked_until + 0.1 for t, _, _ in ctrl.stats.touchdowns)
    assert not ctrl.has_fallen()


def test_a_gait_change_reaches_the_planner_and_the_gait_bench_runs_a_transition(tmp_path):
    """The transition case of protocol 1 through the CLI on a short protocol: the controller changes gait within
    the episode (the planner's step length after the change is the new gait's) and the results say so."""

    from strider.bench.slip import GaitTrial, gait_trial
    from strider.methods.slip.controller import configured_goals
    from strider.methods.slip.gait import load_gait

    results = _short_gait_bench(tmp_path, "  gaits: [stand]\n  seconds: 0.2\n",
                                "  transitions:\n    - [[stand, 0.1], [walk, 0.1]]\n")
    cases = {trial["case"]: trial for trial in results["trials"]}
    assert set(cases) == {"stand", "stand -> walk"}
    assert cases["stand -> walk"]["legs"] == [["stand", 0.1], ["walk", 0.1]]
    walk = configured_goals(load_gait("walk"), "default")
    record = gait_trial(GaitTrial("t", "bipv3-torque", "default", (("stand", 0.1), ("walk", 0.1))))
    assert record["final_goals"]["step_length"] == walk.step_length


def _short_gait_bench(tmp_path, gaits: str, extra: str) -> dict:
    """``strider bench slip-gaits`` on a short protocol (``gaits``: its gaits and seconds; ``extra``: more params),
    serially; its JSON results."""
    import json

    out = _short_bench(tmp_path, "slip-gaits",
                       f"{gaits}  skip_seconds: 0\n  min_flight: 0.02\n  tolerance: 0.1\n{extra}"
                       "anchors:\n  - {metric: step_accuracy, value: x, source: y, target: 0.1}\n"
                       "  - {metric: transitions, value: x, source: y, target: 0}\n",
                       "--workers", "1", "--backend", "serial", "--no-progress")
    assert out.returncode == 0, out.stderr
    return json.loads(next(tmp_path.glob("slip-gaits-slip-*.json")).read_text())


def _short_bench(tmp_path, bench: str, params: str, *flags: str) -> subprocess.CompletedProcess:
    """``strider bench BENCH`` through the CLI on a short protocol whose params block is ``params``."""
    protocol = tmp_path / f"{bench}.yaml"
    protocol.write_text(f"bench: {bench}\ndescription: short\ncharacter: bipv3-torque\nstyle: null\nseed: 0\n"
                        f"params:\n{params}")
    return subprocess.run([sys.executable, "-m", "strider", "bench", bench, "--protocol", str(protocol), *flags,
                           "--out", str(tmp_path)], check=False, capture_output=True, text=True)


def test_the_gait_bench_runs_each_case_once_per_planner_seed_and_pools_their_steps(tmp_path):
    """The walks are chaotic, so protocol 1 runs every case once per planner seed: one record per seed, the
    planner's CMA-ES seeded differently (the two plans differ), a row over all of them and one row per seed."""

    results = _short_gait_bench(tmp_path, "  gaits: [walk]\n  seconds: 0.3\n", "  planner_seeds: [1, 2]\n")
    assert [(t["case"], t["planner_seed"]) for t in results["trials"]] == [("walk", 1), ("walk", 2)]
    first, second = results["trials"]
    assert (first["evaluations"], first["touchdowns"]) != (second["evaluations"], second["touchdowns"])
    whats = [row["what"] for row in results["rows"]]
    assert whats[0].startswith("walk: ") and ("no fall in 2" in whats[0] or "/2 fell" in whats[0])
    assert [w.strip().split(":")[0] for w in whats[1:]] == ["planner seed 1", "planner seed 2"]


def test_a_jump_row_is_judged_on_its_flights_and_apex_and_says_them(tmp_path):
    """A gait that rewards an apex above ``jump_from`` is a jump: its row gives the measured apex beside the goal,
    and it is met only if its steps fly and rise to ``apex_share`` of the goal (a 0.3 s start cannot)."""
    results = _short_gait_bench(tmp_path, '  gaits: ["jump,apex_height=0.4"]\n  seconds: 0.3\n', "")
    row = results["rows"][0]
    assert row["what"].startswith("jump,apex_height=0.4: ")
    assert "(goal 40 cm)" in row["measured"] and row["met"] is False
    (trial,) = results["trials"]
    assert trial["flights"] == 0 and isinstance(trial["flight_log"], list)   # the count, and the controller's log


def test_a_slip_run_reports_its_plans_and_qp_fallbacks_in_the_result_and_the_summary():
    """Every result carries the controller's report; SLIP's counts its plans and its QP's fallbacks, and the
    summary names the fallbacks when there were any."""
    import dataclasses
    import json

    import strider
    from strider.cli.report import summary

    result = strider.stand(controller="slip", character="bipv3-torque", seconds=0.2)
    report = json.loads(json.dumps(result.as_dict()))["controller"]
    assert report["plans"] > 0 and report["evaluations"] > 0 and report["flights"] == 0   # standing: no flight
    assert report["qp_fallbacks"] >= report["qp_failures"] >= 0
    fell_back = dataclasses.replace(result, controller={**result.controller, "qp_fallbacks": 3, "qp_failures": 1})
    assert "fell back from its first solver 3 time(s); no solver answered 1 time(s)" in summary(fell_back)
    if result.controller["qp_fallbacks"] == 0:
        assert "fell back" not in summary(result)
    flew = dataclasses.replace(result, controller={**result.controller, "flights": 2, "highest_flight_rise": 0.031})
    assert "It flew 2 time(s); the COM rose at most 3.1 cm" in summary(flew) and "flew" not in summary(result)


def test_pooled_step_figures_weigh_each_episode_by_its_steps():
    from strider.bench.slip import pooled_step_figures

    a = {"steps": 3, "mean_step_length": 0.6, "mean_step_duration": 0.5, "flight_share": 0.0,
         "double_support_share": 1.0, "flights": 0, "mean_apex_rise": None}
    b = {"steps": 1, "mean_step_length": 0.2, "mean_step_duration": 0.9, "flight_share": 1.0,
         "double_support_share": 0.0, "flights": 2, "mean_apex_rise": 0.1}
    c = {"steps": 1, "mean_step_length": 0.2, "mean_step_duration": 0.9, "flight_share": 1.0,
         "double_support_share": 0.0, "flights": 1, "mean_apex_rise": 0.4}
    none = {"steps": 0, "mean_step_length": None, "mean_step_duration": None, "flight_share": None,
            "double_support_share": None, "flights": 0, "mean_apex_rise": None}
    assert pooled_step_figures([b, c])["mean_apex_rise"] == pytest.approx(0.2)   # weighted by flights
    together = pooled_step_figures([a, b, none])
    assert together["steps"] == 4
    assert together["mean_step_length"] == pytest.approx(0.5) and together["mean_step_duration"] == pytest.approx(0.6)
    assert together["flight_share"] == pytest.approx(0.25) and together["double_support_share"] == pytest.approx(0.75)
    assert pooled_step_figures([none])["mean_step_length"] is None


def test_planner_seeds_must_be_whole_numbers(tmp_path):
    out = _short_bench(tmp_path, "slip-gaits",
                       "  gaits: [stand]\n  seconds: 0.2\n  skip_seconds: 0\n  min_flight: 0.02\n  tolerance: 0.1\n"
                       "  planner_seeds: [1.5]\nanchors: []\n")
    assert out.returncode == 2 and "planner_seeds" in out.stderr and "Traceback" not in out.stderr


def test_a_planner_seed_named_twice_is_refused(tmp_path):
    """The same seed twice would be the same episode counted twice in a gait's falls and steps."""
    out = _short_bench(tmp_path, "slip-gaits",
                       "  gaits: [stand]\n  seconds: 0.2\n  skip_seconds: 0\n  min_flight: 0.02\n  tolerance: 0.1\n"
                       "  planner_seeds: [1, 2, 1]\nanchors: []\n")
    assert out.returncode == 2 and "twice" in out.stderr and "Traceback" not in out.stderr


def test_a_transition_needs_gaits_held_for_a_positive_time(tmp_path):
    out = _short_bench(tmp_path, "slip-gaits",
                       "  gaits: [stand]\n  seconds: 0.2\n  skip_seconds: 0\n  min_flight: 0.02\n  tolerance: 0.1\n"
                       "  transitions:\n    - [[walk, 0], [run, 1]]\nanchors: []\n")
    assert out.returncode == 2 and "transitions" in out.stderr and "Traceback" not in out.stderr


def test_the_speed_bench_splits_the_wall_time_between_planning_and_the_rest(tmp_path):
    """Protocol 4 on a short walk through the CLI: how much of the wall time went to planning, and pycma's own
    share of a generation measured beside it."""
    import json

    out = _short_bench(tmp_path, "slip-speed", "  config: source\n  evaluations: 150\n"
                       "  cases:\n    - {every: 10, on_contact: true, seconds: 0.08}\n"
                       "  strider_cases:\n    - {every: 10, on_contact: true, seconds: 0.08}\nanchors: []\n")
    assert out.returncode == 0, out.stderr
    results = json.loads(next(tmp_path.glob("slip-speed-slip-*.json")).read_text())
    trial, strider = results["trials"]
    assert (trial["config"], strider["config"]) == ("source", "default")
    assert trial["plans"] >= 2
    assert trial["evaluations_per_plan"] <= 1 + 150 + 15     # the start point, then whole generations
    # strider's row plans at its own budget, not the protocol's 150
    assert strider["evaluations_per_plan"] > 1 + 150 + 15
    assert any(row["what"].startswith("strider's configuration") for row in results["rows"])
    assert 0.0 < trial["plan_seconds"] < trial["wall_seconds"]
    assert 0.0 < trial["planning_share"] < 1.0
    assert results["summary"]["cma_generation_seconds"] > 0.0


def test_the_torso_task_turns_a_folded_spine_back_upright():
    """strider's torso task (WholeBodyWeights.torso): with the spine folded forward 0.5 rad at both joints and the
    head turned back level by the neck, the head task alone has nothing to correct; with the torso task the QP's
    torques straighten the spine."""
    from strider import quat
    from strider.control.falls import tilt
    from strider.methods.slip.wbc import BodyTargets, WholeBodyQP, WholeBodyWeights

    tilts = {}
    for weight in (0.0, 0.5):
        world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),)))
        hero = world.character()
        qp = WholeBodyQP(world, hero, rest_leg=0.9, weights=WholeBodyWeights(torso=weight))   # rest pose: upright
        roles = hero.spec.roles
        for joint in roles.spine:
            hero.set_joint_position(joint, quat.about_y(0.5))
        hero.set_joint_position(roles.neck, quat.about_y(-1.0))
        world.forward()
        before = tilt(hero.body_rotation(roles.torso)[:, 2])
        for _ in range(25):    # 0.1 s of control at 250 Hz
            hero.motor_torques[:] = qp.torques(BodyTargets(com_accel=np.zeros(3), heading=0.0))
            world.step(4)
        tilts[weight] = tilt(hero.body_rotation(roles.torso)[:, 2])
        assert qp.solver.stats.failures == 0
    assert before > 0.9
    # The rest task alone straightens it some (0.19 rad in 0.1 s); with the torso task half as much again (0.29).
    assert before - tilts[0.5] > 1.3 * (before - tilts[0.0]) > 0.0


def test_the_torso_rescue_moves_the_weights_with_the_tilt_and_leaves_an_upright_body_alone():
    from strider.methods.slip.wbc import WholeBodyWeights

    plain = WholeBodyWeights(com=100.0, torso=1.0)
    assert plain.at_tilt(80.0) is plain                      # off unless asked (the source's configuration)
    w = WholeBodyWeights(com=100.0, torso=1.0, rescue_from_deg=5.0, rescue_full_deg=15.0, rescue_torso=50.0,
                         rescue_com=10.0)
    assert w.at_tilt(5.0) is w and w.at_tilt(0.0) is w       # upright: the same weights, so the same bits
    half = w.at_tilt(10.0)
    assert (half.torso, half.com) == (25.5, 55.0)
    for tipped in (15.0, 40.0):
        assert (w.at_tilt(tipped).torso, w.at_tilt(tipped).com) == (50.0, 10.0)
    with pytest.raises(UsageError, match="rescue_from_deg"):
        WholeBodyWeights(rescue_from_deg=20.0, rescue_full_deg=15.0)


def test_strider_configuration_rescues_a_tipped_torso_and_the_source_does_not():
    from strider.methods.slip.controller import SlipParams

    assert SlipParams().configured("default").weights.rescue_from_deg == 5.0
    assert SlipParams().configured("source").weights.rescue_from_deg == math.inf
