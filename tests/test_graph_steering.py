"""Steering a searched walk to waypoints (strider's; docs/graphs.md, "Steering"), on MuJoCo with the DeepMimic
humanoid, the shipped walk and the real DeepMimic walk clip."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strider import quat
from strider.bench.protocol import protocol_path
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.graphs.features import facing_yaw
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.reference import build_reference
from strider.methods.graphs.scoring import DEFAULT_WEIGHTS, cost
from strider.methods.graphs.search import SearchParams
from strider.methods.graphs.skills import load_named_skill
from strider.methods.graphs.steering import Steering, SteerParams
from strider.motion.files import load_clip
from strider.motion.mocap import mocap_dir

MOCAP = mocap_dir()


@pytest.fixture(scope="module")
def walk():
    return load_named_skill("walk")


@pytest.mark.skipif(MOCAP is None, reason="no shared mocap folder (set STRIDER_MOCAP)")
def test_a_turned_reference_ends_as_the_clip_turned_and_measured_again():
    clip = load_clip(MOCAP / "deepmimic" / "humanoid3d_walk.txt")
    straight = build_reference(clip)
    turn = math.radians(90)
    measured = build_reference(clip.turning(turn))
    worked_out = straight.turning(turn)
    assert np.array_equal(worked_out.targets, straight.targets)   # the servos' targets do not turn
    for ours, theirs, before in zip(worked_out.ends, measured.ends, straight.ends):
        assert quat.angle_between(ours.root_quat, theirs.root_quat) < 1e-3
        assert np.linalg.norm(ours.com - theirs.com) < 5e-3
        # what is left out (the momentum of the turn itself) is a small share of what the turn changes
        assert cost(ours, theirs, 0.0, DEFAULT_WEIGHTS) < 0.15 * cost(before, theirs, 0.0, DEFAULT_WEIGHTS)


def test_a_fragment_scored_in_its_own_facing_heading_scores_as_without_one(walk):
    first, second = FragmentRunner(walk.reference), FragmentRunner(walk.reference)
    state = walk.reference.start_state
    action = np.zeros(first.layout.size)
    first.world.set_integration_state(state)
    heading = facing_yaw(first.world.character().root_pose()[1])
    _, plain = first.sample(state, 0, action, 0.0)
    _, kept = second.sample(state, 0, action, 0.0, heading)
    assert kept.cost == pytest.approx(plain.cost, abs=1e-9)
    _, turned = second.sample(state, 0, action, 0.0, heading + 0.5)
    assert turned.cost > plain.cost + 1.0   # half a radian off the heading costs the root term and the COM's


@pytest.mark.parametrize("side", [1, -1])
def test_the_steered_walk_turns_toward_its_waypoint(walk, side):
    # the searches on a real process pool, as the command line runs them (fewer particles give up on the right)
    steering = Steering(walk, SteerParams(search=SearchParams(particles=200)), backend="processes", workers=2)
    result = steering.run([(0.0, 4.0 * side)], 2.5)
    assert not result.gave_up
    _, y, heading = result.track[-1, 1:]
    # steered, the walk comes round to face the side its waypoint is on
    assert side * heading > math.radians(45)
    assert side * y > 0.3
    assert set(np.sign(result.turns[:5])) == {side}   # it starts by turning that way


def test_a_steered_walk_that_falls_gets_up_and_steers_on(walk):
    # searches too small to carry the walk (4 particles, one rollback) give up within a second; the get-up is the
    # default searched one, on a real process pool
    failing = SearchParams(particles=4, retries=1)
    ended = Steering(walk, SteerParams(search=failing, recover=False), backend="processes", workers=2).run(
        [(0.0, 4.0)], 2.0)
    assert ended.gave_up and len(ended.falls) == 1 and ended.stood == ()
    assert ended.seconds == pytest.approx(ended.falls[0]) and ended.seconds < 2.0   # it ended at the fall

    steering = Steering(walk, SteerParams(search=failing), backend="processes", workers=2)
    result = steering.run([(0.0, 4.0)], 2.0)
    assert result.falls == ended.falls   # the same searches, the same fall
    assert not result.gave_up and len(result.stood) == 1
    assert result.stood[0] > result.falls[0] + 1.0   # a ragdoll and a whole get-up in between
    assert result.seconds >= result.stood[0]
    height = steering.world.character().root_pose()[0][2]
    assert height > 0.8   # up on its feet (the pelvis of the standing humanoid is about 0.9 m high)


def test_steering_refuses_impossible_settings(walk):
    with pytest.raises(UsageError, match="largest turn"):
        SteerParams(max_turn=500)
    with pytest.raises(UsageError, match="reach"):
        SteerParams(reach=0)
    with pytest.raises(UsageError, match="plays once"):
        Steering(load_named_skill("getup_faceup"))
    with pytest.raises(UsageError, match="waypoints"):
        Steering(walk).run([], 1.0)


def test_steer_command_reports_bad_input_in_one_line(capsys):
    assert main(["graph", "steer", "--to", "1,x"]) == 2
    assert "--to '1,x'" in capsys.readouterr().err
    assert main(["graph", "steer", "--to", "1,2", "--max-turn", "500"]) == 2
    assert main(["graph", "steer", "getup_faceup", "--to", "1,2"]) == 2
    assert main(["graph", "steer", "--to", "1,2", "--seconds", "-1"]) == 2
    assert main(["graph", "steer", "nosuchskill", "--to", "1,2"]) == 2


def test_steer_help_gives_the_settings_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["graph", "steer", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    defaults = SteerParams()
    for flag, value in (("--max-turn", defaults.max_turn), ("--reach", defaults.reach),
                        ("--stretch", defaults.stretch)):
        described = text.split(flag)[-1].split(" --")[0]   # its entry in the options list
        assert f"(default: {value:g}" in described, flag


def test_graph_steer_bench_refuses_a_bad_course(tmp_path):
    protocol = protocol_path("graph-steer").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(protocol.replace("left: [[0, 4]]", "left: [[0, four]]"))
    assert main(["bench", "graph-steer", "--protocol", str(bad), "--out", str(tmp_path)]) == 2
