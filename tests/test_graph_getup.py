"""Clips that play once, falls and get-ups (Liu et al. 2015, Sec. 6.2), on MuJoCo with the DeepMimic humanoid and
the real DeepMimic get-up clips."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from strider.bench.protocol import protocol_path
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.graphs.actions import POLICY_JOINTS, ActionLayout
from strider.methods.graphs.controller_file import LearnedSkill, load_skill, save_skill
from strider.methods.graphs.features import FEATURES
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.group import GroupPlayer
from strider.methods.graphs.learning import LearnParams, path_ends, refine
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.push_test import push_until_fall
from strider.methods.graphs.recovery import Recovery, RecoveryParams, joint_rms_error
from strider.methods.graphs.reference import END_HOLD, TIMESTEP, build_reference, graph_world
from strider.methods.graphs.samcon import SamconParams, guided_samcon
from strider.methods.graphs.sampler import Sampler
from strider.methods.graphs.skills import clip_path, load_named_skill
from strider.motion.files import load_clip
from strider.motion.mocap import mocap_dir
from strider.optimize.sampling import LinearGaussian

pytestmark = pytest.mark.skipif(mocap_dir() is None, reason="the shared motion-capture folder is not here")


def _clip(name: str):
    """A shared DeepMimic clip by name, found as the command line finds it."""
    return load_clip(clip_path(name))


@pytest.fixture(scope="module")
def faceup():
    return build_reference(_clip("getup_faceup"), target_lead=0.1)


def _first(reference, fragments: int):
    """The reference cut after its first ``fragments`` fragments."""
    return replace(reference, targets=reference.targets[:reference.bounds[fragments]],
                   bounds=reference.bounds[:fragments + 1], ends=reference.ends[:fragments],
                   ground_bodies=reference.ground_bodies[:fragments])


def test_a_clip_that_plays_once_is_one_pass_with_its_last_frame_held_and_its_resting_bodies(faceup):
    clip = _clip("getup_faceup")
    assert not clip.loop and not faceup.cyclic
    assert faceup.steps == round((clip.duration + END_HOLD) / TIMESTEP)
    hold = round(END_HOLD / TIMESTEP)
    assert np.array_equal(faceup.targets[-hold:], np.repeat(faceup.targets[-1:], hold, axis=0))   # the stand
    # lying on its back the clip rests on its pelvis and chest; standing, not (a shin may come within
    # REST_DISTANCE of the ground over its foot)
    assert {"root", "chest"} <= set(faceup.resting_bodies(0))
    assert not {"root", "chest"} & set(faceup.resting_bodies(faceup.fragments - 1))
    walk = build_reference(_clip("walk"), target_lead=0.1, even=True)
    assert walk.cyclic and walk.ground_bodies == ()
    # a cycle may rest on its arms (a cartwheel's hands, merged into the forearms), never on its legs
    cartwheel = build_reference(_clip("cartwheel"), close_loop=True)
    hands = [set(cartwheel.resting_bodies(k)) for k in range(cartwheel.fragments)]
    assert cartwheel.cyclic and {"left_elbow", "right_elbow"} <= set().union(*hands)
    assert not hands[0] and not hands[-1]   # it starts and ends on its feet
    legs = {"left_hip", "left_knee", "right_hip", "right_knee"}
    assert not legs & set().union(*hands)
    # the character's start lies on the ground, where the clip lies: no fall there, but a fall at the stand
    runner = FragmentRunner(faceup)
    runner.world.set_integration_state(faceup.start_state)
    assert runner.character.root_pose()[0][2] < 0.3
    assert not runner.touches_outside_reference(0) and runner.touches_outside_reference(faceup.fragments - 1)


def test_a_one_pass_refinement_is_the_searched_path_and_passes_restart_from_the_start(faceup, tmp_path):
    short = _first(faceup, 4)
    character = graph_world().character()
    joints = tuple(character.joints)
    params = LearnParams(refine_particles=24, refine_cycles=5)   # a one-pass clip is refined by one pass all the same
    with Sampler(short, backend="serial", joints=joints) as sampler:
        refined, _ = refine(short, sampler, params, character, joints)
        layout = ActionLayout.of(character, joints)
        zero = [LinearGaussian.zero(FEATURES, layout.size, params.refine_sigma)] * short.fragments
        path = guided_samcon(sampler, np.arange(short.fragments), zero, short.start_state,
                             SamconParams(particles=24), seed=params.seed)
        twice = guided_samcon(sampler, np.tile(np.arange(2), 2), zero, short.start_state,
                              SamconParams(particles=8), seed=1, pass_length=2)
    assert path.complete and twice.complete
    # the refined open loop, played from the start state, ends each fragment where the search's path did
    ends = path_ends(short, path, joints)
    skill = LearnedSkill(refined, POLICY_JOINTS, tuple(LinearGaussian.zero(FEATURES, 11, 0.0)
                                                       for _ in range(short.fragments)))
    player = SkillPlayer(skill)
    player.start()
    for k in range(short.fragments):
        outcome = player.runner.advance(k, np.zeros(11), 0.0)
        assert np.allclose(outcome.summary.com, ends[k].com, atol=1e-9), k
    assert player.runner.character.root_pose()[0][2] < 0.5   # still on the ground four fragments in
    # each pass of a walk of passes starts from the start state: its first stage reads the start's features
    assert np.array_equal(twice.features[2], twice.features[0])
    skill_file = save_skill(replace(skill, reference=refined), tmp_path / "short.skill.npz")
    back = load_skill(skill_file).reference
    assert not back.cyclic and back.ground_bodies == refined.ground_bodies


def test_the_shipped_get_ups_stand_up_from_their_own_start_and_play_once():
    for name in ("getup_faceup", "getup_facedown"):
        skill = load_named_skill(name)
        result = SkillPlayer(skill).run(60.0)
        assert not result.fell and result.fragments == skill.reference.fragments
        assert result.seconds == pytest.approx(skill.reference.steps * TIMESTEP)
        player = SkillPlayer(skill)
        player.run(60.0)
        assert player.runner.character.root_pose()[0][2] > 0.8   # standing at the end of the hold


def test_recovery_chooses_the_get_up_that_lies_as_the_character_lies_and_the_ragdoll_settles():
    getups = [load_named_skill("getup_faceup"), load_named_skill("getup_facedown")]
    world = graph_world()
    recovery = Recovery(getups, world)
    for which, skill in enumerate(getups):
        world.set_integration_state(skill.reference.start_state)
        assert recovery.choose() == which
    walk = SkillPlayer(load_named_skill("walk"), world=world)
    walk.start()
    fall = push_until_fall(walk, seed=0)
    assert fall.fell
    start = world.time
    which = recovery.choose()
    recovery.ragdoll(which, start + 10.0)
    near = joint_rms_error(recovery.character.joint_coordinates(), recovery._first_pose[which]) < 0.3
    slow = np.linalg.norm(recovery.character.com_velocity()) < 0.3
    assert (near and slow) or world.time - start == pytest.approx(2.0, abs=TIMESTEP)
    with pytest.raises(UsageError, match="cyclic"):
        Recovery([walk.skill], world)
    with pytest.raises(UsageError, match="plays once"):
        GroupPlayer(getups, radius=1.0)
    with pytest.raises(UsageError, match="search particles"):
        RecoveryParams(search_particles=1)


def test_a_searched_get_up_stands_the_walk_up_after_its_fall():
    walk = SkillPlayer(load_named_skill("walk"))
    walk.start()
    assert push_until_fall(walk, seed=1).fell
    getups = [load_named_skill("getup_faceup"), load_named_skill("getup_facedown")]
    result = Recovery(getups, walk.world, RecoveryParams(search=True, search_particles=200),
                      backend="processes", workers=2).recover()
    assert result.stood and result.seconds < 10.0
    character = walk.runner.character
    assert character.root_pose()[0][2] > 0.8 and not character.non_foot_contact()


def test_play_and_recovery_commands_and_their_bad_input(tmp_path, capsys):
    assert main(["graph", "play", "getup_facedown", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not report["fell"] and report["fragments"] == load_named_skill("getup_facedown").reference.fragments
    assert main(["graph", "play", "walk", "--search-getup"]) == 2                 # needs --recover
    assert main(["graph", "play", "getup_faceup", "--recover"]) == 2              # a get-up does not recover
    assert main(["graph", "play", "getup_faceup", "--group", "2"]) == 2
    assert main(["graph", "play", "walk", "--recover", "--workers", "0"]) == 2
    assert main(["graph", "play", "walk", "--workers", "-1"]) == 2                # refused without --recover too
    bad = tmp_path / "bad.yaml"
    bad.write_text(protocol_path("graph-recovery").read_text().replace("trials: 20", "trials: -3"))
    assert main(["bench", "graph-recovery", "--protocol", str(bad), "--out", str(tmp_path)]) == 2
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(protocol_path("graph-recovery").read_text().replace("getup_facedown]", "getup_sideways]"))
    assert main(["bench", "graph-recovery", "--protocol", str(unknown), "--out", str(tmp_path)]) == 2
    skill = load_named_skill("getup_faceup")
    torn = save_skill(replace(skill, reference=replace(skill.reference, ground_bodies=(("tail",),))),
                      tmp_path / "torn.skill.npz")
    assert main(["graph", "play", str(torn)]) == 2
