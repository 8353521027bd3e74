"""``strider bench bodies``: the same controller on other bodies, only the gains rescaled (coros-walking.md,
P3 (e)).

Every (body, gain rule) walks the P2 cases of the protocol's speeds and takes the P1 push grid at
``push_force`` with the settling, directions, phases and recovery criteria of ``push_protocol`` (the shipped
``push.yaml`` unless a file is named). A body passes under a
rule when every walk passes (no fall, steady speed within ``speed_tolerance``) and every push is survived.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from strider.bench import plots
from strider.bench.envelope import passed as walk_passed
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import load_protocol
from strider.bench.push import grid_trials, succeeded

RULE_NAMES = {"mass": "source's kp x M'/M", "similarity": "strider's dynamic similarity"}


def _on(trial, body, rule: str, **labels):
    return dataclasses.replace(trial, character=body.character, scale=body.scale, gain_rule=rule,
                               extra={**trial.extra, "body": body.name, "gain_rule": rule, **labels})


def trials(run: BenchRun, push_protocol) -> dict:
    protocol, p = run.protocol, run.protocol.params
    out = {}
    for body in p.bodies:
        for rule in p.gain_rules:
            for v in p.speeds:
                walk = trial_base(protocol, run.controller, run.config, speed=v, period=p.period,
                                  seconds=p.walk_seconds, steady_from=p.steady_from, extra={"speed_cmd": v})
                out[f"{body.name}-{rule}-walk-v{v:+.2f}"] = _on(walk, body, rule, kind="walk")
            for key, push in grid_trials(push_protocol, run.controller, p.push_force, config=run.config).items():
                out[f"{body.name}-{rule}-push-{key}"] = _on(push, body, rule, kind="push")
    return out


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    push_protocol = load_protocol("push", None if p.push_protocol == "push" else p.push_protocol)
    results = list(run.run(trials(run, push_protocol), label="bodies").values())
    rows, summary = [], {}
    passed_all = 0
    verdicts = np.zeros((len(p.bodies), len(p.gain_rules)))
    for i, body in enumerate(p.bodies):
        for j, rule in enumerate(p.gain_rules):
            mine = [r for r in results if r["body"] == body.name and r["gain_rule"] == rule]
            walks = [r for r in mine if r["kind"] == "walk"]
            pushes = [r for r in mine if r["kind"] == "push"]
            walks_ok = [walk_passed(r, p) for r in walks]
            pushes_ok = sum(succeeded(r, push_protocol.params) for r in pushes)
            ok = all(walks_ok) and pushes_ok == len(pushes)
            passed_all += ok
            verdicts[i, j] = 1.0 if ok else 0.0
            walk_text = ", ".join(
                f"{r['speed_cmd']:g}: " + (f"fell at {r['fall_time']:.1f} s" if r["fell"] else
                                           f"{r['steady_speed_mps']:+.2f} m/s")
                for r in walks)
            rows.append(Row(f"  {body.name}, {RULE_NAMES.get(rule, rule)}",
                            f"walks {sum(walks_ok)}/{len(walks)} ({walk_text}); {p.push_force:g} N pushes "
                            f"{pushes_ok}/{len(pushes)}", "", ok))
            summary[f"{body.name}/{rule}"] = {"passed": ok, "walks_passed": sum(walks_ok), "walks": len(walks),
                                              "pushes_survived": pushes_ok, "pushes": len(pushes),
                                              "steady_speeds": {f"{r['speed_cmd']:+g}": r["steady_speed_mps"]
                                                                for r in walks}}
    source_rule_ok = [summary[f"{b.name}/mass"]["passed"] for b in p.bodies] if "mass" in p.gain_rules else []
    head = [Row(f"bodies passing ({len(p.bodies)} bodies x {len(p.gain_rules)} gain rules)",
                f"{passed_all}/{len(p.bodies) * len(p.gain_rules)}", protocol.anchor("bodies"),
                passed_all == len(p.bodies) * len(p.gain_rules))]
    if source_rule_ok:
        head.append(Row("  under the source's rule alone (the target's 'only kp x M'/M changed')",
                        f"{sum(source_rule_ok)}/{len(source_rule_ok)}", "", all(source_rule_ok)))
    summary["passed"], summary["cases"] = passed_all, len(p.bodies) * len(p.gain_rules)
    fig = plots.heatmap(verdicts, [b.name for b in p.bodies], list(p.gain_rules),
                        f"other bodies ({run.subject}): 1 = P2 walks and P1 at {p.push_force:g} N all pass",
                        "body", "gain rule", "pass")
    return BenchOutput("bodies", run.controller, protocol.as_dict(), results, summary, head + rows,
                       plots={"pass": fig})
