"""``strider slip GAIT``: the SLIP preview controller on its torque-driven humanoid, one gait by name.

A shorthand for ``strider walk --controller slip --character bipv3-torque --style GAIT``: the gait's own step
length and duration set the speed, ``--height`` sets a jump's apex goal, and ``--course`` puts a terrain course
under the feet that the planner sees too.
"""

from __future__ import annotations

import argparse
import sys

from strider import api
from strider.cli import report

ACTIONS = ("slip",)
CHARACTER = "bipv3-torque"
GAITS = ("walk", "run", "jump", "stand", "dodge")
DEFAULT_SECONDS = 10.0
DODGE_THROW_AT = 1.0      # s: the ball leaves after a second of standing
DODGE_WATCH = 3.0         # s after the throw to stay unhit and up (Mordatch et al. 2010 protocol: 3 s)

DESCRIPTION = """\
Run the SLIP preview controller (Mordatch et al. 2010): every 40 ms and at every
foot contact it plans the next two steps of a spring-loaded inverted pendulum by
CMA-ES, and a whole-body QP turns the plan into joint torques for the humanoid
bipv3-torque. Walk, run, jump and stand differ only in the gait's goals (YAML
files, Table 1 of the paper); the phases come out of the planner.

examples:
  strider slip walk --seconds 20 --video slip-walk.mp4
  strider slip run --seconds 10
  strider slip jump --height 0.25
  strider slip walk --course slope-10 --video slope.mp4
  strider slip walk --config source          the paper's mechanisms alone
  strider slip stand --push 150@3:90
  strider slip dodge --seed 3 --video dodge.mp4   a ball thrown from 8 m, azimuth drawn from the seed
"""


def add_commands(commands, formatter) -> None:
    p = commands.add_parser("slip", help="SLIP preview planning with a whole-body QP: walk, run, jump, stand",
                            description=DESCRIPTION, formatter_class=formatter)
    p.add_argument("gait", choices=GAITS, help="which gait's goals to plan for")
    p.add_argument("--seconds", type=float, default=None, metavar="S",
                   help=f"simulated duration after a 1 s settle, s (default: {DEFAULT_SECONDS:g}; dodge: "
                        f"{DODGE_THROW_AT + DODGE_WATCH:g}, the throw at {DODGE_THROW_AT:g} s and {DODGE_WATCH:g} s "
                        "to watch)")
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help="dodge only: draws the ball's azimuth, uniform within 90 deg of the facing (default: 0)")
    p.add_argument("--height", type=float, default=None, metavar="M",
                   help="jump only: the flight's apex above take-off and landing, m, up to 0.5 (default: the "
                        "gait file's 0.25)")
    p.add_argument("--config", default="default", choices=("default", "source"),
                   help="'default' (strider's best) or 'source' (the paper's mechanisms alone) "
                        "(default: %(default)s)")
    p.add_argument("--course", default=None, metavar="NAME",
                   help="a terrain course under the feet ('strider course list'); flat ground if not given")
    p.add_argument("--push", action="append", default=[], metavar="F@T[:DIR_DEG[:DURATION]][@head]",
                   help="push the torso, or with @head the head, with F newtons at T s (as in 'strider walk'); "
                        "repeatable")
    p.add_argument("--video", default=None, metavar="PATH.mp4", help="write an MP4; the folder must exist")
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of a summary")


def run(args: argparse.Namespace) -> int:
    from strider.errors import UsageError
    from strider.methods.slip.gait import load_gait
    from strider.runner.throws import Throw

    if args.height is not None and args.gait != "jump":
        raise UsageError(f"--height sets a jump's apex; the {args.gait} gait has none")
    if args.seed != 0 and args.gait != "dodge":
        raise UsageError(f"--seed draws a dodge's throw; the {args.gait} gait has none")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0, got {args.seed}")
    style = args.gait if args.height is None else f"jump,apex_height={args.height!r}"
    goals = load_gait(style)            # an impossible height is refused here, before anything runs
    dodging = args.gait == "dodge"
    seconds = args.seconds if args.seconds is not None else DODGE_THROW_AT + DODGE_WATCH if dodging else DEFAULT_SECONDS
    throws = (Throw.seeded(args.seed, DODGE_THROW_AT),) if dodging else ()
    common = {"controller": "slip", "character": CHARACTER, "style": style, "config": args.config,
              "seconds": seconds, "pushes": args.push, "video": args.video,
              "terrain": f"course:{args.course}" if args.course else api.DEFAULT_TERRAIN,
              "progress": sys.stderr.isatty() and not args.json}
    if args.gait in ("stand", "dodge"):
        result = api.stand(**common, throws=throws)
    else:
        result = api.walk(speed=goals.step_length / goals.step_duration, **common)
    return report.deliver(result, args.json)
