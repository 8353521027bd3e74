"""``strider bench terrain``: slopes, single steps, staircases and random bumps, each a separate run.

Each feature starts ``feature_at`` m ahead of the character, which walks at the
protocol's speed along +x. A run passes when the character does not fall and
its centre of mass gets ``finish_past`` m beyond the feature's start (for
staircases: beyond their last step) before the run ends. Bump fields are run
once per seed and report the fraction passed. Slopes start at the character's
feet (the whole ground is tilted), as a slope cannot begin under a flat start
without a kink the slope feature is not about.
"""

from __future__ import annotations

from strider.bench import plots
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import TerrainFeature
from strider.sim import Terrain

FAR_BACK = -20.0   # m: where a raised starting platform (step or stairs down) begins, well behind the start


def terrain_for(feature: TerrainFeature, at: float, seed: int) -> Terrain:
    h = feature.value
    if feature.kind == "slope":
        return Terrain("slope", slope_deg=h)
    if feature.kind == "step_up":
        return Terrain("steps", steps=((at, h),))
    if feature.kind == "step_down":
        return Terrain("steps", steps=((FAR_BACK, h), (at, 0.0)))
    if feature.kind == "stairs_up":
        return Terrain("steps", steps=tuple((at + i * feature.tread, h * (i + 1)) for i in range(feature.count)))
    if feature.kind == "stairs_down":
        top = h * feature.count
        return Terrain("steps", steps=((FAR_BACK, top),) + tuple((at + i * feature.tread, top - h * (i + 1))
                                                                 for i in range(feature.count)))
    if feature.kind == "bumps":
        return Terrain("bumps", bump_height=h, bump_seed=seed, bump_start=at)
    return Terrain()


def feature_length(feature: TerrainFeature) -> float:
    return feature.count * feature.tread if feature.kind.startswith("stairs") else 0.0


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    trials = {}
    for f in p.features:
        for seed in (f.seeds if f.kind == "bumps" else (protocol.seed,)):
            finish = p.feature_at + feature_length(f) + p.finish_past
            key = f"{f.name} seed {seed}" if f.kind == "bumps" else f.name
            trials[key] = trial_base(protocol, run.controller, speed=p.speed, period=p.period, seconds=p.seconds,
                                     terrain=terrain_for(f, p.feature_at, seed),
                                     extra={"feature": f.name, "kind": f.kind, "terrain_seed": seed,
                                            "finish_x": finish})
    results = list(run.run(trials).values())
    for r in results:
        # The runner reports distance along the starting heading from the start; the start is x = 0.
        r["passed"] = (not r["fell"]) and r["distance_m"] >= r["finish_x"]
    rates = {}
    for f in p.features:
        mine = [r for r in results if r["feature"] == f.name]
        rates[f.name] = sum(r["passed"] for r in mine) / len(mine)
    rows = [Row("features passed", f"{sum(v == 1.0 for v in rates.values())}/{len(rates)}",
                protocol.anchor("terrain_pass"), all(v == 1.0 for v in rates.values()))]
    for f in p.features:
        mine = [r for r in results if r["feature"] == f.name]
        fell = [r for r in mine if r["fell"]]
        detail = f"{sum(r['passed'] for r in mine)}/{len(mine)} passed"
        if fell:
            times = ", ".join(f"{r['fall_time']:.1f}" for r in fell)
            detail += f", fell at {times} s"
        anchor = protocol.anchor("stairs") if f.kind == "stairs_up" else ""
        rows.append(Row(f"  {f.name}", detail, anchor, rates[f.name] == 1.0))
    summary = {"success_by_feature": rates, "features_passed": sum(v == 1.0 for v in rates.values()),
               "features": len(rates)}
    figs = {"bars": plots.bars(list(rates), list(rates.values()), f"terrain success ({run.controller})",
                               "fraction of runs passed")}
    return BenchOutput("terrain", run.controller, protocol.as_dict(), results, summary, rows, plots=figs)
