"""``strider optimize gait``: tune a SIMBICON gait's numbers by CMA-ES (coros-walking.md, "Decisions for the
planners": the base gait is tuned once on flat ground)."""

from __future__ import annotations

import argparse
import time

import yaml

from strider.cli import report as report_text
from strider.cli.parallel_flags import add_parallel_flags
from strider.outputs import check_output_folder

DESCRIPTION = """\
Tune a SIMBICON gait by CMA-ES on flat ground, episodes in parallel. The gait
file's 'tuning' section names the character, the step length (and duration, or
flight share for a run) to reach, and which of its numbers may move within which
bounds; the search starts from the file's values. Writes the tuned gait file,
a convergence plot and a checkpoint (--resume continues an interrupted run with
the same result).

examples:
  strider optimize gait walk --character planar7 --workers 2      remake the planar walk (A_base of CW)
  strider optimize gait run --character planar7 --budget 300 --out results/
  strider optimize gait my-gait.yaml --character planar7 --resume --out results/
"""


def add_target(optimize_targets, formatter, workers: int) -> None:
    from strider.methods.simbicon.tuning import DEFAULT_BUDGET

    o = optimize_targets.add_parser("gait", help="tune a SIMBICON gait's numbers by CMA-ES", description=DESCRIPTION,
                                    formatter_class=formatter)
    o.add_argument("gait", metavar="NAME|PATH", help="a gait with a 'tuning' section (walk, run or a .yaml)")
    o.add_argument("--character", default="planar7", metavar="NAME",
                   help="whose shipped gait NAME means: a planar walker's or a humanoid's (default: %(default)s; "
                        "the episodes run on the character the file's tuning section names)")
    add_parallel_flags(o, "episodes", workers)
    o.add_argument("--budget", type=int, default=DEFAULT_BUDGET, metavar="EVALS", help="evaluation cap (default: %(default)s)")
    o.add_argument("--seed", type=int, default=1, metavar="N", help="CMA-ES seed, >= 1 (default: %(default)s)")
    o.add_argument("--resume", action="store_true", help="continue from the checkpoint in --out")
    o.add_argument("--out", default=".", metavar="DIR",
                   help="folder for NAME.tuned.yaml, NAME.convergence.png and NAME.checkpoint.pkl (default: .)")
    o.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    from strider.characters import load_character
    from strider.datafile import Fields, load_yaml
    from strider.methods.simbicon.gait import BODIES, body_of, gait_path, parse_gait
    from strider.methods.simbicon.tuning import measure, read_tuning, tune
    from strider.optimize.cma_es import plot_convergence
    from strider.parallel import Executor

    path = gait_path(args.gait, body_of(load_character(args.character)))
    data = load_yaml(path)
    body = Fields(data, str(path)).string("body", "humanoid", choices=BODIES)
    spec = read_tuning(data, str(path))
    out = check_output_folder(args.out)
    name = path.stem
    with Executor(args.backend, workers=args.workers) as executor:   # a bad worker count fails before the bar
        budget, bar = report_text.cma_budget_bar(args.budget, len(spec.parameters), f"CMA-ES {body} {name}",
                                                 args.json)
        start = time.perf_counter()
        data, cost, result = tune(str(path), body, executor, maxfevals=budget, seed=args.seed,
                                  checkpoint=out / f"{name}.checkpoint.pkl", resume=args.resume,
                                  on_generation=bar.generation)
    bar.close()
    wall = time.perf_counter() - start
    written = out / f"{name}.tuned.yaml"
    written.write_text(f"# Tuned by 'strider optimize gait' (seed {args.seed}, {result.evaluations} evaluations, "
                       f"cost {cost:.4f}).\n" + yaml.safe_dump(data, sort_keys=False))
    plot = out / f"{name}.convergence.png"
    plot_convergence(result.history, plot, f"{body} {name}: CMA-ES, seed {args.seed}")
    figures = measure(parse_gait(data, str(written), name, body), spec.character, spec.seconds, spec.skip_seconds)
    report = {"gait": name, "body": body, "cost": cost, "evaluations": result.evaluations, "wall_seconds": wall,
              "workers": args.workers, "backend": args.backend, "figures": figures, "gait_file": str(written),
              "plot": str(plot)}
    fell = f"fell at {figures['fall_time']:.1f} s" if figures["fell"] else f"walked {spec.seconds:g} s"
    length = figures["mean_step_length"]
    return report_text.emit(report, args.json,
                            f"Tuned {body} gait {name}: cost {cost:.4f} after {result.evaluations} evaluations in "
                            f"{wall:.0f} s wall; on {spec.character} it {fell}, mean step "
                            f"{'-' if length is None else f'{length:.3f} m'} (target {spec.step_length:g} m). "
                            f"Wrote {written} and {plot}.", 0)
