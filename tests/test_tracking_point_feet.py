"""Phase tracking on the spec's 5-link point-foot walker (planar5): the CMU walk imported onto point feet with an
instantaneous double support, rectified with a plastic impact at the strike, fitted, and walked on MuJoCo; and the
NQR baseline's reference recorded once the walker has settled on its gait."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from strider.bench.tracking import _constraints, _nqr_case, _phase_case, _planar_world, _pushed_trial
from strider.characters import load_character
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.tracking.controller import SOURCE_SETTINGS, PhaseTrackingController, TrackParams
from strider.methods.tracking.mocap_import import FREE, TOE, load_planar_clip
from strider.methods.tracking.nqr import NqrParams, nqr_gains, record_reference
from strider.methods.tracking.planar_model import NUMPY_TRIG, PlanarModel, has_point_feet, sole_points
from strider.methods.tracking.rates import POINT_FOOT_RATE
from strider.methods.tracking.rectify import RectifyParams, rectify
from strider.methods.tracking.track_file import load_track

WALK = Path(__file__).resolve().parents[2] / "shared" / "mocap" / "bvh" / "cmu_02_01_walk.bvh"
IMPACT_TOLERANCE = 0.01   # share of the angular momentum about the landing point lost or gained across the strike


@pytest.fixture(scope="module")
def model() -> PlanarModel:
    return PlanarModel.from_spec(load_character("planar5"))


@pytest.fixture(scope="module")
def clip():
    return load_planar_clip(WALK, "planar5")


def test_point_feet_are_one_point_each_and_the_phase_runs_from_it(model):
    spec = load_character("planar5")
    assert has_point_feet(spec) and model.point_feet and not PlanarModel.from_spec(load_character("planar14")).point_feet
    heel, toe = sole_points(spec, "lShank").values()
    assert heel == toe
    q = [0.0, 1.0, 0.1, -0.3, 0.2, 0.25, 0.1]
    foot = model.point(q, model.contact("left", "toe"))
    hip = model.joint_centre(model.hip_link["left"], NUMPY_TRIG, model.poses(q))
    assert model.stance_angle(q, "left") == pytest.approx(np.arctan2(hip[0] - foot[0], hip[1] - foot[1]), abs=1e-12)


def test_the_import_puts_one_foot_down_at_a_time(clip):
    left, right = clip.modes["left"], clip.modes["right"]
    assert set(np.unique(left)) | set(np.unique(right)) <= {FREE, TOE}
    assert not np.any((left == TOE) & (right == TOE))           # the double support is instantaneous
    assert np.all((left == TOE) | (right == TOE))               # and a walk has no flight
    strikes = np.flatnonzero((left[1:] == TOE) & (left[:-1] == FREE))
    assert len(strikes) >= 2 and 0.9 < np.diff(strikes).mean() / clip.fps < 1.4     # a stride of about a second


def test_the_rectified_strike_is_a_plastic_impact_through_the_landing_point(model, clip):
    rect = rectify(model, clip, RectifyParams())
    assert rect.solution.success and rect.dt == pytest.approx(1.0 / POINT_FOOT_RATE)
    # the step's last frame, and the next step's first (this one's mirrored, moved on): the impulse goes through
    # the landing foot, so the angular momentum about it is the same on both sides of the strike
    after_q = np.array(model.mirrored(list(rect.q[0]), rect.shift))
    after_qd = np.array(model.mirrored(list(rect.qd[0])))
    landing = model.point(list(after_q), model.contact("right", "toe"))

    def about_landing(q, qd):
        px, pz, spin = model.momentum(list(q), list(qd))
        cx, cz = model.com(list(q))
        return spin + (cz - landing[1]) * px - (cx - landing[0]) * pz

    before, after = about_landing(rect.q[-1], rect.qd[-1]), about_landing(after_q, after_qd)
    assert after == pytest.approx(before, rel=IMPACT_TOLERANCE)
    assert np.linalg.norm(rect.qd[-1] - after_qd) > 0.1            # and the velocities do jump there


def test_the_five_link_walker_settles_on_a_steady_gait():
    constraints = _constraints("five-link")
    world, character = _planar_world(character="planar5")
    controller = PhaseTrackingController(constraints)
    controller.reset(world, character)
    strikes = []
    while world.time < 20.0 and not controller.has_fallen():
        steps = controller.stats.steps
        controller.control(world.time)
        if controller.stats.steps > steps:
            strikes.append(world.time)
        world.step()
    assert not controller.has_fallen() and len(strikes) >= 25
    last = np.diff(strikes)[-6:]
    assert last.max() - last.min() <= 0.02 * last.mean()             # six steps within 2% of each other
    assert 0.4 < character.com_position()[0] / world.time < 0.8      # m/s


def test_a_settled_reference_restarts_bit_for_bit():
    constraints = _constraints("five-link")
    params = TrackParams(max_torque=300.0, **SOURCE_SETTINGS)
    world, character = _planar_world(character="planar5")
    reference = record_reference(world, character, constraints, 2, params, warmup_steps=4)
    assert reference.warmup_steps == 4 and reference.phase_state is not None and len(reference.step_ends) == 2
    # the phase-indexed walker started from the reference's first state and its own state there walks the same
    survived, seconds = _pushed_trial(_phase_case(constraints, params, reference), 0.0, 0, 0.1, "planar5")
    assert survived and seconds == pytest.approx(reference.length * reference.timestep)
    world, character = _planar_world(character="planar5")
    controller, done, start = _phase_case(constraints, params, reference)()
    start(world, character)
    for k in range(reference.length):
        controller.control(world.time)
        assert np.array_equal(character.motor_torques, reference.torques[k])
        world.step()
    assert done()


@pytest.fixture(scope="module")
def settled_reference():
    """Four steps of the five-link walk after twenty to settle, in the source's configuration (protocol 2's)."""
    world, character = _planar_world(character="planar5")
    params = TrackParams(max_torque=300.0, **SOURCE_SETTINGS)
    return record_reference(world, character, _constraints("five-link"), 4, params, warmup_steps=20)


@pytest.mark.parametrize("backward_steps", [True, False])
def test_pushed_back_the_walker_steps_backwards(backward_steps, settled_reference):
    constraints = _constraints("five-link")
    params = TrackParams(max_torque=300.0, **SOURCE_SETTINGS)
    reference = settled_reference
    begin, end = reference.step_span(2)
    pushed = replace(params, backward_steps=backward_steps)
    survived, _ = _pushed_trial(_phase_case(constraints, pushed, reference), -400.0, (begin + end) // 2, 0.1,
                                "planar5")
    assert survived == backward_steps


def test_the_cli_rectifies_point_feet_walks_and_refuses_their_jumps(tmp_path, capsys):
    out = tmp_path / "five.track"
    assert main(["track", "rectify", str(WALK), "--character", "planar5", "--out", str(out), "--json"]) == 0
    rect, character = load_track(out)
    assert character == "planar5" and rect.dt == pytest.approx(1.0 / POINT_FOOT_RATE)
    capsys.readouterr()
    assert main(["track", "rectify", str(WALK), "--character", "planar5", "--window", "jump", "--out",
                 str(out)]) == 2
    assert "two-footed jump" in capsys.readouterr().err


def test_a_point_footed_walk_has_no_fri_policy_to_learn(tmp_path, capsys):
    assert main(["track", "vi", "five-link", "--out", str(tmp_path / "five.fri")]) == 2
    assert "no place to choose" in capsys.readouterr().err
    assert main(["track", "walk", "five-link", "--policy", "vi", "--seconds", "1"]) == 2
    assert "no FRI policy" in capsys.readouterr().err
    assert not (tmp_path / "five.fri").exists()


def test_a_motion_refuses_a_character_it_was_not_rectified_for():
    world, character = _planar_world()                  # planar14
    with pytest.raises(UsageError, match="rectify it for planar14"):
        PhaseTrackingController(_constraints("five-link")).reset(world, character)


def test_the_nqr_measured_from_its_stance_foot_survives_a_push_that_fells_it_measured_in_the_world(settled_reference):
    reference = settled_reference
    world, _ = _planar_world(character="planar5")
    gains = nqr_gains(world, reference, NqrParams(max_torque=300.0))
    assert set(reference.stance_sides) == {"left", "right"} and len(reference.stance_x) == reference.length
    begin, end = reference.step_span(2)

    def survives(stance_anchored: bool) -> bool:
        params = NqrParams(max_torque=300.0, stance_anchored=stance_anchored)
        return _pushed_trial(_nqr_case(reference, gains, params), -40.0, (begin + end) // 2, 0.1, "planar5")[0]
    # pushed back, the walker's next foothold lands short of the reference's; measured in the world, the tracker
    # pulls the body on toward where the reference was, over a foot that cannot follow, and falls
    assert survives(True) and not survives(False)
