"""``strider skill run`` and ``strider optimize skill``: skills as data files (Torres 2012), run and CMA-optimized.

Kept out of :mod:`strider.cli.main` so that other subcommands can be added
there independently; ``main`` only registers these and dispatches to
:func:`run`.
"""

from __future__ import annotations

import argparse
import time

from strider.cli import gaits
from strider.cli import report as report_text
from strider.cli.catalogue import list_shipped
from strider.cli.parallel_flags import DEFAULT_WORKERS, add_parallel_flags
from strider.errors import UsageError
from strider.outputs import check_output_folder

ACTIONS = ("skill", "optimize")
DEFAULT_FPS = 30.0

SKILL_DESCRIPTION = """\
Run a skill file: a state machine of actions and states over the component
vocabulary (PD tracking, knot trajectories, COM balance, ragdoll), Torres 2012.

examples:
  strider skill list                                   the skills that ship, one line each
  strider skill run roll-supine-to-prone --video roll.mp4
  strider skill run forward-roll --json
  strider skill run my-skill.yaml --seconds 5
"""

OPTIMIZE_DESCRIPTION = """\
Optimize a skill's free knots and axes with CMA-ES (Torres 2012, Sec. 6), rollouts
in parallel; writes the optimized skill file and a convergence plot (PNG).

examples:
  strider optimize skill roll-supine-to-prone --workers 2 --budget 1000 --out results/
  strider optimize skill roll-supine-to-prone --workers 2 --resume --out results/
  strider optimize skill roll-prone-to-supine --backend ray --workers 2
"""


def add_commands(commands, formatter) -> None:
    from strider.methods.skills.skill import available_skills

    skill = commands.add_parser("skill", help="run a skill file (stand, fall, walk, rolls)",
                                description=SKILL_DESCRIPTION, formatter_class=formatter)
    sub = skill.add_subparsers(dest="skill_action", metavar="ACTION", required=True)
    sub.add_parser("list", help="the shipped skills, one line each", description=SKILL_DESCRIPTION,
                   formatter_class=formatter)
    run_p = sub.add_parser("run", help="run a skill", description=SKILL_DESCRIPTION, formatter_class=formatter)
    run_p.add_argument("skill", metavar="NAME|PATH", help=f"shipped skill ({', '.join(available_skills())}) or a .yaml")
    run_p.add_argument("--seconds", type=float, default=None, metavar="S",
                       help="simulated duration, s (default: the skill's own)")
    run_p.add_argument("--perturb-seed", type=int, default=None, metavar="N",
                       help="perturb every joint of the start pose by U(-0.05, 0.05) rad with this seed")
    run_p.add_argument("--video", default=None, metavar="PATH.mp4", help="write an MP4; the folder must exist")
    run_p.add_argument("--fps", type=float, default=DEFAULT_FPS, metavar="N",
                       help="video frames per simulated second (default: %(default)g)")
    run_p.add_argument("--json", action="store_true", help="print the result as JSON")

    opt = commands.add_parser("optimize", help="CMA-ES optimization of a skill's or a gait's parameters",
                              description=OPTIMIZE_DESCRIPTION, formatter_class=formatter)
    osub = opt.add_subparsers(dest="optimize_target", metavar="TARGET", required=True)
    o = osub.add_parser("skill", help="optimize a skill's free knots and axes", description=OPTIMIZE_DESCRIPTION,
                        formatter_class=formatter)
    o.add_argument("skill", metavar="NAME|PATH", help="a skill with an 'optimize' section")
    add_parallel_flags(o, "rollouts")
    o.add_argument("--budget", type=int, default=None, metavar="EVALS",
                   help="evaluation cap (default: the skill's maxfevals, 1000 per docs/skills.md, decision 23)")
    o.add_argument("--seed", type=int, default=1, metavar="N", help="CMA-ES seed, >= 1 (default: %(default)s)")
    o.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    o.add_argument("--out", default=".", metavar="DIR",
                   help="folder for NAME.optimized.yaml, NAME.convergence.png and NAME.checkpoint.pkl (default: .)")
    o.add_argument("--json", action="store_true", help="print the result as JSON")
    gaits.add_target(osub, formatter, DEFAULT_WORKERS)


def run(args: argparse.Namespace) -> int:
    if args.action == "skill":
        return _list_skills() if args.skill_action == "list" else _run_skill(args)
    if args.optimize_target == "gait":
        return gaits.run(args)
    return _optimize_skill(args)


def _list_skills() -> int:
    from strider.methods.skills.skill import available_skills, load_skill

    return list_shipped(available_skills(), load_skill, lambda name, skill: (
        f"{name:22s} {skill.seconds:5.1f} s  {_what(skill.description)}"))


SUMMARY_LENGTH = 80     # characters of a description shown by 'skill list' when it has no citation to end at
CITATION = " (Torres 2012"   # how a shipped skill's description cites its source, right after saying what it does


def _what(description: str) -> str:
    """What a skill does, from its description: the words before its citation of the source (a shipped skill's
    description may first say how its parameters were found)."""
    flat = " ".join(description.split())
    head, cited, _ = flat.partition(CITATION)
    if cited:
        return head.rsplit(". ", 1)[-1]
    return flat if len(flat) <= SUMMARY_LENGTH else flat[:SUMMARY_LENGTH - 3] + "..."


def _run_skill(args: argparse.Namespace) -> int:
    from strider.characters import load_character
    from strider.methods.skills.controller import SkillController
    from strider.methods.skills.rollout import reaches_end, rollout
    from strider.methods.skills.skill import load_skill
    from strider.runner import Runner, Scenario
    from strider.sim import CharacterPlacement, Scene

    skill = load_skill(args.skill)
    seconds = skill.seconds if args.seconds is None else args.seconds
    if not seconds > 0:
        raise UsageError(f"--seconds must be > 0, got {seconds:g}")
    if args.perturb_seed is not None and args.perturb_seed < 0:
        raise UsageError(f"--perturb-seed must be >= 0 (a seed for NumPy's generator), got {args.perturb_seed}")
    perturb = 0.05 if args.perturb_seed is not None else 0.0   # torres-skills.md, P6
    if args.video is not None:
        from strider.sim.render import check_video_path

        check_video_path(args.video)
        if not 0 < args.fps <= 240:
            raise UsageError(f"--fps must be in (0, 240], got {args.fps:g}")
    controller = SkillController(skill, perturb=perturb, perturb_seed=args.perturb_seed)
    runner = Runner(Scenario(Scene((CharacterPlacement(load_character(skill.character)),)), controller, seconds))
    recorder = None
    if args.video is not None:
        from strider.sim.render import VideoRecorder

        rate = args.fps
        recorder = VideoRecorder(runner.world, args.video, rate)
        runner.frame_rate, runner.on_frame = rate, recorder
    try:
        result = runner.run()
    finally:
        if recorder is not None:
            recorder.close()
    ended = reaches_end(skill, rollout(skill, seconds, perturb, args.perturb_seed)) if skill.checks else None
    report = {"skill": skill.name, "seconds": seconds, "fell": controller.fallen or result.unstable,
              "end_condition": ended, "final_state": controller.state.name, "wall_seconds": result.wall_seconds,
              "video": args.video, "unstable": result.unstable, "unstable_time": result.unstable_time,
              "unstable_warning": result.unstable_warning}
    end = "" if ended is None else (" It reached its end condition." if ended else " It missed its end condition.")
    text = (f"Ran skill {skill.name} for {seconds:g} s of simulated time, ending in state "
            f"{controller.state.name!r}{' (a ragdoll)' if controller.fallen else ''}.{end}"
            + (f" Video written to {args.video}." if args.video else ""))
    if result.unstable:
        text += "\n" + report_text.instability(result)
    return report_text.emit(report, args.json, text,
                            report_text.EXIT_FAILED if result.unstable else report_text.EXIT_OK)


def _optimize_skill(args: argparse.Namespace) -> int:
    from strider.methods.skills.optimize import (
        optimize_skill,
        parameter_vector,
        success_rate,
        with_parameters,
        worker_cache,
        write_skill,
    )
    from strider.methods.skills.skill import load_skill, skill_path
    from strider.optimize.cma_es import plot_convergence
    from strider.parallel import Executor

    path = skill_path(args.skill)
    skill = load_skill(path)
    if skill.optimize is None:
        raise UsageError(f"skill {skill.name!r} has no 'optimize' section")
    out = check_output_folder(args.out)
    checkpoint = out / f"{skill.name}.checkpoint.pkl"
    asked = args.budget if args.budget is not None else skill.optimize.maxfevals
    budget, bar = report_text.cma_budget_bar(asked, len(parameter_vector(skill)), f"CMA-ES {skill.name}", args.json,
                                             skill.optimize.popsize)
    start = time.perf_counter()
    with Executor(args.backend, workers=args.workers, setup=worker_cache) as executor:
        result = optimize_skill(path, executor, seed=args.seed, maxfevals=budget, checkpoint=checkpoint,
                                resume=args.resume, on_generation=bar.generation)
    bar.close()
    wall = time.perf_counter() - start
    optimized = with_parameters(skill, result.x)
    nominal = success_rate(optimized, 0)[0] if skill.checks else None
    written = out / f"{skill.name}.optimized.yaml"
    write_skill(skill, result.x, written, f"Parameters optimized by CMA-ES (seed {args.seed}, "
                                          f"{result.evaluations} evaluations, cost {result.cost:.4f}).")
    plot = out / f"{skill.name}.convergence.png"
    plot_convergence(result.history, plot, f"{skill.name}: CMA-ES, seed {args.seed}")
    report = {"skill": skill.name, "cost": result.cost, "evaluations": result.evaluations, "budget": budget,
              "budget_asked": asked, "wall_seconds": wall,
              "workers": args.workers, "backend": args.backend, "end_condition": nominal, "x": result.x.tolist(),
              "skill_file": str(written), "plot": str(plot)}
    return report_text.emit(report, args.json,
                            f"Optimized {skill.name}: cost {result.cost:.4f} after {result.evaluations} evaluations "
                            f"in {wall:.0f} s wall ({args.workers} {args.backend} workers); end condition "
                            f"{'passed' if nominal else 'missed'}. Wrote {written} and {plot}.")
