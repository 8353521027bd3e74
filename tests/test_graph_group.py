"""Several characters playing a learned skill in one scene, on the real engine, and the placement of one
character's state into another world that it rests on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from strider.characters import load_character
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.graphs.features import facing_yaw, features, read
from strider.methods.graphs.group import GroupPlayer
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.skills import load_named_skill
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.dynamics import Dynamics

FEATURE_TOLERANCE = 1e-9   # turned and moved, the facing-frame features agree to rounding
PLAY_TOLERANCE = 1e-6      # the same after 0.9 s of play, turned and moved


@pytest.fixture(scope="module")
def walk():
    return load_named_skill("walk")


def test_a_character_takes_another_worlds_state_turned_and_moved():
    spec = load_character("deepmimic")
    source_world = World(Scene((CharacterPlacement(spec),)))
    source = source_world.character()
    source_world.data.qvel[:] = np.linspace(-0.5, 0.5, source_world.model.nv)   # a moving state
    source_world.forward()
    target_world = World(Scene((CharacterPlacement(spec, name="a"), CharacterPlacement(spec, name="b", x=5.0))))
    target = target_world.character("b")
    yaw, shift = 0.7, (2.0, -1.0)
    target.take_state(source, yaw, shift)
    target_world.forward()
    turn = np.array([[math.cos(yaw), -math.sin(yaw), 0.0], [math.sin(yaw), math.cos(yaw), 0.0], [0.0, 0.0, 1.0]])
    for body in ("chest", "left_ankle", "right_elbow"):
        expected = turn @ source.body_position(body) + (*shift, 0.0)
        assert np.allclose(target.body_position(body), expected, atol=1e-9), body
    assert np.allclose(target.com_velocity(), turn @ source.com_velocity(), atol=1e-9)
    assert all(np.array_equal(target.joint_coordinates()[j], c) for j, c in source.joint_coordinates().items())
    other = World(Scene((CharacterPlacement(load_character("bipv3")),))).character()
    with pytest.raises(UsageError, match="cannot take the state"):
        target.take_state(other)


def test_walkers_start_in_the_skills_state_on_a_circle_facing_its_centre(walk):
    group = GroupPlayer([walk] * 3, radius=2.0)
    group.start()
    template = group.walkers[0].template
    template.world.set_integration_state(walk.reference.start_state)
    expected = template.features()
    dynamics = Dynamics(group.world)
    for walker in group.walkers:
        readout = read(walker.character, dynamics)
        assert np.allclose(features(readout), expected, atol=FEATURE_TOLERANCE)
        assert np.allclose(readout.root_pos[:2], walker.spot, atol=1e-9)
        inward = math.atan2(-walker.spot[1], -walker.spot[0])
        assert abs(math.remainder(facing_yaw(readout.root_quat) - inward, 2 * math.pi)) < 1e-9


def test_a_group_walks_at_its_centre_the_same_way_twice(walk):
    def play() -> tuple[GroupPlayer, object]:
        group = GroupPlayer([walk] * 4, radius=1.5)
        return group, group.run(1.0)

    first, result = play()
    second, again = play()
    assert result == again and result.fragments == 4 * 10 and result.restarts == 0
    assert first.world.data.qpos.tobytes() == second.world.data.qpos.tobytes()
    for walker in first.walkers:   # each one is nearer the centre than it started
        assert np.linalg.norm(walker.character.root_pose()[0][:2]) < 1.5 - 0.3


def test_a_group_starts_over_once_all_are_down(walk):
    survives = walk.playing_record["survived_seconds"]
    if survives > 60.0:
        pytest.skip("the shipped walk no longer falls within a minute")
    group = GroupPlayer([walk] * 2, radius=1.5)
    result = group.run(survives + 1.0)
    # the shipped walk falls at the same time for every walker, and then the scene begins again
    assert result.falls == 2 and result.restarts == 1
    assert not any(w.down for w in group.walkers)


def test_a_bad_group_is_one_message(walk):
    assert main(["graph", "play", "walk", "--group", "0"]) == 2
    assert main(["graph", "play", "walk", "--group", "17"]) == 2
    with pytest.raises(UsageError, match="radius"):
        GroupPlayer([walk], radius=0.0)
    with pytest.raises(UsageError, match="at least one"):
        GroupPlayer([], radius=1.5)
    with pytest.raises(UsageError, match="radius must be a finite number"):
        GroupPlayer([walk], radius=math.inf)
    with pytest.raises(UsageError, match="the scene's length must be a finite number"):
        GroupPlayer([walk], radius=1.5).run(math.inf)
    for seconds in (math.nan, -1.0):   # a lone player too: before, NaN and negative times played nothing, silently
        with pytest.raises(UsageError, match="the play's length"):
            SkillPlayer(walk).run(seconds)


def test_a_group_resets_each_walkers_phase_at_its_foot_strikes_as_a_lone_player_does():
    """The shipped run ends two fragments a cycle at a foot strike. In a scene of one it plays as the lone player
    does, to rounding, with phase reset and without; the two differ, so the scene's walker resets its phase too."""
    run = load_named_skill("run")
    assert any(run.reference.strike_feet)

    def lone(phase_reset: bool) -> tuple[float, np.ndarray]:
        player = SkillPlayer(run, phase_reset=phase_reset)
        result = player.run(0.8)   # to the end of the fragment playing at 0.8 s, after the first strike
        return result.seconds, player.runner.features()

    def scene(phase_reset: bool, seconds: float) -> np.ndarray:
        group = GroupPlayer([run], radius=1.5, phase_reset=phase_reset)
        group.run(seconds)
        return features(read(group.walkers[0].character, Dynamics(group.world)))

    (reset_end, reset), (plain_end, plain) = lone(True), lone(False)
    assert reset_end != plain_end   # a strike came early or late
    assert np.abs(scene(True, reset_end) - reset).max() < PLAY_TOLERANCE
    assert np.abs(scene(False, plain_end) - plain).max() < PLAY_TOLERANCE
