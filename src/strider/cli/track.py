"""``strider track ...``: phase-indexed tracking (Abe 2012). So far: ``rectify``, motion capture to a physically
valid cyclic gait of the planar walker."""

from __future__ import annotations

import argparse
from pathlib import Path

from strider.errors import UsageError

ACTIONS = ("track",)
FAILED_SUFFIX = ".failed.track"
RATE_RANGE = (10.0, 240.0)   # Hz: coarser misses contact events; finer only slows the solve (source: 30-90 Hz)

DESCRIPTION = """\
Phase-indexed tracking (Abe 2012, thesis): a motion-capture walk is rectified by
trajectory optimization into a gait whose ground forces are valid, for the planar
walker planar14.

examples:
  strider track rectify ../shared/mocap/bvh/cmu_02_01_walk.bvh --out walk.track
  strider track rectify clip.bvh --window stride --rate 60 --out stride.track
"""

RECTIFY_DESCRIPTION = """\
Rectify a motion-capture walk (BVH or DeepMimic JSON): its sagittal joint angles
and foot contacts are read, one walking step (or stride) is cut out between heel
strikes, and the smallest change that makes it physically valid is found with
IPOPT: feet in contact stay put, the ground force stays in the friction cone with
its centre of pressure under the feet, and the end joins the start (a step's end
is its start mirrored, a stride's its start moved forward).

The result is a .track file: the motion, its contacts and the solver's report. If
the solver does not converge, the best attempt is saved beside --out with the
suffix .failed.track and the command exits with status 2, naming the solver's
status and the worst constraint.

examples:
  strider track rectify ../shared/mocap/bvh/cmu_02_01_walk.bvh --out walk.track
  strider track rectify ../shared/mocap/bvh/scaled_131_01.bvh --start 4 --out late.track
"""


def add_commands(commands, formatter) -> None:
    p = commands.add_parser("track", help="phase-indexed tracking of rectified motion capture (planar walker)",
                            description=DESCRIPTION, formatter_class=formatter)
    actions = p.add_subparsers(dest="track_action", metavar="ACTION", required=True)
    r = actions.add_parser("rectify", help="motion capture -> a physically valid cyclic gait (.track)",
                           description=RECTIFY_DESCRIPTION, formatter_class=formatter)
    r.add_argument("clip", help="a BVH or DeepMimic motion file of a walk")
    r.add_argument("--out", required=True, metavar="PATH.track", help="where to write the rectified motion")
    r.add_argument("--window", choices=("step", "stride"), default="step",
                   help="'step': one step, mirrored into the next (symmetric); 'stride': two steps, repeated "
                        "(cyclic) (default: %(default)s)")
    r.add_argument("--rate", type=float, default=60.0, metavar="HZ",
                   help=f"frames per second of the rectified motion, {RATE_RANGE[0]:g} to {RATE_RANGE[1]:g} "
                        "(default: %(default)g)")
    r.add_argument("--start", type=float, default=0.0, metavar="S",
                   help="look for the first walking step from this time on, s (default: %(default)g)")
    r.add_argument("--character", default="planar14", metavar="NAME",
                   help="a planar character with heel and toe spheres (default: %(default)s)")
    r.add_argument("--json", action="store_true", help="print the solver's report as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from strider.characters import load_character
    from strider.methods.tracking.mocap_import import load_planar_clip
    from strider.methods.tracking.planar_model import PlanarModel
    from strider.methods.tracking.rectify import RectifyParams, rectify
    from strider.methods.tracking.track_file import save_track

    if not RATE_RANGE[0] <= args.rate <= RATE_RANGE[1]:
        raise UsageError(f"--rate must be between {RATE_RANGE[0]:g} and {RATE_RANGE[1]:g} frames per second, "
                         f"got {args.rate:g}")
    if args.start < 0:
        raise UsageError(f"--start must be >= 0 s, got {args.start:g}")
    out = Path(args.out)
    if not out.parent.exists():
        raise UsageError(f"--out {out}: the folder {out.parent} does not exist")
    spec = load_character(args.character)
    model = PlanarModel.from_spec(spec)
    clip = load_planar_clip(args.clip, args.character)
    result = rectify(model, clip, RectifyParams(rate=args.rate, window=args.window, start=args.start))
    s = result.solution
    if not s.success:
        failed = save_track(result, out.with_suffix("").with_suffix(FAILED_SUFFIX), args.character)
        raise UsageError(f"rectification of {args.clip} did not converge: IPOPT status {s.status}, worst "
                         f"constraint {s.worst_constraint} off by {s.worst_violation:.3g}; the attempt is saved "
                         f"in {failed}")
    save_track(result, out, args.character)
    report = {"file": str(out), "frames": len(result.q), "period_s": result.period, "shift_m": result.shift,
              "speed_m_s": result.speed, "source_speed_m_s": clip.speed, "status": s.status,
              "iterations": s.iterations, "seconds": s.seconds, "worst_constraint": s.worst_constraint,
              "worst_violation": s.worst_violation}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"rectified one {args.window} of {args.clip}: {len(result.q)} frames over {result.period:.2f} s, "
              f"{result.shift:.2f} m ({result.speed:.2f} m/s; the clip: {clip.speed:.2f} m/s)")
        print(f"IPOPT: {s.status} in {s.iterations} iterations, {s.seconds:.1f} s; worst constraint "
              f"{s.worst_constraint}, off by {s.worst_violation:.1e}")
        print(f"wrote {out}")
    return 0
