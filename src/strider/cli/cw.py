"""``strider cw``: constrained walking (Coros et al. 2008; Coros 2010, Ch. 3): synthesize the example steps a
step-to-step model learns from, and walk a course planning every step with it."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time

from strider.cli import report as report_text
from strider.cli.parallel_flags import add_parallel_flags
from strider.outputs import check_output_folder

ACTIONS = ("cw",)

DESCRIPTION = """\
Constrained walking (Coros 2010, Ch. 3): a walker, planar (planar7) or 3-D
(bipv3), adapts its base SIMBICON gait step by step to where its feet must land.
Offline, 'synthesize' solves random stepping-stone sequences by optimization and
keeps every step as an example; online, 'walk' predicts each step's outcome from
those examples and plans the next two steps at every foot strike.

examples:
  strider cw synthesize --examples 2000 --workers 2 --out results/
  strider cw walk --course gaps-0.3 --seed 2 --video gaps.mp4
  strider cw walk --character bipv3 --course gaps-3d --start -0.5 --video gaps3d.mp4
"""

SYNTHESIZE_DESCRIPTION = """\
Synthesize CW example steps (Coros 2010, Sec. 3.3): random sequences of 100
stepping stones (steps of 0.1-0.9 m) are walked with the base gait adapted by a
3-step windowed optimization; each step taken is one example (state at the
strike, action, state at the next strike, step length). Sequences run in
parallel; the set is the same for any worker count. An interrupted run resumes
from its checkpoint in --out. A 3-D walker's optimization also holds its feet
15 cm apart sideways (Sec. 3.3.3). Writes CHARACTER.examples.npz, which
'strider cw walk --examples' reads; the shipped sets were made by the first two
examples below.

examples:
  strider cw synthesize --examples 2000 --workers 2 --out results/
  strider cw synthesize --character bipv3 --examples 1000 --workers 2 --out results/
  strider cw synthesize --examples 200 --seed 7 --backend ray --out results/
"""


WALK_DESCRIPTION = """\
Walk a course along +x, planning every step at its foot strike (Coros 2010,
Sec. 3.5): the step-to-step model predicts where each candidate
action lands the next two steps and the planner keeps the feet out of the gaps.
'default' is strider's best: a local-linear model; the hybrid planner
(preferred 0.36 m steps, 0.3 m for bipv3, moved out of gaps, else the clearing
step nearest them, else random sampling); and early touchdown (a swing foot
that lands in SIMBICON's timed state, 0.2 s or more into the step, ends the
step). 'source' is the thesis' own: the k-NN model, the random planner,
SIMBICON's own state machine. A footfall with under half the foot on support
counts as a miss.

examples:
  strider cw walk --course gaps-0.3 --seed 2 --video gaps.mp4
  strider cw walk --course gap-0.5 --config source --json
  strider cw walk --course my-course.yaml --examples results/planar7.examples.npz
  strider cw walk --character bipv3 --course gaps-3d --start -0.5 --video gaps3d.mp4
"""
# s: strider's gap walking ends a step at a swing foot's touchdown this far into it (0.15 s let scuffs end steps
# early; 0.2 and 0.25 s crossed gaps alike; docs/cw.md)
GAP_EARLY_TOUCHDOWN = 0.2
# (regression, search, SIMBICON's early_touchdown)
CONFIGS = {"default": ("local-linear", "hybrid", GAP_EARLY_TOUCHDOWN), "source": ("knn", "random", None)}
# m: strider's footstep length for the hybrid planner by character; the others keep the source's 0.36 m. The 3-D
# humanoid crossed gaps-3d from 25 of 30 starts with 0.3 m against 21 with 0.36 m; in 2-D 0.3 m did worse (docs/cw.md)
GAP_PREFERRED_STEP = {"bipv3": 0.3}


def add_commands(commands, formatter) -> None:
    p = commands.add_parser("cw", help="constrained walking: synthesize example steps, walk planning each step",
                            description=DESCRIPTION, formatter_class=formatter)
    sub = p.add_subparsers(dest="cw_action", metavar="ACTION", required=True)
    s = sub.add_parser("synthesize", help="synthesize example steps for the step-to-step model",
                       description=SYNTHESIZE_DESCRIPTION, formatter_class=formatter)
    s.add_argument("--character", default="planar7", metavar="NAME",
                   help="a character with a SIMBICON walk: planar7 (2-D) or bipv3 (3-D) (default: %(default)s)")
    s.add_argument("--examples", type=int, default=2000, metavar="N", help="example steps to keep (default: %(default)s)")
    s.add_argument("--gamma", type=float, default=None, metavar="G",
                   help="weight of the actions' distance from the base gait in the optimization (default: the "
                        "source's 0.1; 0.01 lands the optimized steps nearer their stones, but its set plans worse)")
    s.add_argument("--early-touchdown", type=float, default=None, metavar="S",
                   help="SIMBICON's early touchdown while synthesizing: a swing foot landing in the timed state, S "
                        "seconds or more into the step, ends the step (default: off, the source's state machine)")
    s.add_argument("--seed", type=int, default=0, metavar="N",
                   help="the first sequence's seed; sequence k draws its stones from seed + k (default: %(default)s)")
    add_parallel_flags(s, "sequences")
    s.add_argument("--out", default=".", metavar="DIR",
                   help="folder for CHARACTER.examples.npz and its checkpoint (default: .)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    w = sub.add_parser("walk", help="walk a course planning every step online", description=WALK_DESCRIPTION,
                       formatter_class=formatter)
    w.add_argument("--course", default="gaps-0.3", metavar="NAME|PATH",
                   help="a course ('strider course list') or a course file (default: %(default)s)")
    w.add_argument("--character", default="planar7", metavar="NAME",
                   help="planar7 (2-D) or bipv3 (3-D), or any character with a step model (default: %(default)s)")
    w.add_argument("--examples", default=None, metavar="PATH.npz",
                   help="an example set from 'strider cw synthesize' (default: the one shipped for the character)")
    w.add_argument("--config", default="default", choices=tuple(CONFIGS),
                   help="'default' (strider's best) or 'source' (the thesis' model, planner and state machine) "
                        "(default: %(default)s)")
    w.add_argument("--seed", type=int, default=0, metavar="N", help="seeds the random planner (default: %(default)s)")
    w.add_argument("--start", type=float, default=0.0, metavar="X",
                   help="where along x the walker stands at first, m; it must stand on support (default: %(default)s)")
    w.add_argument("--max-steps", type=int, default=200, metavar="N", help="stop after this many steps (default: %(default)s)")
    w.add_argument("--video", default=None, metavar="PATH.mp4", help="write an MP4; the folder must exist")
    w.add_argument("--json", action="store_true", help="print the result as JSON, every footfall included")


def run(args: argparse.Namespace) -> int:
    if args.cw_action == "synthesize":
        return _synthesize(args)
    if args.cw_action == "walk":
        return _walk(args)
    raise AssertionError(args.cw_action)


def _synthesize(args: argparse.Namespace) -> int:
    import numpy as np

    from strider.characters import load_character
    from strider.errors import UsageError, require_finite
    from strider.methods.cw.synthesis import SynthesisParams, save_examples, synthesize
    from strider.parallel import Executor

    if args.examples < 1:
        raise UsageError(f"--examples must be >= 1, got {args.examples}")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    if args.gamma is not None:
        require_finite("--gamma", args.gamma, "a weight")
        if args.gamma < 0:
            raise UsageError(f"--gamma must be >= 0, got {args.gamma:g}")
    if args.early_touchdown is not None:
        require_finite("--early-touchdown", args.early_touchdown, "a time in s")
        if args.early_touchdown < 0:
            raise UsageError(f"--early-touchdown must be >= 0 s, got {args.early_touchdown:g}")
    params = SynthesisParams(early_touchdown=args.early_touchdown)
    if args.gamma is not None:
        params = dataclasses.replace(params, gamma=args.gamma)
    load_character(args.character)
    out = check_output_folder(args.out)
    written = out / f"{args.character}.examples.npz"
    checkpoint = out / f"{args.character}.examples.checkpoint.jsonl"
    start = time.perf_counter()
    with Executor(args.backend, workers=args.workers) as executor:
        examples, info = synthesize(args.examples, executor, seed=args.seed, params=params, character=args.character,
                                    checkpoint=str(checkpoint), progress=sys.stderr.isatty() and not args.json)
    wall = time.perf_counter() - start
    errors = np.abs(examples.errors)
    save_examples(written, examples, {"character": args.character, "seed": args.seed, "gamma": params.gamma,
                                      "early_touchdown": params.early_touchdown,
                                      "sequences": info["sequences"], "falls": info["falls"]})
    report = {"character": args.character, "gamma": params.gamma, "early_touchdown_s": params.early_touchdown,
              "examples": len(examples), "sequences": info["sequences"],
              "falls": info["falls"], "mean_landing_error_m": float(errors.mean()),
              "share_under_6cm": float((errors < 0.06).mean()), "wall_seconds": wall, "workers": args.workers,
              "backend": args.backend, "examples_file": str(written), "checkpoint": str(checkpoint)}
    return report_text.emit(report, args.json,
                            f"Synthesized {len(examples)} example steps for {args.character} from "
                            f"{info['sequences']} stepping-stone sequences ({info['falls']} ended in a fall) in "
                            f"{wall:.0f} s wall on {args.workers} worker(s): the optimized steps landed "
                            f"{100 * errors.mean():.1f} cm from their stones on average, "
                            f"{100 * (errors < 0.06).mean():.0f}% within 6 cm. Wrote {written}.")


def _walk(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from strider.courses import load_course
    from strider.methods.cw.model import ModelParams, load_model
    from strider.methods.cw.planner import PlannerParams
    from strider.methods.cw.walker import check_walk, walk_course
    from strider.sim.render import check_video_path

    regression, search, early_touchdown = CONFIGS[args.config]
    course = load_course(args.course)
    model = load_model(args.character, args.examples, ModelParams(regression=regression))
    check_walk(model, course, args.character, args.start, args.max_steps, args.seed, search,
               flags={"max_steps": "--max-steps", "seed": "--seed", "start_x": "--start"})
    if args.video is not None:
        check_video_path(args.video)
    params = PlannerParams()
    if args.config == "default" and args.character in GAP_PREFERRED_STEP:
        params = PlannerParams(preferred_step=GAP_PREFERRED_STEP[args.character])
    walk = walk_course(model, course, search=search, params=params, seed=args.seed, character=args.character,
                       max_steps=args.max_steps, video=args.video, early_touchdown=early_touchdown,
                       start_x=args.start)
    missed = sum(not f.success for f in walk.footfalls)
    distance = walk.footfalls[-1].heel if walk.footfalls else 0.0
    report = {"course": course.name, "character": args.character, "config": args.config, "start_m": args.start,
              "search": search, "regression": regression, "early_touchdown_s": early_touchdown,
              "preferred_step_m": params.preferred_step if search == "hybrid" else None, "fell": walk.fell,
              "fall_time": walk.fall_time, "steps": len(walk.footfalls),
              "missed_footfalls": missed, "last_heel_m": distance, "sim_seconds": walk.sim_seconds,
              "wall_seconds": walk.wall_seconds, "plan_seconds_max": walk.plan_seconds_max,
              "realtime_factor": walk.sim_seconds / walk.wall_seconds if walk.wall_seconds else None,
              "video": args.video, "footfalls": [asdict(f) for f in walk.footfalls], "gaps": len(course.support_intervals()) - 1}
    ended = f"fell at {walk.fall_time:.1f} s" if walk.fell else "did not fall"
    text = (f"Walked {course.name} ({report['gaps']} gaps) in {len(walk.footfalls)} steps to x = {distance:.2f} m and "
            f"{ended}; {missed} footfall(s) had under half the foot on support. Slowest plan "
            f"{1000 * walk.plan_seconds_max:.0f} ms; {walk.sim_seconds:.1f} s simulated in {walk.wall_seconds:.1f} s "
            f"wall." + (f" Video written to {args.video}." if args.video else ""))
    return report_text.emit(report, args.json, text, 1 if walk.fell else 0)
