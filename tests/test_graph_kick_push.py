"""The kick's push test (control-graphs P4): a one-pass skill played pass after pass, pushed once a pass at its
peak, on MuJoCo with the shipped kick."""

from __future__ import annotations

import pytest

from strider.bench.protocol import protocol_path
from strider.cli.main import main
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.push_test import CyclePushParams, cycle_push_trial, peak_fragment
from strider.methods.graphs.reference import TIMESTEP
from strider.methods.graphs.search import SearchParams
from strider.methods.graphs.skills import load_named_skill


@pytest.fixture(scope="module")
def kick():
    return load_named_skill("kick")


def test_the_kick_is_pushed_at_its_peak(kick):
    peak = peak_fragment(kick)
    player = SkillPlayer(kick)
    player.start()
    for _ in range(peak):
        assert not player.step()
    feet = [leg.foot for leg in player.runner.character.spec.roles.legs.values()]
    heights = sorted(float(player.world.body_position(foot)[2]) for foot in feet)
    assert heights[-1] > 0.6 and heights[0] < 0.15   # one foot up at the kick's height, the other on the ground


def test_a_hard_push_topples_the_kick_in_its_pass_and_a_light_one_does_not(kick):
    peak = peak_fragment(kick)
    push_time = kick.reference.bounds[peak] * TIMESTEP
    hard = cycle_push_trial(kick, 0, peak, CyclePushParams(force=2000.0, cycles=3))
    assert hard.fell and hard.cycles == 0 and hard.seconds > push_time and not hard.gave_up
    assert cycle_push_trial(kick, 0, peak, CyclePushParams(force=2000.0, cycles=3)) == hard
    light = cycle_push_trial(kick, 0, peak, CyclePushParams(force=1.0, cycles=1))
    assert not light.fell and light.cycles == 1 and light.searched_fragments == 0
    with pytest.raises(ValueError, match="cycles"):
        CyclePushParams(cycles=0)


def test_a_searched_kick_searches_the_fragments_before_the_push_and_repeats(kick):
    peak = peak_fragment(kick)
    search = SearchParams(particles=16, retries=2)
    trial = cycle_push_trial(kick, 0, peak, CyclePushParams(force=1.0, cycles=1), search)
    assert trial.searched_fragments >= peak
    assert cycle_push_trial(kick, 0, peak, CyclePushParams(force=1.0, cycles=1), search) == trial


def test_a_bad_kick_force_in_the_protocol_is_one_message(tmp_path):
    bad = tmp_path / "bad.yaml"
    shipped = protocol_path("graph-push").read_text()
    bad.write_text(shipped.replace("kick_forces: [400, 290, 0]", "kick_forces: [400, -1]"))
    assert main(["bench", "graph-push", "--protocol", str(bad), "--out", str(tmp_path)]) == 2
    # an unknown kick is one message (exit 2) and no result
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(shipped.replace("kick: kick", "kick: moonkick"))
    assert main(["bench", "graph-push", "--protocol", str(unknown), "--out", str(tmp_path)]) == 2
    assert not list(tmp_path.glob("graph-push*.json"))
