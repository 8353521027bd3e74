"""``strider bench slip-push``: random pushes, one per trial, at a random moment of the gait.

Each case of the protocol is one gait (a controller style at a speed). Every trial of a case walks or runs the
same settle (so a worker settles once per case and branches every trial from it), then takes one push whose
force, duration, horizontal direction and time within the window are drawn from the protocol's seed, at the
body the protocol names (the head, for the SLIP protocol). A trial survives when the character does not fall
before the end, ``observe_seconds`` after the push ends.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from strider.bench import plots
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row
from strider.runner.perturbation import Push


def draw_pushes(p, seed: int, trials: int) -> list[Push]:
    """``trials`` pushes drawn from ``seed``: force, duration, direction (from anywhere) and time in the window."""
    rng = np.random.default_rng(seed)
    pushes = []
    for _ in range(trials):
        force, duration = rng.uniform(*p.force_range), rng.uniform(*p.duration_range)
        direction, when = rng.uniform(0.0, 360.0), rng.uniform(0.0, p.window)
        pushes.append(Push(float(force), float(when), float(direction), float(duration), p.body))
    return pushes


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    trials = {}
    for index, case in enumerate(p.cases):
        for i, push in enumerate(draw_pushes(p, protocol.seed + index, case.trials)):
            base = trial_base(protocol, run.controller, run.config, speed=case.speed,
                              settle_seconds=p.settle_seconds,
                              seconds=push.time + push.duration + p.observe_seconds, pushes=(push,),
                              extra={"case": case.name, **push.as_dict()})
            trials[f"{case.name} {i:03d}"] = dataclasses.replace(base, style=case.style)
    results = list(run.run(trials).values())
    rows, rates = [], {}
    for case in p.cases:
        mine = [r for r in results if r["case"] == case.name]
        survived = sum(not r["fell"] for r in mine)
        rates[case.name] = survived / len(mine)
        failed = sorted((r for r in mine if r["fell"]), key=lambda r: r["force"])
        detail = f"{survived}/{len(mine)} survived"
        if failed:
            detail += "; fell after " + ", ".join(f"{r['force']:.0f} N" for r in failed[:8]) + \
                      (" ..." if len(failed) > 8 else "")
        rows.append(Row(f"{case.name} ({case.style} at {case.speed:g} m/s), pushes at the {p.body}", detail,
                        protocol.anchor("survived"), protocol.meets("survived", rates[case.name])))
    forces = [r["force"] for r in results]
    fig = plots.bars(list(rates), list(rates.values()), f"pushes survived ({run.subject})", "fraction survived")
    notes = [(f"Forces {p.force_range[0]:g}-{p.force_range[1]:g} N for {p.duration_range[0]:g}-"
              f"{p.duration_range[1]:g} s (drawn: {min(forces):.0f}-{max(forces):.0f} N), one push per trial "
              f"within {p.window:g} s after a {p.settle_seconds:g} s settle, watched for {p.observe_seconds:g} s.")]
    return BenchOutput(protocol.bench, run.controller, protocol.as_dict(), results, {"survived_share": rates},
                       rows, plots={"bars": fig}, notes=notes)
