"""``strider bench terrain`` (and ``slip-terrain``): slopes, single steps, staircases, random bumps, drops, gaps,
ramps and stepping stones, each a separate run on a course.

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
SEEDED_KINDS = ("bumps", "stones")   # kinds whose shape a seed draws
BUMP_LENGTH = Terrain().bump_length   # m of bump field: the length the Terrain bump field had
GAP_DEPTH = 2.0         # m: gaps and the pit under stepping stones (slip-planning.md P2)
STONE_SIZE = 0.4        # m square stones (same)
STONE_JITTER = {"gap": 0.1, "lateral": 0.1, "height": 0.05}   # m, uniform either way (same: gaps U[0.2, 0.4] m)


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
        "drop": [{"drop": {"height": h}}],
        "gap": [{"gap": {"width": h, "depth": GAP_DEPTH}}],
        "ramp": [{"slope": {"length": feature.tread, "degrees": h}}],
        "stones": [{"stones": {"count": feature.count, "length": STONE_SIZE, "gap": h, "width": STONE_SIZE,
                               "depth": GAP_DEPTH, "seed": seed, "jitter": dict(STONE_JITTER)}}],
    }[feature.kind]
    return {"start": -RUN_UP, "pieces": [run_up, *middle, tail]}


def course_for(feature: TerrainFeature, at: float, seed: int) -> Course:
    if feature.course is not None:
        return load_course(feature.course)
    description = {"name": f"bench: {feature.name}", **course_pieces(feature, at, seed)}
    return parse_course(Fields(description, f"terrain feature {feature.name!r}"))


def feature_length(feature: TerrainFeature) -> float:
    """How far the feature reaches past its start, m (the finish line is measured from its end)."""
    if feature.kind.startswith("stairs"):
        return feature.count * feature.tread
    if feature.kind == "ramp":
        return feature.tread
    if feature.kind == "gap":
        return feature.value
    if feature.kind == "stones":
        return feature.count * (STONE_SIZE + feature.value) + feature.value
    return 0.0


def finish_x(feature: TerrainFeature, at: float, finish_past: float) -> float:
    if feature.finish_x is not None:
        return feature.finish_x
    return at + feature_length(feature) + finish_past


def run(run: BenchRun) -> BenchOutput:
    protocol, p = run.protocol, run.protocol.params
    trials = {}
    for f in p.features:
        for seed in f.seeds:
            # Seeds draw a random feature's shape; for the others they move the feature by ``stagger`` m a seed,
            # so the character meets it at another moment of its stride.
            at = p.feature_at + (0.0 if f.kind in SEEDED_KINDS else p.stagger * seed)
            finish = finish_x(f, at, p.finish_past)
            key = f"{f.name} seed {seed}" if len(f.seeds) > 1 else f.name
            trials[key] = trial_base(protocol, run.controller, run.config, speed=p.speed, period=p.period,
                                     seconds=p.seconds, ground=course_for(f, at, seed),
                                     stop_past=finish if p.stop_at_finish else None,
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
    passed = {name: rate >= p.pass_share - 1e-9 for name, rate in rates.items()}
    rows = [Row("features passed", f"{sum(passed.values())}/{len(rates)}"
                + ("" if p.pass_share == 1 else f" (a feature passes with {100 * p.pass_share:.0f}% of its runs)"),
                protocol.anchor("terrain_pass"), all(passed.values()))]
    for f in p.features:
        mine = [r for r in results if r["feature"] == f.name]
        fell = [r for r in mine if r["fell"]]
        detail = f"{sum(r['passed'] for r in mine)}/{len(mine)} passed"
        if fell:
            times = ", ".join(f"{r['fall_time']:.1f}" for r in fell)
            detail += f", fell at {times} s"
        anchor = protocol.anchor("stairs") if f.kind == "stairs_up" else ""
        rows.append(Row(f"  {f.name}", detail, anchor, passed[f.name]))
    summary = {"success_by_feature": rates, "features_passed": sum(passed.values()), "features": len(rates)}
    figs = {"bars": plots.bars(list(rates), list(rates.values()), f"terrain success ({run.subject})",
                               "fraction of runs passed")}
    return BenchOutput(protocol.bench, run.controller, protocol.as_dict(), results, summary, rows, plots=figs)
