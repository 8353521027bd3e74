"""Branchable episodes: a snapshot of physics, controller, pending pushes and RNG continues bit for bit,
here, in a fresh runner, and in another process."""

from __future__ import annotations

import hashlib
import pickle

import numpy as np
import pytest

from parallel_tasks import branch_scenario, continue_episode
from strider.characters import load_character
from strider.control.controller import LocomotionCommand
from strider.errors import UsageError
from strider.methods.registry import make_controller
from strider.parallel import Executor
from strider.runner import Runner, Scenario
from strider.sim import CharacterPlacement, Scene

BRANCHES = 10
BRANCH_SECONDS = 5.0


def _digest(runner: Runner) -> str:
    return hashlib.sha256(runner.world.state_vector().tobytes()).hexdigest()


@pytest.mark.parametrize("kind, latest", [("gbwc", 10.0), ("forward-roll", 2.5)])
def test_branches_at_random_times_continue_bit_for_bit(kind, latest):
    times = np.sort(np.random.default_rng(7).uniform(0.0, latest, BRANCHES))
    runner = Runner(branch_scenario(kind))
    runner.start()
    for t in times:
        runner.advance(t - runner.time)
        snap = runner.snapshot()
        runner.advance(BRANCH_SECONDS)
        first = _digest(runner)
        runner.restore(snap)
        runner.advance(BRANCH_SECONDS)
        assert _digest(runner) == first, f"branch at {t:.3f} s"
        runner.restore(snap)   # back to the branch point, to go on to the next one
    # Branching left no trace: the same episode run straight through ends in the same state.
    runner.advance(BRANCH_SECONDS)
    straight = Runner(branch_scenario(kind))
    straight.advance(runner.time)
    assert _digest(straight) == _digest(runner)


def test_a_snapshot_continues_in_another_process():
    runner = Runner(branch_scenario("gbwc"))
    runner.advance(2.345)
    blob = pickle.dumps(runner.snapshot())
    assert len(blob) < 64_000   # small enough to send to workers by the thousand
    runner.advance(BRANCH_SECONDS)
    with Executor("processes", workers=2) as ex:
        remote = [r for _, r in sorted(ex.map(continue_episode, [("gbwc", blob, BRANCH_SECONDS)] * 2))]
    assert remote == [_digest(runner)] * 2


def test_a_pushed_episode_keeps_its_pending_pushes_and_outcome():
    runner = Runner(branch_scenario("gbwc"))
    runner.advance(2.0)                       # before both pushes
    snap = runner.snapshot()
    assert len(snap.pending_pushes) == 2
    runner.advance(20.0)
    expected = runner.finish().as_dict()
    again = Runner(branch_scenario("gbwc"))
    again.restore(snap)
    again.advance(20.0)
    result = again.finish().as_dict()
    for key in ("distance_m", "mean_speed_mps", "fell", "pushes", "steps"):
        assert result[key] == expected[key]


def test_restoring_into_another_model_or_controller_is_refused():
    runner = Runner(branch_scenario("gbwc"))
    runner.advance(1.0)
    snap = runner.snapshot()
    robot = Runner(Scenario(Scene((CharacterPlacement(load_character("robot")),)),
                            make_controller("gbwc", LocomotionCommand(speed=0.8))))
    with pytest.raises(UsageError, match="another model"):
        robot.restore(snap)
    other = Runner(Scenario(Scene((CharacterPlacement(load_character("bipv3")),)),
                            make_controller("simbicon", LocomotionCommand(speed=0.8))))
    with pytest.raises(UsageError, match="GBWC controller into a .*SIMBICON"):
        other.restore(snap)


def test_a_fresh_runner_restores_without_settling_first_and_measures_from_the_episodes_start():
    def settled() -> Scenario:
        return Scenario(Scene((CharacterPlacement(load_character("bipv3")),)),
                        make_controller("gbwc", LocomotionCommand(speed=0.8)), seconds=6, settle_seconds=1.0)

    runner = Runner(settled())
    runner.advance(2.0)
    snap = runner.snapshot()
    runner.advance(3.0)
    expected = runner.finish().as_dict()
    fresh = Runner(settled())
    stepped = []
    step = fresh.world.step
    fresh.world.step = lambda n=1: (stepped.append(n), step(n))   # count the physics steps restore takes
    fresh.restore(snap)
    assert stepped == []   # the snapshot's state replaces the settling, so none is stepped
    fresh.advance(3.0)
    assert _digest(fresh) == _digest(runner)
    result = fresh.finish().as_dict()
    for key in ("distance_m", "mean_speed_mps", "lateral_drift_m", "steps", "sim_seconds"):
        assert result[key] == expected[key]


def test_a_slip_episode_restored_from_a_snapshot_reads_the_live_world():
    """The SLIP controller's QP keeps dynamics accessors on the world; restored, they must read the world's state,
    not a copy frozen at the snapshot (which made every branched SLIP walk fall)."""
    from strider.methods.registry import locomotion_scenario

    scenario = locomotion_scenario("slip", LocomotionCommand(walking=False), load_character("bipv3-torque"),
                                   style="stand", seconds=2.0, config="source")
    runner = Runner(scenario)
    runner.advance(0.1)
    snap = runner.snapshot()
    runner.advance(0.15)
    first = _digest(runner)
    runner.restore(snap)
    assert scenario.controller.qp.dynamics.mass_matrix() == pytest.approx(
        type(scenario.controller.qp.dynamics)(runner.world).mass_matrix(), abs=0)
    runner.advance(0.15)
    assert _digest(runner) == first
