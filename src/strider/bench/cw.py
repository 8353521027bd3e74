"""``strider bench cw-accuracy``, ``cw-gaps`` and ``cw-realtime``: constrained walking's step accuracy over new
stepping-stone sequences (coros-walking.md, P4, 2-D and 3-D), its gap-crossing success over Table 3.1's terrains
(P5) and the 3-D humanoid crossing 30 m of gaps in real time (P6), for the source's configuration beside
strider's.

* **cw-accuracy**: from the shipped example set, new random sequences of
  ``steps`` stones (lengths U[0.1, 0.9] m, seeds not used in synthesis), each
  step planned by regular sampling over a 2-step horizon; the metric is the
  heel's landing error, per config (the model's regression).
* **cw-gaps**: per cell (gap width w, spacing s), ``walks`` walks over five
  gaps, each starting U[lead] m before the first; the figure is successful /
  total footfalls from the first gap-aware plan to the first footfall past the
  last gap (under half a foot on support, or a fall, fails), beside Table 3.1.
* **cw-realtime**: per seed and config, one walk over the course in this
  process, timed: every plan call against the shortest step of the walk, the
  walk's wall time against its simulated time, and for the overhead (P10) bare
  MuJoCo stepping of the walk's own motion (the same walk run again untimed,
  each control tick's state restored and stepped through) and of the scene
  from standing for as long.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np

from strider.bench.output import BenchOutput, Row
from strider.parallel import Checkpoint, Executor, run_sweep
from strider.progress import progress_bar

# Table 3.1 (Coros 2010, Sec. 3.6): success share by (spacing s, width w), m.
TABLE_3_1 = {(1.0, 0.2): 1.0, (1.0, 0.3): 1.0, (1.0, 0.4): 1.0, (1.0, 0.5): 0.93,
             (0.75, 0.2): 1.0, (0.75, 0.3): 1.0, (0.75, 0.4): 1.0, (0.75, 0.5): 0.93,
             (0.5, 0.2): 0.86, (0.5, 0.3): 0.93, (0.5, 0.4): 0.86, (0.5, 0.5): 0.6,
             (0.25, 0.2): 0.8, (0.25, 0.3): 0.93, (0.25, 0.4): 0.66, (0.25, 0.5): 0.3}
UNDER = 0.06     # m: P4's "under 6 cm"
OVER = 0.12      # m: P4's "more than 12 cm"
PAST_LAST_GAP = 1.0   # m: a gap walk ends once a heel lands this far beyond the last gap


@dataclass(frozen=True)
class Config:
    name: str
    regression: str
    search: str
    edge_margin: float
    early_touchdown: float | None = None   # SIMBICON's switch (None: the source's state machine)
    preferred_step: float | None = None    # the hybrid's footstep length, m (None: the source's 0.36)

    def planner_params(self):
        from strider.methods.cw.planner import PlannerParams

        step = {} if self.preferred_step is None else {"preferred_step": self.preferred_step}
        return PlannerParams(edge_margin=self.edge_margin, **step)


@dataclass(frozen=True)
class SequenceCase:
    character: str
    seed: int
    steps: int
    regression: str
    early_touchdown: float | None = None


@dataclass(frozen=True)
class GapCell:
    """Every walk of one (config, spacing, width) cell: one task, so a worker builds the model once per cell."""

    character: str
    width: float
    spacing: float
    leads: tuple[float, ...]   # m: each walk's start before the first gap
    seed: int                  # walk k plans with seed + k
    config: Config


def _model(character: str, regression: str):
    from strider.methods.cw.model import ModelParams, load_model

    return load_model(character, params=ModelParams(regression=regression))


def sequence_case(case: SequenceCase, context=None) -> dict:
    """Walk one new stepping-stone sequence planning each step: the heel errors, and whether it fell."""
    from strider.methods.cw.planner import Planner
    from strider.methods.cw.stepping import StepRunner
    from strider.methods.cw.synthesis import SynthesisParams, stepping_stones

    model = _model(case.character, case.regression)
    planner = Planner(model, seed=case.seed)
    runner = StepRunner(case.character, seed=case.seed, early_touchdown=case.early_touchdown)
    errors, plan_seconds = [], []
    fell = not runner.warm_up(SynthesisParams().warmup_steps)
    stones = stepping_stones(runner.last.heel, case.seed, case.steps + planner.params.horizon)
    for i in range(0 if fell else case.steps):
        t = time.perf_counter()
        plan = planner.stones(runner.last.state, runner.last.heel, stones[i:i + planner.params.horizon])
        plan_seconds.append(time.perf_counter() - t)
        out = runner.step(plan.action)
        if out.fell:
            fell = True
            break
        errors.append(out.strike.heel - stones[i])
    return {"seed": case.seed, "regression": case.regression, "errors": errors, "fell": fell,
            "plan_seconds_mean": float(np.mean(plan_seconds)) if plan_seconds else 0.0,
            "plan_seconds_max": max(plan_seconds, default=0.0)}


def gap_cell(cell: GapCell, context=None) -> dict:
    from strider.methods.cw.walker import gap_course, gap_footfall_score, walk_course

    c = cell.config
    model = _model(cell.character, c.regression)
    walks = []
    for k, lead in enumerate(cell.leads):
        course = gap_course(cell.width, cell.spacing, lead)
        support = course.support_intervals()
        walk = walk_course(model, course, search=c.search, params=c.planner_params(),
                           seed=cell.seed + k, character=cell.character, until=support[-1][0] + PAST_LAST_GAP,
                           early_touchdown=c.early_touchdown)
        ok, total = gap_footfall_score(walk, support)
        walks.append({"config": c.name, "width": cell.width, "spacing": cell.spacing, "lead": lead,
                      "seed": cell.seed + k, "successes": ok, "footfalls": total, "fell": walk.fell,
                      "plan_seconds_max": walk.plan_seconds_max, "sim_seconds": walk.sim_seconds,
                      "wall_seconds": walk.wall_seconds})
    return {"walks": walks}


def _configs(protocol) -> list[Config]:
    return [Config(name, **fields) for name, fields in protocol.params.configs]


def run_accuracy(protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    p = protocol.params
    configs = _configs(protocol)
    cases = {f"{c.name}-seed{s}": SequenceCase(protocol.character, s, p.steps, c.regression, c.early_touchdown)
             for c in configs for s in p.seeds}
    with Executor("processes", workers=p.workers) as executor:
        results = run_sweep(executor, sequence_case, cases, checkpoint, progress=progress,
                            description="cw-accuracy sequences")
    rows, summary = [], {}
    for c in configs:
        mine = [results[f"{c.name}-seed{s}"] for s in p.seeds]
        errors = np.abs(np.concatenate([r["errors"] for r in mine]))
        falls = sum(r["fell"] for r in mine)
        mean, under, over = float(errors.mean()), float((errors < UNDER).mean()), float((errors > OVER).mean())
        ok = (protocol.meets("mean_error", mean, at_most=True) and protocol.meets("under_6cm", under)
              and falls == 0)
        rows.append(Row(f"{c.name} ({c.regression} model): {len(p.seeds)} sequences of {p.steps} stones, "
                        f"{len(errors)} steps taken, {falls} fall(s)",
                        f"mean {100 * mean:.1f} cm; {100 * under:.0f}% < 6 cm; {100 * over:.0f}% > 12 cm",
                        protocol.anchor("mean_error"), ok))
        plan = max(r["plan_seconds_max"] for r in mine)
        rows.append(Row("  slowest plan (regular grid, 2 steps)", f"{1000 * plan:.0f} ms"))
        summary[c.name] = {"mean_error_m": mean, "share_under_6cm": under, "share_over_12cm": over,
                           "falls": falls, "steps": len(errors), "plan_seconds_max": plan}
    notes = [("The thesis' figure is for one 100-step sequence; here every step of every sequence counts, a fall "
              "ends its sequence. Stones are absolute: a missed stone leaves the next one farther or nearer."),
             f"Character {protocol.character}, from its shipped example set."]
    return BenchOutput("cw-accuracy", "cw", protocol.as_dict(), list(results.values()), summary, rows, notes=notes,
                       variant="" if _planar(protocol.character) else "3d")


def _planar(character: str) -> bool:
    from strider.characters import load_character

    return load_character(character).root == "planar"


def run_gaps(protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    p = protocol.params
    configs = _configs(protocol)
    rng = np.random.default_rng(protocol.seed)
    leads = tuple(float(v) for v in rng.uniform(p.lead[0], p.lead[1], p.walks))
    cells = {f"{c.name}-s{s:g}-w{w:g}": GapCell(protocol.character, w, s, leads, protocol.seed, c)
             for c, s, w in itertools.product(configs, p.spacings, p.widths)}
    with Executor("processes", workers=p.workers) as executor:
        done = run_sweep(executor, gap_cell, cells, checkpoint, progress=progress, description="cw-gaps cells")
    walks = [walk for cell in done.values() for walk in cell["walks"]]
    rows, summary = [], {}
    for c in configs:
        table, beats = {}, 0
        for s in p.spacings:
            shares = []
            for w in p.widths:
                mine = [r for r in walks if r["config"] == c.name and r["spacing"] == s and r["width"] == w]
                ok, total = sum(r["successes"] for r in mine), sum(r["footfalls"] for r in mine)
                share = ok / total if total else 0.0
                seed = TABLE_3_1.get((s, w))
                beats += seed is None or share >= seed
                table[f"s{s:g}-w{w:g}"] = {"share": share, "successes": ok, "footfalls": total,
                                           "falls": sum(r["fell"] for r in mine), "thesis": seed}
                shares.append(f"{share:.2f}" + ("" if seed is None else f" ({seed:g})"))
            rows.append(Row(f"{c.name}: s = {s:g} m, w = {'/'.join(f'{w:g}' for w in p.widths)} m",
                            " / ".join(shares), protocol.anchor("table") if s == p.spacings[0] else "",
                            all(table[f"s{s:g}-w{w:g}"]["share"] >= (TABLE_3_1.get((s, w)) or 0) for w in p.widths)))
        cells = len(p.spacings) * len(p.widths)
        falls = sum(v["falls"] for v in table.values())
        plan = max(r["plan_seconds_max"] for r in walks if r["config"] == c.name)
        rows.append(Row(f"  {c.name}: cells at or above the thesis'", f"{beats}/{cells}; {falls} falls in "
                        f"{cells * p.walks} walks; slowest plan {1000 * plan:.0f} ms"))
        summary[c.name] = {"cells_at_or_above_thesis": beats, "cells": cells, "falls": falls, "table": table,
                           "plan_seconds_max": plan, "config": c.__dict__}
    notes = [(f"Each cell: {p.walks} walks (the thesis: 3), each starting U[{p.lead[0]:g}, {p.lead[1]:g}] m before "
              "the first gap; the thesis' value in brackets. The thesis ran its own 2-D Newton-Euler simulation with "
              "penalty contacts at 0.5 ms; here MuJoCo at 1 ms with planar7.")]
    return BenchOutput("cw-gaps", "cw", protocol.as_dict(), walks, summary, rows, notes=notes)


def run_realtime(protocol, progress: bool = True) -> BenchOutput:
    """P6: walks over the course one after another in this process (one core), each timed."""
    from strider.bench.speed import TickStates, bare_stepping_seconds
    from strider.characters import load_character
    from strider.courses import load_course
    from strider.methods.cw.walker import walk_course
    from strider.sim import CharacterPlacement, Scene

    p = protocol.params
    course = load_course(p.course)
    support = course.support_intervals()
    last_gap = support[-1][0]
    walks = []
    configs = _configs(protocol)
    with progress_bar(len(configs) * p.walks, "cw-realtime walks", unit="walk", enabled=progress) as bar:
        for c in configs:
            model = _model(protocol.character, c.regression)
            for k, x in enumerate(np.linspace(*p.start, p.walks)):
                seed = protocol.seed + k
                args = {"search": c.search, "params": c.planner_params(), "seed": seed,
                        "character": protocol.character, "until": last_gap + PAST_LAST_GAP, "max_steps": p.max_steps,
                        "early_touchdown": c.early_touchdown, "start_x": float(x)}
                walk = walk_course(model, course, **args)
                # The same walk again with every tick's state kept (untimed), for MuJoCo alone to step its motion.
                ticks = TickStates()
                walk_course(model, course, hooks=(ticks,), **args)
                replay = ticks.replay_seconds(walk.sim_seconds)
                times = [0.0] + [f.time for f in walk.footfalls]
                steps = np.diff(times)
                # The first step from standing is slower than the gait's; the bound is the walk's shortest step.
                shortest = float(steps[1:].min()) if len(steps) > 1 else float("nan")
                walks.append({"config": c.name, "seed": seed, "start_x": float(x), "fell": walk.fell,
                              "steps": len(walk.footfalls),
                              "crossed": not walk.fell and bool(walk.footfalls) and walk.footfalls[-1].heel > last_gap,
                              "missed": sum(not f.success for f in walk.footfalls),
                              "last_heel_m": walk.footfalls[-1].heel if walk.footfalls else 0.0,
                              "plan_seconds_max": walk.plan_seconds_max, "shortest_step_seconds": shortest,
                              "sim_seconds": walk.sim_seconds, "wall_seconds": walk.wall_seconds,
                              "replay_wall_seconds": replay,
                              "plan_seconds_total": float(sum(f.plan_seconds for f in walk.footfalls))})
                bar.update()
    sim = sum(w["sim_seconds"] for w in walks)
    bare_wall, _ = bare_stepping_seconds(Scene((CharacterPlacement(load_character(protocol.character)),), course=course), sim)
    rows, summary = [], {}
    for c in configs:
        mine = [w for w in walks if w["config"] == c.name]
        crossed = sum(w["crossed"] for w in mine)
        plan = max(w["plan_seconds_max"] for w in mine)
        shortest = float(np.nanmin([w["shortest_step_seconds"] for w in mine]))
        wall, sim_c = sum(w["wall_seconds"] for w in mine), sum(w["sim_seconds"] for w in mine)
        within = plan < shortest
        touchdown = "" if c.early_touchdown is None else f", early touchdown {c.early_touchdown:g} s"
        if c.preferred_step is not None:
            touchdown += f", footsteps {c.preferred_step:g} m"
        rows.append(Row(f"{c.name} ({c.regression} model, {c.search} planner{touchdown}): walks crossing {p.course}",
                        f"{crossed}/{len(mine)}; {sum(w['fell'] for w in mine)} fall(s), "
                        f"{sum(w['missed'] for w in mine)} missed footfall(s)", protocol.anchor("crossed"),
                        crossed == len(mine)))
        rows.append(Row("  slowest plan call / shortest step", f"{1000 * plan:.0f} ms / {1000 * shortest:.0f} ms",
                        protocol.anchor("plan"), within))
        rows.append(Row("  simulated / wall time (real-time factor)", f"{sim_c:.0f} s / {wall:.0f} s: "
                        f"{sim_c / wall:.1f}x", protocol.anchor("realtime"), sim_c >= wall))
        summary[c.name] = {"crossed": crossed, "walks": len(mine), "plan_seconds_max": plan,
                           "shortest_step_seconds": shortest, "realtime_factor": sim_c / wall,
                           "plan_share_of_wall": sum(w["plan_seconds_total"] for w in mine) / wall}
    wall = sum(w["wall_seconds"] for w in walks)
    replay = sum(w["replay_wall_seconds"] for w in walks)
    overhead, over_standing = (wall - replay) / replay, (wall - bare_wall) / bare_wall
    rows.append(Row("bare MuJoCo stepping of the walks' own motion (each tick's state replayed)",
                    f"{sim / replay:.0f}x real time; the walks' overhead over it {100 * overhead:.0f}%",
                    protocol.anchor("overhead"), protocol.meets("overhead", overhead, at_most=True)))
    rows.append(Row("bare MuJoCo stepping of the same scene from standing, as long",
                    f"{sim / bare_wall:.0f}x real time; the walks' overhead over it {100 * over_standing:.0f}%"))
    summary.update(bare_realtime_factor=sim / bare_wall, replay_realtime_factor=sim / replay, overhead=overhead,
                   overhead_over_standing=over_standing)
    near, far = support[0][1] - p.start[1], support[0][1] - p.start[0]
    notes = [(f"{p.walks} walks per configuration, standing {near:g}-{far:g} m before the first gap of {p.course} "
              "(evenly spaced: a deterministic planner walks the same course the same way from the same place), "
              f"each ending once a heel lands {PAST_LAST_GAP:g} m past the last gap, or at a fall; one process, walks "
              "one after another. "
              "A footfall with under half the foot on support is a miss. The thesis reports real-time planning for "
              "its 3-D humanoid without figures; its simulation ran at 3x real time (Sec. 3.3.3).")]
    return BenchOutput("cw-realtime", "cw", protocol.as_dict(), walks, summary, rows, notes=notes)
