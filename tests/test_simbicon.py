"""SIMBICON (seed 000, Sec. 2.4) on the reference humanoid: walking and running gaits from data, on the real engine."""

from __future__ import annotations

import pytest

import strider
from strider.errors import StriderError
from strider.methods.simbicon.gait import load_gait


@pytest.mark.parametrize("gait, min_speed", [("walk", 0.5), ("run", 1.5)])
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
