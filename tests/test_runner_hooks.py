"""The one episode loop: hooks, the shared fall judge, controller-owned settling and the contract's start."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from strider.characters import load_character
from strider.control.controller import AS_IS, LocomotionCommand
from strider.control.falls import FallCriteria
from strider.methods.registry import make_controller
from strider.methods.skills.controller import SkillController
from strider.methods.skills.rollout import rollout
from strider.methods.skills.skill import load_skill
from strider.runner import Push, Runner, Scenario
from strider.runner.hooks import EpisodeHook
from strider.sim import CharacterPlacement, Scene


def _scene() -> Scene:
    return Scene((CharacterPlacement(load_character("bipv3")),))


class _Log(EpisodeHook):
    def __init__(self, stop_at: float | None = None):
        self.calls: list[tuple[str, float]] = []
        self.stop_at = stop_at

    def begin(self, runner):
        self.calls.append(("begin", runner.time))

    def before_control(self, runner, t):
        self.calls.append(("before", t))

    def after_control(self, runner, t):
        self.calls.append(("after", t))
        if self.stop_at is not None and t >= self.stop_at:
            runner.stop()

    def end(self, runner):
        self.calls.append(("end", runner.time))


def test_hooks_are_called_around_every_control_tick_in_order_and_can_stop_the_episode():
    ctrl = make_controller("gbwc", LocomotionCommand(speed=0.5))
    log = _Log(stop_at=0.5)
    result = Runner(Scenario(_scene(), ctrl, seconds=2.0), hooks=(log,)).run()
    kinds = [k for k, _ in log.calls]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    ticks = kinds[1:-1]
    assert ticks == ["before", "after"] * (len(ticks) // 2)
    times = [t for k, t in log.calls if k == "before"]
    assert np.allclose(np.diff(times), ctrl.control_period)
    # Stopped by the hook at the first tick at or after 0.5 s, not at 2 s.
    assert 0.5 <= result.sim_seconds < 0.5 + 2 * ctrl.control_period


def test_the_shared_fall_judge_overrides_what_the_controller_believes():
    """A strict judge (any tilt past 0.05 rad is a fall) sees a fall in a 300 N push that GBWC walks through."""
    def run(judge):
        ctrl = make_controller("gbwc", LocomotionCommand(speed=0.6))
        return Runner(Scenario(_scene(), ctrl, seconds=4.0, pushes=(Push(300.0, 2.0, 90.0),)),
                      fall_judge=judge, stop_on_fall=True).run()
    own, strict = run(None), run(FallCriteria(max_tilt=0.05))
    assert not own.fell
    assert strict.fell and strict.fall_time is not None and strict.sim_seconds < 4.0


def test_a_skill_settles_its_start_pose_in_the_runner_before_time_zero():
    skill = load_skill("roll-supine-to-prone")
    assert skill.start.settle > 0
    ctrl = SkillController(skill)
    runner = Runner(Scenario(_scene(), ctrl, seconds=0.5))
    assert ctrl.settle_seconds == skill.start.settle
    before = runner.world.time
    runner.start()
    assert runner.world.time - before == pytest.approx(skill.start.settle)
    assert runner.time == 0.0 and ctrl.transitions == 0     # the first state is entered at the first tick
    runner.advance(0.5)
    assert ctrl.transitions >= 1


def test_reset_as_is_takes_the_character_over_where_it_is():
    scene = _scene()
    runner = Runner(Scenario(scene, make_controller("gbwc", LocomotionCommand(speed=0.6)), seconds=2.0))
    runner.run()
    qpos = runner.character.qpos.copy()
    for name in ("gbwc", "simbicon"):
        ctrl = make_controller(name, LocomotionCommand(speed=0.6))
        ctrl.reset(runner.world, runner.character, start=AS_IS)
        assert np.array_equal(runner.character.qpos, qpos), name
    with pytest.raises(TypeError, match="start must be"):
        make_controller("gbwc", LocomotionCommand()).reset(runner.world, runner.character, start="lying")
def test_a_skill_rollout_from_the_cached_start_repeats_the_first_bit_for_bit():
    """Workers keep the settled start pose; a candidate run from it is the run without the cache."""
    cache: dict = {}
    for name in ("forward-roll", "roll-supine-to-prone"):
        skill = load_skill(name)
        traces = [rollout(skill, perturb=0.1, seed=3, cache=cache) for _ in range(2)]
        digests = {hashlib.sha256(np.concatenate([t.front.ravel(), t.up.ravel(), t.pelvis])).hexdigest()
                   for t in traces}
        assert len(digests) == 1, name
        assert traces[0].effort == traces[1].effort


