"""``strider bench graph-parallel | graph-speed | graph-push``: control fragments (Liu et al. 2015) measured
as the control-graphs spec's protocols P7, P6, P3 and P4 ask.

* graph-parallel (P7): one guided-SAMCON search timed on 1 worker process, on 2, and on a 2-actor local Ray
  cluster, beside the speedup bare MuJoCo stepping of the same model gets from the same 2 workers, timed
  before and after the searches; the three searches' paths must be bit-identical.
* graph-speed (P6): a learned skill played for a minute on one core, policy included, beside bare stepping of
  the same model in the same run.
* graph-push (P3): the push test on each learned skill, one trial per seed on worker processes; t_f is the
  mean time to the fall. Then (P4) the kick, pushed once per pass at its peak for 10 passes, per force; and
  with its unpushed fragments searched (strider's).
"""

from __future__ import annotations

import sys
import time
from dataclasses import asdict, replace

import numpy as np

from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import Protocol
from strider.errors import UsageError
from strider.parallel import Checkpoint, Executor, Resumable, run_sweep
from strider.progress import progress_bar, progress_over


# --- P7 ---------------------------------------------------------------------------------------------
def _timed_steps(world, steps: int) -> float:
    """Wall time (s) of ``steps`` bare physics steps of ``world`` from its current state."""
    start = time.perf_counter()
    world.step(steps)
    return time.perf_counter() - start


def _bare_steps(steps: int, runner) -> float:
    """Bare stepping of a fragment runner's model from its reference's start state; the wall time (s). Also an
    executor task on a sampler's own workers."""
    runner.world.set_integration_state(runner.reference.start_state)
    return _timed_steps(runner.world, steps)


def _bare_round(sampler, steps: int, tasks: int) -> float:
    start = time.perf_counter()
    list(sampler.executor.map(_bare_steps, [steps] * tasks))
    return time.perf_counter() - start


def _search(sampler, walk: np.ndarray, policies, start_state: np.ndarray, particles: int, seed: int):
    from strider.methods.graphs.samcon import SamconParams, guided_samcon

    start = time.perf_counter()
    path = guided_samcon(sampler, walk, policies, start_state, SamconParams(particles=particles), seed=seed)
    return time.perf_counter() - start, path


def _same_path(a, b) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("fragments", "features", "actions", "costs")) \
        and (a.samples, a.retries) == (b.samples, b.retries)


def run_parallel(protocol: Protocol, progress: bool = True) -> BenchOutput:
    from strider.methods.graphs.actions import POLICY_JOINTS, ActionLayout
    from strider.methods.graphs.features import FEATURES
    from strider.methods.graphs.reference import build_reference, graph_world
    from strider.methods.graphs.sampler import Sampler
    from strider.methods.graphs.skills import clip_path
    from strider.motion.files import load_clip
    from strider.optimize.sampling import LinearGaussian

    p = protocol.params
    world = graph_world()
    character = world.character()
    joints = tuple(character.joints) if p.all_joints else POLICY_JOINTS
    reference = build_reference(load_clip(clip_path(p.clip)), world)
    layout = ActionLayout.of(character, joints)
    policies = [LinearGaussian.zero(FEATURES, layout.size, p.sigma)] * reference.fragments
    walk = np.arange(p.fragments) % reference.fragments
    bare_steps = round(p.bare_seconds / world.timestep)
    times: dict[str, float] = {}
    paths = {}
    bare = {1: 0.0, 2: 0.0}
    stages = progress_bar(6 + bool(p.ray), "graph-parallel: bare stepping and searches", unit="stage",
                          enabled=progress)
    with stages:
        with Sampler(reference, backend="processes", workers=1, joints=joints) as one, \
                Sampler(reference, backend="processes", workers=2, joints=joints) as two:
            for sampler in (one, two):
                _bare_round(sampler, 1, sampler.workers)   # start the workers and build their models before timing
            # Bare stepping before and after the searches, in opposite orders, so a change in the machine's load
            # during the run weighs on both worker counts alike.
            for sampler in (one, two):
                bare[sampler.workers] += _bare_round(sampler, bare_steps, 2)
                stages.update()
            for label, sampler in (("processes x1", one), ("processes x2", two)):
                times[label], paths[label] = _search(sampler, walk, policies, reference.start_state, p.particles,
                                                     protocol.seed)
                stages.update()
            for sampler in (two, one):
                bare[sampler.workers] += _bare_round(sampler, bare_steps, 2)
                stages.update()
        ray_note = ""
        if p.ray:
            try:
                with Sampler(reference, backend="ray", workers=2, joints=joints) as on_ray:
                    _bare_round(on_ray, 1, 2)
                    times["ray x2"], paths["ray x2"] = _search(on_ray, walk, policies, reference.start_state,
                                                               p.particles, protocol.seed)
            except Exception as exc:  # noqa: BLE001 - Ray is optional: the bench says why it was skipped
                ray_note = f"{type(exc).__name__}: {exc}".splitlines()[0]
            stages.update()
    first = paths["processes x1"]
    identical = {label: _same_path(first, path) for label, path in paths.items()}
    bare_speedup = bare[1] / bare[2]
    speedup = times["processes x1"] / times["processes x2"]
    efficiency = speedup / bare_speedup
    summary = {"search_seconds": times, "bare_seconds": {str(k): v for k, v in bare.items()},
               "bare_speedup_2": bare_speedup, "search_speedup_2": speedup, "efficiency": efficiency,
               "identical": identical, "stages": len(first.fragments), "walk_length": first.walk_length,
               "samples": first.samples, "retries": first.retries, "ray_skipped": ray_note or None}
    rows = [Row(f"guided SAMCON, {len(walk)}-fragment {p.clip} walk, N_s {p.particles}, {label}",
                f"{seconds:.1f} s ({first.samples / seconds:,.0f} fragments/s)") for label, seconds in times.items()]
    rows += [Row("bare stepping speedup, 1 -> 2 processes (the machine's limit)", f"{bare_speedup:.2f}x"),
             Row("SAMCON speedup, 1 -> 2 processes", f"{speedup:.2f}x"),
             Row("  as a share of bare stepping's speedup", f"{100 * efficiency:.0f}%", protocol.anchor("efficiency"),
                 protocol.meets("efficiency", efficiency)),
             Row("paths bit-identical on every backend and worker count",
                 "yes" if all(identical.values()) else "no: " + ", ".join(k for k, v in identical.items() if not v),
                 "identical", all(identical.values()) and "ray x2" in paths)]
    notes = [(f"The search samples {'all' if p.all_joints else 'the 11 policy'} servo targets around the open-loop "
              f"clip (σ {p.sigma} rad); it made {first.samples:,} fragment samples and {first.retries} retries, "
              f"{len(first.fragments)} of {first.walk_length} stages. Bare stepping: 2 tasks of {p.bare_seconds:g} "
              "s on each pool, before and after the searches.")]
    if ray_note:
        notes.append(f"Ray was skipped: {ray_note}")
    return BenchOutput("graph-parallel", "graphs", protocol.as_dict(), [], summary, rows, notes=notes,
                       run={"backend": "processes, ray" if p.ray else "processes", "workers": 2})


# --- P6 ---------------------------------------------------------------------------------------------
def run_speed(protocol: Protocol, progress: bool = True) -> BenchOutput:
    from strider.methods.graphs.group import GroupPlayer
    from strider.methods.graphs.player import SkillPlayer
    from strider.methods.graphs.skills import load_named_skill

    p = protocol.params
    skill = load_named_skill(p.skill)
    player = SkillPlayer(skill)
    world = player.world
    simulated, restarts, fragments = 0.0, 0, 0
    start = time.perf_counter()
    while simulated < p.seconds - 1e-9:
        result = player.run(p.seconds - simulated)
        simulated += result.seconds
        fragments += result.fragments
        restarts += result.fell
    wall = time.perf_counter() - start
    bare = _bare_steps(round(simulated / world.timestep), player.runner)
    rt, bare_rt = simulated / wall, simulated / bare
    summary = {"skill": skill.name, "simulated_seconds": simulated, "wall_seconds": wall, "bare_wall_seconds": bare,
               "realtime_factor": rt, "bare_realtime_factor": bare_rt, "restarts_after_falls": restarts,
               "fragments": fragments, "overhead_over_bare": (wall - bare) / bare}
    rows = [Row(f"{skill.name} skill, {simulated:.0f} s on one core, policy included"
                + (f" ({restarts} restart{'s' if restarts != 1 else ''} after falls)" if restarts else ""),
                f"{rt:.1f}x real time", protocol.anchor("one"), protocol.meets("one", rt)),
            Row("bare mj_step of the same model, same run", f"{bare_rt:.1f}x real time"),
            Row("skill over bare stepping", f"{100 * (wall - bare) / bare:+.0f}% wall time")]
    group = GroupPlayer([skill] * p.characters, radius=p.radius)
    start = time.perf_counter()
    played = group.run(p.seconds)
    group_wall = time.perf_counter() - start
    group.start()
    group_bare = _timed_steps(group.world, round(played.seconds / group.world.timestep))
    group_rt, group_bare_rt = played.seconds / group_wall, played.seconds / group_bare
    summary |= {"group_characters": p.characters, "group_realtime_factor": group_rt,
                "group_bare_realtime_factor": group_bare_rt, "group_falls": played.falls,
                "group_restarts": played.restarts, "group_fragments": played.fragments}
    rows += [Row(f"{p.characters} characters in one scene, {played.seconds:.0f} s, policies included "
                 f"({played.falls} falls, {played.restarts} restarts)", f"{group_rt:.1f}x real time",
                 protocol.anchor("four"), protocol.meets("four", group_rt)),
             Row(f"bare mj_step of the {p.characters}-character model, same run", f"{group_bare_rt:.1f}x real time")]
    notes = [("Fragments run through mujoco.rollout (no Python per physics step); the policy, the features and the "
              "fall test run once per 0.1 s fragment; bare stepping is mj_step called once per step. A skill "
              "that falls restarts from its start state; the restarts are counted."),
             (f"The group scene: {p.characters} walkers on a circle of {p.radius:g} m facing its centre, each playing "
              "the skill from its start state; a walker that falls holds its last targets, and the scene starts over "
              "once all are down. The scene runs as one rollout up to the next fragment boundary of any walker.")]
    return BenchOutput("graph-speed", "graphs", protocol.as_dict(), [], summary, rows, notes=notes,
                       run={"backend": "serial", "workers": 1})


# --- P3 ---------------------------------------------------------------------------------------------
def _push_task(task: tuple[str, int, dict], _context) -> dict:
    from strider.methods.graphs.push_test import PushTestParams, push_trial
    from strider.methods.graphs.skills import load_named_skill

    skill, seed, params = task
    return {"skill": skill, **asdict(push_trial(load_named_skill(skill), seed, PushTestParams(**params)))}


def run_push(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    from strider.methods.graphs.push_test import PushTestParams
    from strider.methods.graphs.skills import load_named_skill

    p = protocol.params
    for skill in p.skills + ((p.kick,) if p.kick is not None else ()):
        load_named_skill(skill)   # an unknown skill fails before any trial runs
    params = asdict(PushTestParams(max_seconds=p.max_seconds))
    tasks = {f"{skill} seed {protocol.seed + i}": (skill, protocol.seed + i, params)
             for skill in p.skills for i in range(p.trials)}
    with Executor("processes", workers=p.workers) as executor:
        trials = list(run_sweep(executor, _push_task, tasks, checkpoint, progress, "push trials").values())
    rows, per_skill = [], {}
    for skill in p.skills:
        mine = [t for t in trials if t["skill"] == skill]
        tf = float(np.mean([t["seconds"] for t in mine]))
        per_skill[skill] = {"t_f": tf, "trials": len(mine), "falls": sum(t["fell"] for t in mine),
                            "median_last_force": float(np.median([t["last_force"] for t in mine]))}
        target = protocol.target(skill)
        rows.append(Row(f"{skill}: mean time to fall over {len(mine)} seeds (cap {p.max_seconds:g} s)",
                        f"t_f {tf:.1f} s; {per_skill[skill]['falls']} fell; median last push "
                        f"{per_skill[skill]['median_last_force']:.0f} N (0: fell before the first)",
                        protocol.anchor(skill) if target is not None else "",
                        tf >= target if target is not None else None))
    notes = [("Pushes from t = 2 s every 2 s, 0.2 s on the chest, random horizontal direction, |N(0, σ²)| N with "
              "σ = 1 N/s · t · (the character's mass / the source's 62 kg); each starts at the first fragment "
              "boundary at or after its time.")]
    summary = {"skills": per_skill}
    if p.kick is not None:
        kick_trials, summary["kick"], kick_rows, kick_notes = _kick_pushes(protocol, progress, checkpoint)
        trials += kick_trials
        rows += kick_rows
        notes += kick_notes
    return BenchOutput("graph-push", "graphs", protocol.as_dict(), trials, summary, rows, notes=notes,
                       run={"backend": "processes", "workers": p.workers})


# --- P4 ---------------------------------------------------------------------------------------------
def _kick_task(task: tuple[str, int, int, dict], _context) -> dict:
    from strider.methods.graphs.push_test import CyclePushParams, cycle_push_trial
    from strider.methods.graphs.skills import load_named_skill

    skill, seed, fragment, params = task
    return asdict(cycle_push_trial(load_named_skill(skill), seed, fragment, CyclePushParams(**params)))


def _kick_pushes(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None
                 ) -> tuple[list[dict], dict, list[Row], list[str]]:
    """P4: the kick pushed once per pass at its peak, under its policies for every force, then searched (strider's)
    at the first force."""
    from strider.methods.graphs.player import SkillPlayer
    from strider.methods.graphs.push_test import SOURCE_MASS, CyclePushParams, cycle_push_trial, peak_fragment
    from strider.methods.graphs.search import SearchParams
    from strider.methods.graphs.skills import load_named_skill

    p = protocol.params
    skill = load_named_skill(p.kick)
    fragment = peak_fragment(skill)
    skill_mass = SkillPlayer(skill).runner.character.mass
    runs = {}
    for force in p.kick_forces:
        params = asdict(CyclePushParams(force=force, cycles=p.kick_cycles))
        runs[f"{force:g} N" if force else "unpushed"] = [(p.kick, protocol.seed + i, fragment, params)
                                                         for i in range(p.kick_trials)]
    tasks = {f"kick {label} {i}": task for label, mine in runs.items() for i, task in enumerate(mine)}
    with Executor("processes", workers=p.workers) as executor:
        done = run_sweep(executor, _kick_task, tasks, checkpoint, progress, "kick pushes")
    out = {label: [done[f"kick {label} {i}"] for i in range(len(mine))] for label, mine in runs.items()}
    force = p.kick_forces[0]
    searched_label = f"{force:g} N, unpushed fragments searched"
    if p.kick_search_trials:
        search = SearchParams(particles=p.kick_search_particles)
        resumable = Resumable(checkpoint)

        def searched(seed: int) -> dict:
            started = time.perf_counter()
            trial = cycle_push_trial(skill, seed, fragment, CyclePushParams(force=force, cycles=p.kick_cycles),
                                     search, "processes", p.workers)
            return asdict(trial) | {"wall_seconds": time.perf_counter() - started}

        out[searched_label] = [resumable.result(f"searched kick {i}", searched, protocol.seed + i)
                               for i in progress_over(range(p.kick_search_trials), "searched kicks",
                                                      enabled=progress)]
    summary, rows = {"push_fragment": fragment}, []
    for label, trials in out.items():
        kept = sum(not t["fell"] for t in trials)
        share = kept / len(trials)
        summary[label] = {"trials": len(trials), "no_fall": kept, "share": share,
                          "mean_cycles": float(np.mean([t["cycles"] for t in trials])),
                          "gave_up": sum(t["gave_up"] for t in trials)}
        measured = (f"{kept}/{len(trials)} ({100 * share:.0f}%); {summary[label]['mean_cycles']:.1f} passes "
                    "kept on average")
        if "searched" in label:
            measured += (f"; {summary[label]['gave_up']} searches gave up; "
                         f"{np.mean([t['wall_seconds'] for t in trials]):.0f} s wall per trial")
        first = label.startswith(f"{force:g} N")
        rows.append(Row(f"{p.kick}, {label} x {p.kick_cycles} passes: trials without a fall", measured,
                        protocol.anchor("kick_push") if first else "",
                        protocol.meets("kick_push", share) if first else None))
    trials = [{"kick": label} | t for label, ts in out.items() for t in ts]
    passes = ("cycles" if skill.reference.cyclic else
              "passes, each from where the last one ended (the source's kick is cyclic; this one plays once, so a "
              "pass follows its 1 s stand)")
    notes = [(f"The {p.kick} plays {p.kick_cycles} {passes}. One 0.2 s chest push per pass in a "
              f"random horizontal direction, at the start of fragment {fragment}, where a foot is highest in the "
              "unpushed pass (the peak of the kick). The source's 400 N scaled by this character's mass over the "
              f"source's 62 kg is {400.0 * skill_mass / SOURCE_MASS:.0f} N."
              + (" Searched: every fragment but the pushed ones is searched by original SAMCON from the state the "
                 f"character is in ({p.kick_search_particles} particles); a search that gives up counts as a fall."
                 if p.kick_search_trials else ""))]
    return trials, summary, rows, notes


# --- P1, P2 -----------------------------------------------------------------------------------------
TABLE2_ITERATIONS = 20   # seed 002, Table II: every skill learned in 20 EM iterations


def run_learn(protocol: Protocol, progress: bool = True) -> BenchOutput:
    """P1 (graph-learn: the run) and P2 (graph-table2: the other Table II stand-ins), each clip learned until its
    policies keep the character up ``survive_seconds`` or the iterations run out."""
    from strider.bench.plots import lines
    from strider.methods.graphs.learning import LearnParams, RefinementFailed, gain_set, learn
    from strider.methods.graphs.reference import TIMESTEP
    from strider.methods.graphs.skills import clip_path, skill_file_name
    from strider.motion.files import load_clip
    from strider.outputs import check_output_folder

    p = protocol.params
    params = LearnParams(iterations=p.iterations, survive_seconds=p.survive_seconds, cycles=p.cycles,
                         pooled_paths=p.pooled_paths, policy_joints=p.policy_joints, seed=protocol.seed)
    clips = {name: load_clip(clip_path(name)) for name in p.clips}   # a bad clip fails before any learning
    folder = check_output_folder(p.checkpoints)
    rows, trials, curves = [], [], {}
    for name, clip in clips.items():
        once = name in p.loop_once and not clip.loop
        out = folder / skill_file_name(f"{name}_loop" if once else name)
        target = protocol.target(name)
        anchor = protocol.anchor(name) if target is not None else ""
        gains = gain_set(clip, params)
        label = (f"{name}{' (learned as a cycle)' if once else ''}: learn until {p.survive_seconds:g} s unperturbed, "
                 f"{p.workers} workers, gain set {gains}")
        started = time.perf_counter()
        try:
            skill = learn(clip, out, replace(params, phase_reset=name in p.phase_reset, loop_once=once),
                          backend="processes", workers=p.workers,
                          report=(lambda text, name=name: print(f"{name}: {text}", file=sys.stderr)) if progress
                          else None)
        except RefinementFailed as failed:   # the clip's open loop cannot be refined: the next clip still runs
            minutes = (time.perf_counter() - started) / 60.0
            trials.append({"clip": name, "gains": gains, "refinement_failed": {"fragment": failed.reached,
                                                                "fragments": failed.fragments,
                                                                "retries": failed.retries},
                           "minutes": minutes, "learned": False})
            rows.append(Row(label, f"not learned: the open loop's refinement (original SAMCON) fell at fragment "
                                   f"{failed.reached} of {failed.fragments} after {failed.retries} retries, "
                                   f"{minutes:.1f} min", anchor, False if target is not None else None))
            continue
        last = skill.curve[-1]
        minutes = last["wall_seconds"] / 60.0
        cycle = skill.reference.steps * TIMESTEP
        fragments = skill.reference.fragments
        best = max(c["survived_seconds"] for c in skill.curve)
        learned = last["survived_seconds"] >= p.survive_seconds
        trials.append({"clip": name, "gains": skill.reference.gains, "skill": skill.name, "skill_file": str(out),
                       "curve": list(skill.curve),
                       "cycle_seconds": cycle, "fragments": fragments, "minutes": minutes, "learned": learned})
        curves[name] = ([c["iteration"] for c in skill.curve], [c["survived_seconds"] for c in skill.curve])
        ups = ", ".join(f"{c['survived_seconds']:.1f}" for c in skill.curve)
        refinement = skill.curve[0]
        over = ("" if refinement.get("path_complete", True)
                else f" over {refinement['refine_cycles']} of {params.refine_cycles} cycles")
        rows.append(Row(label, (f"{'learned' if learned else 'not learned'} after {skill.iteration} iterations, "
                                f"{minutes:.1f} min; best {best:.1f} s up (refined open loop{over}, then each "
                                f"iteration: {ups})"),
                        anchor, learned and minutes <= target if target is not None else None))
        rows.append(Row(f"  {name} normalized: per second of reference cycle ({cycle:.2f} s), per fragment "
                        f"({fragments})", f"{minutes / cycle:.1f} min/s, {minutes / fragments:.2f} min/fragment"))
    pooling = f", each regression on the tuples of the {p.pooled_paths} latest paths" if p.pooled_paths > 1 else ""
    if p.policy_joints == "all":
        pooling += ", policies on every joint (strider's; the source's act on the waist, hips and knees)"
    notes = [(f"Learning as 'strider graph learn' does it, {p.cycles} cycles per EM walk{pooling}; the skill files in "
              f"{folder} are the checkpoints, so an interrupted bench resumes. The source learned on 20 cores; "
              "its Table II times per second of cycle are the anchors' times over its cycle lengths.")]
    if p.iterations < TABLE2_ITERATIONS:
        notes.append(f"A budget of {p.iterations} EM iterations per clip (Table II: {TABLE2_ITERATIONS}), to fit the "
                     "machine's time: a clip not learned within it is reported with the time up it reached, not "
                     "the time it would take.")
    return BenchOutput(protocol.bench, "graphs", protocol.as_dict(), trials,
                       {"clips": {t["clip"]: {k: t[k] for k in ("minutes", "learned", "cycle_seconds") if k in t}
                                  for t in trials}}, rows, notes=notes,
                       plots={"curve": lines(curves, "time up without a fall, by EM iteration", "iteration",
                                             "seconds up")},
                       run={"backend": "processes", "workers": p.workers})


# --- P5 (b) ---------------------------------------------------------------------------------------------
def _recovery_trial(skill: str, getups: tuple[str, ...], seed: int, max_seconds: float, params: dict,
                    workers: int) -> dict:
    """One induced fall and what came of it; a search (``params['search']``) runs on ``workers`` processes."""
    from strider.methods.graphs.player import SkillPlayer
    from strider.methods.graphs.push_test import PushTestParams, push_until_fall
    from strider.methods.graphs.recovery import Recovery, RecoveryParams
    from strider.methods.graphs.skills import load_named_skill

    started = time.perf_counter()
    player = SkillPlayer(load_named_skill(skill))
    player.start()
    fall = push_until_fall(player, seed, PushTestParams(max_seconds=max_seconds))
    out = {"seed": seed, "fell": fall.fell, "fall_time": fall.seconds, "pushes": fall.pushes,
           "last_force": fall.last_force}
    if fall.fell:
        recovery = Recovery([load_named_skill(g) for g in getups], player.world, RecoveryParams(**params, seed=seed),
                            backend="processes" if workers > 1 else "serial", workers=workers)
        out |= asdict(recovery.recover()) | {"search_samples": recovery.samples}
    return out | {"wall_seconds": time.perf_counter() - started}


def _recovery_task(task: tuple, _context) -> dict:
    return _recovery_trial(*task, workers=1)


def _recovery_rows(label: str, trials: list[dict], give_up: float, protocol: Protocol) -> tuple[dict, list[Row]]:
    falls = [t for t in trials if t["fell"]]
    stood = [t for t in falls if t["stood"]]
    share = len(stood) / len(falls) if falls else 0.0
    chosen = {name: sum(t["getups"].count(name) for t in falls) for name in sorted({g for t in falls for g in t["getups"]})}
    summary = {"falls": len(falls), "stood": len(stood), "share": share,
               "mean_seconds_to_stand": float(np.mean([t["seconds"] for t in stood])) if stood else None,
               "mean_attempts": float(np.mean([t["attempts"] for t in falls])) if falls else None,
               "getups_begun": chosen, "fall_times": [round(t["fall_time"], 3) for t in falls],
               "wall_seconds_per_fall": float(np.mean([t["wall_seconds"] for t in falls])) if falls else None}
    measured = "no trial fell"
    if falls:
        measured = (f"{len(stood)}/{len(falls)} ({100 * share:.0f}%)"
                    + (f"; {summary['mean_seconds_to_stand']:.1f} s to stand on average" if stood else "")
                    + f"; {summary['mean_attempts']:.1f} get-ups begun per fall; "
                    f"{summary['wall_seconds_per_fall']:.1f} s wall per fall")
    rows = [Row(f"{label}: falls that end standing within {give_up:g} s", measured, protocol.anchor("stood"),
                protocol.meets("stood", share) if falls else None),
            Row("  get-ups begun", ", ".join(f"{k} {v}" for k, v in chosen.items()) or "none", "", None)]
    return summary, rows


def run_recovery(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    from strider.methods.graphs.skills import load_named_skill

    p = protocol.params
    for name in (p.skill, *p.getups):
        load_named_skill(name)   # an unknown skill fails before any trial runs
    seeds = [protocol.seed + i for i in range(p.trials)]
    learned = {"search": False}
    tasks = {f"learned seed {seed}": (p.skill, tuple(p.getups), seed, p.max_seconds, learned) for seed in seeds}
    with Executor("processes", workers=p.workers) as executor:
        results = {"learned": list(run_sweep(executor, _recovery_task, tasks, checkpoint, progress,
                                             "falls, learned get-ups").values())}
    if p.search:
        # one fall at a time: each search spreads its samples over the workers
        searched = {"search": True, "search_particles": p.search_particles}
        resumable = Resumable(checkpoint)
        results["search"] = [resumable.result(f"searched seed {seed}", _recovery_trial, p.skill, tuple(p.getups),
                                              seed, p.max_seconds, searched, p.workers)
                             for seed in progress_over(seeds, "falls, searched get-ups", enabled=progress)]
    summary, rows = {}, []
    labels = {"learned": "source: the learned get-ups", "search": "strider: get-ups searched from the fall (search)"}
    for key, trials in results.items():
        summary[key], more = _recovery_rows(labels[key], trials, p.give_up_seconds, protocol)
        rows += more
    falls = summary["learned"]["fall_times"]
    rows.append(Row("falls of the walk: first at / last at", f"{min(falls):.2f} s / {max(falls):.2f} s" if falls
                    else "none", "", None))
    notes = [("The walk plays under the push test (0.2 s chest pushes every 2 s from t = 2 s, |N(0, σ²)| N with "
              "σ = 1 N/s · t · mass / 62 kg) until it falls; the same falls (same seeds) for both rows. Then the servos "
              "track the first pose of the get-up whose start lies as the character lies (face up or down) until the "
              "joints are within 0.3 rad RMS and the centre of mass slower than 0.3 m/s, or for 2 s (the whole 2 s "
              "after a failed get-up); the get-up plays, its last frame held 1 s. Only its end is judged (its own "
              "fall test on the stand). A trial that does not fall within the push test's cap is left out."),
             ("search (strider's, not real time): from where the ragdoll left the character, original SAMCON "
              f"({p.search_particles} particles, every servo sampled, at most 10 rollbacks) reconstructs the get-up "
              "clip and the path it finds plays; up to 3 searches per fall. Its wall time is per fall on "
              f"{p.workers} workers.")]
    return BenchOutput("graph-recovery", "graphs", protocol.as_dict(), results, summary, rows, notes=notes,
                       run={"backend": "processes", "workers": p.workers})


# --- P5 (a) ---------------------------------------------------------------------------------------------
def _graph_walk(graph_name: str, seed: int, seconds: float, recovery: dict, search: bool, workers: int) -> dict:
    """One random walk on a control graph; searches (every visit's with ``search``, the get-ups' with
    ``recovery['search']``) run on ``workers`` processes."""
    from strider.methods.graphs.graph_runner import GraphRunner, GraphRunParams
    from strider.methods.graphs.recovery import RecoveryParams

    started = time.perf_counter()
    runner = GraphRunner.from_file(graph_name, GraphRunParams(seed=seed, recovery=RecoveryParams(**recovery, seed=seed),
                                                              search=search), workers)
    result = runner.run(seconds)
    return {"seed": seed, "seconds": result.seconds, "falls": result.falls, "stood": result.stood,
            "restarts": result.restarts, "transitions": result.transitions,
            "seconds_in": {node: result.seconds_in(node) for node in runner.graph.nodes},
            "fall_times": list(result.fall_times), "stood_within": _stood_within(result),
            "up_after_stand": _up_after_stand(result), "wall_seconds": time.perf_counter() - started}


def _stood_within(result) -> list[float]:
    """Per fall that stood: seconds from the fall to the end of the stand (its get-up visit)."""
    return [v.end - v.start for v in result.visits if v.ended == "stood"]


def _up_after_stand(result) -> list[float]:
    """Per get-up that stood and was followed by a fall: seconds from the end of its stand to that fall."""
    out, stand_end = [], None
    for visit in result.visits:
        if visit.ended == "stood":
            stand_end = visit.end
        elif visit.ended == "fall" and stand_end is not None:
            out.append(visit.end - stand_end)
            stand_end = None
    return out


def _graph_walk_task(task: tuple, _context) -> dict:
    return _graph_walk(*task, workers=1)


def _walk_rows(label: str, walks: list[dict], seconds: float, give_up: float, protocol: Protocol
               ) -> tuple[dict, list[Row]]:
    falls = sum(w["falls"] for w in walks)
    stood = sum(w["stood"] for w in walks)
    in_time = sum(t <= give_up + 1e-9 for w in walks for t in w["stood_within"])
    played = {node: sum(w["seconds_in"][node] for w in walks) for node in walks[0]["seconds_in"]}
    first = [w["fall_times"][0] for w in walks if w["fall_times"]]
    after = [t for w in walks for t in w["up_after_stand"]]
    summary = {"walks": len(walks), "seconds": sum(w["seconds"] for w in walks), "falls": falls,
               "falls_per_walk": [w["falls"] for w in walks],
               "walks_without_a_fall": sum(w["falls"] == 0 for w in walks), "stood": stood,
               "stood_within_give_up": in_time, "restarts": sum(w["restarts"] for w in walks),
               "transitions": sum(w["transitions"] for w in walks),
               "mean_seconds_to_first_fall": float(np.mean(first)) if first else None,
               "mean_seconds_up_after_a_stand": float(np.mean(after)) if after else None,
               "seconds_in": played, "wall_seconds_per_walk": float(np.mean([w["wall_seconds"] for w in walks]))}
    rows = [Row(f"{label}: falls in {len(walks)} walk(s) of {seconds:g} s",
                f"{falls} ({summary['walks_without_a_fall']}/{len(walks)} walks without one)"
                + (f"; first after {summary['mean_seconds_to_first_fall']:.1f} s on average" if first else ""),
                protocol.anchor("falls"), protocol.meets("falls", falls, at_most=True)),
            Row(f"  falls that end standing within {give_up:g} s",
                f"{in_time}/{falls}" + (f" ({100 * in_time / falls:.0f}%); {summary['restarts']} restarts"
                                        if falls else ""),
                protocol.anchor("stood"), protocol.meets("stood", in_time / falls) if falls else None),
            Row("  after a stand, up until the next fall",
                f"{np.mean(after):.2f} s on average over {len(after)} stands" if after
                else "no stand was followed by a fall", "", None),
            Row("  simulated time in each node", ", ".join(f"{n} {t:.0f} s" for n, t in played.items()), "", None),
            Row("  wall time per walk", f"{summary['wall_seconds_per_walk']:.1f} s", "", None)]
    return summary, rows


def run_walks(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    from strider.methods.graphs.graph_runner import GraphRunner
    from strider.methods.graphs.recovery import RecoveryParams

    p = protocol.params
    GraphRunner.from_file(p.graph)   # a bad graph or skill fails before any walk runs
    give_up = RecoveryParams().give_up_seconds
    seeds = [protocol.seed + i for i in range(p.walks)]
    tasks = {f"learned seed {seed}": (p.graph, seed, p.seconds, {"search": False}, False) for seed in seeds}
    with Executor("processes", workers=p.workers) as executor:
        results = {"learned": list(run_sweep(executor, _graph_walk_task, tasks, checkpoint, progress,
                                             "random walks, learned").values())}
    if p.search_walks:
        # one walk at a time: each search spreads its samples over the workers
        searched = {"search": True, "search_particles": p.search_particles}
        resumable = Resumable(checkpoint)
        for key, everything in (("search_getup", False), ("search", True)):
            results[key] = [resumable.result(f"{key} seed {seed}", _graph_walk, p.graph, seed, p.search_seconds,
                                             searched, everything, p.workers)
                            for seed in progress_over(seeds[:p.search_walks], f"random walks, {key.replace('_', ' ')}",
                                                      enabled=progress)]
    labels = {"learned": "source: the learned policies and get-ups",
              "search_getup": "strider: get-ups searched from the fall (search-getup)",
              "search": "strider: every visit and get-up searched (search)"}
    lengths = {"learned": p.seconds, "search_getup": p.search_seconds, "search": p.search_seconds}
    summary, rows = {}, []
    for key, walks in results.items():
        summary[key], more = _walk_rows(labels[key], walks, lengths[key], give_up, protocol)
        rows += more
    notes = [(f"Random walks on the graph {p.graph!r} from its start node's start state, unperturbed, one seed each: "
              "at the end of a visit (its cycles, drawn from the node's range, or a get-up's pass) the next node is "
              "drawn uniformly from its end edges. A fall goes to the ragdoll and the get-up that fits how the "
              f"character lies; a get-up that does not stand within {give_up:g} s starts the graph over (a restart). "
              "A transition starts the next skill at its first fragment from wherever the character is. A get-up "
              "under way when a walk's time is up finishes, so a walk may run past its length.")]
    if p.search_walks:
        notes.append("search-getup and search (strider's, not real time): each get-up (search-getup), or the random "
                     "walk, drawn ahead up to 300 fragments at a time, and every get-up (search), is searched by "
                     "original SAMCON from where the character is "
                     f"({p.search_particles} particles, every servo sampled, at most 10 rollbacks) and the path found "
                     "plays; a search that gives up counts as a fall. "
                     f"{p.search_walks} walk(s) of {p.search_seconds:g} s each, their wall time on {p.workers} workers.")
    return BenchOutput("graph-walks", "graphs", protocol.as_dict(), results, summary, rows, notes=notes,
                       run={"backend": "processes", "workers": p.workers})


# --- steering ----------------------------------------------------------------------------------------
STEER_CONFIGURATIONS = {
    # the source's cost (own facing, w_v = 0.1); its get-ups are the learned ones, which do not stand here, so its
    # run ends at the first fall
    "source": {"keep_heading": False, "velocity_weight": 0.1, "recover": False},
    "strider": {},   # SteerParams' defaults: the planned heading's frame, w_v = 10, searched get-ups after a fall
}


def _steer_course(skill_name: str, waypoints, seconds: float, particles: int, workers: int, settings: dict) -> dict:
    from strider.methods.graphs.search import SearchParams
    from strider.methods.graphs.skills import load_named_skill
    from strider.methods.graphs.steering import Steering, SteerParams

    started = time.perf_counter()
    steering = Steering(load_named_skill(skill_name), SteerParams(search=SearchParams(particles=particles), **settings),
                        backend="processes" if workers > 1 else "serial", workers=workers)
    result = steering.run(waypoints, seconds)
    return {"waypoints": [list(w) for w in waypoints], "reached_at": list(result.reached), "gave_up": result.gave_up,
            "falls_at": list(result.falls), "stood_at": list(result.stood),
            "seconds": result.seconds, "distance": result.distance, "searches": result.searches,
            "track": result.track.round(4).tolist(), "wall_seconds": time.perf_counter() - started}


def run_steer(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    from strider.methods.graphs.skills import load_named_skill
    from strider.methods.graphs.steering import SteerParams, check_waypoints, falls_text

    p = protocol.params
    if not load_named_skill(p.skill).reference.cyclic:   # a bad skill fails before any course runs
        raise UsageError(f"graph-steer: {p.skill} plays once; steering takes a cyclic skill (a walk, a run)")
    for waypoints in p.courses.values():
        check_waypoints(waypoints)
    results: dict[str, dict] = {}
    rows = []
    resumable = Resumable(checkpoint)
    with progress_bar(len(STEER_CONFIGURATIONS) * len(p.courses), "steered courses", enabled=progress) as bar:
        for config, settings in STEER_CONFIGURATIONS.items():
            results[config] = {}
            for name, waypoints in p.courses.items():
                results[config][name] = resumable.result(f"{config} {name}", _steer_course, p.skill, waypoints,
                                                         p.seconds, p.particles, p.workers, settings)
                bar.update()
    summary = {}
    for config, courses in results.items():
        asked = sum(len(c["waypoints"]) for c in courses.values())
        reached = sum(len(c["reached_at"]) for c in courses.values())
        simulated = sum(c["seconds"] for c in courses.values())
        wall = sum(c["wall_seconds"] for c in courses.values())
        summary[config] = {"waypoints": asked, "reached": reached, "gave_up": sum(c["gave_up"] for c in courses.values()),
                           "falls": sum(len(c["falls_at"]) for c in courses.values()),
                           "stood": sum(len(c["stood_at"]) for c in courses.values()),
                           "wall_seconds_per_simulated_second": wall / simulated}
        steer = SteerParams(**STEER_CONFIGURATIONS[config])
        label = (f"{config}: each fragment scored in "
                 + ("the planned heading's frame" if steer.keep_heading else "its own facing")
                 + f", w_v {steer.velocity_weight:g}"
                 + (", searched get-ups after a fall" if steer.recover else ", the run ends at a fall"))
        rows.append(Row(f"{label}: waypoints reached", f"{reached}/{asked}", protocol.anchor("reached"),
                        protocol.meets("reached", reached / asked)))
        for name, course in courses.items():
            times = ", ".join(f"{t:.1f}" for t in course["reached_at"])
            rows.append(Row(f"  {name} ({len(course['waypoints'])} waypoint(s))",
                            f"{len(course['reached_at'])} reached" + (f" at {times} s" if times else "")
                            + (f"; {course['distance']:.2f} m from the next at the end"
                               if len(course["reached_at"]) < len(course["waypoints"]) else "")
                            + falls_text(course["falls_at"], course["stood_at"]), "", None))
        rows.append(Row("  wall time per simulated second",
                        f"{summary[config]['wall_seconds_per_simulated_second']:.1f} s on {p.workers} workers", "",
                        None))
    defaults = SteerParams()
    notes = [(f"Each course runs {p.seconds:g} s of simulated time from the {p.skill} skill's start state, or until a "
             "search gives up and the character does not get up. A waypoint is reached when the root comes within "
             f"{defaults.reach:g} m of it; the next then becomes the goal. The reference turns at up to "
             f"{defaults.max_turn:g} degrees per cycle ({defaults.levels} rates each side of straight); "
             f"{defaults.stretch} fragments are planned, searched with {defaults.lookahead} more, and played at a "
             f"time; {p.particles} particles, every servo sampled, at most 10 rollbacks per search. Where a search "
             "gives up the character falls; strider's configuration then gets up by a get-up searched from where it "
             f"lies ({defaults.getup.search_particles} particles) and steers on from the stand; a get-up under way "
             "when the course's time is up finishes."),
             ("The source steers its learned walk by adding the actions it takes under gentle sideways pushes; the "
             "shipped learned walk falls 1.2-1.4 s into a 60 N push, so that way is not measured here "
             "(docs/graphs.md, \"Steering\").")]
    return BenchOutput("graph-steer", "graphs", protocol.as_dict(), [results], summary, rows, notes=notes,
                       run={"backend": "processes", "workers": p.workers})
