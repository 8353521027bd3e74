"""The speed measurement the acceptance benchmark (and a bench CLI) reports: walking beside bare stepping."""

from __future__ import annotations

from strider.bench.gbwc_acceptance import measure_speed


def test_measure_speed_reports_walking_and_bare_stepping_in_wall_and_cpu_time():
    speed = measure_speed(seconds=0.5)
    assert speed["timestep"] > 0 and speed["control_period"] > 0
    for key in ("walking_realtime_factor", "bare_realtime_factor", "walking_cpu_realtime_factor",
                "bare_cpu_realtime_factor"):
        assert speed[key] > 0, key
    # Walking does everything bare stepping does and more.
    assert speed["walking_cpu_seconds"] > speed["bare_cpu_seconds"] * 0.5
    assert speed["cpu_overhead_ratio"] == (speed["walking_cpu_seconds"] - speed["bare_cpu_seconds"]) \
        / speed["bare_cpu_seconds"]
