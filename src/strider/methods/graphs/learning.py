"""Guided learning of a skill (Liu et al. 2015, Alg. 2): refine the open-loop fragments, then alternate
guided SAMCON over a long walk and per-fragment regression of linear feedback policies. A clip that does not
loop (a get-up, a kick) is learned as passes through it, each from its start state; it has no mirroring,
phase reset or seam, and its refinement takes one pass.

1. Refinement (Alg. 2, line 3): original SAMCON over a walk of the cycle, sampling offsets of all 28 servo
   targets; each fragment's targets take the mean offset of its instances on the best path.
2. EM iterations (Alg. 2, lines 5-9): guided SAMCON over a walk long enough for ``uses`` tuples per policy
   (or of ``cycles`` cycles), seeded by the current policies; every tuple of the best path (R = 1, Eq. 13)
   enters the ridge regression of its fragment's policy. With ``mirror`` the cycle's two strides share
   policies: tuples of the second stride are mirrored into the first's regression, and the second stride's
   policies are the first's mirror images.
3. After every iteration the policies play the skill from its start state, without noise; the time the
   character stays up is the learning curve, and learning stops once it stays up ``survive_seconds``. The
   skill keeps the policies of its best iteration for playing (strider's: the curve is not monotone), and
   learning goes on from the latest.

The skill file is written after the refinement and after every iteration: it is the checkpoint, and an
interrupted learner resumes from it with the same result as an uninterrupted run.

Beyond the source, each a named setting: ``target_lead`` (PD targets lead the clip by the servos' lag
kd/kp), ``sigma0`` and ``refine_sigma`` larger than the source's 5° (with 5° every search on this engine
fell within two cycles), ``sigma_floor`` (exploration never collapses below 1°), and ``scaled_ridge`` (with the
source's λ = 1e-6 alone, 200 tuples per policy gave gains of norm 50-80 on features that barely vary, and
the policies fell sooner than the open loop), ``unbiased_variance`` (Eq. 16 divides by N_τ, which with a
quarter of the source's tuples shrinks the exploration by about 0.6 in variance per iteration until it sits
on the floor, and the regression then only refits the policy that drew the actions), ``pooled_paths`` (the
regression takes the tuples of the latest few paths, not the last one alone: the source's N_k = 200 tuples
per policy at a quarter of the walk), ``refine_min_cycles`` (a refinement walk that gives up after carrying that
many whole cycles averages those: the backflip's carried 4 of 10).

Which of the source's two PD gain sets a clip learns with is Table II's (``gains``, :data:`TABLE2_GAINS`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from strider.errors import UsageError
from strider.methods.graphs.actions import POLICY_JOINTS, ActionLayout, mirror_actions, offset_coordinates, rows_with
from strider.methods.graphs.controller_file import LearnedSkill, TuplePool, load_skill, save_skill
from strider.methods.graphs.features import FEATURES, mirror_features
from strider.methods.graphs.fragments import FragmentRunner
from strider.methods.graphs.player import SkillPlayer
from strider.methods.graphs.reference import Reference, build_reference, check_gain_set, graph_world
from strider.methods.graphs.samcon import MIN_PARTICLES, SamconParams, SamconPath, guided_samcon
from strider.methods.graphs.sampler import Sampler
from strider.methods.graphs.scoring import Summary, mean_summary
from strider.methods.graphs.skills import CLIP_PREFIX
from strider.motion.clip import Clip
from strider.optimize.sampling import LinearGaussian, fit_linear_gaussian
from strider.sim.character import Character

SOURCE_SIGMA0 = 0.0873   # σ0 = 5° (seed 002, Sec. 5.4)
SETTINGS_BEFORE = {"unbiased_variance": False, "close_loop": False, "plant_feet": False, "refine_ends": False,
                   "phase_reset": False, "gains": "a"}
"""How checkpoints written before a setting existed ran, where that differs from the setting's default.
(``refine_min_cycles`` is not here: a refinement that did not carry every cycle wrote no checkpoint before it.)"""


POLICY_JOINT_SETS = ("source", "all")
TABLE2_GAINS = {f"{CLIP_PREFIX}{name}": "b" for name in ("kick", "spinkick", "backflip")}
"""DeepMimic clips whose Table II skill learns with gain set (b) (seed 002, Table II: Kick, DanceSpin, Backflip);
every other clip learns with (a)."""


class RefinementFailed(UsageError):
    """Original SAMCON could not carry the clip's open loop through its refinement walk: no policy can be learned
    from it with these settings."""

    def __init__(self, name: str, reached: int, fragments: int, retries: int):
        super().__init__(f"refining {name!r}: original SAMCON fell at fragment {reached} of {fragments} after "
                         f"{retries} retries; more refine particles may get through")
        self.reached, self.fragments, self.retries = reached, fragments, retries


@dataclass(frozen=True)
class LearnParams:
    target_lead: float = 0.1          # s; strider: the servos' lag kd/kp with gains (a)
    close_loop: bool = True           # strider: the clip's seam closed (Clip.loop_closed); False: as the file has it
    plant_feet: bool = False          # strider: stance soles planted on the ground (reference.planted)
    refine_ends: bool = True          # seed 002, Sec. 5.4: refinement averages the reference end states too
    phase_reset: bool = True          # seed 002, Sec. 6.1: fragments end at the foot strikes (walks and runs)
    loop_once: bool = False           # a clip that plays once learned as a cycle, its end blended into its start
                                      # by close_loop (control-graphs.md Sec. 4, clips: the kick)
    turn_degrees: float = 0.0         # strider: the cycle turned steadily by this much about the up axis (the
                                      # source's turn skill; control-graphs.md Sec. 4: "turn" = walk turned 90°)
    refine_cycles: int = 10           # strider's budget: instances averaged per fragment
    refine_min_cycles: int | None = 2  # strider: a refinement walk that gives up after this many whole cycles
                                      # averages the cycles it carried (None: every cycle, as before the setting)
    refine_particles: int = 400       # measured: the run's 28-D search tracked 2 cycles without a retry
    refine_sigma: float = 0.15        # rad, on all 28 servo targets
    uses: int = 200                   # tuples per policy per EM walk, N_k (seed 002, Sec. 5)
    cycles: int | None = None         # cycles per EM walk; None: enough for ``uses`` (100 with mirroring)
    iterations: int = 20              # seed 002, Table II: 20
    particles: int = 200              # N_s (seed 002, Sec. 5.4)
    first_particles: int | None = None  # N_s of the first EM iteration (seed 002, Sec. 5.4 and 6.1: 1000); None:
                                      # ``particles`` (strider's budget)
    late_particles: int = 100         # N_s from iteration ``late_from`` on (control-graphs.md Sec. 4, "Budget")
    late_from: int = 4
    sigma0: float = 0.15              # rad; the source's is SOURCE_SIGMA0
    sigma_floor: float = 0.0175       # rad (1°)
    scaled_ridge: float = 0.1         # strider: ridge on standardized features (0: the source's λ = 1e-6 alone)
    pooled_paths: int = 1             # strider: regress on the tuples of this many latest paths (1: the source's)
    unbiased_variance: bool = True    # strider: Σ from the residuals' degrees of freedom (False: Eq. 16's 1/N_τ)
    mirror: bool = True
    policy_joints: str = "source"     # the joints the policies offset: "source", the waist, hips and knees (seed
                                      # 002, Sec. 4: the 11-D action); "all" (strider's), every servo, as
                                      # refinement samples them
    survive_seconds: float = 600.0    # P1: the policy runs this long unperturbed
    gains: str | None = None          # the PD gain set, "a" or "b" (seed 002, Sec. 6); None: the clip's in Table II
                                      # (TABLE2_GAINS)
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("refine_cycles", "refine_min_cycles", "cycles", "uses", "pooled_paths"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise UsageError(f"{name.replace('_', ' ')} must be at least 1, got {getattr(self, name)}")
        for name in ("refine_particles", "particles", "first_particles", "late_particles"):
            if getattr(self, name) is not None and getattr(self, name) < MIN_PARTICLES:
                raise UsageError(f"{name.replace('_', ' ')} must be at least {MIN_PARTICLES} (SAMCON keeps the "
                                 f"best and resamples), got {getattr(self, name)}")
        if not (math.isfinite(self.turn_degrees) and abs(self.turn_degrees) <= 180):
            raise UsageError(f"turn degrees must lie between -180 and 180 per cycle, got {self.turn_degrees}")
        if self.policy_joints not in POLICY_JOINT_SETS:
            raise UsageError(f"policy joints must be one of {', '.join(POLICY_JOINT_SETS)}, got {self.policy_joints!r}")
        if self.gains is not None:
            check_gain_set(self.gains)
        if not self.scaled_ridge >= 0:
            raise UsageError(f"scaled ridge must be 0 or more, got {self.scaled_ridge}")
        for name in ("iterations", "seed"):
            if getattr(self, name) < 0:
                raise UsageError(f"{name} must be 0 or more, got {getattr(self, name)}")
        for name in ("refine_sigma", "sigma0", "survive_seconds"):
            if not getattr(self, name) > 0:
                raise UsageError(f"{name.replace('_', ' ')} must be positive, got {getattr(self, name)}")

    @property
    def walk_cycles(self) -> int:
        """Cycles per EM walk: with mirroring each policy gets two tuples per cycle."""
        return self.cycles if self.cycles is not None else -(-self.uses // (2 if self.mirror else 1))

    def particles_at(self, iteration: int) -> int:
        if iteration == 1 and self.first_particles is not None:
            return self.first_particles
        return min(self.late_particles, self.particles) if iteration >= self.late_from else self.particles


def _mirror_matrix(mirror: Callable[[np.ndarray], np.ndarray], size: int) -> np.ndarray:
    """P with mirror(x) = P x (each mirror is a signed permutation)."""
    return mirror(np.eye(size)).T


def mirrored_policy(policy: LinearGaussian, layout: ActionLayout) -> LinearGaussian:
    """π'(s) = mirror(π(mirror(s))) as a linear-Gaussian policy of its own."""
    ps = _mirror_matrix(mirror_features, FEATURES)
    pa = _mirror_matrix(lambda a: mirror_actions(a, layout), layout.size)
    return LinearGaussian(pa @ policy.gain @ ps, pa @ policy.bias, np.abs(pa) @ policy.variance)


def refine(reference: Reference, sampler: Sampler, params: LearnParams, character: Character,
           joints: tuple[str, ...]) -> tuple[Reference, SamconPath]:
    """The reference with each fragment's targets moved by the mean offset its instances took on the best
    original-SAMCON path over ``refine_cycles`` cycles (exp-map offsets averaged, control-graphs.md Sec. 4), and
    with ``refine_ends`` its end states replaced by the mean of its instances' simulated ends (seed 002, Sec. 5.4:
    "replacing the initial open-loop control clip and the reference end states with the average of all
    simulation instances"), so that the cost measures samples against what the physics can reach. A one-pass
    reference is refined by one pass, its targets moved by the actions as they ran. Returned with the path it
    averaged (:func:`carried_cycles`)."""
    layout = ActionLayout.of(character, joints)
    policies = [LinearGaussian.zero(FEATURES, layout.size, params.refine_sigma)] * reference.fragments
    walk = np.tile(np.arange(reference.fragments), params.refine_cycles if reference.cyclic else 1)
    path = guided_samcon(sampler, walk, policies, reference.start_state,
                         SamconParams(particles=params.refine_particles), seed=params.seed, iteration=0)
    path = carried_cycles(path, reference, params)
    # A one-pass clip is refined by one pass, with the actions as they ran (noise included): its open loop then
    # repeats the search's path from the start state, which a mean of several passes need not (strider's).
    taken = path.actions if reference.cyclic else path.executed
    targets = reference.targets.copy()
    joint_targets = {j: c.copy() for j, c in reference.joint_targets.items()}
    for k in range(reference.fragments):
        mean = taken[path.fragments == k].mean(axis=0)
        rows = reference.fragment_rows(k)
        moved = offset_coordinates({j: joint_targets[j][rows] for j in joints}, layout, mean)
        targets[rows] = rows_with(targets[rows], moved, character)
        for joint, coords in moved.items():
            joint_targets[joint][rows] = coords
    refined = replace(reference, targets=targets, joint_targets=joint_targets)
    if not params.refine_ends:
        return refined, path
    ends = path_ends(reference, path, joints)
    return replace(refined, ends=tuple(mean_summary([e for e, k in zip(ends, path.fragments) if k == f])
                                       for f in range(reference.fragments))), path


def carried_cycles(path: SamconPath, reference: Reference, params: LearnParams) -> SamconPath:
    """The refinement path to average: the whole walk, or with ``refine_min_cycles`` the whole cycles of a walk
    that gave up after carrying at least that many (a spin kick's open loop may hold for a few cycles and not
    ten); otherwise :class:`RefinementFailed`."""
    if path.complete:
        return path
    whole = len(path.fragments) // reference.fragments if reference.cyclic else 0
    if params.refine_min_cycles is None or whole < params.refine_min_cycles:
        raise RefinementFailed(reference.name, len(path.fragments), path.walk_length, path.retries)
    return path.first(whole * reference.fragments)


def path_ends(reference: Reference, path: SamconPath, joints: tuple[str, ...]) -> list[Summary]:
    """Each stage's end as the cost saw it, by replaying the path's executed actions (on ``joints``) from the
    reference's start (the samples are deterministic, so the replay is the path: each stage's cost comes out as
    the search's)."""
    runner = FragmentRunner(reference, joints=joints)
    state, ends = reference.start_state, []
    # ‖a‖ row by row of the whole array, as the search takes it (a vector's own norm may round otherwise)
    for k, executed, norm in zip(path.fragments, path.executed, np.linalg.norm(path.actions, axis=1)):
        state, outcome = runner.sample(state, int(k), executed, float(norm))
        ends.append(outcome.summary)
    return ends


def regress(tuples: SamconPath | TuplePool, fragments: int, layout: ActionLayout, params: LearnParams,
            previous: tuple[LinearGaussian, ...]) -> tuple[LinearGaussian, ...]:
    """The policies fitted to the tuples of a path or a pool of paths (Eqs. 14-19); a fragment with too few
    tuples keeps its old one."""
    half = fragments // 2 if params.mirror else fragments
    fitted: list[LinearGaussian | None] = [None] * fragments
    for k in range(half):
        mine = tuples.fragments == k
        s, a = tuples.features[mine], tuples.actions[mine]
        if params.mirror:
            twin = tuples.fragments == k + half
            s = np.concatenate([s, mirror_features(tuples.features[twin])])
            a = np.concatenate([a, mirror_actions(tuples.actions[twin], layout)])
        if len(s) < 2:
            continue
        fitted[k] = fit_linear_gaussian(s, a, variance_floor=params.sigma_floor ** 2,
                                        scaled_ridge=params.scaled_ridge, unbiased_variance=params.unbiased_variance)
        if params.mirror:
            fitted[k + half] = mirrored_policy(fitted[k], layout)
    return tuple(f if f is not None else p for f, p in zip(fitted, previous))


def survival(skill: LearnedSkill, seconds: float) -> float:
    """How long the skill's policies keep the character up, unperturbed and without noise (s, at most ``seconds``)."""
    return SkillPlayer(skill).run(seconds).seconds


def learn(clip: Clip, out: str | Path, params: LearnParams = LearnParams(), backend: str = "processes",
          workers: int = 2, report: Callable[[str], None] | None = None,
          stage_progress: Callable[[int, int], None] | None = None) -> LearnedSkill:
    """Learn ``clip`` into the skill file ``out``, resuming from it when it holds a run with the same settings."""
    out = Path(out)
    say = report or (lambda _: None)
    if params.policy_joints == "all":
        # the mirror rules are written for the waist, hips and knees alone (actions.MIRRORED)
        params = replace(params, mirror=False)
    if params.loop_once and not clip.loop:
        # a kick made a cycle has no strides to mirror and no strikes to reset the phase at
        params = replace(params, mirror=False, phase_reset=False)
    elif not clip.loop:
        # cycles' settings mean nothing for a clip that plays once
        params = replace(params, close_loop=False, phase_reset=False, mirror=False, turn_degrees=0.0)
    if params.turn_degrees:
        params = replace(params, mirror=False)   # a turn's mirror image turns the other way
    params = replace(params, gains=gain_set(clip, params))
    clip = learned_clip(clip, params)
    # The iteration count and the stopping time only say when to stop: a run may go on with more of either.
    settings = {"params": {k: v for k, v in asdict(params).items() if k not in ("iterations", "survive_seconds")}}
    skill = _resume(out, settings, clip.name)
    if skill is not None and skill.iteration >= params.iterations:
        return skill
    world = graph_world()
    character = world.character()
    joints = tuple(character.joints) if params.policy_joints == "all" else POLICY_JOINTS
    layout = ActionLayout.of(character, joints)
    started = time.perf_counter()
    elapsed_before = skill.curve[-1]["wall_seconds"] if skill is not None and skill.curve else 0.0
    if skill is None:
        reference = build_reference(clip, world, target_lead=params.target_lead, even=params.mirror,
                                    close_loop=params.close_loop and not params.turn_degrees,
                                    plant_feet=params.plant_feet,
                                    phase_reset=params.phase_reset, gains=params.gains)
        all_joints = tuple(character.joints)
        with Sampler(reference, backend=backend, workers=workers, joints=all_joints) as sampler:
            over = f"{params.refine_cycles} cycles" if reference.cyclic else "one pass (the clip does not loop)"
            say(f"refining {reference.fragments} fragments over {over} "
                f"({params.refine_particles} particles, all {len(all_joints)} joints, gain set {params.gains})")
            reference, path = refine(reference, sampler, params, character, all_joints)
            samples = sampler.samples
        policies = tuple(LinearGaussian.zero(FEATURES, layout.size, params.sigma0) for _ in range(reference.fragments))
        skill = LearnedSkill(reference, joints, policies, 0, (), settings)
        up = survival(skill, params.survive_seconds)
        carried = len(path.fragments) // reference.fragments if reference.cyclic else 1
        skill = replace(skill, curve=({"iteration": 0, "survived_seconds": up, "samples": samples,
                                       "wall_seconds": time.perf_counter() - started,
                                       "path_complete": carried == params.refine_cycles or not reference.cyclic,
                                       "refine_cycles": carried, "retries": path.retries},))
        skill = _checkpoint(skill, out)
        if reference.cyclic and carried < params.refine_cycles:
            say(f"refinement carried {carried} of {params.refine_cycles} cycles ({path.retries} retries); "
                "their mean is the open loop")
        say(f"refined: open loop stays up {up:.1f} s")
    reference = skill.reference
    walk = np.tile(np.arange(reference.fragments), params.walk_cycles)
    with Sampler(reference, backend=backend, workers=workers, joints=joints) as sampler:
        while skill.iteration < params.iterations and skill.curve[-1]["survived_seconds"] < params.survive_seconds:
            it = skill.iteration + 1
            path = guided_samcon(sampler, walk, skill.policies, reference.start_state,
                                 SamconParams(particles=params.particles_at(it)), seed=params.seed, iteration=it,
                                 progress=stage_progress, pass_length=None if reference.cyclic else reference.fragments)
            pool = None
            if params.pooled_paths > 1:
                pool = (skill.pool or TuplePool.empty(FEATURES, layout.size)).since(it - params.pooled_paths + 1)
                pool = pool.plus(it, path.fragments, path.features, path.actions)
            policies = regress(pool or path, reference.fragments, layout, params, skill.policies)
            up = survival(replace(skill, policies=policies, best=None), params.survive_seconds)
            wall = elapsed_before + time.perf_counter() - started
            most = int(path.population.max(initial=0))
            entry = {"iteration": it, "survived_seconds": up, "samples": path.samples, "wall_seconds": wall,
                     "path_complete": path.complete, "path_stages": len(path.fragments),
                     "retries": path.retries, "most_particles": most,
                     "mean_cost": float(path.costs.mean()) if len(path.costs) else None}
            # the curve is not monotone: once an iteration does worse than the record, the record's policies are
            # kept for playing (best = None means the latest are the record's)
            best, best_iteration = None, None
            if up < max(c["survived_seconds"] for c in skill.curve):
                best, best_iteration = (skill.policies, skill.iteration) if skill.best is None else \
                    (skill.best, skill.best_iteration)
            skill = replace(skill, policies=policies, iteration=it, pool=pool, best=best,
                            best_iteration=best_iteration, curve=skill.curve + (entry,))
            skill = _checkpoint(skill, out)
            say(f"iteration {it}: stays up {up:.1f} s; walk {len(path.fragments)}/{len(walk)} fragments, "
                f"{path.retries} retries (up to {most} particles a stage), "
                f"{wall / 60:.1f} min so far")
    return skill


def _checkpoint(skill: LearnedSkill, out: Path) -> LearnedSkill:
    """Write the skill and go on from the file's copy: a resumed run starts from that same copy, and small
    matrix products may round differently on arrays that sit differently in memory."""
    save_skill(skill, out)
    return load_skill(out)


def gain_set(clip: Clip, params: LearnParams) -> str:
    """The PD gain set ``clip`` learns with: the one asked for, or its Table II skill's (TABLE2_GAINS)."""
    return params.gains or TABLE2_GAINS.get(clip.name, "a")


def learned_clip(clip: Clip, params: LearnParams) -> Clip:
    """The clip the skill learns, named for what was made of it. With ``loop_once``, a clip that plays once becomes
    a cycle (``kick_loop``), whose seam ``close_loop`` closes. With ``turn_degrees``, the cycle (its seam closed
    first, if ``close_loop``, so that it would walk straight) turned steadily by that much per cycle
    (``walk_turn90``)."""
    if params.loop_once and not clip.loop:
        clip = replace(clip, loop=True, name=f"{clip.name}_loop")
    if not (params.turn_degrees and clip.loop):
        return clip
    straight = clip.loop_closed() if params.close_loop else clip
    return replace(straight.turning(math.radians(params.turn_degrees)),
                   name=f"{clip.name}_turn{params.turn_degrees:g}")


def _resume(out: Path, settings: dict, name: str) -> LearnedSkill | None:
    if not out.exists():
        return None
    skill = load_skill(out)
    # a checkpoint written before a setting existed ran with that setting's default, or with the behaviour
    # that came before the setting
    defaults = {k: v for k, v in asdict(LearnParams()).items() if k in settings["params"]} | SETTINGS_BEFORE
    stored = {"params": defaults | skill.settings.get("params", {})}
    if stored != settings or skill.name != name:
        raise UsageError(f"{out} holds a learning run of {skill.name!r} with other settings; write to another folder, "
                         "or delete it to start again")
    return skill
