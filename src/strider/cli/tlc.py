"""``strider tlc``: task-level control (Coros 2010, Ch. 4): explore the states GBWC's step controllers reach,
solve a task's policy by fitted value iteration, and walk the task by it."""

from __future__ import annotations

import argparse
from pathlib import Path

from strider.cli import report as report_text
from strider.cli.parallel_flags import add_parallel_flags
from strider.outputs import check_output_folder
from strider.progress import move_to, progress_bar

ACTIONS = ("tlc",)
MAX_SECONDS = 120.0   # a task episode's time limit at most: the protocols give 10-20 s
MAX_BALL_KG = 100.0
MIN_STEP_SECONDS = 0.2    # the shortest step an action takes: bounds how many strikes --seconds can hold
DEFAULT_GOALS = {"goal-distance": [3.0], "heading": [1.57], "goal-point": [2.0, 1.0]}

DESCRIPTION = """\
Task-level control (Coros 2010, Ch. 4): at every foot strike a policy picks the
next GBWC step (a desired speed, a turn and a step period) for a task, such as
going to a spot and stopping there. 'explore' walks every step controller from
every state it reaches, breadth first; 'solve' runs fitted value iteration over
those states and the task's parameter; 'run' walks the task by the policy.
Policies for the shipped tasks ship with strider, so 'run' works at once.

tasks: GLT (go to a location ahead or behind, and stop)
       HT  (walk forward in a direction, given relative to the facing)
       GPT (go to a point on the ground, given ahead and to the left, and stop)
       VRWT (keep walking steadily, however hard thrown balls hit)

examples:
  strider tlc run GLT --goal 3.0 --video glt.mp4
  strider tlc run HT --goal 2.0 --video ht.mp4
  strider tlc run GPT --goal 1.5 -2.0 --seconds 20 --video gpt.mp4
  strider tlc run VRWT --ball 10 --video vrwt.mp4
  strider tlc explore GLT --workers 2 --out results/
  strider tlc solve GLT --out results/
  strider tlc run GLT --goal -1.5 --policy results/GLT.policy.npz
"""

EXPLORE_DESCRIPTION = """\
Explore a task's states (Coros 2010, Sec. 4.4.1, Alg. 1): from the trusted
states (limit cycles of a few step controllers and short random sequences),
every state is branched once per action and walked to the next foot strike;
outcomes near a trusted state are kept, and the novel ones explored in turn, in
batches spread over the workers (the result is the same for any worker count).
'default' uses strider's thresholds, 'source' the thesis' Table 4.2. An
interrupted run resumes from its checkpoint in --out. Writes
TASK.exploration.npz, which 'strider tlc solve' reads.

examples:
  strider tlc explore GLT --workers 2 --out results/
  strider tlc explore GLT --config source --backend ray --out results/
"""

SOLVE_DESCRIPTION = """\
Solve a task's policy (Coros 2010, Sec. 4.4.3, Alg. 2): fitted value iteration
over the explored states and the task parameter's samples, with reward 1 on
success and -1 for a fall or a step out of the trusted states. Writes
TASK.policy.npz, which 'strider tlc run --policy' reads.

examples:
  strider tlc solve GLT --out results/
  strider tlc solve GLT --exploration results/GLT.exploration.npz --out policies/
"""

RUN_DESCRIPTION = """\
Walk a task by its policy: GBWC walks in from standing, then at every foot
strike the policy chooses the next step for the goal, until the task succeeds
(GLT: within 10 cm of the goal, moving slower than 0.1 m/s; HT: walking forward
faster than 0.3 m/s with both the controller's heading and the pelvis within 5
degrees of the goal's; GPT: within 10 cm of the goal, moving slower than 0.1
m/s), the character falls or --seconds pass; VRWT has no goal and walks the
whole time. --ball throws balls at the walker on the way. Exit status 1 if the
task did not succeed (VRWT: if it fell).

examples:
  strider tlc run GLT --goal 3.0 --video glt.mp4
  strider tlc run GLT --goal -1.5 --json
  strider tlc run HT --goal -2.5 --seconds 10
  strider tlc run GPT --goal -2 0.5 --seconds 20
  strider tlc run VRWT --ball 15 --every 4 --json
"""


def add_commands(commands, formatter) -> None:
    from strider.methods.tlc.tasks import CONFIGS

    p = commands.add_parser("tlc", help="task-level control: explore, solve a task's policy, walk the task",
                            description=DESCRIPTION, formatter_class=formatter)
    sub = p.add_subparsers(dest="tlc_action", metavar="ACTION", required=True)
    e = sub.add_parser("explore", help="explore the states a task's step controllers reach",
                       description=EXPLORE_DESCRIPTION, formatter_class=formatter)
    e.add_argument("task", metavar="TASK", help="a shipped task (GLT, HT, GPT, VRWT) or a task file")
    e.add_argument("--config", default="default", choices=CONFIGS,
                   help="strider's exploration thresholds or the thesis' (default: %(default)s)")
    add_parallel_flags(e, "branches")
    e.add_argument("--out", default=".", metavar="DIR",
                   help="folder for TASK.exploration.npz and its checkpoint (default: .)")
    e.add_argument("--json", action="store_true", help="print the result as JSON")
    s = sub.add_parser("solve", help="solve a task's policy by fitted value iteration",
                       description=SOLVE_DESCRIPTION, formatter_class=formatter)
    s.add_argument("task", metavar="TASK", help="a shipped task (GLT, HT, GPT, VRWT) or a task file")
    s.add_argument("--config", default="default", choices=CONFIGS,
                   help="which exploration to solve, by its configuration (default: %(default)s)")
    s.add_argument("--exploration", default=None, metavar="PATH.npz",
                   help="an exploration file (default: TASK.exploration.npz in --out)")
    s.add_argument("--out", default=".", metavar="DIR", help="folder for TASK.policy.npz (default: .)")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    r = sub.add_parser("run", help="walk a task by its policy", description=RUN_DESCRIPTION,
                       formatter_class=formatter)
    r.add_argument("task", metavar="TASK", help="a shipped task (GLT, HT, GPT, VRWT) or a task file")
    r.add_argument("--goal", type=float, nargs="+", default=None, metavar="W",
                   help="GLT: the goal's distance ahead, m (negative: behind; default 3); HT: the heading to "
                        "walk, rad to the left of the facing (negative: to the right; default 1.57); GPT: the "
                        "goal's position, m ahead and m to the left (default: 2 1)")
    r.add_argument("--config", default="default", choices=CONFIGS,
                   help="the shipped policy of strider's exploration thresholds or of the thesis' (ships for GLT) "
                        "(default: %(default)s)")
    r.add_argument("--policy", default=None, metavar="PATH.npz",
                   help="a policy from 'strider tlc solve' (default: the one shipped for the task)")
    r.add_argument("--seconds", type=float, default=15.0, metavar="S",
                   help="time limit after the walk-in (default: %(default)s)")
    r.add_argument("--seed", type=int, default=0, metavar="N", help="the episode's seed (default: %(default)s)")
    r.add_argument("--ball", type=float, default=None, metavar="KG",
                   help="throw balls of KG kg at the walker (0.12 m, 6 m/s from 1 m, at the centre of mass), one "
                        "every --every steps from random directions")
    r.add_argument("--every", type=int, default=6, metavar="STEPS",
                   help="steps between thrown balls (default: %(default)s)")
    r.add_argument("--video", default=None, metavar="PATH.mp4", help="write an MP4; the folder must exist")
    r.add_argument("--json", action="store_true", help="print the result as JSON, every strike included")


def run(args: argparse.Namespace) -> int:
    return {"explore": _explore, "solve": _solve, "run": _run}[args.tlc_action](args)


def _explore(args: argparse.Namespace) -> int:
    from strider.methods.tlc.explore import explore, worker_setup
    from strider.methods.tlc.tasks import load_task
    from strider.parallel import Executor

    task = load_task(args.task, args.config)
    out = check_output_folder(args.out)
    written = out / task.file_name("exploration")
    checkpoint = out / (task.file_name("exploration")[:-len(".npz")] + ".checkpoint.pkl")
    bar = progress_bar(task.exploration.max_states, f"exploring {task.name}", unit="state", enabled=not args.json)

    with Executor(args.backend, workers=args.workers, setup=worker_setup(task)) as executor:
        result = explore(task, executor, checkpoint=checkpoint,
                         progress=lambda branched, known: move_to(bar, branched, known=known))
    bar.close()
    result.save(written)
    counts = result.outcome_counts()
    report = {"task": task.name, "config": task.config, "states": len(result), "actions": len(task.actions),
              "outcomes": counts, **result.info, "exploration_file": str(written), "checkpoint": str(checkpoint)}
    total = sum(counts.values())
    return report_text.emit(report, args.json,
                            f"Explored {len(result)} states of {task.name} ({task.config} thresholds) with "
                            f"{len(task.actions)} step controllers each: {counts['kept']} of {total} steps kept, "
                            f"{counts['untrusted']} left the trusted states, {counts['fell']} fell; "
                            f"{result.info['stopped']}. {result.info['wall_seconds']:.0f} s wall on "
                            f"{result.info['workers']} worker(s). Wrote {written}.")


def _solve(args: argparse.Namespace) -> int:
    from strider.methods.tlc.explore import Exploration
    from strider.methods.tlc.policy import solve
    from strider.methods.tlc.tasks import load_task

    task = load_task(args.task, args.config)
    out = check_output_folder(args.out)
    source = Path(args.exploration) if args.exploration else out / task.file_name("exploration")
    exploration = Exploration.load(source)
    with progress_bar(task.solve.sweeps, f"solving {task.name}", unit="sweep", enabled=not args.json) as bar:
        policy = solve(exploration, task, progress=lambda: bar.update(1))
    written = policy.save(out / task.file_name("policy"))
    info = policy.info
    report = {"task": task.name, "config": task.config, "exploration_file": str(source),
              "policy_file": str(written), **info}
    return report_text.emit(report, args.json,
                            f"Solved {task.name} over {info['states']} states x {info['samples']} task samples in "
                            f"{info['wall_seconds']:.1f} s ({info['sweeps']} sweeps, last change "
                            f"{info['last_change']:.3g}); {100 * info['success_share']:.0f}% of the grid expects "
                            f"to succeed. Wrote {written}.")


def _run(args: argparse.Namespace) -> int:
    import math

    from strider.errors import UsageError
    from strider.methods.tlc.policy import Policy
    from strider.methods.tlc.tasks import load_task
    from strider.methods.tlc.walker import balls_every, check_task_walk, shipped_policy, walk_task
    from strider.sim.render import check_video_path

    task = load_task(args.task, args.config)
    if not (math.isfinite(args.seconds) and 0 < args.seconds <= MAX_SECONDS):
        raise UsageError(f"--seconds must be > 0 and at most {MAX_SECONDS:g} (a task is done in seconds), got "
                         f"{args.seconds}")
    if args.ball is not None and not (math.isfinite(args.ball) and 0 < args.ball <= MAX_BALL_KG):
        raise UsageError(f"--ball must be a mass in (0, {MAX_BALL_KG:g}] kg, got {args.ball}")
    if args.every < 1:
        raise UsageError(f"--every must be >= 1 step, got {args.every}")
    goal = ([] if not task.has_goal else DEFAULT_GOALS[task.kind]) if args.goal is None else args.goal
    policy = Policy.load(args.policy) if args.policy else shipped_policy(task)
    if policy.task != task.name:   # named by its file here
        raise UsageError(f"{args.policy}: a policy for task {policy.task}, not {task.name}")
    goal = check_task_walk(policy, task, goal, args.seconds, args.seed,
                           flags={"goal": "--goal", "seconds": "--seconds", "seed": "--seed"}).tolist()
    if args.video is not None:
        check_video_path(args.video)
    throws = ()
    if args.ball is not None:
        longest_steps = math.ceil(args.seconds / MIN_STEP_SECONDS)
        throws = balls_every(args.ball, args.every, longest_steps, args.seed, task.trusted.hits)
    walk = walk_task(policy, task, goal, args.seconds, seed=args.seed, video=args.video, throws=throws)
    report = walk.as_dict() | {"video": args.video}
    named = f"{task.name} to {', '.join(f'{g:g}' for g in goal)}" if task.has_goal else task.name
    if args.ball is not None:
        named += f" ({args.ball:g} kg balls; {walk.hit_steps} step(s) hit)"
    if not task.has_goal:
        text = (f"{named}: fell after {len(walk.strikes)} steps" if walk.fell else
                f"{named}: walked {args.seconds:g} s without a fall ({len(walk.strikes)} steps)")
    elif walk.succeeded:
        text = f"{named}: succeeded after {walk.time_to_success:.1f} s ({len(walk.strikes)} steps)"
    elif walk.fell:
        text = f"{named}: fell after {len(walk.strikes)} steps"
    else:
        text = f"{named}: not done in {args.seconds:g} s (still {walk.final_distance:.2f} off)"
    return report_text.emit(report, args.json, text + (f". Video written to {args.video}." if args.video else "."),
                            0 if walk.succeeded else 1)
