"""``strider walk`` and ``strider stand``: parse flags, call :func:`strider.walk` / :func:`strider.stand`, report.

The CLI adds no behaviour of its own: every flag maps onto an argument of the
Python API, so what a user types and what a script calls are the same run.
User mistakes (a bad flag value, a malformed file, an unwritable video path)
arrive as :class:`~strider.errors.StriderError` and leave as one line on
stderr with exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import strider
from strider import api
from strider.characters import available_characters
from strider.characters.spec import ACTUATION_MODES
from strider.cli import bench_commands, motion_commands, report
from strider.cli import characters as characters_cli
from strider.cli import courses as courses_cli
from strider.cli import cw as cw_cli
from strider.cli import graph as graph_cli
from strider.cli import skills as skills_cli
from strider.cli import slip as slip_cli
from strider.cli import tlc as tlc_cli
from strider.cli import track as track_cli
from strider.errors import ControlDiverged, StriderError, UsageError
from strider.methods.gbwc.params import available_styles
from strider.methods.registry import available_controllers
from strider.parallel.threads import limit_blas_threads
from strider.sim.scene import DEFAULT_TIMESTEP

EXIT_FAILED = report.EXIT_FAILED   # also: the run's output could not be delivered
EXIT_USAGE = 2            # the same status argparse uses for its own errors
EXIT_INTERRUPTED = 130    # 128 + SIGINT, as shells report Ctrl-C
LONG_RUN_SECONDS = 30.0   # simulated seconds from which a run shows a progress bar even without --video
DIVERGED_STATE_FILE = "strider-diverged-state.npz"   # written to the working folder when a controller diverges

WALK_DESCRIPTION = """\
Walk the reference humanoid with the GBWC walking controller (Coros 2010, Ch. 5)
and report how it went: distance, mean speed, whether it fell, and how fast it
simulated. Optionally write a video, watch live, push it, or follow a plan.

examples:
  strider walk                                     10 s at 1.0 m/s, print a summary
  strider walk --speed 1.2 --turn-rate 0.5 --video walk.mp4
  strider walk --speed -0.5 --seconds 5            walk backwards
  strider walk --heading-deg 90                    turn to face +y (left), then walk
  strider walk --push 600@4:90 --push 400@7        two 0.1 s pushes on the torso
  strider walk --terrain slope:5 --style crouch --json
  strider walk --character robot --scale 1.2
  strider walk --script examples/plan.yaml --seconds 12 --video plan.mp4
"""

STAND_DESCRIPTION = """\
Stand in place (the walking command is off and the speed is 0) and report how
it went. By default the standing-balance controller (balance: a COM virtual
force, Torres 2012) holds the character and a fall turns it into a ragdoll; with
--script, --style or --controller gbwc, GBWC stands instead, stepping when pushed too
hard, and the plan can make it walk off later.

examples:
  strider stand --seconds 5                        stand still for 5 s
  strider stand --terrain slope:15 --push 50@3:0:0.2 --video stand.mp4
  strider stand --controller gbwc --push 300@2:90  GBWC's standing, which steps
  strider stand --push 60@2:90 --video stand.mp4   a shove from the left, on video
  strider stand --script examples/plan.yaml        stand, then follow the plan
  strider stand --character bipv3 --scale 0.8 --json
"""

MAIN_DESCRIPTION = """\
strider: physics-based character animation on MuJoCo. Simulated bipeds walk,
turn and keep their balance when pushed, driven by classical controllers.

examples:
  strider walk --seconds 10 --video walk.mp4
  strider stand --controller gbwc --push 150@2:90
  strider slip walk --video slip-walk.mp4          SLIP planning with a QP (Mordatch et al. 2010)
  strider walk --help                              every flag, with units and defaults
"""


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keep the hand-written examples as they are, and give flag help a wider column."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=34)


# The command groups, each a module that adds its commands to the parser (``add_commands``), names them
# (``ACTIONS``) and runs them (``run``), in the order ``strider --help`` lists them. ``walk``, ``stand`` and
# ``bench`` are added and dispatched here.
COMMAND_MODULES = (motion_commands, skills_cli, characters_cli, courses_cli, slip_cli, track_cli, cw_cli, tlc_cli,
                   graph_cli)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="strider", description=MAIN_DESCRIPTION, formatter_class=_HelpFormatter)
    parser.add_argument("--version", action="version", version=f"strider {strider.__version__}")
    commands = parser.add_subparsers(dest="action", metavar="COMMAND", required=True)
    walk = commands.add_parser("walk", help="walk at a commanded speed and heading", description=WALK_DESCRIPTION,
                               formatter_class=_HelpFormatter)
    _add_run_flags(walk, default_speed=api.DEFAULT_WALK_SPEED)
    stand = commands.add_parser("stand", help="stand in place, keeping balance", description=STAND_DESCRIPTION,
                                formatter_class=_HelpFormatter)
    _add_run_flags(stand, default_speed=0.0)
    for group in COMMAND_MODULES:
        group.add_commands(commands, _HelpFormatter)
    bench_commands.add_parser(commands, _HelpFormatter)
    return parser


def _add_run_flags(parser: argparse.ArgumentParser, default_speed: float) -> None:
    """The flags ``walk`` and ``stand`` share; each one is an argument of :func:`strider.api.run`."""
    motion = parser.add_argument_group("motion")
    motion.add_argument("--seconds", type=float, default=api.DEFAULT_SECONDS, metavar="S",
                        help="simulated duration, s (default: %(default)g)")
    speed_help = ("forward speed, m/s; negative walks backwards (default: %(default)g)" if default_speed
                  else "must stay 0 for stand; use 'strider walk' or a --script walk action to move")
    motion.add_argument("--speed", type=float, default=default_speed, metavar="M/S", help=speed_help)
    motion.add_argument("--period", type=float, default=api.DEFAULT_PERIOD, metavar="S",
                        help="duration of one step, s (default: %(default)g)")
    motion.add_argument("--turn-rate", type=float, default=0.0, metavar="RAD/S",
                        help="keep turning at this rate, rad/s, positive to the left (default: %(default)g)")
    motion.add_argument("--heading-deg", type=float, default=0.0, metavar="DEG",
                        help="target facing direction, degrees from +x, positive to the left (default: %(default)g)")
    motion.add_argument("--step-width", type=float, default=api.DEFAULT_STEP_WIDTH, metavar="M",
                        help="distance between the feet's centre lines, m (default: %(default)g)")
    motion.add_argument("--controller", default=api.DEFAULT_CONTROLLER if default_speed else None, metavar="NAME",
                        help=f"locomotion controller: {', '.join(available_controllers())} (default: "
                             + ("%(default)s)" if default_speed else "balance, or gbwc with --script or --style)"))
    motion.add_argument("--style", default=api.DEFAULT_STYLE, metavar="NAME|PATH",
                        help=f"gait style of the controller, or a style .yaml file; gbwc has "
                             f"{', '.join(available_styles())} (default: the controller's own)")
    motion.add_argument("--config", default="default", metavar="NAME",
                        help="the controller's configuration: for gbwc 'default' (strider's best), 'thesis' (seed "
                             "000 Ch. 5 alone, every addition beyond it off) or 'without:ADDITION[,...]'; "
                             "'strider bench gbwc-ablation --help' lists the additions (default: %(default)s)")
    motion.add_argument("--script", default=None, metavar="PLAN.yaml",
                        help="timed plan of command changes (stand, walk, turn, stop); see examples/plan.yaml")

    world = parser.add_argument_group("character and world")
    world.add_argument("--character", default=api.DEFAULT_CHARACTER, metavar="NAME|PATH",
                       help=f"shipped character ({', '.join(available_characters())}) or a character .yaml file "
                            "(default: %(default)s)")
    world.add_argument("--scale", type=float, default=1.0, metavar="FACTOR",
                       help="uniform size factor for the character, 0.2 to 5; gains follow its mass "
                            "(default: %(default)g)")
    world.add_argument("--actuation", default=None, choices=ACTUATION_MODES,
                       help="how the joints are driven: position (PD servos in the physics step), spd (stable PD "
                            "computed each step) or torque (motors; for torque-level controllers) "
                            "(default: the character file's, position for the shipped ones)")
    world.add_argument("--push", action="append", default=[], metavar="F@T[:DIR_DEG[:DURATION]][@head]",
                       help="push the torso (or, with @head, the head) with F newtons at T s for DURATION s (default "
                            "0.1), coming from DIR_DEG (0 behind, 90 left, 180 front, 270 right; default 0); "
                            "repeatable")
    world.add_argument("--terrain", default=api.DEFAULT_TERRAIN, metavar="flat|slope:DEG|course:NAME",
                       help="flat ground, a plane rising along +x by DEG degrees, or a terrain course ('strider "
                            "course list') (default: %(default)s)")
    world.add_argument("--timestep", type=float, default=DEFAULT_TIMESTEP, metavar="S",
                       help="physics step, s (default: %(default)g)")
    world.add_argument("--seed", type=int, default=0, metavar="N",
                       help="seed for random sources, recorded in the report; the simulation itself is "
                            "deterministic (default: %(default)s)")

    output = parser.add_argument_group("output")
    output.add_argument("--video", default=None, metavar="PATH.mp4",
                        help="write an MP4 from the character-following camera; the folder must exist")
    output.add_argument("--fps", type=float, default=api.DEFAULT_FPS, metavar="N",
                        help="video frames per simulated second (default: %(default)g)")
    output.add_argument("--width", type=int, default=api.DEFAULT_WIDTH, metavar="PX",
                        help="video width, pixels (default: %(default)s)")
    output.add_argument("--height", type=int, default=api.DEFAULT_HEIGHT, metavar="PX",
                        help="video height, pixels (default: %(default)s)")
    output.add_argument("--bvh", default=None, metavar="PATH.bvh",
                        help="write the simulated motion as BVH (Y up, metres) at --fps frames per second")
    output.add_argument("--viewer", action="store_true",
                        help="watch live in MuJoCo's interactive viewer, at real speed (needs a display)")
    output.add_argument("--json", action="store_true",
                        help="print the result as a JSON object instead of a summary paragraph")


def run_command(args: argparse.Namespace) -> int:
    """Run ``walk`` or ``stand`` from parsed flags and print the report."""
    if args.action == "stand" and args.speed != 0:
        raise UsageError("stand keeps --speed at 0; use 'strider walk --speed ...' or a --script walk action")
    progress = (sys.stderr.isatty() and not args.json
                and (args.video is not None or args.seconds >= LONG_RUN_SECONDS))
    common = {"controller": args.controller, "seconds": args.seconds, "period": args.period, "turn_rate": args.turn_rate,
              "heading_deg": args.heading_deg, "step_width": args.step_width, "style": args.style,
              "character": args.character, "scale": args.scale, "actuation": args.actuation, "pushes": args.push, "terrain": args.terrain,
              "seed": args.seed, "video": args.video, "timestep": args.timestep, "script": args.script,
              "fps": args.fps, "width": args.width, "height": args.height, "viewer": args.viewer,
              "progress": progress, "bvh": args.bvh, "config": args.config}
    result = api.walk(speed=args.speed, **common) if args.action == "walk" else api.stand(**common)
    return report.deliver(result, args.json)


def _save_diverged(exc: ControlDiverged) -> str:
    """Write the physics state a diverged episode stopped in; the sentence that says where (or why not)."""
    if exc.state is None:
        return ""
    import numpy as np

    path = Path(DIVERGED_STATE_FILE).resolve()
    try:
        np.savez(path, full_physics=exc.state, time=exc.time)
    except OSError as err:
        return f"; its state could not be saved to {path}: {err.strerror}"
    return f"; the state it stopped in is saved in {path} (numpy.load: full_physics, time)"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``strider`` command; returns the exit status."""
    limit_blas_threads()
    args = build_parser().parse_args(argv)
    try:
        for group in COMMAND_MODULES:
            if args.action in group.ACTIONS:
                return group.run(args)
        if args.action == "bench":
            return bench_commands.run(args)
        return run_command(args)
    except ControlDiverged as exc:
        print(f"strider: error: {' '.join(str(exc).split())}{_save_diverged(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except StriderError as exc:
        print(f"strider: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("strider: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of our output went away (``strider ... | head``): nothing is left to tell it. Point stdout
        # at nothing so the interpreter's own flush at exit does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
