"""Control fragments with learned feedback (Liu et al. 2015): features, regression, SAMCON and skills, on
MuJoCo with the DeepMimic humanoid and real DeepMimic clips."""

from __future__ import annotations

import dataclasses
from dataclasses import replace

import numpy as np
import pytest

from strider import quat
from strider.bench.graphs import run_parallel
from strider.bench.protocol import load_protocol, protocol_path
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.graphs.actions import POLICY_JOINTS, ActionLayout, mirror_actions
from strider.methods.graphs.controller_file import LearnedSkill, TuplePool, load_skill, save_skill
from strider.methods.graphs.features import FEATURES, facing_yaw, mirror_features
from strider.methods.graphs.fragments import LATE_HOLD, STRIKE_LOAD, FragmentRunner
from strider.methods.graphs.learning import (
    LearnParams,
    RefinementFailed,
    carried_cycles,
    learn,
    learned_clip,
    mirrored_policy,
    path_ends,
    refine,
)
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.push_test import PushTestParams, push_trial
from strider.methods.graphs.reference import TIMESTEP, build_reference, graph_world
from strider.methods.graphs.samcon import SamconParams, SamconPath, guided_samcon
from strider.methods.graphs.sampler import Sampler
from strider.methods.graphs.scoring import DEFAULT_WEIGHTS, cost, mean_summary
from strider.methods.graphs.skills import clip_path
from strider.motion.deepmimic import read_deepmimic
from strider.motion.files import load_clip
from strider.motion.mocap import mocap_dir
from strider.optimize.sampling import LinearGaussian, fit_linear_gaussian, systematic_resample

MOCAP = mocap_dir()
pytestmark = pytest.mark.skipif(MOCAP is None, reason="the shared motion-capture folder is not here")


def _clip(name: str):
    return read_deepmimic(MOCAP / "deepmimic" / f"humanoid3d_{name}.txt")


@pytest.fixture(scope="module")
def walk_reference():
    return build_reference(_clip("walk"), target_lead=0.1, even=True)


def test_systematic_resampling_keeps_each_share_to_within_one_draw():
    weights = np.array([0.5, 0.0, 0.3, 0.2])
    picks = systematic_resample(weights, 10, 0.37)
    counts = np.bincount(picks, minlength=4)
    assert counts.sum() == 10 and counts[1] == 0
    assert np.all(np.abs(counts - 10 * weights) < 1.0)


def test_ridge_regression_recovers_a_linear_policy():
    rng = np.random.default_rng(0)
    gain, bias = rng.normal(size=(3, 5)), rng.normal(size=3)
    states = rng.normal(size=(400, 5))
    actions = states @ gain.T + bias + 0.01 * rng.normal(size=(400, 3))
    fit = fit_linear_gaussian(states, actions)
    # Least squares on 400 samples with 1 cm noise: the hand-written normal equations agree with NumPy's solver.
    assert np.allclose(fit.gain, gain, atol=0.01) and np.allclose(fit.bias, bias, atol=0.01)
    assert np.allclose(fit.variance, 1e-4, rtol=0.3)


def test_mirroring_features_actions_and_policies_is_an_involution():
    layout = ActionLayout.of(graph_world().character())
    rng = np.random.default_rng(1)
    s, a = rng.normal(size=(4, FEATURES)), rng.normal(size=(4, layout.size))
    assert np.array_equal(mirror_features(mirror_features(s)), s)
    assert np.array_equal(mirror_actions(mirror_actions(a, layout), layout), a)
    # The feet swap, and a COM offset to the left becomes one to the right.
    assert np.array_equal(mirror_features(s)[:, 9:12] * [1, -1, 1], s[:, 12:15])
    assert mirror_features(s)[0, 4] == -s[0, 4]
    policy = LinearGaussian(rng.normal(size=(layout.size, FEATURES)), rng.normal(size=layout.size),
                            rng.random(layout.size))
    twin = mirrored_policy(policy, layout)
    assert np.allclose(twin.mean(s), mirror_actions(policy.mean(mirror_features(s)), layout), atol=1e-12)


def test_a_reference_starts_on_the_ground_and_its_first_fragment_tracks_it(walk_reference):
    ref = walk_reference
    assert ref.fragments == 12 and ref.bounds[6] == ref.steps // 2          # two strides of six fragments
    runner = FragmentRunner(ref)
    runner.world.set_integration_state(ref.start_state)
    feet = [runner.character.body_position(b)[2] for b in ("left_ankle", "right_ankle")]
    assert 0.02 < min(feet) < 0.06     # the lower foot is on the ground or just above it, not in it
    _, outcome = runner.sample(ref.start_state, 0, np.zeros(runner.layout.size), 0.0)
    assert not outcome.fell and outcome.cost < 5.0
    # Open loop, without feedback, the humanoid does not walk one cycle.
    state, fell, k = ref.start_state, False, 0
    while not fell and k < 2 * ref.fragments:
        state, outcome = runner.sample(state, k % ref.fragments, np.zeros(runner.layout.size), 0.0)
        fell, k = outcome.fell, k + 1
    assert fell


def test_guided_samcon_is_the_same_for_any_worker_count(walk_reference):
    policies = [LinearGaussian.zero(FEATURES, 11, 0.2)] * walk_reference.fragments
    walk = np.arange(6)
    paths = []
    for backend, workers in (("serial", 1), ("processes", 2)):
        with Sampler(walk_reference, backend=backend, workers=workers) as sampler:
            paths.append(guided_samcon(sampler, walk, policies, walk_reference.start_state,
                                       SamconParams(particles=16), seed=3))
    a, b = paths
    assert a.complete and a.samples >= 6 * 16
    assert np.array_equal(a.actions, b.actions) and np.array_equal(a.costs, b.costs)


def test_a_skill_file_round_trips_and_bad_files_are_one_message(walk_reference, tmp_path):
    layout_size = 11
    policies = tuple(LinearGaussian(np.full((layout_size, FEATURES), 0.01 * k), np.full(layout_size, 0.1),
                                    np.full(layout_size, 0.01)) for k in range(walk_reference.fragments))
    skill = LearnedSkill(walk_reference, ("chest", "left_hip", "right_hip", "left_knee", "right_knee"), policies,
                         3, ({"iteration": 3, "survived_seconds": 1.5},), {"params": {"seed": 0}})
    path = save_skill(skill, tmp_path / "walk.skill.npz")
    back = load_skill(path)
    assert back.iteration == 3 and back.curve == skill.curve and back.joints == skill.joints
    assert np.array_equal(back.reference.targets, walk_reference.targets)
    assert all(np.array_equal(p.gain, q.gain) for p, q in zip(back.policies, policies))
    first = SkillPlayer(skill).run(0.5)
    second = SkillPlayer(back).run(0.5)
    assert first == second
    (tmp_path / "bad.skill.npz").write_bytes(b"not a zip")
    assert main(["graph", "play", str(tmp_path / "bad.skill.npz")]) == 2
    assert main(["graph", "play", "no-such-skill"]) == 2
    assert main(["graph", "play", str(path), "--seconds", "-1"]) == 2
    assert main(["graph", "learn", "no-such-clip"]) == 2
    assert main(["graph", "learn", "walk", "--workers", "0"]) == 2
    assert main(["graph", "learn", "walk", "--particles", "1", "--out", str(tmp_path)]) == 2
    assert main(["graph", "learn", "walk", "--seed", "-1", "--out", str(tmp_path)]) == 2
    for setting in ("nose=1", "close_loop=maybe", "particles=x", "sigma0=-1", "sigma0=nan", "seed=-1", "gains=c"):
        assert main(["graph", "learn", "walk", "--set", setting, "--out", str(tmp_path)]) == 2
    wrong = save_skill(replace(skill, joints=("chest", "nose")), tmp_path / "wrong.skill.npz")
    assert main(["graph", "play", str(wrong)]) == 2
    pool = TuplePool(np.array([1, 1]), np.array([0, 99]), np.zeros((2, FEATURES)), np.zeros((2, layout_size)))
    torn = save_skill(replace(skill, pool=pool), tmp_path / "torn.skill.npz")
    assert main(["graph", "play", str(torn)]) == 2      # a pool tuple names fragment 99 of 12
    unnamed = save_skill(replace(skill, best=policies, best_iteration=None), tmp_path / "unnamed.skill.npz")
    assert main(["graph", "play", str(unnamed)]) == 2   # best policies, but no iteration of the curve named for them
    named = save_skill(replace(skill, best=policies, best_iteration=3), tmp_path / "named.skill.npz")
    assert load_skill(named).playing_iteration == 3


@pytest.fixture(scope="module")
def reset_reference():
    return build_reference(_clip("walk"), target_lead=0.1, even=True, close_loop=True, phase_reset=True)


def test_with_phase_reset_each_stride_of_the_reference_ends_in_a_foot_strike(reset_reference, tmp_path):
    ref = reset_reference
    half = ref.fragments // 2
    # The cycle starts at one foot's strike; the other's falls on the boundary between the strides.
    assert ref.strike_feet[half - 1] and ref.strike_feet[-1] and ref.strike_feet[half - 1] != ref.strike_feet[-1]
    assert sum(bool(f) for f in ref.strike_feet) == 2
    runner = FragmentRunner(ref)
    runner.world.set_integration_state(ref.start_state)
    lowest = {f: runner.character.sole_corners(f)[:, 2].min() for f in ("left_ankle", "right_ankle")}
    assert lowest[ref.strike_feet[-1]] < lowest[ref.strike_feet[half - 1]]    # the foot that just struck is lower
    # Strides of equal length, as mirroring needs: the two strikes are half a cycle apart, to within a step.
    assert abs(2 * ref.bounds[half] - ref.steps) <= 2
    with pytest.raises(UsageError, match="phase reset needs each foot"):
        build_reference(_clip("backflip"), phase_reset=True)
    # The strikes are part of the skill file.
    layout = ActionLayout.of(graph_world().character(), POLICY_JOINTS)
    policies = tuple(LinearGaussian.zero(FEATURES, layout.size, 0.05) for _ in range(ref.fragments))
    skill = LearnedSkill(ref, POLICY_JOINTS, policies, 0, (), {"params": {}})
    assert load_skill(save_skill(skill, tmp_path / "reset.skill.npz")).reference.strike_feet == ref.strike_feet
    torn = save_skill(replace(skill, reference=replace(ref, strike_feet=("nose",) * ref.fragments)),
                      tmp_path / "torn.skill.npz")
    assert main(["graph", "play", str(torn)]) == 2


def test_phase_reset_ends_a_strike_fragment_at_the_strike_or_holds_for_a_late_one(reset_reference):
    ref = reset_reference
    zero = np.zeros(11)
    lengths = {}
    for reset in (True, False):
        runner = FragmentRunner(ref, phase_reset=reset)
        runner.world.set_integration_state(ref.start_state)
        character, steps = runner.character, []
        for k in range(ref.fragments):
            before = runner.world.time
            outcome = runner.advance(k, zero, 0.0)
            steps.append(round((runner.world.time - before) / TIMESTEP))
            foot = ref.strike_foot(k)
            if reset and foot:
                load = character.contact_normal_force([character.body(foot)]) / (character.mass * 9.81)
                nominal = ref.bounds[k + 1] - ref.bounds[k]
                # Ended by the strike (the foot carries the load) or after the nominal rows and the whole hold.
                assert load > STRIKE_LOAD or steps[-1] == nominal + round(LATE_HOLD / TIMESTEP)
                assert load > STRIKE_LOAD or steps[-1] > nominal
            if outcome.fell:
                break
        lengths[reset] = steps
    nominal = list(np.diff(ref.bounds))
    assert lengths[False] == nominal[:len(lengths[False])]
    changed = [k for k, (a, b) in enumerate(zip(lengths[True], nominal)) if a != b]
    assert changed and all(ref.strike_foot(k) for k in changed)


class _StalledSampler(Sampler):
    """The real sampler, but every sample of one fragment is judged fallen the first ``times`` it runs: a stall
    placed where the test wants it."""

    def __init__(self, reference, fragment: int, times: int):
        super().__init__(reference, backend="serial", workers=1)
        self.stalled_fragment, self.stalls_left = fragment, times

    def run_stage(self, states, actions, action_norms, fragment, heading=None):
        result = super().run_stage(states, actions, action_norms, fragment, heading)
        if fragment == self.stalled_fragment and self.stalls_left > 0:
            self.stalls_left -= 1
            return replace(result, fell=np.ones_like(result.fell))
        return result


def test_a_stall_doubles_the_particles_every_few_retries_and_they_stay_doubled(walk_reference):
    policies = [LinearGaussian.zero(FEATURES, 11, 0.05)] * walk_reference.fragments
    params = SamconParams(particles=4, rollback_fragments=1, retries_per_doubling=2)
    with _StalledSampler(walk_reference, fragment=2, times=5) as sampler:
        path = guided_samcon(sampler, np.arange(6), policies, walk_reference.start_state, params, seed=3)
    assert path.complete and path.retries == 5
    assert path.population.tolist() == [4, 16, 16, 16, 16, 16]
    # stages 1 and 2 ran six times (the first pass and five retries) with 4, 4, 8, 8, 16 and 16 particles
    assert path.samples == 4 + 2 * (4 + 4 + 8 + 8 + 16 + 16) + 3 * 16


def test_refinement_replaces_the_reference_ends_by_the_mean_of_the_simulated_ones(walk_reference):
    ref = walk_reference
    character = graph_world().character()
    joints = tuple(character.joints)
    params = LearnParams(refine_cycles=1, refine_particles=12)
    layout = ActionLayout.of(character, joints)
    zero = [LinearGaussian.zero(FEATURES, layout.size, params.refine_sigma)] * ref.fragments
    walk = np.arange(ref.fragments + 4) % ref.fragments
    with Sampler(ref, backend="serial", workers=1, joints=joints) as sampler:
        path = guided_samcon(sampler, walk, zero, ref.start_state, SamconParams(particles=12), seed=4)
        refined, _ = refine(ref, sampler, params, character, joints)
        unrefined, _ = refine(ref, sampler, replace(params, refine_ends=False), character, joints)
    # Replaying the executed actions repeats the search: every stage costs what it cost in the search.
    ends = path_ends(ref, path, joints)
    replayed = [cost(e, ref.ends[k], float(n), DEFAULT_WEIGHTS)
                for e, k, n in zip(ends, path.fragments, np.linalg.norm(path.actions, axis=1))]
    assert path.complete and replayed == list(path.costs)
    # Two instances of each fragment: the refined end is their mean, rotations averaged across hemispheres.
    first, second = ends[3], ends[3 + ref.fragments]
    mean = mean_summary([first, replace(second, root_quat=-second.root_quat)])
    assert np.isclose(mean.root_height, 0.5 * (first.root_height + second.root_height))
    assert quat.angle_between(mean.root_quat, first.root_quat) <= quat.angle_between(first.root_quat,
                                                                                       second.root_quat) + 1e-12
    # The refined reference ends where the simulation goes, not where the clip is; targets refine either way.
    assert unrefined.ends == ref.ends and np.array_equal(unrefined.targets, refined.targets)
    moved = [abs(r.root_height - m.root_height) for r, m in zip(refined.ends, ref.ends)]
    assert max(moved) > 0.005


def _path_of(stages: int, walk_length: int, fragments: int) -> SamconPath:
    rows = np.arange(stages, dtype=float)
    return SamconPath(np.arange(stages) % fragments, np.tile(rows[:, None], (1, 18)), np.tile(rows[:, None], (1, 3)),
                      np.tile(rows[:, None], (1, 3)) + 0.5, rows, walk_length, 10 * stages, 31,
                      np.full(stages, 400))


def test_a_refinement_that_gave_up_averages_the_whole_cycles_it_carried_or_fails(walk_reference):
    n = walk_reference.fragments
    params = LearnParams(refine_cycles=10, refine_min_cycles=2)
    whole = _path_of(10 * n, 10 * n, n)
    assert carried_cycles(whole, walk_reference, params) is whole
    # 2.5 cycles carried: the two whole ones are kept, stage for stage, and the half cycle is dropped
    kept = carried_cycles(_path_of(5 * n // 2, 10 * n, n), walk_reference, params)
    assert len(kept.fragments) == 2 * n and kept.complete
    assert np.array_equal(kept.actions[:, 0], np.arange(2 * n)) and kept.retries == 31
    with pytest.raises(RefinementFailed, match=f"fell at fragment {n + 3} of {10 * n} after 31 retries"):
        carried_cycles(_path_of(n + 3, 10 * n, n), walk_reference, params)
    with pytest.raises(RefinementFailed):   # without the setting every cycle must be carried, as before it
        carried_cycles(_path_of(9 * n, 10 * n, n), walk_reference, replace(params, refine_min_cycles=None))


def test_an_interrupted_learner_resumes_to_the_same_skill(tmp_path):
    # pooled: the second iteration regresses on the first's path too, which the resumed run reads from the file
    params = LearnParams(refine_cycles=1, refine_particles=60, cycles=1, particles=12, late_particles=12,
                         iterations=2, survive_seconds=30.0, pooled_paths=2)
    clip = _clip("walk")
    whole = learn(clip, tmp_path / "whole.npz", params, backend="serial", workers=1)
    learn(clip, tmp_path / "parts.npz", replace(params, iterations=1), backend="serial", workers=1)
    resumed = learn(clip, tmp_path / "parts.npz", params, backend="serial", workers=1)
    assert whole.iteration == resumed.iteration == 2
    assert all(np.array_equal(p.gain, q.gain) and np.array_equal(p.bias, q.bias)
               for p, q in zip(whole.policies, resumed.policies))
    assert [c["survived_seconds"] for c in whole.curve] == [c["survived_seconds"] for c in resumed.curve]
    # each iteration's entry says how far its search had to raise N_s: 12, or 12 doubled some times
    assert all(c["most_particles"] >= 12 for c in whole.curve[1:])
    assert all(c["most_particles"] in {12 * 2 ** d for d in range(8)} for c in whole.curve[1:])
    assert sorted(set(resumed.pool.iterations)) == [1, 2] and np.array_equal(whole.pool.actions, resumed.pool.actions)
    # what plays is the iteration that stayed up longest, whichever it was
    record = max(c["survived_seconds"] for c in resumed.curve)
    assert SkillPlayer(resumed).run(30.0).seconds == record
    assert (resumed.best is None) == (resumed.curve[-1]["survived_seconds"] == record)


def _open_loop_skill(reference) -> LearnedSkill:
    layout = ActionLayout.of(graph_world().character(), POLICY_JOINTS)
    policies = tuple(LinearGaussian.zero(FEATURES, layout.size, 0.05) for _ in range(reference.fragments))
    return LearnedSkill(reference, POLICY_JOINTS, policies, 0, (), {"params": {}})


def test_the_push_test_pushes_on_schedule_and_ends_at_the_fall(walk_reference):
    skill = _open_loop_skill(walk_reference)
    unpushed = SkillPlayer(skill).run(5.0)
    trial = push_trial(skill, seed=3, params=PushTestParams(first=0.2, every=0.2, growth=2000.0, max_seconds=5.0))
    # Strong pushes from 0.2 s on topple the open loop before it falls by itself, and the trial stops there.
    assert trial.fell and trial.pushes >= 1 and trial.seconds < unpushed.seconds
    assert trial.pushes <= (trial.seconds - 0.2) / 0.2 + 1 + 1e-9   # never before its time, one per 0.2 s
    again = push_trial(skill, seed=3, params=PushTestParams(first=0.2, every=0.2, growth=2000.0, max_seconds=5.0))
    assert again == trial
    with pytest.raises(ValueError, match="every"):
        PushTestParams(every=0.0)


def test_the_scaled_ridge_shrinks_the_gain_of_a_state_that_barely_varies():
    rng = np.random.default_rng(0)
    states = rng.standard_normal((200, 3)) * np.array([1.0, 1.0, 1e-4])
    actions = states[:, :1] * 0.5 + 0.1 * rng.standard_normal((200, 1))
    plain = fit_linear_gaussian(states, actions)
    scaled = fit_linear_gaussian(states, actions, scaled_ridge=0.1)
    assert abs(scaled.gain[0, 2]) < abs(plain.gain[0, 2]) / 3   # less of the noise fitted on the still component
    assert abs(scaled.gain[0, 0] - 0.5 / 1.1) < 0.05            # ρ = 0.1 shrinks a unit-variance gain by 1/(1+ρ)


def test_the_unbiased_variance_keeps_the_exploration_of_actions_that_are_pure_noise():
    # 50 tuples and 18 features, as one 25-cycle walk gives each mirrored policy: Eq. 16 returns about
    # (50 - 19) / 50 of the actions' true variance, the degrees-of-freedom correction about all of it
    rng = np.random.default_rng(1)
    plain, unbiased = [], []
    for _ in range(100):
        states = rng.standard_normal((50, 18)) * rng.uniform(0.01, 1.0, 18)
        actions = 0.1 * rng.standard_normal((50, 11))
        plain.append(fit_linear_gaussian(states, actions).variance.mean() / 0.01)
        unbiased.append(fit_linear_gaussian(states, actions, unbiased_variance=True).variance.mean() / 0.01)
    assert 0.55 < np.mean(plain) < 0.7
    assert 0.93 < np.mean(unbiased) < 1.07


def test_the_parallel_bench_finds_identical_paths_on_processes_and_ray():
    protocol = load_protocol("graph-parallel")
    protocol = dataclasses.replace(protocol, params=dataclasses.replace(
        protocol.params, fragments=3, particles=8, bare_seconds=0.2, clip="walk"))
    out = run_parallel(protocol)
    assert out.summary["identical"] == {"processes x1": True, "processes x2": True, "ray x2": True}
    assert out.summary["samples"] >= 3 * 8 and out.summary["bare_speedup_2"] > 0


def test_the_table2_protocol_names_every_other_stand_in_and_loops_the_kick():
    protocol = load_protocol("graph-table2")
    assert protocol.params.clips == ("walk", "dance_a", "kick", "spinkick", "backflip")
    assert protocol.params.loop_once == ("kick",)
    assert {a.metric for a in protocol.anchors} == set(protocol.params.clips)   # each beside its Table II time
    assert load_protocol("graph-learn").params.loop_once == ()


def test_a_bad_graph_protocol_or_skill_is_one_message_before_any_trial(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(protocol_path("graph-push").read_text().replace("trials: 100", "trials: -3"))
    assert main(["bench", "graph-push", "--protocol", str(bad), "--out", str(tmp_path)]) == 2
    reset = tmp_path / "reset.yaml"
    reset.write_text(protocol_path("graph-learn").read_text().replace("phase_reset: [walk, run, jog]",
                                                                      "phase_reset: walk"))
    assert main(["bench", "graph-learn", "--protocol", str(reset), "--out", str(tmp_path)]) == 2
    once = tmp_path / "once.yaml"
    once.write_text(protocol_path("graph-table2").read_text().replace("loop_once: [kick]", "loop_once: kick"))
    assert main(["bench", "graph-table2", "--protocol", str(once), "--out", str(tmp_path)]) == 2
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(protocol_path("graph-speed").read_text().replace("skill: walk", "skill: moonwalk"))
    assert main(["bench", "graph-speed", "--protocol", str(unknown), "--out", str(tmp_path)]) == 2


def test_a_turn_is_the_walk_turned_steadily_and_its_reference_ends_turn_with_it():
    """turn_degrees (the source's turn skill, as control-graphs.md reads it): the closed walk turned 90 degrees a
    cycle; the fragments' reference ends, each seen from its start's facing frame, turn by 90 degrees in all."""
    clip = load_clip(clip_path("walk"))
    params = LearnParams(turn_degrees=90.0)
    turned = learned_clip(clip, params)
    assert turned.name == f"{clip.name}_turn90" and learned_clip(clip, LearnParams()) is clip
    straight = build_reference(clip.loop_closed(), target_lead=0.1)
    turning = build_reference(turned, target_lead=0.1)
    assert np.array_equal(turning.targets, straight.targets)   # the joints move as in the walk

    def total_yaw(reference):
        return np.degrees(sum(facing_yaw(end.root_quat) for end in reference.ends))

    assert abs(total_yaw(straight)) < 1.0
    assert abs(total_yaw(turning) - 90.0) < 1.0
    with pytest.raises(UsageError, match="turn degrees"):
        LearnParams(turn_degrees=200.0)


def test_a_kick_made_a_cycle_loops_with_its_seam_closed():
    """loop_once (the spec's kick, "blend end to start"): the one-pass kick becomes a cycle whose last frame
    repeats its first pose once close_loop closes the seam, and its reference is cyclic with no end hold."""
    clip = load_clip(clip_path("kick"))
    looped = learned_clip(clip, LearnParams(loop_once=True))
    assert not clip.loop and looped.loop and looped.name == f"{clip.name}_loop"
    assert learned_clip(looped, LearnParams(loop_once=True)) is looped   # a cycle stays as it is
    closed = looped.loop_closed()
    assert np.allclose(closed.rotations[-1], closed.rotations[0])
    assert not np.allclose(clip.rotations[-1], clip.rotations[0], atol=1e-3)   # the file's kick does not close
    once, cycle = build_reference(clip, target_lead=0.1), build_reference(closed, target_lead=0.1)
    assert cycle.cyclic and not once.cyclic
    assert cycle.steps < once.steps   # no stand held at the end


def test_policies_on_every_joint_offset_every_servo_and_learn_without_mirroring(tmp_path):
    """policy_joints="all" (strider's): the policies act on all 12 joints (28 numbers) instead of the source's
    waist, hips and knees (11), and mirroring, whose rules cover those alone, is off."""
    params = LearnParams(refine_cycles=1, refine_particles=60, cycles=1, particles=12, late_particles=12,
                         iterations=1, survive_seconds=30.0, policy_joints="all")
    skill = learn(_clip("walk"), tmp_path / "all.npz", params, backend="serial", workers=1)
    character = graph_world().character()
    assert skill.joints == tuple(character.joints)
    assert skill.policies[0].bias.shape == (ActionLayout.of(character, tuple(character.joints)).size,)
    assert skill.settings["params"]["mirror"] is False
    assert SkillPlayer(skill).run(0.3).fragments >= 1
    with pytest.raises(UsageError, match="policy joints"):
        LearnParams(policy_joints="arms")


def test_the_first_em_iteration_may_search_with_the_source_s_thousand_particles():
    source = LearnParams(first_particles=1000)   # seed 002, Sec. 5.4 and 6.1
    assert [source.particles_at(i) for i in (1, 2, 3, 4, 20)] == [1000, 200, 200, 100, 100]
    assert [LearnParams().particles_at(i) for i in (1, 2, 4)] == [200, 200, 100]
    with pytest.raises(UsageError, match="first particles must be at least 2"):
        LearnParams(first_particles=1)
