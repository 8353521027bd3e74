"""``strider bench terrain``: slopes, single steps, staircases and random bumps, each a separate run on a course.

Every feature is a terrain course (:mod:`strider.courses`), the same descriptions
``strider course show`` draws and planners query, so the ground a benchmark
walks on is the ground a user can look at. A feature given by ``kind`` is laid
``feature_at`` m ahead of the character, which walks at the protocol's speed
along +x; a feature can also name any course (``course: NAME`` or a file, with
the ``finish_x`` to reach). A run passes when the character does not fall and
its centre of mass gets ``finish_past`` m beyond the feature's start (for
staircases: beyond their last step) before the run ends. Bump fields are run
once per seed and report the fraction passed. Slopes start just behind the
character, so it starts on the slope and walks up or down it (the kink at the
slope's foot is behind it, not what the feature is about).
"""

from __future__ import annotations

from strider.bench import plots
from strider.bench.execution import BenchRun, trial_base
from strider.bench.output import BenchOutput, Row
from strider.bench.protocol import TerrainFeature
from strider.courses import Course, load_course
from strider.courses.library import parse_course
from strider.datafile import Fields
from strider.sim import Terrain

RUN_UP = 2.0            # m of level ground behind the character's start
SLOPE_BEHIND = 2.5      # m: a slope starts this far behind the start, so the character stands on it
SLOPE_LEAD_IN = 0.5     # m of level ground a course slope needs before it (strider.courses: continuous pieces)
SLOPE_LENGTH = 30.0     # m of slope: longer than any run walks
BEYOND = 25.0           # m of ground after a feature
BUMP_LENGTH = Terrain().bump_length   # m of bump field: the length the Terrain bump field had


def course_pieces(feature: TerrainFeature, at: float, seed: int) -> dict:
    """The course description of a feature ``at`` m ahead of a start at x = 0 (``strider.courses`` pieces)."""
    h, run_up = feature.value, {"flat": {"length": RUN_UP + at}}
    tail = {"flat": {"length": BEYOND}}
    if feature.kind == "slope":
        return {"start": -SLOPE_BEHIND - SLOPE_LEAD_IN, "pieces": [{"flat": {"length": SLOPE_LEAD_IN}},
                                                        {"slope": {"length": SLOPE_LENGTH, "degrees": h}}, tail]}
    middle = {
        "flat": [],
        "step_up": [{"step_up": {"height": h}}],
        "step_down": [{"step_down": {"height": h}}],
        "stairs_up": [{"stairs": {"count": feature.count, "rise": h, "tread": feature.tread}}],
        "stairs_down": [{"stairs": {"count": feature.count, "rise": -h, "tread": feature.tread}}],
        "bumps": [{"heightfield": {"length": BUMP_LENGTH, "height": h, "seed": seed}}],
    }[feature.kind]
    return {"start": -RUN_UP, "pieces": [run_up, *middle, tail]}


def course_for(feature: TerrainFeature, at: float, seed: int) -> Course:
    if feature.course is not None:
        return load_course(feature.course)
    description = {"name": f"bench: {feature.name}", **course_pieces(feature, at, seed)}
    return parse_course(Fields(description, f"terrain feature {feature.name!r}"))


def feature_length(feature: TerrainFeature) -> float:
    return feature.count * feature.tread if feature.kind.startswith("stairs") else 0.0


def finish_x(feature: TerrainFeature, at: float, finish_past: float) -> float:
    if feature.finish_x is not None:
        return feature.finish_x
    return at + feature_length(feature) + finish_past


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    trials = {}
    for f in p.features:
        for seed in (f.seeds if f.kind == "bumps" else (protocol.seed,)):
            finish = finish_x(f, p.feature_at, p.finish_past)
            key = f"{f.name} seed {seed}" if f.kind == "bumps" else f.name
            trials[key] = trial_base(protocol, run.controller, run.config, speed=p.speed, period=p.period, seconds=p.seconds,
                                     ground=course_for(f, p.feature_at, seed),
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
    figs = {"bars": plots.bars(list(rates), list(rates.values()), f"terrain success ({run.subject})",
                               "fraction of runs passed")}
    return BenchOutput("terrain", run.controller, protocol.as_dict(), results, summary, rows, plots=figs)
