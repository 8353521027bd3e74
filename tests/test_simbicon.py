"""SIMBICON (seed 000, Sec. 2.4) on the reference humanoid: walking and running gaits from data, on the real engine."""

from __future__ import annotations

import numpy as np
import pytest

import strider
from strider.errors import StriderError
from strider.methods.simbicon.gait import load_gait


@pytest.mark.parametrize("gait, min_speed", [("walk", 0.5), ("walk-spline", 0.5), ("run", 1.5)])
def test_walks_and_runs_twenty_seconds(gait, min_speed):
    result = strider.walk(seconds=20.0, controller="simbicon", style=gait)
    assert not result.fell
    assert result.mean_speed_mps > min_speed
    assert result.steps > 20


def test_same_inputs_give_the_same_trajectory():
    a = strider.walk(seconds=2.0, controller="simbicon")
    b = strider.walk(seconds=2.0, controller="simbicon")
    assert (a.final_state == b.final_state).all()


def test_balance_feedback_matters():
    """Without Eq. 2.1's feedback the open-loop walk falls: the test of the feedback can fail."""
    import dataclasses

    from strider.characters import load_character
    from strider.methods.simbicon.controller import SIMBICON
    from strider.methods.simbicon.gait import Feedback
    from strider.runner import Runner, Scenario
    from strider.sim import CharacterPlacement, Scene

    gait = dataclasses.replace(load_gait("walk"), feedback=Feedback(0.0, 0.0, 0.0, 0.0))
    result = Runner(Scenario(Scene((CharacterPlacement(load_character("bipv3")),)), SIMBICON(gait=gait),
                             seconds=20.0)).run()
    assert result.fell


def test_a_bad_gait_file_names_the_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("feedback: {cd_sagittal: 0, cv_sagittal: 0.2, cd_coronal: 0, cv_coronal: x}\n"
                   "states: [{dwell: 0.3, swing_hip: 0.5, swing_knee: 1.1, swing_ankle: 0.6, stance_knee: 0.05, "
                   "stance_ankle: 0}]\n")
    with pytest.raises(StriderError, match="feedback.cv_coronal"):
        load_gait(str(bad))


def test_spline_targets_follow_their_curve_through_the_state():
    """walk-spline's timed state sweeps the swing knee 1.0 -> 1.2 -> 0.7 over its 0.3 s: the servo target the
    controller writes is the curve at t / dwell, not one pose."""
    from strider.characters import load_character
    from strider.methods.simbicon.controller import SIMBICON
    from strider.sim import CharacterPlacement, Scene, World

    gait = load_gait("walk-spline")
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    ch = world.character()
    controller = SIMBICON(gait=gait)
    controller.reset(world, ch)
    curve, dwell = gait.states[0].swing_knee, gait.states[0].dwell
    seen = []
    while controller.state_index == 0 and controller.steps == 0:
        controller.control(world.time)
        knee = ch.joints[ch.spec.roles.legs[controller.swing].knee].servos[0]
        seen.append((controller.state_time, float(ch.servo_targets[knee])))
        for _ in range(round(controller.control_period / world.timestep)):
            world.step()
    times, targets = np.array(seen[:-1]).T      # the last call already began the next state
    assert targets.max() > 1.15 and targets[-1] < 0.8
    assert np.allclose(targets, [curve(t / dwell) for t in times])


@pytest.mark.parametrize("target, words", [
    ("{phases: [0, 0.5], values: [0.3]}", "same length"),
    ("{phases: [0.5, 0.2], values: [0.3, 0.4]}", "rise strictly"),
    ("{phases: [0, 1], values: [0.3, 4.0]}", "within"),
    ("{phases: [0, 0.2, 0.4, 0.6, 0.8, 0.9, 1], values: [0, 0, 0, 0, 0, 0, 0]}", "at most 6 knots"),
    ("{phases: [0, 1], heights: [0, 1]}", "unknown field"),
    ("[0.3, 0.4]", "a number or knots"),
])
def test_a_bad_target_curve_names_the_field(target, words, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("feedback: {cd_sagittal: 0, cv_sagittal: 0.2, cd_coronal: 0, cv_coronal: 0.2}\n"
                   f"states: [{{dwell: 0.3, swing_hip: 0.5, swing_knee: {target}, swing_ankle: 0.6, "
                   "stance_knee: 0.05, stance_ankle: 0}]\n")
    with pytest.raises(StriderError, match=words) as err:
        load_gait(str(bad))
    assert "swing_knee" in str(err.value)
