"""The source's two PD gain sets (seed 002, Sec. 6 and Table II): a skill plays with its own, on the real engine
with the deepmimic humanoid and the shipped skills."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from strider.errors import UsageError
from strider.methods.graphs.controller_file import load_skill, save_skill
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.group import GroupPlayer
from strider.methods.graphs.learning import TABLE2_GAINS, LearnParams, gain_set
from strider.methods.graphs.recovery import Recovery
from strider.methods.graphs.reference import graph_world, joined
from strider.methods.graphs.skills import CLIP_PREFIX, clip_path, load_named_skill
from strider.motion.files import load_clip

SET_A, WAIST_B, LEGS_B = (500.0, 50.0), (2000.0, 100.0), (1000.0, 50.0)   # seed 002, Sec. 6


@pytest.fixture(scope="module")
def walk():
    return load_named_skill("walk")


def _with_gains(skill, gains):
    return replace(skill, reference=replace(skill.reference, gains=gains))


def test_a_fragment_plays_with_its_reference_s_gain_set_and_the_next_skill_puts_its_own_back(walk):
    world = graph_world()
    character = world.character()
    b = FragmentRunner(_with_gains(walk, "b").reference, world=world)
    a = FragmentRunner(walk.reference, world=world)
    zero = np.zeros(b.layout.size)
    ends = {}
    for name, runner in (("b", b), ("a", a)):
        world.set_integration_state(walk.reference.start_state)
        runner.play(0, zero)
        ends[name] = world.integration_state()
        if name == "b":
            assert character.servo_gains("chest") == WAIST_B
            assert character.servo_gains("left_knee") == LEGS_B and character.servo_gains("right_ankle") == LEGS_B
            assert character.servo_gains("neck") == SET_A and character.servo_gains("left_elbow") == SET_A
    assert all(character.servo_gains(j) == SET_A for j in character.joints)
    # the stiffer waist and legs track the same targets otherwise
    assert not np.array_equal(ends["a"], ends["b"])


def test_a_skill_file_keeps_its_gain_set_and_an_unknown_one_is_refused(walk, tmp_path):
    out = save_skill(_with_gains(walk, "b"), tmp_path / "walk_b.skill.npz")
    assert load_skill(out).reference.gains == "b"
    assert load_named_skill("walk").reference.gains == "a"   # written before gain sets: the source's (a)
    with np.load(out) as data:
        arrays = {k: data[k] for k in data.files}
    header = json.loads(str(arrays["header"]))
    arrays["header"] = np.array(json.dumps(header | {"gains": "c"}))
    np.savez_compressed(tmp_path / "bad.skill.npz", **arrays)
    with pytest.raises(UsageError, match="gain set 'c'"):
        load_skill(tmp_path / "bad.skill.npz")
    with pytest.raises(UsageError, match="gain set must be one of a, b"):
        LearnParams(gains="c")
    with pytest.raises(UsageError, match="one gain set"):
        joined([walk.reference, _with_gains(walk, "b").reference], "mixed")


def test_table_two_s_kick_spin_kick_and_backflip_learn_with_set_b_unless_told_otherwise():
    assert {name[len(CLIP_PREFIX):] for name, gains in TABLE2_GAINS.items() if gains == "b"} == \
        {"kick", "spinkick", "backflip"}
    for name, expected in (("kick", "b"), ("spinkick", "b"), ("backflip", "b"), ("walk", "a"), ("run", "a")):
        clip = load_clip(clip_path(name))
        assert gain_set(clip, LearnParams()) == expected
        assert gain_set(clip, LearnParams(gains="a")) == "a"


def test_the_ragdoll_after_a_set_b_skill_tracks_with_the_get_up_s_set_a(walk):
    world = graph_world()
    character = world.character()
    runner = FragmentRunner(_with_gains(walk, "b").reference, world=world)
    world.set_integration_state(walk.reference.start_state)
    runner.play(0, np.zeros(runner.layout.size))
    assert character.servo_gains("chest") == WAIST_B
    recovery = Recovery([load_named_skill("getup_faceup")], world)
    recovery.ragdoll(0, until=world.time + 0.02, settle=True)
    assert all(character.servo_gains(j) == SET_A for j in character.joints)


def test_each_walker_of_a_group_plays_with_its_own_skill_s_gains(walk):
    group = GroupPlayer([_with_gains(walk, "b"), walk], radius=2.0)
    group.start()
    first, second = (w.character for w in group.walkers)
    assert first.servo_gains("chest") == WAIST_B and first.servo_gains("right_hip") == LEGS_B
    assert second.servo_gains("chest") == SET_A and second.servo_gains("right_hip") == SET_A
