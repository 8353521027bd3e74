"""The speed measurement the acceptance benchmark (and a bench CLI) reports: walking beside bare stepping."""

from __future__ import annotations

import numpy as np
import pytest

from strider.bench.gbwc_acceptance import measure_speed
from strider.errors import UsageError


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


def test_replayed_stepping_steps_the_walks_own_motion_bit_for_bit():
    """The P10 baseline: MuJoCo alone, stepped from each control tick's state, lands on the next tick's state."""
    from strider.bench.speed import TickStates, replayed_stepping_seconds
    from strider.characters import load_character
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import locomotion_scenario
    from strider.runner import Runner

    def scenario():
        return locomotion_scenario("simbicon", LocomotionCommand(), load_character("bipv3"), seconds=1.0)

    ticks = TickStates()
    runner = Runner(scenario(), hooks=(ticks,))
    result = runner.run()
    world = runner.world
    assert len(ticks.ticks) == round(result.sim_seconds / runner.scenario.controller.control_period)
    for (start, state), (end, following) in zip(ticks.ticks[::20], ticks.ticks[1::20]):
        world.restore(following)
        expected = world.state_vector()
        world.restore(state)
        world.step_bare(round((end - start) / world.timestep))
        assert np.array_equal(world.state_vector(), expected)
    wall, sim = replayed_stepping_seconds(scenario())
    assert sim == result.sim_seconds and wall > 0


def test_a_world_with_stable_pd_servos_cannot_step_bare():
    from strider.characters import load_character
    from strider.sim import CharacterPlacement, Scene, World

    world = World(Scene((CharacterPlacement(load_character("bipv3", actuation="spd")),)))
    with pytest.raises(UsageError, match="stable-PD"):
        world.step_bare(5)


def test_fastest_timings_keeps_each_figures_minimum_over_the_calls():
    from strider.bench.speed import fastest_timings

    calls = iter([(3.0, 1.0, 5.0), (2.0, 4.0, 6.0), (9.0, 2.0, 0.5)])
    assert fastest_timings(3, lambda: next(calls)) == (2.0, 1.0, 0.5)
    with pytest.raises(StopIteration):   # it made exactly the three calls asked for
        next(calls)


def test_the_tlc_speed_walk_takes_its_repeats_from_the_protocol(tmp_path):
    from strider.bench.protocol import load_protocol, protocol_path
    from strider.errors import ConfigError

    assert load_protocol("tlc-tasks").params.speed_repeats == 3
    path = tmp_path / "tlc-tasks.yaml"
    path.write_text(protocol_path("tlc-tasks").read_text().replace("repeats: 3", "repeats: 0"))
    with pytest.raises(ConfigError, match="repeats"):
        load_protocol("tlc-tasks", path)
