"""SIMBICON on the planar walker of seed 000, Sec. 3.6 (planar7), and gait tuning by CMA-ES: on the real engine."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from strider.characters import load_character
from strider.errors import StriderError, UsageError
from strider.methods.simbicon.controller import SIMBICON
from strider.methods.simbicon.gait import DATA_DIR, load_gait, parse_gait
from strider.methods.simbicon.tuning import measure, read_tuning, tune, with_values
from strider.runner import Runner, Scenario
from strider.sim import CharacterPlacement, Scene

STEP_TOLERANCE = 0.02   # m: the base gait's decision, 0.36 +- 0.02 m (coros-walking.md, "Decisions for the planners")


def test_planar_walk_is_the_cw_base_gait():
    """The shipped planar walk steps 0.36 m on average (the source's A_base) and does not fall in 20 s."""
    figures = measure(load_gait("walk", "planar"), "planar7", 20.0, 4.0)
    assert not figures["fell"]
    assert figures["steps"] >= 30
    assert abs(figures["mean_step_length"] - 0.36) <= STEP_TOLERANCE
    assert figures["flight_share"] == 0.0


def test_planar_run_has_a_flight_in_most_steps():
    figures = measure(load_gait("run", "planar"), "planar7", 20.0, 4.0)
    assert not figures["fell"]
    assert figures["flight_share"] >= 0.8
    assert figures["mean_speed"] > 2.0


def test_planar_feedback_matters():
    """Without Eq. 2.1's feedback the planar walk falls: the feedback, not the open-loop targets, balances it."""
    from strider.methods.simbicon.gait import Feedback

    gait = dataclasses.replace(load_gait("walk", "planar"), feedback=Feedback(0.0, 0.0, 0.0, 0.0))
    result = Runner(Scenario(Scene((CharacterPlacement(load_character("planar7")),)), SIMBICON(gait=gait),
                             seconds=20.0)).run()
    assert result.fell


def test_a_style_name_means_each_bodys_own_gait():
    """'walk' on planar7 is the planar walk: the same controller object walks both bodies from one name."""
    planar = SIMBICON(gait="walk")
    Runner(Scenario(Scene((CharacterPlacement(load_character("planar7")),)), planar, seconds=0.5)).run()
    assert planar.gait.body == "planar"
    humanoid = SIMBICON(gait="walk")
    Runner(Scenario(Scene((CharacterPlacement(load_character("bipv3")),)), humanoid, seconds=0.5)).run()
    assert humanoid.gait.body == "humanoid"


def test_a_gait_for_another_body_is_refused():
    path = str(DATA_DIR / "planar" / "walk.yaml")
    with pytest.raises(StriderError, match="planar character, not a humanoid"):
        load_gait(path, "humanoid")
    scene = Scene((CharacterPlacement(load_character("bipv3")),))
    with pytest.raises(UsageError, match="drives a planar character"):
        Runner(Scenario(scene, SIMBICON(gait=load_gait(path, "planar")), seconds=0.1)).run()


def test_a_planar_walker_cannot_be_told_to_turn():
    from strider.control.controller import LocomotionCommand

    scene = Scene((CharacterPlacement(load_character("planar7")),))
    with pytest.raises(UsageError, match="cannot turn"):
        Runner(Scenario(scene, SIMBICON(LocomotionCommand(heading=1.0)), seconds=0.1)).run()


def test_an_unknown_style_is_refused_before_anything_runs():
    with pytest.raises(UsageError, match="unknown SIMBICON gait 'hop'"):
        SIMBICON(gait="hop")


def _short_tuning(tmp_path, seconds: float = 3.0):
    data = yaml.safe_load((DATA_DIR / "planar" / "walk.yaml").read_text())
    data["tuning"]["seconds"] = seconds
    data["tuning"]["skip_seconds"] = 1.0
    data["states"][0]["swing_hip"] = 0.55     # a worse start than the shipped values, for the search to mend
    path = tmp_path / "walk.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_tuning_improves_on_its_start_and_writes_a_valid_gait(tmp_path):
    from strider.methods.simbicon.tuning import cost
    from strider.parallel import Executor

    path = _short_tuning(tmp_path)
    data = yaml.safe_load(path.read_text())
    spec = read_tuning(data, str(path))
    start = cost(measure(parse_gait(data, str(path), "walk", "planar"), "planar7", spec.seconds,
                         spec.skip_seconds), spec)
    with Executor("serial") as executor:
        tuned, best, result = tune(str(path), "planar", executor, maxfevals=20, seed=3)
    assert best < start
    assert result.evaluations == 20
    gait = parse_gait(tuned, "tuned", "walk", "planar")
    assert cost(measure(gait, "planar7", spec.seconds, spec.skip_seconds), spec) == best
    for key, low, high in spec.parameters:      # every tuned number stays inside its bounds
        node = tuned
        for part in key.split("."):
            node = node[int(part)] if isinstance(node, list) else node[part]
        assert low <= node <= high


def test_with_values_sets_only_the_named_numbers():
    data = {"states": [{"swing_hip": 0.1, "swing_knee": 1.0}], "feedback": {"cv_sagittal": 0.2}}
    out = with_values(data, ["states.0.swing_hip", "feedback.cv_sagittal"], [0.5, 0.3])
    assert out == {"states": [{"swing_hip": 0.5, "swing_knee": 1.0}], "feedback": {"cv_sagittal": 0.3}}
    assert data["states"][0]["swing_hip"] == 0.1


@pytest.mark.parametrize("change, message", [
    (lambda t: t["parameters"].update({"states.0.nosuch": [0, 1]}), "no such field"),
    (lambda t: t["parameters"].update({"states.0.swing_hip": [1, 0]}), "bounds must rise"),
    (lambda t: t["parameters"].update({"states.0.ends_on": [0, 1]}), "not a number"),
    (lambda t: t.update({"parameters": {}}), "at least one"),
    (lambda t: t.update({"seconds": -1}), "tuning.seconds"),
])
def test_a_bad_tuning_section_names_the_field(change, message):
    data = yaml.safe_load((DATA_DIR / "planar" / "walk.yaml").read_text())
    change(data["tuning"])
    with pytest.raises(StriderError, match=message):
        read_tuning(data, "walk.yaml")


def test_optimize_gait_cli_refuses_bad_input(tmp_path, capsys):
    from strider.cli.main import main

    assert main(["optimize", "gait", "walk", "--budget", "0", "--out", str(tmp_path)]) == 2
    assert "--budget" in capsys.readouterr().err
    assert main(["optimize", "gait", "hop", "--out", str(tmp_path)]) == 2
    assert "unknown SIMBICON planar gait 'hop'" in capsys.readouterr().err
    assert main(["optimize", "gait", "walk", "--character", "bipv3", "--out", str(tmp_path)]) == 2
    assert "tuning" in capsys.readouterr().err   # the humanoid walk has no tuning section
    assert main(["optimize", "gait", "walk", "--workers", "0", "--backend", "serial", "--out", str(tmp_path)]) == 2
    assert "--workers" in capsys.readouterr().err   # refused even where a serial run would ignore the count
    assert not list(tmp_path.iterdir())            # and nothing was written


def test_the_gaits_bench_refuses_a_run_it_does_not_walk(tmp_path):
    from strider.bench.protocol import load_protocol

    text = (Path(__file__).parents[1] / "src/strider/bench/protocols/simbicon-gaits.yaml").read_text()
    bad = tmp_path / "simbicon-gaits.yaml"
    bad.write_text(text.replace("runs: [run]", "runs: [sprint]"))
    with pytest.raises(StriderError, match="runs.*sprint"):
        load_protocol("simbicon-gaits", str(bad))


def test_a_free_root_has_no_single_pitch_coordinate():
    from strider.sim import World

    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    with pytest.raises(UsageError, match="free root"):
        world.character().root_pitch()


def test_optimize_gait_cli_writes_the_tuned_gait_and_resumes(tmp_path):
    """A short tuning through the CLI writes a loadable gait; resuming the finished run from its checkpoint with
    the same budget gives the same file."""
    from strider.cli.main import main

    path = _short_tuning(tmp_path, seconds=2.0)
    out = tmp_path / "out"
    out.mkdir()
    args = ["optimize", "gait", str(path), "--budget", "10", "--backend", "serial", "--out", str(out), "--json"]
    assert main(args) == 0
    first = (out / "walk.tuned.yaml").read_text()
    parse_gait(yaml.safe_load(first), "tuned", "walk", "planar")
    assert main([*args, "--resume"]) == 0
    assert (out / "walk.tuned.yaml").read_text() == first
    assert (out / "walk.convergence.png").stat().st_size > 0


def test_the_gaits_bench_times_a_gait_apart_from_its_recorded_walk():
    """The recorded walk (falls, steps) and the timing are separate tasks, so the bench can time each gait on its
    own after the parallel walks; the timing's ratios are the ones its walls give."""
    from strider.bench.simbicon import GaitCase, gait_case, gait_timing

    case = GaitCase("planar7", "walk", seconds=0.6, skip_seconds=0.0, timing_repeats=2)
    walk = gait_case(case)
    assert not walk["fell"] and "overhead" not in walk and "realtime_factor" not in walk
    timing = gait_timing(case)
    assert timing["timed_sim_seconds"] == pytest.approx(0.6) and timing["timing_repeats"] == 2
    assert 0 < timing["replay_wall_seconds"] and 0 < timing["bare_wall_seconds"]
    assert timing["realtime_factor"] == pytest.approx(0.6 / timing["timed_wall_seconds"])
    assert timing["overhead"] == pytest.approx(
        (timing["timed_wall_seconds"] - timing["replay_wall_seconds"]) / timing["replay_wall_seconds"])
