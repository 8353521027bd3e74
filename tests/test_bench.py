"""`strider bench`: protocols, terrain, the shared fall judge, every bench end to end on tiny protocols,
determinism across backends, resuming from a checkpoint, bad input, and the report."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from strider.bench.execution import BenchRun, RunOptions, make_executor
from strider.bench.output import without_timings
from strider.bench.protocol import BENCHES, load_protocol
from strider.bench.push import grid_trials
from strider.bench.trial import Trial, run_trial
from strider.cli.main import main
from strider.errors import ConfigError
from strider.runner import Push
from strider.sim import CharacterPlacement, Scene, Terrain, World

SRC = Path(__file__).resolve().parents[1] / "src"

TINY = {
    "push": """bench: push
seed: 0
anchors: [{metric: grid_survival, value: "100% at 600 N", source: test}]
params: {speed: 0.6, period: 0.5, settle_seconds: 1.5, force: 200, duration: 0.1, directions: 2, phases: 2,
         observe_seconds: 2.5, recovery_seconds: 5, speed_tolerance: 0.1, find_max_low: 100, find_max_high: 1300,
         find_max_resolution: 400}
""",
    "envelope": """bench: envelope
params: {speeds: [0.0, 0.6], periods: [0.5], max_step_length: 0.9, seconds: 3, steady_from: 1.5,
         speed_tolerance: 0.1}
""",
    "turning": """bench: turning
params: {speeds: [0.6], period: 0.5, lead_in: 2, interval: 5.5, jumps_deg: [180], turn_rate: 2.0,
         turn_rate_tolerance: 0.2, facing_tolerance_deg: 5.0, settle_periods: 2}
""",
    "bodies": """bench: bodies
params: {bodies: [{name: small, character: bipv3, scale: 0.75}], gain_rules: [mass, similarity], speeds: [0.6],
         period: 0.5, walk_seconds: 5, steady_from: 3, speed_tolerance: 0.1, push_force: 300, push_protocol: PUSH}
""",
    "terrain": """bench: terrain
params:
  speed: 0.6
  period: 0.5
  seconds: 4
  feature_at: 0.6
  finish_past: 0.5
  features:
    - {name: "step up 5 cm", kind: step_up, value: 0.05}
    - {name: bumps, kind: bumps, value: 0.04, seeds: [1]}
    - {name: "course step-up-0.1", course: step-up-0.1, finish_x: 0.5}
""",
    "speed": """bench: speed
anchors: [{metric: realtime_factor, value: ">= 20x", source: test, target: 20}]
params: {speed: 0.6, period: 0.5, seconds: 2, profile_seconds: 1, scaling: true, scaling_directions: 2,
         scaling_phases: 1, scaling_ray: false, scaling_settle_seconds: 0.5, scaling_observe_seconds: 0.5,
         scaling_bare_tasks: 2, scaling_bare_seconds: 0.5, timing_repeats: 2}
""",
    "soak": """bench: soak
params: {minutes: 0.2, segments: 2, speed_range: [0.2, 0.8], turn_rate_range: [-0.3, 0.3], period: 0.5,
         command_interval: [2, 3], push_force_max: 150, push_interval: [2, 4], push_duration: 0.1, memory_every: 2,
         drift_window_minutes: 0.05, settle_after_change: 1}
""",
}


def tiny(tmp_path: Path, bench: str, text: str | None = None) -> Path:
    path = tmp_path / f"{bench}.yaml"
    path.write_text(text if text is not None else TINY[bench])
    return path


def bench(tmp_path: Path, *args: str) -> int:
    return main(["bench", *args, "--out", str(tmp_path / "results"), "--no-progress"])


def result_file(tmp_path: Path, stem: str) -> dict:
    (path,) = (tmp_path / "results").glob(f"{stem}-gbwc-*.json")
    return json.loads(path.read_text())


# --- protocols ----------------------------------------------------------------------------------
def test_every_shipped_protocol_loads_and_cites_its_anchors():
    for name in BENCHES:
        protocol = load_protocol(name)
        assert protocol.bench == name and protocol.anchors
        assert protocol.source == f"strider/bench/protocols/{name}.yaml"
    push = load_protocol("push").params
    assert (push.force, push.directions, push.phases, push.duration) == (600, 12, 8, 0.1)


def test_dynamics_bench_times_every_accessor_beside_a_step(tmp_path):
    path = tiny(tmp_path, "dynamics", "bench: dynamics\nparams: {settle_seconds: 0.2, rounds: 2, calls: 5}\n")
    assert main(["bench", "dynamics", "--protocol", str(path), "--out", str(tmp_path / "results")]) == 0
    (result,) = (tmp_path / "results").glob("dynamics-bipv3-*.json")
    figures = json.loads(result.read_text())["summary"]["timings"]
    assert figures["contacts"] >= 4 and figures["step_seconds"] > 0
    accessors = figures["accessors"]
    assert {"mass matrix (dense)", "inverse dynamics", "contact list (world-frame forces)"} <= set(accessors)
    assert all(a["seconds"] > 0 and a["step_ratio"] > 0 for a in accessors.values())
    assert (tmp_path / "results" / result.name.replace(".json", ".md")).exists()
    assert main(["bench", "dynamics", "--character", "nobody", "--out", str(tmp_path / "results")]) == 2
    assert load_protocol("dynamics").params.rounds >= 1


@pytest.mark.parametrize("text, field", [
    ("bench: dynamics\nparams: {settle_seconds: 0.5, rounds: 0, calls: 10}\n", "params.rounds"),
    ("bench: push\nparams: {speed: fast}\n", "params.speed"),
    ("bench: envelope\nparams: {speeds: [], periods: [0.5]}\n", "params.speeds"),
    ("bench: terrain\nparams: {features: [{name: x, kind: lava}]}\n", "params.features[0].kind"),
    ("bench: terrain\nparams: {features: [{name: x, kind: course}]}\n", "params.features[0].course"),
    ("bench: terrain\nparams: {features: [{name: x, course: flat}]}\n", "params.features[0].finish_x"),
    ("bench: terrain\nparams: {stop_at_finish: maybe, features: [{name: x, kind: gap, value: 0.2}]}\n",
     "params.stop_at_finish"),
    ("bench: soak\nparams: {minutes: 60, colour: red}\n", "params.colour"),
    # an interval of 0 between command changes or pushes: the script's loop would never end
    (TINY["soak"].replace("command_interval: [2, 3]", "command_interval: [0, 0]"), "params.command_interval"),
    (TINY["soak"].replace("push_interval: [2, 4]", "push_interval: [-1, 4]"), "params.push_interval"),
    (("bench: turning\nparams: {speeds: [0.6], period: 0.5, lead_in: 2, interval: 3, jumps_deg: [180], turn_rate: 2,"
     " turn_rate_tolerance: 0.2, facing_tolerance_deg: 5, settle_periods: 2}\n"), "params.interval"),
    (("bench: turning\nparams: {speeds: [0.6], period: 0.5, lead_in: 2, interval: 6, jumps_deg: [90], turn_rate: 2,"
     " turn_rate_tolerance: 0.2, facing_tolerance_deg: 5}\n"), "params.settle_periods"),
    ("bench: speed\n", "params"),
    ("bench: track-extra\nparams: {track: cmu-walk, steps: 50, seconds: 45, policy: vi, baseline: clock}\n",
     "params.baseline"),
    (("bench: track-slopes\nparams: {track: cmu-walk, slopes: [3], level: 2, slope_length: 12, progress: 5,"
      " seconds: 30, policies: []}\n"), "params.policies"),
    (("bench: track-baseline\nparams: {track: cmu-walk, steps: 6, push_step: 6, push_seconds: 0.1, resolution: 5,"
      " high: 600, max_torque: 300, clamps: [clip], contain: [-500, 400], nqr_low: [-100, -25], nqr_high: [5, 20]}\n"),
     "params.push_step"),
    (("bench: track-baseline\nparams: {track: cmu-walk, steps: 6, push_step: 2, push_seconds: 0.1, resolution: 5,"
      " high: 600, max_torque: 300, clamps: [clip, soft], contain: [-500, 400], nqr_low: [-100, -25],"
      " nqr_high: [5, 20]}\n"), "params.clamps"),
    (("bench: track-baseline\nparams: {track: cmu-walk, steps: 6, push_step: 2, push_seconds: 0.1, resolution: 5,"
      " high: 600, max_torque: 300, clamps: [qp], contain: [400, -500], nqr_low: [-100, -25], nqr_high: [5, 20]}\n"),
     "params.contain"),
    (("bench: track-baseline\nparams: {track: cmu-walk, steps: 6, push_step: 2, push_seconds: 0.1, resolution: 5,"
      " high: 600, max_torque: 300, clamps: [qp], contain: [-500, 400], nqr_low: [-100, -25], nqr_high: [5, 20],"
      " nqr_positions: [hip]}\n"), "params.nqr_positions"),
    (("bench: cw-realtime\nparams: {course: gaps-3d, walks: 2, start: [0, -1], max_steps: 10,"
      " configs: {a: {regression: knn}}}\n"), "params.start"),
    (("bench: cw-realtime\nparams: {course: gaps-3d, walks: 2, start: [-1, 0], max_steps: 10,"
      " configs: {a: {regression: knn, early_touchdown: -0.2}}}\n"), "params.configs.a.early_touchdown"),
    (("bench: cw-realtime\nparams: {course: gaps-3d, walks: 2, start: [-1, 0], max_steps: 10,"
      " configs: {a: {regression: knn, preferred_step: 0}}}\n"), "params.configs.a.preferred_step"),
])
def test_malformed_protocols_name_the_file_and_field(tmp_path, text, field):
    bench_name = text.split()[1]
    path = tiny(tmp_path, bench_name, text)
    with pytest.raises(ConfigError) as info:
        load_protocol(bench_name, path)
    assert info.value.source == str(path) and info.value.field == field


def test_bad_input_is_one_line_and_exit_2_before_anything_runs(tmp_path, capsys):
    push = tiny(tmp_path, "push")
    broken = tiny(tmp_path, "broken", "bench: push\nparams: [1, 2\n")
    cases = [
        (["push", "--controller", "gbwc,nosuch", "--protocol", str(push)], "unknown controller 'nosuch'"),
        (["push", "--workers", "0", "--protocol", str(push)], "--workers must be a whole number >= 1, got 0"),
        (["push", "--directions", "0", "--protocol", str(push)], "--directions must be a whole number >= 1"),
        (["push", "--protocol", str(broken)], "invalid YAML"),
        (["envelope", "--protocol", str(push)], "this is a 'push' protocol, not 'envelope'"),
    ]
    for args, message in cases:
        assert bench(tmp_path, *args) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("strider: error:") and message in err and "\n" not in err
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())


def test_backend_ray_without_ray_says_how_to_install_it(tmp_path):
    code = ("import sys; sys.modules['ray'] = None\n"
            "from strider.cli.main import main\n"
            f"sys.exit(main(['bench', 'push', '--backend', 'ray', '--protocol', {str(tiny(tmp_path, 'push'))!r}, "
            f"'--out', {str(tmp_path / 'out')!r}]))\n")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(SRC)},
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 2
    assert "pip install 'strider[ray]'" in out.stderr and len(out.stderr.strip().splitlines()) == 1


# --- turning ------------------------------------------------------------------------------------
def test_turning_bench_judges_each_heading_jump_from_the_pelvis_yaw(tmp_path):
    assert bench(tmp_path, "turning", "--protocol", str(tiny(tmp_path, "turning"))) == 0
    result = result_file(tmp_path, "turning")
    (jump,) = result["trials"][0]["jumps"]
    assert jump["completed"] and jump["passed"] and result["summary"]["passed"] == 1
    assert abs(jump["peak_rate"] - 2.0) <= 0.2 and jump["facing_error_deg"] <= 5.0
    assert abs(abs(jump["target_deg"]) - 180.0) < 1e-9
    # The same walk judged against a turn rate it does not have fails, on the same measured peak.
    slow = TINY["turning"].replace("turn_rate: 2.0", "turn_rate: 1.0")
    assert bench(tmp_path / "slow", "turning", "--protocol", str(tiny(tmp_path, "turning", slow))) == 0
    (judged,) = result_file(tmp_path / "slow", "turning")["trials"][0]["jumps"]
    assert not judged["passed"] and judged["peak_rate"] == jump["peak_rate"]


# --- bodies -------------------------------------------------------------------------------------
def test_bodies_bench_walks_and_pushes_each_body_under_each_gain_rule(tmp_path):
    """The 0.75x humanoid under the source's gain rule (kp x M'/M) falls within seconds of walking, as
    CharacterSpec.with_gains_for_mass records; under dynamic similarity it walks and takes the pushes."""
    push = tiny(tmp_path, "push")
    path = tiny(tmp_path, "bodies", TINY["bodies"].replace("PUSH", str(push)))
    assert bench(tmp_path, "bodies", "--protocol", str(path)) == 0
    result = result_file(tmp_path, "bodies")
    summary = result["summary"]
    assert summary["small/mass"]["walks_passed"] == 0 and not summary["small/mass"]["passed"]
    assert summary["small/similarity"]["walks_passed"] == 1
    walks = [t for t in result["trials"] if t["kind"] == "walk"]
    pushes = [t for t in result["trials"] if t["kind"] == "push"]
    assert {t["gain_rule"] for t in walks} == {"mass", "similarity"} and len(pushes) == 2 * 4
    assert all(t["body"] == "small" and t["force"] == 300 for t in pushes)


# --- terrain ------------------------------------------------------------------------------------
def test_terrain_features_are_courses_with_the_heights_they_describe():
    from strider.bench.protocol import TerrainFeature
    from strider.bench.terrain import course_for

    step = course_for(TerrainFeature("s", "step_up", 0.05), at=2.0, seed=0)
    assert step.height(1.9, 0.0) == 0.0 and step.height(2.1, 0.0) == pytest.approx(0.05)
    stairs = course_for(TerrainFeature("s", "stairs_down", 0.15, count=5, tread=0.3), at=2.0, seed=0)
    assert stairs.height(1.9, 0.0) == 0.0 and stairs.height(2.0 + 5 * 0.3 + 0.1, 0.0) == pytest.approx(-0.75)
    slope = course_for(TerrainFeature("s", "slope", 10.0), at=2.0, seed=0)
    assert slope.height(1.0, 0.0) - slope.height(0.0, 0.0) == pytest.approx(math.tan(math.radians(10.0)))
    bumps = [course_for(TerrainFeature("b", "bumps", 0.04), at=2.0, seed=s) for s in (0, 1)]
    assert bumps[0].height(1.9, 0.0) == 0.0
    assert not np.array_equal(bumps[0].heightfields[0].grid, bumps[1].heightfields[0].grid)


def test_a_trial_with_a_finish_line_ends_there_and_one_without_walks_its_time():
    whole = run_trial(Trial(controller="gbwc", seconds=4.0), None)
    stopped = run_trial(Trial(controller="gbwc", seconds=4.0, stop_past=1.0), None)
    assert not whole["fell"] and whole["sim_seconds"] == pytest.approx(4.0) and whole["distance_m"] > 1.5
    assert 1.0 <= stopped["distance_m"] < 1.1
    assert stopped["sim_seconds"] < 0.8 * whole["sim_seconds"] and not stopped["fell"]


def test_stepped_terrain_and_stairs_have_the_heights_they_describe(bipv3):
    up = World(Scene((CharacterPlacement(bipv3),), terrain=Terrain("steps", steps=((1.0, 0.1), (1.3, 0.2)))))
    assert [round(up.ground_height(x, 0.0), 6) for x in (0.5, 1.1, 1.4, 20.0)] == [0.0, 0.1, 0.2, 0.2]
    down = World(Scene((CharacterPlacement(bipv3),), terrain=Terrain("steps", steps=((-20.0, 0.15), (1.0, 0.0)))))
    flat = World(Scene((CharacterPlacement(bipv3),)))
    root = bipv3.roles.root
    # A character starting on a raised platform stands on it, not inside it.
    lift = down.character().body_position(root)[2] - flat.character().body_position(root)[2]
    assert lift == pytest.approx(0.15, abs=1e-9)
    assert down.ground_height(2.0, 0.0) == pytest.approx(0.0, abs=1e-9)


def test_bump_fields_are_seeded_bounded_and_start_level():
    a = Terrain("bumps", bump_height=0.04, bump_seed=1).bump_grid()
    assert (Terrain("bumps", bump_height=0.04, bump_seed=1).bump_grid() == a).all()
    assert not (Terrain("bumps", bump_height=0.04, bump_seed=2).bump_grid() == a).all()
    assert 0.03 < a.max() <= 0.04 and a.min() == 0.0
    assert (a[:, 0] < 1e-4).all()   # no step where the field meets the level ground


def test_bumps_are_in_the_world_where_the_grid_says(bipv3):
    terrain = Terrain("bumps", bump_height=0.04, bump_seed=1, bump_start=1.0)
    world = World(Scene((CharacterPlacement(bipv3),), terrain=terrain))
    grid = terrain.bump_grid()
    row, col = divmod(int(grid.argmax()), grid.shape[1])
    from strider.sim.scene import BUMP_GRID, TERRAIN_HALF_WIDTH

    x, y = 1.0 + col * BUMP_GRID, -TERRAIN_HALF_WIDTH + row * BUMP_GRID
    assert world.ground_height(x, y) == pytest.approx(grid.max(), abs=1e-3)
    assert world.ground_height(0.5, 0.0) == 0.0


# --- trials and the shared fall judge ----------------------------------------------------------------
def test_a_hard_side_push_is_judged_a_fall_and_a_soft_one_recovers():
    soft = run_trial(Trial("gbwc", settle_seconds=1.5, seconds=4.0, pushes=(Push(100.0, 0.0, 90.0, 0.1),),
                           recovery_from=0.1), None)
    hard = run_trial(Trial("gbwc", settle_seconds=1.5, seconds=4.0, pushes=(Push(2000.0, 0.0, 90.0, 0.1),),
                           recovery_from=0.1), None)
    assert not soft["fell"] and soft["recovery_seconds"] is not None
    assert hard["fell"] and 0.0 < hard["fall_time"] < 2.0 and hard["survived_pushes"] == [False]
    assert hard["sim_seconds"] < 4.0   # a fall ends the trial


def test_back_to_walking_means_back_to_the_gait_it_walked_before_the_push():
    """SIMBICON does not track a speed command; recovery is judged against its own pre-push speed."""
    trial = run_trial(Trial("simbicon", speed=0.6, settle_seconds=8.0, seconds=8.0, pushes=(Push(150.0, 1.5, 0.0, 0.1),),
                            recovery_from=1.6), None)
    assert not trial["fell"]
    assert abs(trial["pre_push_speed_mps"] - 0.6) > 0.1   # it walks at its gait's speed, not the command
    assert trial["recovery_seconds"] is not None and trial["recovery_seconds"] <= 5.0


# --- benches end to end -----------------------------------------------------------------------------
def test_push_grid_writes_results_summary_and_plots_identically_on_serial_and_processes(tmp_path):
    protocol = tiny(tmp_path, "push")
    assert bench(tmp_path / "a", "push", "--backend", "serial", "--protocol", str(protocol)) == 0
    assert bench(tmp_path / "b", "push", "--workers", "2", "--protocol", str(protocol)) == 0
    a, b = result_file(tmp_path / "a", "push"), result_file(tmp_path / "b", "push")
    assert without_timings(a) == without_timings(b)
    assert a["protocol"]["params"]["force"] == 200 and len(a["trials"]) == 4
    assert {t["direction_deg"] for t in a["trials"]} == {0.0, 180.0}
    assert a["summary"]["trials"] == 4 and "mujoco" in a["versions"] and a["run"]["backend"] == "serial"
    files = {p.name.split("-20")[0] + p.suffix for p in (tmp_path / "b" / "results").iterdir() if p.is_file()}
    assert files == {"push-gbwc.json", "push-gbwc.md", "push-gbwc.png"}
    assert not any((tmp_path / "b" / "results" / ".partial").iterdir())   # checkpoint removed when done


def test_a_push_sweep_resumes_from_its_checkpoint(tmp_path):
    path = tiny(tmp_path, "push")
    protocol = load_protocol("push", path)
    options = RunOptions(backend="serial", results_dir=tmp_path / "results", progress=False)
    trials = grid_trials(protocol, "gbwc", protocol.params.force)
    first = dict(list(trials.items())[:1])
    with make_executor(options) as ex:
        done = BenchRun(ex, options, protocol, "gbwc").run(first)
    # Mark the checkpointed result, so that the finished file shows whether it was reused or recomputed.
    ckpt = next((tmp_path / "results" / ".partial").iterdir())
    ckpt.write_text(ckpt.read_text().replace('"steps": ', '"steps": 1000'))
    assert bench(tmp_path, "push", "--backend", "serial", "--protocol", str(path)) == 0
    trials_out = result_file(tmp_path, "push")["trials"]
    assert trials_out[0]["steps"] == int(f"1000{next(iter(done.values()))['steps']}")
    assert all(t["steps"] < 1000 for t in trials_out[1:])


def test_push_find_max_bisects_per_direction(tmp_path):
    assert bench(tmp_path, "push", "--find-max", "--backend", "serial", "--protocol", str(tiny(tmp_path, "push")),
                 "--directions", "1", "--phases", "1") == 0
    out = result_file(tmp_path, "push-find-max")
    forces = sorted({t["force"] for t in out["trials"]})
    assert forces[0] >= 100 and len(forces) == out["summary"]["rounds"] <= 3   # of 100, 500, 900, 1300 N
    fmax = out["summary"]["max_force_by_direction"]["0"]
    survived = {t["force"]: (not t["fell"]) and t["recovery_seconds"] is not None for t in out["trials"]}
    assert fmax == max((f for f, ok in survived.items() if ok), default=None)
    assert all(not ok for f, ok in survived.items() if fmax is None or f > fmax)
    assert len(list((tmp_path / "results").glob("push-find-max-gbwc-*.png"))) == 2   # polar and heatmap


def test_envelope_terrain_speed_and_soak_run_end_to_end(tmp_path):
    for name in ("envelope", "terrain", "speed", "soak"):
        assert bench(tmp_path, name, "--workers", "2", "--protocol", str(tiny(tmp_path, name))) == 0, name
    env = result_file(tmp_path, "envelope")
    assert env["summary"]["cases"] == 2 and all(t["steady_speed_mps"] is not None or t["fell"] for t in env["trials"])
    # The worst speed error is the largest of the cases that stayed up (3 s at 0 and 0.6 m/s: both), with its case.
    worst = max((t for t in env["trials"] if not t["fell"]), key=lambda t: t["steady_speed_error"])
    assert env["summary"]["worst_speed_error"] == {"error": worst["steady_speed_error"],
                                                   "speed_cmd": worst["speed_cmd"], "period": worst["period"]}
    (row,) = [r for r in env["rows"] if r["what"].startswith("  worst steady speed error")]
    assert row["measured"].startswith(f"{worst['steady_speed_error']:.2f} m/s") and row["met"] is not None
    ter = result_file(tmp_path, "terrain")
    assert set(ter["summary"]["success_by_feature"]) == {"step up 5 cm", "bumps", "course step-up-0.1"}
    assert ter["summary"]["success_by_feature"]["course step-up-0.1"] == 1.0
    speed = result_file(tmp_path, "speed")
    assert speed["summary"]["realtime_factor"] > 0 and speed["summary"]["bare_realtime_factor"] > 0
    (rt_row,) = [r for r in speed["rows"] if r["what"].startswith("real-time factor")]
    assert rt_row["met"] == (speed["summary"]["realtime_factor"] >= 20)   # the anchor's target, from the protocol
    cpu = speed["summary"]["timings"]
    assert speed["summary"]["cpu_realtime_factor"] == pytest.approx(speed["summary"]["sim_seconds"]
                                                                    / cpu["walking_cpu_seconds"])
    assert speed["summary"]["cpu_overhead_ratio"] == pytest.approx(
        (cpu["walking_cpu_seconds"] - cpu["bare_cpu_seconds"]) / cpu["bare_cpu_seconds"])
    assert 0 < speed["summary"]["profile"]["control_share"] < 1
    assert cpu["repeats"] == 2 and any("fastest of its 2" in note for note in speed["notes"])
    scaling = speed["summary"]["timings"]["scaling"]
    assert scaling["grid_trials"] == 2 and scaling["bare_speedup_2"] > 0 and scaling["grid_speedup_2"] > 0
    assert speed["summary"]["scaling_identical"] == {"processes_1_vs_2_identical": True}
    assert len(speed["trials"]) == 2
    soak = result_file(tmp_path, "soak")
    assert len(soak["trials"]) == 2 and soak["summary"]["simulated_minutes"] == pytest.approx(0.2, abs=1e-6)
    assert all(t["memory_mb"] for t in soak["trials"])


def test_a_soak_segment_goes_on_from_standing_after_each_fall(tmp_path):
    # Forces are drawn from [0, max]: a max far past any survivable push makes every one fell the walker,
    # so the test does not hinge on how robust the controller happens to be.
    hard = TINY["soak"].replace("push_force_max: 150", "push_force_max: 20000").replace("minutes: 0.2, segments: 2",
                                                                                      "minutes: 0.15, segments: 1")
    assert bench(tmp_path, "soak", "--backend", "serial", "--protocol", str(tiny(tmp_path, "soak", hard))) == 0
    (segment,) = result_file(tmp_path, "soak")["trials"]
    assert segment["falls"] >= 2 and len(segment["fall_times"]) == segment["falls"]
    assert segment["sim_seconds"] == pytest.approx(9.0, abs=0.5)   # the whole segment, despite the falls
    assert segment["fall_times"] == sorted(segment["fall_times"]) and segment["fall_times"][-1] < 9.0
    # Pushes 2-4 s apart over 9 s: at most 4 are scheduled, and only those before each fall are delivered.
    assert segment["pushes_survived"] <= segment["pushes_delivered"] <= 4


def test_report_gathers_the_latest_results_into_one_page(tmp_path):
    assert bench(tmp_path, "push", "--backend", "serial", "--protocol", str(tiny(tmp_path, "push")),
                 "--directions", "1", "--phases", "1") == 0
    page = tmp_path / "README.md"
    assert main(["bench", "report", "--results", str(tmp_path / "results"), "--out", str(page)]) == 0
    text = page.read_text()
    assert "## gbwc" in text and "survival at 200 N" in text
    assert "![push heatmap](results/push-gbwc-" in text
    assert main(["bench", "report", "--results", str(tmp_path / "empty"), "--out", str(page)]) == 2


def test_report_names_the_commit_each_result_was_measured_on(tmp_path):
    results = tmp_path / "results"
    results.mkdir()

    def result(bench: str, commit: str | None) -> None:
        payload = {"bench": bench, "variant": None, "controller": "gbwc", "date": "2026-01-02",
                   "versions": {"git_commit": commit}, "rows": [{"what": f"{bench} figure", "measured": "1"}]}
        (results / f"{bench}-gbwc-2026-01-02.json").write_text(json.dumps(payload))

    result("push", "abc1234")
    result("terrain", "abc1234")
    page = tmp_path / "README.md"
    assert main(["bench", "report", "--results", str(results), "--out", str(page)]) == 0
    text = page.read_text()
    assert "Every result below was measured on commit `abc1234`." in text
    assert "(2026-01-02, abc1234) | push figure |" in text and "(2026-01-02, abc1234) | terrain figure |" in text
    result("terrain", None)
    assert main(["bench", "report", "--results", str(results), "--out", str(page)]) == 0
    text = page.read_text()
    assert "more than one commit: `abc1234`: push (gbwc); `unknown commit`: terrain (gbwc)." in text
    assert "(2026-01-02, unknown commit) | terrain figure |" in text


def test_report_keeps_every_row_of_a_label_that_a_bench_repeats_under_each_case(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    rows = [{"what": "walk", "measured": "no fall"}, {"what": "  speed", "measured": "15x"},
            {"what": "run", "measured": "no fall"}, {"what": "  speed", "measured": "49x"}]
    payload = {"bench": "speed", "variant": None, "controller": "gbwc", "date": "2026-01-02",
               "versions": {"git_commit": "abc1234"}, "rows": rows}
    (results / "speed-gbwc-2026-01-02.json").write_text(json.dumps(payload))
    page = tmp_path / "README.md"
    assert main(["bench", "report", "--results", str(results), "--out", str(page)]) == 0
    lines = [line for line in page.read_text().splitlines() if "speed |" in line or "| walk |" in line
             or "| run |" in line]
    assert [line.split(" | ")[2] for line in lines] == ["no fall", "15x", "no fall", "49x"]


# --- GBWC's two configurations and the ablation (issue 14, part 2) ------------------------------------------
def test_ablation_runs_each_addition_off_alone_and_the_report_sets_the_configurations_side_by_side(tmp_path):
    protocol = tiny(tmp_path, "push")
    assert bench(tmp_path, "gbwc-ablation", "--backend", "serial", "--protocol", str(protocol),
                 "--only", "crossover-steps,soft-root-tilt", "--no-find-max", "--force", "450") == 0
    results = tmp_path / "results"
    (ablation,) = results.glob("gbwc-ablation-gbwc-*.json")
    table = json.loads(ablation.read_text())["summary"]["configurations"]
    # In the order of GBWC's list of additions, whatever the order of --only.
    assert [c["config"] for c in table] == ["default", "thesis", "without:soft-root-tilt",
                                            "without:crossover-steps"]
    assert all(c["grid_trials"] == 4 for c in table)
    # The full configurations' push results are kept as ordinary results, named by configuration.
    default, thesis = (json.loads(next(results.glob(f"push-{name}*.json")).read_text())
                       for name in ("gbwc-20", "gbwc-thesis-"))
    assert default["config"] == "default" and thesis["config"] == "thesis"
    # Same protocol, other controller parameters: the trials end in other states.
    assert {t["final_state_sha256"] for t in default["trials"]}.isdisjoint(
        t["final_state_sha256"] for t in thesis["trials"])
    page = tmp_path / "README.md"
    assert main(["bench", "report", "--results", str(results), "--out", str(page)]) == 0
    text = page.read_text()
    assert "| bench | figure | default | thesis | source / target | met (default) | met (thesis) |" in text
    assert "without crossover-steps" in text


def test_a_bench_refuses_a_configuration_its_controller_does_not_have(tmp_path, capsys):
    assert bench(tmp_path, "push", "--controller", "simbicon", "--config", "thesis") == 2
    assert "has one configuration" in capsys.readouterr().err
    assert bench(tmp_path, "push", "--config", "without:wings") == 2
    assert "unknown GBWC addition 'wings'" in capsys.readouterr().err


def test_the_committed_benchmark_page_is_what_the_committed_results_make():
    """benchmarks/README.md is written by `strider bench report`; a result added or rerun without regenerating
    the page (or a page edited by hand) fails here."""
    from strider.bench.report import render

    root = Path(__file__).resolve().parents[1] / "benchmarks"
    page = root / "README.md"
    assert page.read_text() == render(root / "results", page), "run 'strider bench report' and commit the page"


def test_every_committed_result_names_the_commit_it_was_measured_on():
    from strider.bench.report import commit_of, latest_results

    found = latest_results(Path(__file__).resolve().parents[1] / "benchmarks" / "results")
    for benches in found.values():
        for configs in benches.values():
            for (path, data) in configs.values():
                assert commit_of(data) != "unknown commit", path.name


# --- crates -------------------------------------------------------------------------------------
def test_crates_bench_runs_gbwc_skills_and_refuses_other_controllers(tmp_path, capsys):
    text = ("bench: crates\ncharacter: bipv3\nparams:\n  seconds: 30\n  cases:\n"
            "    - {name: lift 5 kg, kind: lift, mass: 5}\n")
    path = tiny(tmp_path, "crates", text)
    assert bench(tmp_path, "crates", "--protocol", str(path)) == 0
    (trial,) = result_file(tmp_path, "crates")["trials"]
    assert trial["passed"] and not trial["fell"] and trial["stage"] == "done" and trial["done_time"] <= 30
    assert bench(tmp_path / "other", "crates", "--controller", "simbicon", "--protocol", str(path)) == 2
    assert "--controller gbwc" in capsys.readouterr().err
    with pytest.raises(ConfigError) as info:
        load_protocol("crates", tiny(tmp_path, "crates", "bench: crates\nparams: {seconds: 30, cases: [{name: x, "
                                                         "kind: juggle, mass: 5}]}\n"))
    assert info.value.field == "params.cases[0].kind"


def test_a_subset_run_is_not_compared_with_the_full_protocol(tmp_path, capsys):
    """--speeds/--periods (envelope) and --features (terrain) run part of a protocol: nothing is marked met
    against the full protocol's target, the files say subset, and the benchmark page leaves them out."""
    assert bench(tmp_path, "envelope", "--speeds", "0.6", "--periods", "0.5", "--seconds", "11", "--workers", "1") == 0
    (path,) = (tmp_path / "results").glob("envelope-subset-gbwc-*.json")
    data = json.loads(path.read_text())
    assert data["protocol"]["changed"] == ["speeds", "periods", "seconds"]
    assert data["summary"]["cases"] == 1 and data["summary"]["passed"] == 1   # it walked: a fair test of the rule
    assert all(row["met"] is None for row in data["rows"])
    assert "not compared" in data["rows"][0]["anchor"]
    assert bench(tmp_path, "terrain", "--features", "slope +5", "--workers", "1") == 0
    terrain = json.loads(next((tmp_path / "results").glob("terrain-subset-gbwc-*.json")).read_text())
    assert [r["feature"] for r in terrain["trials"]] == ["slope +5 deg"]
    assert all(row["met"] is None for row in terrain["rows"])
    page = tmp_path / "page.md"
    assert main(["bench", "report", "--results", str(tmp_path / "results"), "--out", str(page)]) == 2   # none full
    capsys.readouterr()
    assert bench(tmp_path, "envelope", "--speeds", "9", "--periods", "0.1") == 2
    assert "outside what controller 'gbwc' can follow" in capsys.readouterr().err
    assert bench(tmp_path, "terrain", "--features", "ladder") == 2
    assert "slope -20 deg" in capsys.readouterr().err


def test_old_results_read_with_the_papers_names():
    from strider.bench.citations import readable

    assert readable("100% at 600 N (seed 000, Sec. 5.6)") == "100% at 600 N (Coros 2010, Sec. 5.6)"
    assert readable(">= 800 N (coros-walking.md, P1)") == ">= 800 N (docs/gbwc.md, P1)"
    assert readable("0 falls (issue 3)") == "0 falls (docs/gbwc.md)"


def test_only_benches_that_measure_their_protocols_character_take_character(capsys):
    # a tracker's or a control graph's bench measures the character its motion or skill was made for, so a
    # --character there would be ignored: it is not accepted at all
    with pytest.raises(SystemExit) as refused:
        main(["bench", "track-baseline", "--character", "planar5"])
    assert refused.value.code == 2 and "unrecognized arguments: --character" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "cw-accuracy", "--help"])
    assert "(protocol: planar7)" in capsys.readouterr().out


def test_a_protocol_of_the_users_own_without_anchors_judges_nothing(tmp_path):
    """A user's protocol file may leave the anchors out: its figures then get no verdict (before, the benches
    compared them with None and stopped on a TypeError)."""
    shipped = load_protocol("cw-realtime")
    assert shipped.meets("overhead", 0.4, at_most=True) is True
    assert shipped.meets("overhead", 0.6, at_most=True) is False
    assert load_protocol("tlc-cost").meets("total_minutes", 20.0, at_most=True) is False
    assert load_protocol("push").meets("min_max_force", 1e6) is True
    path = tiny(tmp_path, "cw-realtime", "bench: cw-realtime\nparams: {course: gaps-3d, walks: 1, start: [-1, 0],"
                " max_steps: 3, configs: {a: {regression: knn}}}\n")
    own = load_protocol("cw-realtime", path)
    assert own.anchors == () and own.meets("overhead", 0.4, at_most=True) is None


def test_progress_bars_show_only_in_a_terminal_and_a_trial_log_moves_its_bar():
    from strider.bench.output import TrialLog
    from strider.progress import move_to, progress_bar

    with progress_bar(10, "here", enabled=True) as bar:   # pytest's stderr is not a terminal
        assert bar.disable
    with progress_bar(10, "off", enabled=False) as bar:
        assert bar.disable

    class Counter:
        n = 0

        def update(self, k=1):
            self.n += k

    counter = Counter()
    trials = TrialLog(counter)
    trials.append({"a": 1})
    trials += [{"b": 2}, {"c": 3}]
    trials.extend(iter([{"d": 4}]))
    assert counter.n == 4 and list(trials) == [{"a": 1}, {"b": 2}, {"c": 3}, {"d": 4}]
    assert json.loads(json.dumps(trials)) == list(trials)

    from tqdm import tqdm
    shown = tqdm(total=5, file=io.StringIO())
    move_to(shown, 3, total=8, known=12)
    assert (shown.n, shown.total) == (3, 8) and "known=12" in str(shown)
    shown.close()
