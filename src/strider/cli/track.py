"""``strider track ...``: phase-indexed tracking (Abe 2012): ``rectify`` turns motion capture into a physically
valid cyclic gait of the planar walker, ``walk`` tracks one in MuJoCo."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from strider.cli import report as report_text
from strider.cli.parallel_flags import add_parallel_flags
from strider.errors import UsageError

ACTIONS = ("track",)
FAILED_SUFFIX = ".failed.track"
WINDOWS = ("step", "stride", "jump")   # rectify.WINDOWS, named here so that --help does not load CasADi
RATE_RANGE = (10.0, 240.0)   # Hz: coarser misses contact events; finer only slows the solve (source: 30-90 Hz)

DESCRIPTION = """\
Phase-indexed tracking (Abe 2012, thesis): a motion-capture walk is rectified by
trajectory optimization into a gait whose ground forces are valid, for the planar
walker planar14 (or the 5-link point-foot walker planar5).

examples:
  strider track walk cmu-walk --seconds 20 --video track.mp4      the shipped CMU walk
  strider track rectify ../shared/mocap/bvh/cmu_02_01_walk.bvh --out walk.track
  strider track walk walk.track --push 200@5 --video pushed.mp4
  strider track jump --seconds 20 --video jump.mp4                 the shipped broad jumps
  strider track walk five-link --video five-link.mp4                the 5-link point-foot walker
"""

JUMP_DESCRIPTION = """\
Jump a rectified two-footed broad jump over and over with the phase-indexed
controller (Abe 2012, Sec. 3.4.3): the phase is how far the centre of mass is
ahead of the toes, the stages are the landing on flat feet, the push-off on the
toes and the flight, and where the ground force acts under the flat feet comes
from a value-iteration table that steers the phase rate at heel-off toward the
motion's own (Sec. 5.3.2), so each jump starts as the last did.

TRACK is a jump rectified by 'strider track rectify CLIP --window jump', or the
shipped 'jump' (DeepMimic's humanoid3d_jump, remade by 'strider track rectify
../shared/mocap/deepmimic/humanoid3d_jump.txt --window jump --out jump.track' and
'strider track vi jump.track --phases 50 --rates 50'). A jump of your own needs
its table first (its VI policy, 'strider track vi'), or --policy integral.

examples:
  strider track jump --seconds 20 --video jump.mp4
  strider track jump jump.track --policy constant      the walk's constant FRI: it falls (Sec. 5.3.2)
  strider track jump --json
"""

WALK_DESCRIPTION = """\
Walk a rectified motion with the phase-indexed controller (Abe 2012): its joint
angles are fitted as splines of the phase (the stance ankle-to-hip angle), the
controller drives every joint onto them with no clock, and the ground force's
point of application under the flat stance foot regulates the speed (the
integral policy). The walker is the character the motion was rectified for, on
torque motors at a 2 ms step: planar14, or planar5, whose point feet leave no
force to place, so that its speed is its motion's own; pushed back, it steps
backwards.

TRACK is a .track file from 'strider track rectify' or a shipped motion:
cmu-walk (CMU 02_01, remade by 'strider track rectify
../shared/mocap/bvh/cmu_02_01_walk.bvh --out cmu-walk.track') or cmu-long (its
step 1.1 x as long, made with --length 1.1: the constant FRI falls there, the
VI table walks) or five-link (the CMU step on planar5's point feet, made with
--character planar5).

examples:
  strider track walk cmu-walk --seconds 20 --video track.mp4
  strider track walk walk.track --push 200@5 --push 150@8:180    the second from the front
  strider track walk cmu-walk --terrain slope:-6 --json
  strider track walk cmu-walk --course bumps --push 300@8          over 5 cm bumps, pushed
"""
VI_DESCRIPTION = """\
Make the value-iteration FRI policy of a rectified motion (Abe 2012, Sec. 5.2.1).
On the walker's zero dynamics the state is the phase and its rate; from every
state of a grid (phases x rates) and for every FRI placement along the flat
stance foot, the walker is placed on its constraints in MuJoCo and simulated to
the next phase row. Value iteration over those transitions rewards walking at
the motion's own phase rate; the table gives the best placement per state. A
jump's table covers its ground phase on flat feet and scores only the phase rate
as the heels rise, against the motion's own (Sec. 5.3.2).

The transitions run on --workers processes (or Ray); the table is the same for
any worker count. An interrupted run resumes from OUT.checkpoint.jsonl.

examples:
  strider track vi cmu-walk --out walk.fri --workers 2
  strider track walk cmu-walk --policy walk.fri --push 250@5
  strider track vi walk.track                   writes walk.fri beside it
  strider track vi jump.track --phases 50 --rates 50
"""
WALK_TIMESTEP = 0.002     # s (phase-tracking.md Sec. 4, "MuJoCo vs source engine")
JUMP_ACTIONS = 20         # FRI placements per state of a jump's table (seed 004, Sec. 5.2.1)

RECTIFY_DESCRIPTION = """\
Rectify a motion-capture walk or jump (BVH or DeepMimic JSON): its sagittal joint
angles and foot contacts are read, one walking step (or stride) is cut out between
heel strikes, or one jump from landing to landing, and the smallest change that
makes it physically valid is found with IPOPT: feet in contact stay put, the
ground force stays in the friction cone with its centre of pressure under the
feet (and is zero in the air), and the end joins the start (a step's end is its
start mirrored, a stride's or a jump's its start moved forward). A jump's legs
move together; a clip of a single jump that ends as it began is closed into a
loop.

On a slope (--slope), strider's rectifier also smooths the ground force from
frame to frame and, downhill, keeps its centre of pressure 2 cm inside the feet:
left to the source's metric, a +-20 deg gait rides the ends of the feet, and the
tracker falls in its second step. --source rectifies as the source does.

The result is a .track file: the motion, its contacts and the solver's report. If
the solver does not converge, the best attempt is saved beside --out with the
suffix .failed.track and the command exits with status 2, naming the solver's
status and the worst constraint.

examples:
  strider track rectify ../shared/mocap/bvh/cmu_02_01_walk.bvh --out walk.track
  strider track rectify ../shared/mocap/bvh/scaled_131_01.bvh --start 4 --out late.track
  strider track rectify ../shared/mocap/bvh/cmu_02_01_walk.bvh --slope 10 --out up.track
  strider track rectify ../shared/mocap/bvh/cmu_02_01_walk.bvh --slope -20 --source --out down-source.track
  strider track rectify ../shared/mocap/bvh/cmu_02_01_walk.bvh --length 0.5 --out short.track
  strider track rectify ../shared/mocap/deepmimic/humanoid3d_jump.txt --window jump --out jump.track
"""


def add_commands(commands, formatter) -> None:
    p = commands.add_parser("track", help="phase-indexed tracking of rectified motion capture (planar walker)",
                            description=DESCRIPTION, formatter_class=formatter)
    actions = p.add_subparsers(dest="track_action", metavar="ACTION", required=True)
    r = actions.add_parser("rectify", help="motion capture -> a physically valid cyclic gait (.track)",
                           description=RECTIFY_DESCRIPTION, formatter_class=formatter)
    r.add_argument("clip", help="a BVH or DeepMimic motion file of a walk or a two-footed jump")
    r.add_argument("--out", required=True, metavar="PATH.track", help="where to write the rectified motion")
    r.add_argument("--window", choices=WINDOWS, default="step",
                   help="'step': one step, mirrored into the next (symmetric); 'stride': two steps, repeated "
                        "(cyclic); 'jump': one two-footed jump, landing to landing, repeated (default: %(default)s)")
    from strider.methods.tracking.rates import DEFAULT_RATE, POINT_FOOT_RATE

    r.add_argument("--rate", type=float, default=None, metavar="HZ",
                   help=f"frames per second of the rectified motion, {RATE_RANGE[0]:g} to {RATE_RANGE[1]:g} "
                        f"(default: {DEFAULT_RATE:g}; {POINT_FOOT_RATE:g} for a point-footed walker such as "
                        "planar5)")
    r.add_argument("--start", type=float, default=0.0, metavar="S",
                   help="look for the first walking step from this time on, s (default: %(default)g)")
    r.add_argument("--length", type=float, default=1.0, metavar="X",
                   help="edit the step length to X times the capture's, 0.3 to 2 (0.5: short steps at the same "
                        "cadence); the joint angles give way as little as they can (default: %(default)g)")
    r.add_argument("--slope", type=float, default=0.0, metavar="DEG",
                   help="rectify for a ramp of DEG degrees, -30 to 30 (positive: uphill); the motion then walks "
                        "on that slope by default (default: %(default)g)")
    r.add_argument("--cop-margin", type=float, default=None, metavar="M",
                   help="keep the centre of pressure M metres inside the feet in contact, 0 to 0.05 (strider's; "
                        "default: 0.02 down a slope, where the source's gaits brake with the pressure at the toes and the "
                        "tracker falls, else 0)")
    r.add_argument("--source", action="store_true",
                   help="the source's rectifier: its own metric (no penalty on the ground force's change, which "
                        "strider adds on a slope, for a jump and for point feet) and no centre-of-pressure margin")
    r.add_argument("--character", default="planar14", metavar="NAME",
                   help="a planar character: heel and toe spheres on each foot, or point feet (planar5) "
                        "(default: %(default)s)")
    r.add_argument("--json", action="store_true", help="print the solver's report as JSON")

    w = actions.add_parser("walk", help="track a rectified motion in MuJoCo (planar14 or planar5, torque motors)",
                           description=WALK_DESCRIPTION, formatter_class=formatter)
    _play_arguments(w, "cmu-walk", "integral")
    j = actions.add_parser("jump", help="jump a rectified broad jump over and over (planar14, torque motors)",
                           description=JUMP_DESCRIPTION, formatter_class=formatter)
    _play_arguments(j, "jump", "vi")

    v = actions.add_parser("vi", help="a value-iteration FRI policy for a rectified motion (.fri)",
                           description=VI_DESCRIPTION, formatter_class=formatter)
    v.add_argument("track", nargs="?", default="cmu-walk", help="a .track file or a shipped motion "
                                                                 "(default: %(default)s)")
    v.add_argument("--out", default=None, metavar="PATH.fri",
                   help="where to write the table (default: beside a .track file; ./NAME.fri for a shipped motion)")
    add_parallel_flags(v, "transitions")
    v.add_argument("--phases", type=int, default=None, metavar="M",
                   help="grid rows over the step's phase (default: 100, the seed's)")
    v.add_argument("--rates", type=int, default=None, metavar="N",
                   help="grid columns of phase rate (default: 100, the seed's)")
    v.add_argument("--actions", type=int, default=None, metavar="P",
                   help="FRI placements tried from each state (default: the seed's, 10 for a walk, 20 for a jump)")
    v.add_argument("--json", action="store_true", help="print the report as JSON")


def _play_arguments(p: argparse.ArgumentParser, track: str, policy: str) -> None:
    """The arguments 'track walk' and 'track jump' share; ``track`` and ``policy`` are their defaults."""
    p.add_argument("track", nargs="?", default=track, help="a .track file or a shipped motion (default: %(default)s)")
    p.add_argument("--seconds", type=float, default=10.0, metavar="S", help="simulated time, s (default: %(default)g)")
    p.add_argument("--push", action="append", default=[], metavar="F@T[:DIR_DEG[:DURATION]]",
                   help="push the torso with F newtons at T s (direction 0 = forward, 180 = backward; 0.1 s "
                        "unless DURATION is given); repeatable")
    ground = p.add_mutually_exclusive_group()
    ground.add_argument("--terrain", default=None, metavar="flat|slope:DEG|course:NAME",
                        help="the ground (default: the one the motion was rectified for: flat, or the slope of "
                             "'strider track rectify --slope')")
    ground.add_argument("--course", default=None, metavar="NAME",
                        help="short for --terrain course:NAME: a course of 'strider course list' (bumps, "
                             "drop-0.3, ...)")
    p.add_argument("--policy", default=policy, metavar="integral|constant|vi|PATH.fri",
                   help="where the ground force acts under the flat stance foot: 'integral' moves it by the "
                        "integrated phase-rate error (3.20), 'constant' keeps the rectified one, 'vi' looks it up "
                        "in the value-iteration table made for the motion by 'strider track vi' (the shipped "
                        "motions ship theirs), or give a table file (default: %(default)s)")
    p.add_argument("--contact-damping", type=float, default=None, metavar="R",
                   help="how fast, 1/s, the controller brings a foot point it holds on the ground to rest: strider "
                        "also drives the point's velocity to zero, the source only its acceleration (0: the "
                        "source's; default: strider's, 50)")
    p.add_argument("--swing-knee-lift", type=float, default=None, metavar="RAD",
                   help="extra bend of the swing knee at mid-swing, rad, so the toe clears a ramp up (0: the "
                        "source's swing, as rectified; default: strider's, 0.2)")
    p.add_argument("--late-strike-yield", type=float, default=None, metavar="R",
                   help="rad of stance-knee bend per rad of phase once the step's phase has run out with the swing "
                        "foot still up over ground 2 cm or more below the stance foot's (down a slope), lowering the "
                        "body onto it (0: the source's, which holds the step's last pose; default: strider's, 2)")
    p.add_argument("--no-swing-retrace", action="store_true",
                   help="once a walker pushed back rolls onto the flat of its stance foot again, hold the stage's "
                        "first pose, as the source does, instead of running the motion backwards so the swing foot "
                        "retraces its swing and steps down behind (strider's)")
    p.add_argument("--video", default=None, metavar="PATH.mp4", help="write a video")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _ground(args: argparse.Namespace, rectified_slope: float):
    """The ground a walk runs on: --terrain, --course NAME, or the slope the motion was rectified for."""
    from strider.methods.tracking.rectify import ramp

    if args.terrain:
        return args.terrain
    return f"course:{args.course}" if args.course else ramp(rectified_slope)


def run(args: argparse.Namespace) -> int:
    if args.track_action in ("walk", "jump"):
        return _walk(args)
    if args.track_action == "vi":
        return _vi(args)
    return _rectify(args)


def _walk(args: argparse.Namespace) -> int:
    import sys

    from strider import api
    from strider.methods.tracking.track_file import load_track, resolve_track

    if not args.seconds > 0:
        raise UsageError(f"--seconds must be > 0, got {args.seconds:g}")
    rectified, character = load_track(resolve_track(args.track))
    jumps = rectified.window == "jump"
    if jumps != (args.track_action == "jump"):
        other = "jump" if jumps else "walk"
        raise UsageError(f"{args.track} is a rectified {'jump' if jumps else 'walk'}: play it with "
                         f"'strider track {other} {args.track}'")
    from strider.methods.tracking.controller import POLICIES

    policy = args.policy
    if policy.endswith(".fri"):
        policy = f"vi:{policy}"
    elif policy not in POLICIES:
        raise UsageError(f"--policy must be {', '.join(POLICIES)} or a .fri table file; got {args.policy!r}")
    if args.contact_damping is not None:
        if not (math.isfinite(args.contact_damping) and args.contact_damping >= 0):
            raise UsageError(f"--contact-damping must be a finite rate >= 0 per second, got {args.contact_damping:g}")
        policy = f"{policy},contact_damping={args.contact_damping!r}"
    if args.swing_knee_lift is not None:
        if not math.isfinite(args.swing_knee_lift):
            raise UsageError(f"--swing-knee-lift must be a finite angle, rad, got {args.swing_knee_lift:g}")
        policy = f"{policy},swing_knee_lift={args.swing_knee_lift!r}"
    if args.late_strike_yield is not None:
        if not (math.isfinite(args.late_strike_yield) and args.late_strike_yield >= 0):
            raise UsageError(f"--late-strike-yield must be a finite rate >= 0, rad per rad, got "
                             f"{args.late_strike_yield:g}")
        policy = f"{policy},late_strike_yield={args.late_strike_yield!r}"
    if args.no_swing_retrace:
        policy = f"{policy},swing_retraces=off"
    result = api.walk(seconds=args.seconds, speed=rectified.speed, style=args.track, character=character,
                      actuation="torque", controller="track", pushes=args.push,
                      terrain=_ground(args, rectified.ground_slope),
                      timestep=WALK_TIMESTEP, video=args.video, progress=sys.stderr.isatty() and not args.json,
                      config=policy)
    if jumps and not args.json:
        print(f"Jumped {result.steps} times over {result.distance_m:.2f} m in {result.sim_seconds:.1f} s of simulated "
              f"time. {report_text.aftermath(result)}")
        return report_text.EXIT_FAILED if result.unstable else report_text.EXIT_OK
    return report_text.deliver(result, args.json)


def _vi(args: argparse.Namespace) -> int:
    import sys

    from strider.characters import load_character
    from strider.methods.tracking.constraints import fit_constraints
    from strider.methods.tracking.fri_value import FriGrid, save_fri_table, solve_fri_table, table_path
    from strider.methods.tracking.planar_model import PlanarModel
    from strider.methods.tracking.track_file import SHIPPED, load_track, resolve_track
    from strider.parallel.executor import check_workers

    check_workers(args.workers)
    track = resolve_track(args.track)
    rectified, character = load_track(track)
    actions = args.actions or (JUMP_ACTIONS if rectified.window == "jump" else None)
    sizes = {"phases": args.phases, "rates": args.rates, "actions": actions}
    grid = FriGrid(**{k: v for k, v in sizes.items() if v is not None})
    if args.out is not None:
        out = Path(args.out)
    elif track.parent == SHIPPED:
        out = Path(track.with_suffix(".fri").name)
    else:
        out = table_path(track)
    if not out.parent.exists():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")
    checkpoint = out.with_suffix(".checkpoint.jsonl")
    constraints = fit_constraints(PlanarModel.from_spec(load_character(character)), rectified)
    table = solve_fri_table(constraints, grid, backend=args.backend, workers=args.workers, checkpoint=checkpoint,
                            progress=sys.stderr.isatty() and not args.json)
    save_fri_table(table, out)
    checkpoint.unlink(missing_ok=True)
    info = table.info
    verb = "jump" if rectified.window == "jump" else "walk"
    report = {"file": str(out), "track": str(track), "grid": [grid.phases, grid.rates, grid.actions],
              "sample_seconds": info.sample_seconds, "solve_seconds": info.solve_seconds,
              "workers": info.workers, "backend": info.backend, "feasible_states": info.feasible}
    return report_text.emit(report, args.json,
                            f"sampled {grid.phases} x {grid.rates} states x {grid.actions} FRI placements in "
                            f"{info.sample_seconds:.1f} s on {info.workers} workers ({info.backend}); value iteration "
                            f"{info.solve_seconds:.2f} s; {info.feasible:.0%} of the states have an action that does "
                            f"not fail\nwrote {out}; use it: strider track {verb} {args.track} --policy {out}")


def _rectify(args: argparse.Namespace) -> int:
    from strider.characters import load_character
    from strider.methods.tracking.mocap_import import load_planar_clip
    from strider.methods.tracking.planar_model import PlanarModel
    from strider.methods.tracking.rectify import SOURCE_RECTIFIER, RectifyParams, check_edits, check_window, rectify
    from strider.methods.tracking.track_file import save_track

    if args.rate is not None and not RATE_RANGE[0] <= args.rate <= RATE_RANGE[1]:
        raise UsageError(f"--rate must be between {RATE_RANGE[0]:g} and {RATE_RANGE[1]:g} frames per second, "
                         f"got {args.rate:g}")
    if args.start < 0:
        raise UsageError(f"--start must be >= 0 s, got {args.start:g}")
    check_edits(args.length, args.slope, ("--length", "--slope", "--cop-margin"), args.cop_margin)
    if args.source and args.cop_margin:
        raise UsageError("--source rectifies without a centre-of-pressure margin: leave out --cop-margin, or --source")
    out = Path(args.out)
    if not out.parent.exists():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")
    spec = load_character(args.character)
    model = PlanarModel.from_spec(spec)
    check_window(model, args.window)
    clip = load_planar_clip(args.clip, args.character)
    source = SOURCE_RECTIFIER if args.source else {"cop_margin": args.cop_margin}
    result = rectify(model, clip, RectifyParams(rate=args.rate, window=args.window, start=args.start,
                                                length=args.length, slope=args.slope, **source))
    s = result.solution
    if not s.success:
        failed = save_track(result, out.with_suffix("").with_suffix(FAILED_SUFFIX), args.character)
        raise UsageError(f"rectification of {args.clip} did not converge: IPOPT status {s.status}, worst "
                         f"constraint {s.worst_constraint} off by {s.worst_violation:.3g}; the attempt is saved "
                         f"in {failed}")
    save_track(result, out, args.character)
    report = {"file": str(out), "frames": len(result.q), "period_s": result.period, "shift_m": result.shift,
              "speed_m_s": result.speed, "source_speed_m_s": clip.speed, "ground_slope_deg": result.ground_slope,
              "status": s.status,
              "iterations": s.iterations, "seconds": s.seconds, "worst_constraint": s.worst_constraint,
              "worst_violation": s.worst_violation}
    ground = f" for a {result.ground_slope:g} deg ramp" if result.ground_slope else ""
    return report_text.emit(report, args.json,
                            f"rectified one {args.window} of {args.clip}{ground}: {len(result.q)} frames over "
                            f"{result.period:.2f} s, {result.shift:.2f} m ({result.speed:.2f} m/s; the clip: "
                            f"{clip.speed:.2f} m/s)\nIPOPT: {s.status} in {s.iterations} iterations, "
                            f"{s.seconds:.1f} s; worst constraint {s.worst_constraint}, off by "
                            f"{s.worst_violation:.1e}\nwrote {out}")
