"""``strider bench push|envelope|turning|terrain|bodies|crates|speed|soak|report``: flags, checks, and printing the summaries.

Everything that can be wrong with the input (an unknown controller anywhere in
the ``--controller`` list, a malformed protocol file, ``--workers 0``, Ray
missing for ``--backend ray``) is checked before the first trial runs, so a
mistake never costs computed results. Interrupted sweeps keep their results in
a checkpoint and resume when the same command is run again.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from strider.cli.parallel_flags import add_parallel_flags
from strider.errors import UsageError
from strider.outputs import check_output_folder, check_writable

BENCH_DESCRIPTION = """\
Benchmarks that measure any registered controller the same way, in parallel,
and write benchmarks/results/<bench>-<controller>-<date>.json (protocol,
versions, every trial), a Markdown summary and PNG plots. Protocols are YAML
files (src/strider/bench/protocols/); flags override their values.

examples:
  strider bench push --controller gbwc --workers 2          600 N grid, 12 directions x 8 phases
  strider bench push --find-max                             largest force survived, by direction
  strider bench envelope --backend ray                      speed x step-period grid on Ray
  strider bench turning --config default,thesis             heading jumps at 2 rad/s, both configurations
  strider bench terrain                                     slopes, steps, stairs, bumps
  strider bench bodies                                      0.75x, 1.25x and the robot: walks and 300 N pushes
  strider bench crates --config default,thesis              lift and carry crates; push and pull an 80 kg one
  strider bench speed                                       real-time factor, overhead, profile, scaling
  strider bench soak --minutes 60                           an hour of random commands and pushes
  strider bench dynamics                                    cost of each dynamics accessor vs one physics step
  strider bench rollout                                     batched rollouts on 1 and 2 workers vs bare MuJoCo
  strider bench simbicon-gaits                              SIMBICON walk and run, humanoid and planar: steps, speed, pushes
  strider bench slip-gaits                                  SLIP walk, run, stand: step accuracy, phases, falls
  strider bench slip-speed                                  SLIP real-time factor per replanning rule
  strider bench slip-push                                   SLIP walking and running, pushed at the head
  strider bench slip-terrain                                SLIP over drops, steps, gaps, ramps, stones
  strider bench slip-dodge                                  SLIP standing: balls thrown, dodged or not
  strider bench push --config default,thesis                strider's GBWC beside the thesis' own
  strider bench gbwc-ablation                               each GBWC addition turned off alone: P1 grid, find-max
  strider bench cw-gaps                                     CW over five gaps: Table 3.1 beside the thesis'
  strider bench cw-realtime                                 CW in 3-D over 30 m of gaps, in real time
  strider bench tlc-tasks                                   TLC policies walk their tasks from 50 random goals
  strider bench tlc-vrwt                                    balls of 5/10/15 kg at the VRWT policy and a plain walk
  strider bench graph-parallel                              guided SAMCON on 1 and 2 processes and Ray vs bare MuJoCo
  strider bench graph-learn                                 learn the run (and more clips) until it runs 600 s
  strider bench graph-table2                                the other Table II clips at a budget of EM iterations
  strider bench graph-speed                                 a learned skill's real-time factor beside bare stepping
  strider bench graph-push                                  the push test on each learned skill, then the kick pushed
  strider bench graph-recovery                              falls in the push test, then ragdoll and get-up: stood?
  strider bench graph-walks                                 10-minute random walks on the control graph: falls?
  strider bench graph-steer                                 the walk steered to waypoints by search: reached?
  strider bench report                                      gather the latest results into benchmarks/README.md
"""

BENCH_HELP = {
    "push": "push-recovery survival grid, or --find-max for the largest force by direction",
    "envelope": "speed x step-period grid: survival and speed tracking",
    "turning": "heading jumps of +-90 and 180 deg: peak turn rate and settled facing",
    "bodies": "0.75x, 1.25x and the robot, only the gains rescaled: P2 walks and P1 pushes at 300 N",
    "terrain": "slopes, single steps, staircases and random bumps",
    "crates": "GBWC's crate skills: lift 5/15/25 kg from a table and carry it 5 m; push an 80 kg crate 2 m and pull it back",
    "speed": "real-time factor, bare MuJoCo stepping, overhead, profile, 1->2 worker scaling",
    "soak": "a long walk with random commands and pushes: falls, NaNs, drift, memory",
    "slip-push": "SLIP protocol 3: one random 100-500 N push at the head per trial, walking and running",
    "slip-terrain": "SLIP protocol 2: a 1 m drop, 0.5 m steps, gaps, 15 deg ramps, stepping stones",
    "slip-gaits": "SLIP protocol 1: walk, run and stand from gait goals alone, and walk -> run -> walk; step "
                  "length, duration, double support and flight shares, falls",
    "simbicon-gaits": "SIMBICON walk and run on bipv3 and planar7: falls, steps, flight share, real-time factor "
                      "beside bare stepping, largest torso push survived",
    "slip-dodge": "SLIP protocol 5: standing, a ball thrown from 8 m per seed; throws avoided (no contact, no "
                  "fall), beside a planner blind to the ball",
}
# Benches written for one controller's protocol: it is their default --controller.
BENCH_CONTROLLER = {"simbicon-gaits": "simbicon", "slip-push": "slip", "slip-terrain": "slip", "slip-gaits": "slip", "slip-dodge": "slip"}


GBWC_ONLY = ("crates",)   # benches of skills built on GBWC (Coros 2010, Sec. 5.5.4), not of any controller

# Benches of the engine layers rather than of a controller: no --controller, one run per character.
# Those that measure the character their protocol names, so that --character can change it; the others' characters
# come with what they measure (a tracker's motion, a skill file, a shipped policy).
QUICK_BENCHES = ("dynamics", "graph-speed", "rollout", "track-mocap", "track-speed")   # a minute or less: no bar
LEARNING_BENCHES = ("graph-learn", "graph-table2")   # print learning reports, which --no-progress hides too
# Trials that each stand alone: each is recorded as it finishes, so an interrupted run resumes (--fresh discards it).
# The others time their parts against each other within one run, or checkpoint their own way (graph-learn).
RESUMABLE_BENCHES = ("cw-accuracy", "cw-gaps", "tlc-tasks", "tlc-vrwt", "track-push", "track-slopes",
                     "track-baseline", "graph-push", "graph-recovery", "graph-walks", "graph-steer")
CHARACTER_BENCHES = ("cw-accuracy", "cw-gaps", "cw-realtime", "dynamics", "rollout", "slip-speed")
ENGINE_BENCH_HELP = {
    "cw-accuracy": "constrained walking protocol 4: heel landing errors over new 100-stone sequences, each step "
                   "planned from the shipped example set, the source's model beside strider's",
    "cw-gaps": "constrained walking protocol 5: Table 3.1, successful footfalls over five gaps by width and spacing, "
               "beside the seed's values",
    "cw-realtime": "constrained walking protocol 6: the 3-D humanoid over 30 m of gaps up to 50 cm, planning each "
                   "step; slowest plan beside the shortest step, wall time beside simulated time",
    "tlc-tasks": "task-level control protocol 7: shipped policies walk their tasks from 50 random goals; success "
                 "share, falls, time to success",
    "tlc-vrwt": "task-level control protocol 8: 100 balls per mass (5, 10, 15 kg) thrown at the VRWT policy's "
                "walk (strider's runtime and the thesis') and at the plain walk; falls within 5 s",
    "tlc-cost": "task-level control protocol 9: a task explored and solved from scratch on 2 workers, beside a "
                "tenth of the thesis' time",
    "dynamics": "time per call of each dynamics accessor (mass matrix, Jacobians, momentum, contacts, inverse "
                "dynamics) beside one bare physics step",
    "rollout": "simulated steps per second of batched rollouts on 1 and 2 resident workers, beside bare "
               "mujoco.rollout on as many threads",
    "track-speed": "phase tracking protocol 4: rectification and fitting times, a 20 s walk's real-time factor "
                   "beside bare stepping",
    "track-mocap": "phase tracking protocol 5: the CMU walk from BVH to a 20 s walk; falls, speed against the clip's",
    "track-push": "phase tracking protocol 1: the largest torso push all 40 phases x directions survive",
    "track-slopes": "phase tracking protocol 3: 2 m level then slopes -18..+10 deg, no retuning",
    "track-baseline": "phase tracking protocol 2: the survivable push interval of the phase-indexed walker beside "
                      "the time-indexed NQR tracker of its own walk",
    "track-extra": "phase tracking protocol 6: the VI policy walks 50 steps of a heel-toe gait where a constant FRI "
                   "falls; x0.5 and x1.5 length edits rectified and walked 10 steps",
    "graph-parallel": "control fragments protocol 7: one guided-SAMCON search on 1 and 2 worker processes and a "
                      "2-actor Ray cluster, beside bare stepping's 2-process speedup; paths must be identical",
    "graph-learn": "control fragments protocol 1: learn clips on 2 workers until their policies run 600 s "
                   "unperturbed; wall time beside Table II's, per second of cycle and per fragment; resumable",
    "graph-table2": "control fragments protocol 2: the other Table II stand-ins (walk, dance_a, kick, spinkick, "
                    "backflip) learned as graph-learn learns the run, at a budget of EM iterations; resumable",
    "graph-speed": "control fragments protocol 6: a learned skill played for a minute on one core, policy included, "
                   "beside bare stepping of the same model",
    "graph-recovery": "control fragments protocol 5 (b): the walk falls in the push test, then the ragdoll and a "
                      "get-up (face up or down) take over; the share of falls that end standing within 10 s",
    "graph-walks": "control fragments protocol 5 (a): random walks of 600 s on the shipped control graph, "
                   "unperturbed; falls, get-ups that stood, restarts, time in each node",
    "graph-steer": "control fragments steering: the walk searched toward waypoints (left, right, a zigzag, a "
                   "square), the source's cost beside strider's heading-keeping one; waypoints reached",
    "graph-push": "control fragments protocols 3 and 4: the push test (growing random chest pushes every 2 s) on "
                  "each learned skill, mean time to the fall over 100 seeds; then the kick, one fixed push per pass "
                  "at its peak for 10 passes, trials without a fall",
    "slip-speed": "SLIP planner: real-time factor per replanning rule beside bare mj_step, evaluations per plan, "
                  "median QP solve",
}


def add_parser(commands: argparse._SubParsersAction, formatter: type) -> None:
    """Add ``bench`` and its sub-commands to the ``strider`` parser."""
    from strider.methods.registry import DEFAULT_CONTROLLER, available_controllers

    bench = commands.add_parser("bench", help="robustness and speed benchmarks for any controller",
                                description=BENCH_DESCRIPTION, formatter_class=formatter)
    benches = bench.add_subparsers(dest="bench", metavar="BENCH", required=True)
    for name, text in BENCH_HELP.items():
        sub = benches.add_parser(name, help=text, description=text, formatter_class=formatter)
        sub.add_argument("--controller", default=BENCH_CONTROLLER.get(name, DEFAULT_CONTROLLER), metavar="NAME[,NAME...]",
                         help=f"controllers to measure, comma-separated: {', '.join(available_controllers())} "
                              "(default: %(default)s)")
        sub.add_argument("--config", default="default", metavar="NAME[,NAME...]",
                         help="controller configurations to measure, comma-separated: for gbwc 'default' (strider's "
                              "best), 'thesis' (Coros 2010, Ch. 5 alone) or 'without:ADDITION[,...]'; results of a "
                              "named one go to <bench>-<controller>-<config>-<date>.json (default: %(default)s)")
        add_parallel_flags(sub, "trials")
        sub.add_argument("--protocol", default=None, metavar="PATH.yaml",
                         help=f"protocol file (default: the shipped {name}.yaml)")
        sub.add_argument("--seed", type=int, default=None, metavar="N", help="override the protocol's seed")
        sub.add_argument("--out", default="benchmarks/results", metavar="DIR",
                         help="folder for results, summaries and plots (default: %(default)s)")
        sub.add_argument("--fresh", action="store_true",
                         help="discard the checkpoint of an interrupted run instead of resuming it")
        sub.add_argument("--no-progress", action="store_true", help="no progress bar")
        _BENCH_FLAGS[name](sub)
    for name, text in ENGINE_BENCH_HELP.items():
        sub = benches.add_parser(name, help=text, description=text, formatter_class=formatter)
        if name in CHARACTER_BENCHES:
            sub.add_argument("--character", default=None, metavar="NAME",
                             help=f"character whose model is measured (protocol: {_protocol_character(name)})")
        sub.add_argument("--protocol", default=None, metavar="PATH.yaml",
                         help=f"protocol file (default: the shipped {name}.yaml)")
        sub.add_argument("--out", default="benchmarks/results", metavar="DIR",
                         help="folder for results and summaries (default: %(default)s)")
        if name in RESUMABLE_BENCHES:
            sub.add_argument("--fresh", action="store_true",
                             help="discard the checkpoint of an interrupted run instead of resuming it")
        sub.add_argument("--no-progress", action="store_true",
                         help="accepted as by every bench; this one is quick and shows no progress bar"
                         if name in QUICK_BENCHES
                         else "no progress bar" + (" and no learning reports" if name in LEARNING_BENCHES else ""))
    _add_ablation_parser(benches, formatter)
    report = benches.add_parser("report", help="gather the latest results into benchmarks/README.md",
                                description="Gather the latest result of every bench and controller into one "
                                            "Markdown page, one table per controller, plots embedded.",
                                formatter_class=formatter)
    report.add_argument("--results", default="benchmarks/results", metavar="DIR",
                        help="folder of result files (default: %(default)s)")
    report.add_argument("--out", default="benchmarks/README.md", metavar="PATH",
                        help="page to write (default: %(default)s)")


ABLATION_HELP = "GBWC under its default and thesis configurations and with each addition off alone: P1 push grid and find-max"


def _add_ablation_parser(benches: argparse._SubParsersAction, formatter: type) -> None:
    from strider.methods.gbwc.params import ADDITIONS

    listing = "\n".join(f"  {a.name:<24}{a.summary}" for a in ADDITIONS)
    sub = benches.add_parser(
        "gbwc-ablation", help=ABLATION_HELP, formatter_class=formatter,
        description=f"{ABLATION_HELP}. Writes gbwc-ablation-gbwc-<date>.json and .md, and the default's and the "
                    f"thesis' push results beside them.\n\nadditions beyond Coros 2010, Ch. 5:\n{listing}")
    sub.add_argument("--only", default=None, metavar="ADDITION[,ADDITION...]",
                     help="turn off only these additions, one at a time (default: every one)")
    sub.add_argument("--no-find-max", action="store_true", help="only the grid at the protocol's force")
    sub.add_argument("--force", type=float, default=None, metavar="N", help="grid force (protocol: 600)")
    sub.add_argument("--protocol", default=None, metavar="PATH.yaml", help="push protocol file (default: the shipped push.yaml)")
    add_parallel_flags(sub, "trials")
    sub.add_argument("--out", default="benchmarks/results", metavar="DIR",
                     help="folder for results, summaries and plots (default: %(default)s)")
    sub.add_argument("--fresh", action="store_true",
                     help="discard the checkpoints of an interrupted run instead of resuming them")
    sub.add_argument("--no-progress", action="store_true", help="no progress bar")


def _run_ablation(args: argparse.Namespace) -> int:
    import time

    from strider.bench import ablation
    from strider.bench.execution import RunOptions, make_executor
    from strider.bench.protocol import load_protocol
    from strider.methods.gbwc.params import additions_named

    only = None if args.only is None else tuple(a.name for a in additions_named(args.only, "--only"))
    protocol = load_protocol("push", args.protocol).replace(force=args.force)
    options = RunOptions(backend=args.backend, workers=args.workers, results_dir=check_output_folder(args.out),
                         progress=not args.no_progress, fresh=args.fresh)
    start = time.perf_counter()
    with make_executor(options) as executor:
        out, kept = ablation.run(protocol, executor, options, find_max=not args.no_find_max, only=only)
        out.run = {"backend": executor.backend, "workers": executor.workers,
                   "wall_seconds": time.perf_counter() - start}
    for push_out in kept:
        _write_and_print(push_out, Path(args.out))
    _write_and_print(out, Path(args.out))
    return 0


def _push_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--speed", type=float, default=None, metavar="M/S", help="walking speed (protocol: 0.6)")
    p.add_argument("--directions", type=int, default=None, metavar="N", help="push directions (protocol: 12)")
    p.add_argument("--phases", type=int, default=None, metavar="N", help="push phases per stride (protocol: 8)")
    p.add_argument("--duration", type=float, default=None, metavar="S", help="push duration (protocol: 0.1)")
    p.add_argument("--force", type=float, default=None, metavar="N", help="grid force (protocol: 600)")
    p.add_argument("--find-max", action="store_true",
                   help="bisect the largest force survived at every phase, per direction")
    p.add_argument("--resolution", type=float, default=None, metavar="N",
                   help="force step of the --find-max bisection (protocol: 50)")


def _no_flags(p: argparse.ArgumentParser) -> None:
    pass


SUBSET_NOTE = "; a run over part of the protocol is not compared with its targets and is kept off the benchmark page"


def _envelope_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--speeds", default=None, metavar="V[,V...]",
                   help="commanded speeds to run, m/s (protocol: -0.6..1.7 in 0.2 steps)" + SUBSET_NOTE)
    p.add_argument("--periods", default=None, metavar="T[,T...]",
                   help="step periods to run, s (protocol: 0.2..1.0 in 0.1 steps)")
    p.add_argument("--seconds", type=float, default=None, metavar="S",
                   help="seconds per case (protocol: 20; the steady speed is taken after the protocol's 10 s)")


def _terrain_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--features", default=None, metavar="WORD[,WORD...]",
                   help="run only the features whose names contain one of the words, e.g. 'stairs' or "
                        "'slope +5,step up' (protocol: all of them)" + SUBSET_NOTE)


def _speed_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seconds", type=float, default=None, metavar="S", help="walking time (protocol: 60)")
    p.add_argument("--no-scaling", action="store_true", help="skip the 1 -> 2 worker scaling measurement")


def _soak_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--minutes", type=float, default=None, metavar="MIN", help="simulated minutes (protocol: 60)")
    p.add_argument("--segments", type=int, default=None, metavar="N",
                   help="independent segments the minutes are split into (protocol: 4)")


_BENCH_FLAGS = {"simbicon-gaits": _no_flags, "slip-push": _no_flags, "slip-terrain": _terrain_flags, "slip-gaits": _no_flags,
                "slip-dodge": _no_flags, "push": _push_flags, "envelope": _envelope_flags, "turning": _no_flags,
                "terrain": _terrain_flags, "bodies": _no_flags, "crates": _no_flags, "speed": _speed_flags, "soak": _soak_flags}


def controllers(text: str) -> list[str]:
    """The ``--controller`` list, every name checked against the registry."""
    from strider.methods.registry import controller_entry

    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise UsageError("--controller needs at least one controller name")
    for n in names:
        controller_entry(n)
    return list(dict.fromkeys(names))


def configs(text: str, names: list[str]) -> list[str]:
    """The ``--config`` list (split on commas outside a ``without:`` list), each checked against every controller."""
    from strider.methods.registry import controller_entry

    out: list[str] = []
    for part in text.split(","):
        part = part.strip()
        if out and out[-1].startswith("without:") and part and ":" not in part and part not in ("default", "thesis"):
            out[-1] += f",{part}"   # another addition of the same without: list
        elif part:
            out.append(part)
    if not out:
        raise UsageError("--config needs at least one configuration name")
    for name in names:
        for config in out:
            controller_entry(name).check_config(name, config)
    return list(dict.fromkeys(out))


def _overrides(args: argparse.Namespace) -> dict:
    out = {"seed": args.seed}
    if args.bench == "push":
        out.update(speed=args.speed, directions=args.directions, phases=args.phases, duration=args.duration,
                   force=args.force, find_max_resolution=args.resolution)
    elif args.bench == "speed":
        out.update(seconds=args.seconds, scaling=False if args.no_scaling else None)
    elif args.bench == "soak":
        out.update(minutes=args.minutes, segments=args.segments)
    elif args.bench == "envelope":
        out.update(speeds=numbers(args.speeds, "--speeds"), periods=numbers(args.periods, "--periods"),
                   seconds=args.seconds)
    return out


def numbers(text: str | None, flag: str) -> tuple[float, ...] | None:
    """A comma-separated list of numbers, or None when the flag was not given."""
    if text is None:
        return None
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"{flag} takes numbers separated by commas, got {text!r}") from None
    if not values or not all(math.isfinite(v) for v in values):
        raise UsageError(f"{flag} takes finite numbers separated by commas, got {text!r}")
    return tuple(dict.fromkeys(values))


def run(args: argparse.Namespace) -> int:
    if args.bench == "report":
        from strider.bench.report import write_report

        path = write_report(Path(args.results), check_writable(args.out))
        print(f"wrote {path}")
        return 0
    if args.bench in ENGINE_BENCH_HELP:
        return _run_engine_bench(args)
    if args.bench == "gbwc-ablation":
        return _run_ablation(args)
    from strider.bench import runners
    from strider.bench.execution import RunOptions, make_executor
    from strider.bench.protocol import load_protocol

    names = controllers(args.controller)
    if args.bench in GBWC_ONLY and names != ["gbwc"]:
        raise UsageError(f"strider bench {args.bench} runs skills built on GBWC only: --controller gbwc, "
                         f"got {args.controller!r}")
    chosen = configs(args.config, names)
    protocol = load_protocol(args.bench, args.protocol).replace(**_overrides(args))
    if getattr(args, "features", None) is not None:
        protocol = protocol.replace(features=protocol.features_named(args.features))
    options = RunOptions(backend=args.backend, workers=args.workers, results_dir=check_output_folder(args.out),
                         progress=not args.no_progress, fresh=args.fresh)
    variant = "find-max" if getattr(args, "find_max", False) else ""
    with make_executor(options) as executor:
        for name, config in ((n, c) for n in names for c in chosen):
            try:
                out = runners.run_bench(protocol, name, executor, options, variant, config)
            except KeyboardInterrupt:
                print(f"strider: interrupted; finished trials are kept in {Path(args.out) / '.partial'} and the "
                      "same command resumes from them", file=sys.stderr)
                raise
            _write_and_print(out, Path(args.out))
    return 0


def _write_and_print(out, results_dir: Path) -> None:
    """Write a bench's files and print its summary table, notes and where the files are."""
    from strider.bench.output import markdown_table, write

    paths = write(out, results_dir)
    subject = out.controller if out.config == "default" else f"{out.controller} ({out.config})"
    print(f"\n{out.bench} on {subject}:\n{markdown_table(out.rows)}")
    for note in out.notes:
        print(f"- {note}")
    print(f"results: {paths['json']}  summary: {paths['md']}")


def engine_runners() -> dict:
    """Each engine bench's run function: (protocol, progress) -> BenchOutput; those in RESUMABLE_BENCHES also take
    ``checkpoint``, where each trial is recorded as it finishes."""
    from strider.bench import cw, dynamics, graphs, rollout, slip, tlc, tracking

    return {"cw-accuracy": cw.run_accuracy, "cw-gaps": cw.run_gaps, "cw-realtime": cw.run_realtime,
            "tlc-tasks": tlc.run_tasks, "tlc-vrwt": tlc.run_vrwt, "tlc-cost": tlc.run_cost, "dynamics": dynamics.run,
            "rollout": rollout.run, "slip-speed": slip.run_speed, "track-speed": tracking.run_speed,
            "track-mocap": tracking.run_mocap, "track-push": tracking.run_push, "track-slopes": tracking.run_slopes,
            "track-extra": tracking.run_extra, "track-baseline": tracking.run_baseline,
            "graph-parallel": graphs.run_parallel, "graph-learn": graphs.run_learn, "graph-table2": graphs.run_learn,
            "graph-speed": graphs.run_speed, "graph-push": graphs.run_push, "graph-recovery": graphs.run_recovery,
            "graph-walks": graphs.run_walks, "graph-steer": graphs.run_steer}


def _run_engine_bench(args: argparse.Namespace) -> int:
    import time

    from strider.bench.protocol import load_protocol
    from strider.characters import load_character

    protocol = load_protocol(args.bench, args.protocol).replace(character=getattr(args, "character", None))
    load_character(protocol.character)   # an unknown character fails here, before any timing
    check_output_folder(args.out)
    resume, resumed = {}, 0
    if args.bench in RESUMABLE_BENCHES:
        from strider.bench.execution import bench_checkpoint

        resume["checkpoint"] = bench_checkpoint(args.out, protocol, "engine", fresh=args.fresh)
        resumed = len(resume["checkpoint"].load())
        if resumed:
            print(f"strider: resuming: {resumed} trial(s) of an interrupted run read from "
                  f"{resume['checkpoint'].path} (--fresh starts over)", file=sys.stderr)
    start = time.perf_counter()
    try:
        out = engine_runners()[args.bench](protocol, progress=not args.no_progress, **resume)
    except KeyboardInterrupt:
        if resume:
            print(f"strider: interrupted; finished trials are kept in {resume['checkpoint'].path} and the same "
                  "command resumes from them", file=sys.stderr)
        raise
    # A resumed run's wall time is its own part's alone.
    out.run = {"backend": "serial", "workers": 1, "wall_seconds": time.perf_counter() - start, **out.run,
               **({"resumed_trials": resumed} if resumed else {})}
    _write_and_print(out, Path(args.out))
    if resume:
        resume["checkpoint"].remove()
    return 0


def _protocol_character(bench: str) -> str:
    """The character the shipped protocol of ``bench`` names (read without validating the whole protocol)."""
    import yaml

    from strider.bench.protocol import protocol_path

    return str(yaml.safe_load(protocol_path(bench).read_text()).get("character"))
