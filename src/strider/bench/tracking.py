"""``strider bench track-speed | track-mocap | track-push | track-slopes | track-extra``: the phase-indexed tracker's
protocols 4, 5, 1, 3 and 6 (Abe 2012; phase-tracking.md Sec. 5). Every episode drives planar14 with torque motors at the spec's
2 ms step, the controller called every step, on one core:

* **speed** (P4 a-d): rectifying the CMU walk (one step, and the stride that is the spec's ~1.2 s window), NLP
  build included; fitting the constraints; sampling the FRI transitions on worker processes and the value
  iteration (the one step of the four not on one core); a 20 s walk, as simulated over wall time, beside the wall time spent
  inside the engine's step in the same run;
* **mocap** (P5): BVH -> import -> rectification -> fit -> a 20 s walk: falls, mean speed against the clip's, RMS
  joint error against the constraints c(theta);
* **push** (P1): after 5 warm-up steps, a 0.1 s push at the torso at 20 phases over one stride, both ways; the
  largest force (bisection) that all 40 survive for 10 s taking 4 more steps, for each FRI policy listed;
* **extra** (P6): the heel-toe VI gait, where the VI policy and the constant FRI each walk the same gait (pass: VI
  takes 50 steps without a fall where the constant FRI falls); and the length and slope edits, each rectified,
  fitted and walked 10 steps, a slope edit on its slope; and the broad jump: jumps before a fall from several
  starts, the heel-off return map with the VI table and the constant FRI, and the source's configuration;
* **slopes** (P3): 2 m level, then a plane at each slope; pass: 5 m along it within 30 s, no fall; for each FRI
  policy listed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from strider.bench.output import BenchOutput, Row, TrialLog
from strider.bench.protocol import Protocol
from strider.parallel import Checkpoint
from strider.progress import progress_bar

TIMESTEP = 0.002            # s (phase-tracking.md Sec. 4)
CHARACTER = "planar14"
COURSE_BEHIND = 2.0         # m of ground behind the walker's start
RUN_OUT = 60.0              # m of level ground after a slope
EDIT_STEP_ALLOWANCE = 2.0   # an edited walk gets this x its steps' rectified time to take them
P1_PUSH_SECONDS = 0.1       # s (phase-tracking.md Sec. 5, protocol 1)
MAX_WARMUP = 30.0           # s: a pushed walk that has not finished its warm-up steps by then has stalled


@dataclass
class Episode:
    fell: bool
    fall_time: float | None
    sim_seconds: float
    wall_seconds: float
    step_wall_seconds: float
    steps: int
    distance: float
    joint_rms: float


def _constraints(track: str):
    from strider.characters import load_character
    from strider.methods.tracking.constraints import fit_constraints
    from strider.methods.tracking.planar_model import PlanarModel
    from strider.methods.tracking.track_file import load_track, resolve_track

    rectified, character = load_track(resolve_track(track))
    return fit_constraints(PlanarModel.from_spec(load_character(character)), rectified)


def _policy(constraints, track: str, policy: str, source: bool = False):
    """The controller parameters and the table (or None) of the FRI policy called ``policy``; ``source``: with
    strider's additions to the controller off (SOURCE_SETTINGS)."""
    from strider.methods.tracking.controller import SOURCE_SETTINGS, FriPolicy, TrackParams
    from strider.methods.tracking.fri_value import policy_table
    from strider.methods.tracking.track_file import resolve_track

    table = policy_table(constraints, resolve_track(track)) if policy == "vi" else None
    params = TrackParams(policy=FriPolicy(kind=policy))
    return (replace(params, **SOURCE_SETTINGS) if source else params), table


SOURCE_LABEL = "the source's controller: none of strider's additions"


def _policy_cases(p) -> list[tuple[str, bool, str]]:
    """(policy, the source's controller?, label) of each row a push or slope protocol runs: every policy in
    strider's configuration, then each of ``p.source_policies`` with strider's additions off."""
    return ([(policy, False, f"{policy} policy") for policy in p.policies]
            + [(policy, True, f"{policy} policy, {SOURCE_LABEL}") for policy in p.source_policies])


def episode(constraints, seconds: float, course=None, push: tuple[float, float] | None = None,
            push_after_steps: int = 0, min_steps_after: int = 0, params=None, table=None,
            start: tuple[float, float] | None = None) -> Episode:
    """One walk of ``seconds``; with ``push`` = (force N along +x, s after the first left heel strike once
    ``push_after_steps`` steps are done), the walk instead ends ``seconds`` after the push, and one that takes fewer
    than ``min_steps_after`` steps from the push on counts as fallen (P1's "4 more steps"). ``start`` = (phase,
    rate) places the walker on its constraints there instead of on the first rectified frame."""
    from strider.methods.tracking.controller import PhaseTrackingController

    world, ch = _planar_world(course, constraints.terrain)
    controller = PhaseTrackingController(constraints, params, table)
    controller.reset(world, ch)
    if start is not None:
        controller.start_at(*start)
    start_x = ch.com_position()[0]
    push_at, pushed_steps = None, 0
    errors = []
    step_wall = 0.0
    wall = time.perf_counter()
    end = seconds if push is None else MAX_WARMUP + seconds
    steps = 0     # the clock, counted: an engine that blows up resets its own time to zero
    while world.time < end - 1e-9 and not controller.has_fallen():
        steps += 1
        if push is not None and push_at is None and controller.stats.steps >= push_after_steps \
                and controller.stance == "left" and controller.stage == 0:
            push_at = world.time + push[1]
            end = push_at + seconds
        if push_at is not None and world.time >= push_at and not pushed_steps:
            world.apply_force(ch.spec.roles.torso, (push[0], 0.0, 0.0), duration=P1_PUSH_SECONDS)
            pushed_steps = controller.stats.steps + 1
        controller.control(world.time)
        errors.append(controller.last_output_error)
        t = time.perf_counter()
        world.step()
        step_wall += time.perf_counter() - t
    wall = time.perf_counter() - wall
    fell = controller.has_fallen()
    if pushed_steps and controller.stats.steps - (pushed_steps - 1) < min_steps_after:
        fell = True
    clock = steps * world.timestep
    return Episode(fell, clock if controller.has_fallen() else None, clock, wall, step_wall,
                   controller.stats.steps, float(ch.com_position()[0] - start_x),
                   float(np.sqrt(np.mean(np.square(errors)))) if errors else 0.0)


def run_speed(protocol: Protocol, progress: bool = True) -> BenchOutput:
    from strider.characters import load_character
    from strider.methods.tracking.constraints import fit_constraints
    from strider.methods.tracking.mocap_import import load_planar_clip
    from strider.methods.tracking.planar_model import PlanarModel
    from strider.methods.tracking.rectify import RectifyParams, rectify

    p = protocol.params
    model = PlanarModel.from_spec(load_character(CHARACTER))
    clip = load_planar_clip(p.clip, CHARACTER)
    rows, trials = [], []
    rectified = {}
    for window in ("step", "stride"):
        start = time.perf_counter()
        result = rectify(model, clip, RectifyParams(window=window))
        seconds = time.perf_counter() - start
        rectified[window] = result
        s = result.solution
        trials.append({"case": f"rectify {window}", "window_seconds": result.period, "wall_seconds": seconds,
                       "solver_seconds": s.seconds, "status": s.status, "worst_violation": s.worst_violation})
        metric = "rectify" if window == "stride" else ""
        rows.append(Row(f"P4a rectify one {window} ({result.period:.2f} s, {len(result.q)} frames at 60 Hz)",
                        f"{seconds:.1f} s wall, build included ({s.status}, worst violation {s.worst_violation:.1e})",
                        protocol.anchor(metric) if metric else "",
                        protocol.meets(metric, seconds, at_most=True) and s.success if metric else None))
    start = time.perf_counter()
    constraints = fit_constraints(model, rectified["step"])
    fit_seconds = time.perf_counter() - start
    trials.append({"case": "fit", "wall_seconds": fit_seconds, "rms_fit": constraints.rms_fit})
    rows.append(Row("P4b fit the constraints to the rectified step",
                    f"{fit_seconds:.2f} s (fit RMS {constraints.rms_fit:.4f} rad)", protocol.anchor("fit"),
                    protocol.meets("fit", fit_seconds, at_most=True)))
    vi = _sample_fri_table(constraints, p.vi_workers)
    trials.append({"case": "vi", "wall_seconds": vi.sample_seconds + vi.solve_seconds,
                   "sample_seconds": vi.sample_seconds, "solve_seconds": vi.solve_seconds, "workers": vi.workers,
                   "transitions": vi.transitions, "feasible": vi.feasible})
    g = vi.grid
    rows.append(Row(f"P4c sample the FRI transitions ({g.phases} x {g.rates} x {g.actions}) on {vi.workers} "
                    f"processes, then value iteration ({g.sweeps} sweeps)",
                    f"{vi.sample_seconds + vi.solve_seconds:.0f} s ({vi.sample_seconds:.0f} s sampling, "
                    f"{vi.solve_seconds:.1f} s VI); {vi.feasible:.0%} of the states have a safe action",
                    protocol.anchor("vi"), protocol.meets("vi", vi.sample_seconds + vi.solve_seconds, at_most=True)))
    walk = episode(_constraints(p.track), p.walk_seconds)
    rt = walk.sim_seconds / walk.wall_seconds
    bare = walk.sim_seconds / walk.step_wall_seconds
    trials.append({"case": "walk", **vars(walk), "realtime_factor": rt, "bare_realtime_factor": bare})
    rows.append(Row(f"P4d walk {walk.sim_seconds:.0f} s of {p.track}, controller every 2 ms step"
                    + (f" (fell at {walk.fall_time:.1f} s)" if walk.fell else ""),
                    f"{rt:.1f}x real time; the engine's step alone {bare:.0f}x; controller "
                    f"{1e6 * (walk.wall_seconds - walk.step_wall_seconds) / (walk.sim_seconds / TIMESTEP):.0f} us "
                    "per step", protocol.anchor("walk"), protocol.meets("walk", rt)))
    notes = [("One process. Bare speed is simulated time over the wall time spent inside the engine's step in the "
             "same walk. The spec's 1.2 s window is the CMU clip's stride (two steps, cyclic); the step window is the "
             "one the shipped walk uses. P4c fits its own constraints to the freshly rectified step, so the "
             "table it times is made the way 'strider track vi' makes one.")]
    return BenchOutput("track-speed", "track", protocol.as_dict(), trials, {"cases": len(trials)}, rows, notes=notes)


def _sample_fri_table(constraints, workers: int):
    from strider.methods.tracking.fri_value import solve_fri_table

    return solve_fri_table(constraints, backend="processes", workers=workers).info


def _rectify_and_fit(clip_path: str, params=None, fit=None):
    """A capture imported, rectified (timed) and fitted (``fit``: FitParams, None for the motion's defaults):
    (clip, rectified, rectify seconds, constraints)."""
    from strider.characters import load_character
    from strider.methods.tracking.constraints import fit_constraints
    from strider.methods.tracking.mocap_import import load_planar_clip
    from strider.methods.tracking.planar_model import PlanarModel
    from strider.methods.tracking.rectify import RectifyParams, rectify

    model = PlanarModel.from_spec(load_character(CHARACTER))
    clip = load_planar_clip(clip_path, CHARACTER)
    start = time.perf_counter()
    rectified = rectify(model, clip, params or RectifyParams())
    seconds = time.perf_counter() - start
    return clip, rectified, seconds, fit_constraints(model, rectified, fit)


def run_mocap(protocol: Protocol, progress: bool = True) -> BenchOutput:
    p = protocol.params
    clip, rectified, _, constraints = _rectify_and_fit(p.clip)
    walk = episode(constraints, p.seconds)
    speed = walk.distance / walk.sim_seconds
    within = abs(speed - clip.speed) <= p.speed_tolerance * clip.speed
    trial = {**vars(walk), "speed": speed, "clip_speed": clip.speed, "rectified_speed": rectified.speed,
             "rms_fit": constraints.rms_fit}
    rows = [Row(f"P5 {p.clip.split('/')[-1]} -> rectified step -> fit -> {p.seconds:.0f} s walk",
                (f"fell at {walk.fall_time:.1f} s; " if walk.fell else "no fall; ")
                + f"{speed:.2f} m/s vs the clip's {clip.speed:.2f} ({100 * (speed / clip.speed - 1):+.0f}%; rectified "
                  f"{rectified.speed:.2f}); RMS joint error vs c(theta) {walk.joint_rms:.3f} rad",
                protocol.anchor("walk"), not walk.fell and within)]
    return BenchOutput("track-mocap", "track", protocol.as_dict(), [trial], {"cases": 1}, rows)


def run_push(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    p = protocol.params
    constraints = _constraints(p.track)
    rows = []
    with progress_bar(None, "track-push episodes", unit="episode", enabled=progress) as bar:
        trials = TrialLog(bar, checkpoint)
        for policy, source, label in _policy_cases(p):
            force = _largest_push(constraints, p, policy, trials, source)
            rows.append(Row(f"P1 largest {P1_PUSH_SECONDS:g} s torso push all {2 * p.phases} phases x directions "
                            f"survive ({p.track}, {label})", f"{force:.0f} N", protocol.anchor("push"),
                            protocol.meets("push", force)))
    return BenchOutput("track-push", "track", protocol.as_dict(), list(trials), {"trials": len(trials)}, rows)


def _largest_push(constraints, p, policy: str, trials: TrialLog, source: bool = False) -> float:
    """Bisection on the force every phase and direction survives; each episode is recorded in ``trials``."""
    params, table = _policy(constraints, p.track, policy, source)
    stride = 2.0 * constraints.period
    phases = [k * stride / p.phases for k in range(p.phases)]

    def pushed(force: float, at: float) -> dict:
        ep = episode(constraints, p.observe_seconds, push=(force, at), push_after_steps=p.warmup_steps,
                     min_steps_after=p.min_steps, params=params, table=table)
        return {"policy": policy, "source_controller": source, "force": force, "phase_seconds": at,
                "fell": ep.fell, "steps": ep.steps}

    def survives(force: float) -> bool:
        for sign in (1.0, -1.0):
            for at in phases:
                trial = trials.record(f"{policy} source={source} force={sign * force!r} at={at!r}", pushed,
                                      sign * force, at)
                if trial["fell"]:
                    return False
        return True

    lo, hi = 0.0, p.high
    if survives(hi):
        lo = hi
    while hi - lo > p.resolution and lo < hi:
        mid = round((lo + hi) / 2 / p.resolution) * p.resolution
        if survives(mid):
            lo = mid
        else:
            hi = mid
    return lo


def run_slopes(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    from strider.courses.library import parse_course
    from strider.datafile import Fields

    p = protocol.params
    constraints = _constraints(p.track)
    rows = []
    cases = _policy_cases(p)
    with progress_bar(len(cases) * len(p.slopes), "track-slopes walks", unit="walk", enabled=progress) as bar:
        trials = TrialLog(bar, checkpoint)
        for policy, source, label in cases:
            params, table = _policy(constraints, p.track, policy, source)
            passed, runs = 0, []
            for slope in p.slopes:
                # the course starts 2 m behind the walker; level ground runs on past anything a 30 s walk reaches
                pieces = [{"flat": {"length": p.level + COURSE_BEHIND}}]
                if slope:
                    pieces += [{"slope": {"length": p.slope_length, "degrees": slope}}]
                pieces += [{"flat": {"length": RUN_OUT}}]
                course = parse_course(Fields({"name": f"slope{slope:+g}", "start": -COURSE_BEHIND, "pieces": pieces},
                                             "track-slopes"))
                runs.append(trials.record(f"{policy} source={source} slope={slope!r}", _slope_walk, constraints, p,
                                          course, (policy, source, slope), params, table))
                passed += runs[-1]["passed"]
            rows.append(Row(f"P3 slopes {', '.join(f'{s:+g}' for s in p.slopes)} deg: {p.progress:g} m along in "
                            f"{p.seconds:g} s, no fall ({label})",
                            f"{passed}/{len(p.slopes)} pass; " + ", ".join(
                                f"{t['slope_deg']:+g}: " + ("fell" if t["fell"] else f"{t['progress_on_slope']:.1f} m")
                                for t in runs),
                            protocol.anchor("slopes"), passed == len(p.slopes)))
    return BenchOutput("track-slopes", "track", protocol.as_dict(), list(trials), {"trials": len(trials)}, rows)


def _slope_walk(constraints, p, course, case: tuple[str, bool, float], params, table) -> dict:
    """One walk of P3 on ``course``: its record, for ``case`` = (policy, the source's controller?, slope)."""
    ep = episode(constraints, p.seconds, course=course, params=params, table=table)
    along = ep.distance - p.level
    policy, source, slope = case
    return {"policy": policy, "source_controller": source, "slope_deg": slope, **vars(ep),
            "progress_on_slope": along, "passed": not ep.fell and along >= p.progress}


def run_extra(protocol: Protocol, progress: bool = True) -> BenchOutput:
    with progress_bar(None, "track-extra walks", unit="walk", enabled=progress) as bar:
        return _extra(protocol, TrialLog(bar))


def _extra(protocol: Protocol, trials: TrialLog) -> BenchOutput:
    p = protocol.params
    constraints = _constraints(p.track)
    for policy in (p.policy, p.baseline):
        params, table = _policy(constraints, p.track, policy)
        ep = episode(constraints, p.seconds, params=params, table=table)
        trials.append({"policy": policy, **vars(ep), "walked": not ep.fell and ep.steps >= p.steps})

    def said(t: dict) -> str:
        fate = f"fell at {t['fall_time']:.1f} s" if t["fell"] else "no fall"
        return f"{t['policy']}: {t['steps']} steps in {t['sim_seconds']:.0f} s, {fate}"

    ours, baseline = trials
    rows = [Row(f"P6 {p.policy} policy on the heel-toe gait ({p.track}): {p.steps} steps where the {p.baseline} "
                f"FRI falls", f"{said(ours)}; {said(baseline)}", protocol.anchor("heel-toe"),
                ours["walked"] and baseline["fell"])]
    rows += [_edit(p, trials, protocol.anchor("edits"), length=length) for length in p.lengths]
    rows += [_edit(p, trials, protocol.anchor("edits"), slope=slope, source=source) for slope in p.slopes
             for source in (False, True)]
    jump_rows, return_map_figure = _jump_rows(p, protocol, trials)
    return BenchOutput("track-extra", "track", protocol.as_dict(), list(trials), {"trials": len(trials)}, rows + jump_rows,
                       plots={"return-map": return_map_figure})


RETURN_MAP_WINDOW = 0.2   # the return map's slope is fitted over starts within this share of the rectified rate


def _jump_rows(p, protocol: Protocol, trials: list):
    """P6's jump: jumps before a fall from the rectified landing and from starts in the air, the heel-off return map
    with the VI table and with the constant FRI (its rows and a plot, as the source's Fig. 5-3), and the source's
    configuration beside strider's."""
    from strider.bench.plots import lines
    from strider.methods.tracking.controller import FriPolicy, TrackParams
    from strider.methods.tracking.fri_value import table_range

    constraints = _constraints(p.jump)
    params, table = _policy(constraints, p.jump, "vi")
    flight = constraints.stages[-1].theta
    starts = [None] + [(theta, share * constraints.reference_rate_at(theta))
                       for where in p.jump_flight for theta in [flight[0] + where * (flight[1] - flight[0])]
                       for share in p.jump_rates]
    runs = []
    for start in starts:
        ep = episode(constraints, p.jump_seconds, params=params, table=table, start=start)
        runs.append(ep)
        trials.append({"jump_start": start, **vars(ep)})
    counts = [ep.steps for ep in runs]
    falls = sum(ep.fell for ep in runs)
    rows = [Row(f"P6 jump ({p.jump}, VI table): jumps in {p.jump_seconds:g} s from {len(runs)} starts (the "
                f"rectified landing; {len(starts) - 1} in the air)",
                f"{', '.join(map(str, counts))} jumps (median {np.median(counts):g}); {falls} of {len(runs)} fell",
                protocol.anchor("jumps"), min(counts) >= p.jumps and not falls)]
    theta_e = table_range(constraints)[1]
    desired = constraints.reference_rate_at(theta_e)
    starts = [share * desired for share in p.return_map]
    series = {"identity": (starts, starts)}
    for policy, policy_table in (("vi", table), ("constant", None)):
        points = return_map(constraints, TrackParams(policy=FriPolicy(kind=policy)), policy_table, theta_e, starts)
        slope, fixed = _return_slope(points, desired)
        landed = [(a, b) for a, b in points if b is not None]
        series[f"{policy} FRI"] = ([a for a, _ in landed], [b for _, b in landed])
        trials.append({"return_map_policy": policy, "points": points, "slope": slope, "fixed_point": fixed})
        shown = ", ".join(f"{a:.2f}->{'fell' if b is None else f'{b:.2f}'}" for a, b in points)
        rows.append(Row(f"P6 jump return map, {policy} FRI: phase rate at heel-off, one jump to the next (m/s; "
                        f"rectified {desired:.2f})",
                        f"slope {slope:+.2f} near {fixed:.2f} m/s; {shown}" if slope is not None else
                        f"no slope (too few jumps near the rectified rate); {shown}",
                        protocol.anchor("return-map"), policy == "vi" and slope is not None and abs(slope) < 1.0))
    rows.append(_source_jump(p, protocol, trials))
    figure = lines(series, f"{p.jump}: phase rate at heel-off, one jump to the next", "this jump (m/s)",
                   "the next (m/s)")
    return rows, figure


def return_map(constraints, params, table, theta_e: float, rates: list[float]) -> list[tuple[float, float | None]]:
    """From heel-off (phase ``theta_e``) at each rate, one jump on: the phase rate at the next heel-off, or None if
    the jumper fell first (Abe 2012, Fig. 5-3)."""
    from strider.methods.tracking.controller import PhaseTrackingController

    world, ch = _planar_world(terrain=constraints.terrain)
    controller = PhaseTrackingController(constraints, params, table)
    controller.reset(world, ch)
    start = world.snapshot()
    out = []
    for rate in rates:
        world.restore(start)
        controller.start_at(theta_e, rate)
        jumps, after, began = controller.stats.steps, None, world.time
        while world.time < began + MAX_WARMUP and not controller.has_fallen():
            controller.control(world.time)
            landed = controller.stats.steps > jumps
            if landed and controller.stage_now.stance != constraints.stages[0].stance:
                after = controller.last_rate     # the first control step past the next heel-off
                break
            world.step()
        out.append((float(rate), None if after is None else float(after)))
    return out


def _return_slope(points: list, desired: float) -> tuple[float | None, float | None]:
    """The slope of a least-squares line through the return map's points within RETURN_MAP_WINDOW of the
    rectified rate, and where that line crosses the identity (the fixed point)."""
    near = [(a, b) for a, b in points if b is not None and abs(a - desired) <= RETURN_MAP_WINDOW * desired + 1e-9]
    if len(near) < 3:
        return None, None
    a, b = np.array(near).T
    slope, offset = np.polyfit(a, b, 1)
    fixed = offset / (1.0 - slope) if abs(1.0 - slope) > 1e-9 else float("nan")
    return float(slope), float(fixed)


def _source_jump(p, protocol: Protocol, trials: list) -> Row:
    """The jump as the source makes it: its own metric in the rectifier, (3.9) in the fit, the push-off following
    the rectified ground force, strider's controller additions off, and a VI table of its own."""
    from dataclasses import replace as changed

    from strider.methods.tracking.constraints import JUMP_FIT
    from strider.methods.tracking.controller import SOURCE_SETTINGS, FriPolicy, TrackParams
    from strider.methods.tracking.fri_value import FriGrid, solve_fri_table
    from strider.methods.tracking.rectify import RectifyParams, RectifyWeights

    _, _, seconds, constraints = _rectify_and_fit(p.jump_clip, RectifyParams(window="jump", weights=RectifyWeights()),
                                                  changed(JUMP_FIT, impact_consistency=True))
    source = TrackParams(takeoff_force=True, **SOURCE_SETTINGS)
    params = changed(source, policy=FriPolicy(kind="vi"))
    phases, rates, actions = (int(v) for v in p.source_grid)
    table = solve_fri_table(constraints, FriGrid(phases=phases, rates=rates, actions=actions), source, workers=2)
    ep = episode(constraints, p.jump_seconds, params=params, table=table)
    trials.append({"source_jump": True, "rectify_seconds": seconds, **vars(ep)})
    fate = f"fell at {ep.fall_time:.1f} s" if ep.fell else "no fall"
    return Row(f"P6 jump, the source's configuration (its metric, impact consistency, push-off force followed, no "
               f"contact damping, a {phases} x {rates} x {actions} VI table)", f"{ep.steps} jumps in {p.jump_seconds:g} s, {fate}",
               protocol.anchor("jumps"), ep.steps >= p.jumps and not ep.fell)


def _edit(p, trials: list, anchor: str, length: float = 1.0, slope: float = 0.0, source: bool = False) -> Row:
    """One edit of the capture's step, its length to ``length`` x or its ground to ``slope`` degrees: rectify, fit,
    walk ``p.edit_steps`` steps (on the edit's slope); ``source``: with the source's rectifier (its metric, no
    centre-of-pressure margin) in place of strider's slope settings."""
    from strider.methods.tracking.rectify import SOURCE_RECTIFIER, RectifyParams

    settings = SOURCE_RECTIFIER if source else {}
    _, rectified, seconds, constraints = _rectify_and_fit(p.clip, RectifyParams(length=length, slope=slope,
                                                                                **settings))
    s = rectified.solution
    walk = episode(constraints, p.edit_steps * EDIT_STEP_ALLOWANCE * constraints.period)
    walked = s.success and not walk.fell and walk.steps >= p.edit_steps
    trials.append({"edit_length": length, "edit_slope_deg": slope, "source_rectifier": source,
                   "rectify_seconds": seconds, "status": s.status,
                   "worst_violation": s.worst_violation, "step_length": rectified.shift,
                   "rectified_speed": rectified.speed, **vars(walk), "walked": walked})
    fate = f"fell at {walk.fall_time:.2f} s" if walk.fell else "no fall"
    name = f"slope edit {slope:+g} deg" if slope else f"length edit x{length:g}"
    if source:
        name += ", the source's rectifier (its metric, no centre-of-pressure margin)"
    return Row(f"P6 {name}: rectify, fit, walk {p.edit_steps} steps",
               f"rectified in {seconds:.1f} s ({s.status}), step {rectified.shift:.2f} m at {rectified.speed:.2f} m/s; "
               f"walked {walk.steps} steps in {walk.sim_seconds:.1f} s, {fate}", anchor, walked)


def run_baseline(protocol: Protocol, progress: bool = True, checkpoint: Checkpoint | None = None) -> BenchOutput:
    p = protocol.params
    with progress_bar(None, "track-baseline pushes", unit="push", enabled=progress) as bar:
        trials = TrialLog(bar, checkpoint)
        rows, run, notes = _baseline_rows(protocol, p.track, 0, "the planar14 walker", trials)
        if p.point_foot_track:
            more_rows, more_run, more_notes = _baseline_rows(protocol, p.point_foot_track, p.point_foot_warmup,
                                                             "the 5-link walker", trials)
            rows += more_rows
            run |= {f"point_foot_{key}": value for key, value in more_run.items()}
            notes += more_notes
    notes.append("Each interval end is the last force of a scan outward from 0 N in resolution steps before the first "
                 "failure (the spec bisects; the clipped walker's outcome is not monotone in the force, so a "
                 "bisection could step over a failure).")
    return BenchOutput("track-baseline", "track", protocol.as_dict(), list(trials), {"trials": len(trials), **run}, rows,
                       notes=notes)


def _baseline_rows(protocol: Protocol, track: str, warmup_steps: int, walker: str, trials: TrialLog):
    """Protocol 2 on one walker: its rows, run figures and notes; its trials go to ``trials``."""
    from strider.methods.tracking.controller import SOURCE_SETTINGS, TrackParams
    from strider.methods.tracking.nqr import NqrParams, nqr_gains, record_reference

    p = protocol.params
    constraints = _constraints(track)
    character = _track_character(track)
    world, hero = _planar_world(character=character)
    clamped = TrackParams(max_torque=p.max_torque)
    source = replace(clamped, **SOURCE_SETTINGS)
    start = time.perf_counter()
    reference = record_reference(world, hero, constraints, p.steps, source, warmup_steps)
    nqr = NqrParams(max_torque=p.max_torque)
    gains = nqr_gains(world, reference, nqr)
    gain_seconds = time.perf_counter() - start
    begin, end = reference.step_span(p.push_step)
    push_index = (begin + end) // 2
    clipped = f"torques clipped at {p.max_torque:g} N m, none of strider's additions (source)"
    settings = {"clip": (clipped, source),
                "qp": (f"re-solved within {p.max_torque:g} N m (strider)", replace(clamped, clamp_aware=True)),
                "none": ("no clamp (strider)", TrackParams())}
    cases = [(f"{walker}, phase-indexed, {settings[c][0]}", c == "clip",
              _phase_case(constraints, settings[c][1], reference)) for c in p.clamps]
    positions = {"stance": "position from the stance foot (the spec's pinned stance point)",
                 "world": "position in the world (the reference's own)"}
    cases += [(f"{walker}, NQR, {positions[where]}, torques clipped at {p.max_torque:g} N m", None,
               _nqr_case(reference, gains, replace(nqr, stance_anchored=where == "stance")))
              for where in p.nqr_positions]
    rows = []
    for label, source_row, make in cases:
        low, high = _survivable_interval(make, push_index, p, trials, label, character)
        if source_row is None:      # the NQR
            met = p.nqr_low[0] <= low <= p.nqr_low[1] and p.nqr_high[0] <= high <= p.nqr_high[1]
            anchor = protocol.anchor("nqr")
        else:
            met = low <= p.contain[0] and high >= p.contain[1]
            anchor = protocol.anchor("ours")
        rows.append(Row(f"P2 survivable push interval, {label}: {p.push_seconds:g} s at mid step {p.push_step}, "
                        f"no fall to the end of step {p.steps}", f"[{low:.0f}, {high:.0f}] N", anchor, met))
    durations = np.diff((0, *reference.step_ends)) * reference.timestep
    run = {"reference_steps": p.steps, "reference_seconds": reference.length * reference.timestep,
           "reference_warmup_steps": warmup_steps, "reference_step_seconds": durations.tolist(),
           "push_time": push_index * reference.timestep, "gain_seconds": gain_seconds,
           "reference_clamped_share": float(np.mean(np.abs(reference.torques) >= p.max_torque))}
    settled = (f" after {warmup_steps} steps to settle, its steps {durations.min():.3f}-{durations.max():.3f} s long"
               if warmup_steps else "")
    notes = [(f"{walker[0].upper()}{walker[1:]} ({character}) walks the shipped {track} motion. The NQR's reference "
              f"is the clipped phase-indexed walk itself, in the source's configuration ({reference.length} control "
              f"steps{settled}); its gains took {gain_seconds:.1f} s (recording, linearizing every step, the Riccati "
              "sweeps).")]
    return rows, run, notes


def _track_character(track: str) -> str:
    """The character a rectified motion was made for."""
    from strider.methods.tracking.track_file import load_track, resolve_track

    return load_track(resolve_track(track))[1]


def _planar_world(course=None, terrain=None, character: str = CHARACTER):
    """The protocols' world: ``character`` (planar14) on torque motors at the spec's step, on flat ground,
    ``terrain`` or ``course``."""
    from strider.characters import load_character
    from strider.sim import CharacterPlacement, Scene, Terrain, World

    spec = load_character(character).with_actuation("torque")
    world = World(Scene((CharacterPlacement(spec),), timestep=TIMESTEP, course=course, terrain=terrain or Terrain()))
    return world, world.character()


def _phase_case(constraints, params, reference):
    """A maker of a fresh controller, started where ``reference`` starts, and its pass test: the phase-indexed
    walker passes once it has taken the reference's steps."""
    from strider.control.controller import AS_IS
    from strider.methods.tracking.controller import PhaseTrackingController

    steps = reference.warmup_steps + len(reference.step_ends)

    def make():
        controller = PhaseTrackingController(constraints, params)

        def start(world, character) -> None:
            if not reference.warmup_steps:
                controller.reset(world, character)
                return
            world.restore(reference.states[0])
            controller.reset(world, character, AS_IS)
            controller.set_phase_state(reference.phase_state)
        return controller, lambda: controller.stats.steps >= steps, start
    return make


def _nqr_case(reference, gains, params):
    """... and the NQR tracker passes once it reaches its reference's end."""
    from strider.methods.tracking.nqr import NqrController

    def make():
        controller = NqrController(reference, gains, params)
        return controller, lambda: controller.finished, controller.reset
    return make


def _survivable_interval(make, push_index: int, p, trials: TrialLog, label: str, character: str
                         ) -> tuple[float, float]:
    """[F-, F+]: from 0 N outward each way in ``p.resolution`` steps, the last force before the first failure."""

    def pushed(force: float) -> dict:
        survived, seconds = _pushed_trial(make, force, push_index, p.push_seconds, character)
        return {"controller": label, "force": force, "survived": survived, "sim_seconds": seconds}

    ends = []
    for sign in (-1.0, 1.0):
        last = 0.0
        for k in range(1, round(p.high / p.resolution) + 1):
            force = sign * k * p.resolution
            if not trials.record(f"{label} force={force!r}", pushed, force)["survived"]:
                break
            last = force
        ends.append(last)
    return ends[0], ends[1]


def _pushed_trial(make, force: float, push_index: int, push_seconds: float, character: str) -> tuple[bool, float]:
    world, hero = _planar_world(character=character)
    controller, done, start = make()
    start(world, hero)
    began, k = world.time, 0
    while not done() and not controller.has_fallen() and world.time - began < MAX_WARMUP:
        if k == push_index:
            world.apply_force(hero.spec.roles.torso, (force, 0.0, 0.0), duration=push_seconds)
        controller.control(world.time)
        world.step()
        k += 1
    return done() and not controller.has_fallen(), k * world.timestep
