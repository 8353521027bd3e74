"""Phase tracking, online part: the constraints fitted to the shipped rectified CMU step, and the phase-indexed
controller walking and recovering from a push on MuJoCo."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from strider.characters import load_character
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.tracking.constraints import FitParams, fit_constraints
from strider.methods.tracking.controller import PhaseTrackingController, TrackParams, parse_config
from strider.methods.tracking.planar_model import PlanarModel
from strider.methods.tracking.track_file import load_track, resolve_track
from strider.sim import CharacterPlacement, Scene, World

TIMESTEP = 0.002
JOIN_TOLERANCE = 1e-8     # rad: the KKT solve's equality rows, re-evaluated from the stored piecewise cubics


@pytest.fixture(scope="module")
def rectified():
    return load_track(resolve_track("cmu-walk"))


@pytest.fixture(scope="module")
def model(rectified):
    return PlanarModel.from_spec(load_character(rectified[1]))


@pytest.fixture(scope="module")
def constraints(rectified, model):
    return fit_constraints(model, rectified[0])


def _walk(constraints, seconds: float, push: tuple[float, float] | None = None, course=None, watch=None,
          params: TrackParams | None = None):
    spec = load_character("planar14").with_actuation("torque")
    world = World(Scene((CharacterPlacement(spec),), timestep=TIMESTEP, course=course))
    ch = world.character()
    controller = PhaseTrackingController(constraints, params)
    controller.reset(world, ch)
    stances, pushed = [], False
    while world.time < seconds - 1e-9 and not controller.has_fallen():
        if push is not None and not pushed and world.time >= push[1]:
            world.apply_force(spec.roles.torso, (push[0], 0.0, 0.0), duration=0.1)
            pushed = True
        controller.control(world.time)
        if watch is not None:
            watch(controller)
        world.step()
        stances.append(controller.stance)
    return world, ch, controller, stances


def test_the_fit_joins_its_stages_and_follows_the_motion(constraints, rectified, model):
    stages = constraints.stages
    assert [s.label for s in stages] == ["heel/toe", "flat/toe", "flat/free", "toe/free"]   # a double support, then single
    for a, b in itertools.pairwise(stages):
        assert np.allclose(a.evaluate(a.theta[1])[0], b.evaluate(b.theta[0])[0], atol=JOIN_TOLERANCE)
        if not b.makes_contact:      # the heel rising: no impact, so the rates in theta agree too
            assert np.allclose(a.evaluate(a.theta[1])[1], b.evaluate(b.theta[0])[1], atol=1e-6)
    last, first = stages[-1], stages[0]
    # the step ends on its start with the legs exchanged
    assert np.allclose(last.evaluate(last.theta[1])[0], first.evaluate(first.theta[0])[0][list(constraints.mirror)],
                       atol=JOIN_TOLERANCE)
    assert constraints.rms_fit < 0.02
    # the impact rows change the fit at the joins only: without them the spline is as close to the frames
    plain = fit_constraints(model, rectified[0], FitParams(impact_consistency=False))
    assert plain.rms_fit == pytest.approx(constraints.rms_fit, abs=5e-3)
    jump = [np.abs(a.evaluate(a.theta[1])[1] - b.evaluate(b.theta[0])[1]).max()
            for a, b in zip(plain.stages, plain.stages[1:]) if b.makes_contact]
    consistent = [np.abs(a.evaluate(a.theta[1])[1] - b.evaluate(b.theta[0])[1]).max()
                  for a, b in itertools.pairwise(stages) if b.makes_contact]
    assert consistent != pytest.approx(jump)


def test_a_phase_past_a_stage_is_projected_onto_it(constraints):
    """Past either end the constraint holds its end value with no rates in theta (Abe 2012, Sec. 3.4.1): a swing
    foot that has not yet landed (a step down) waits where its motion ends instead of being driven on."""
    for stage in constraints.stages:
        t0, t1 = stage.theta
        width = t1 - t0
        for inside, outside in ((t0, t0 - 0.3 * width), (t1, t1 + 0.3 * width)):
            value, rate, curvature = stage.evaluate(outside)
            assert np.array_equal(value, stage.evaluate(inside)[0])
            assert not rate.any() and not curvature.any()
        middle = stage.evaluate(0.5 * (t0 + t1))
        assert np.abs(middle[1]).max() > 0.0      # within the range the rates are the curve's own


def test_the_tracker_walks_the_cmu_step_without_falling(constraints):
    world, ch, controller, stances = _walk(constraints, 6.0)
    assert not controller.has_fallen()
    assert controller.stats.steps >= 8
    switches = [i for i in range(1, len(stances)) if stances[i] != stances[i - 1]]
    assert len(switches) == controller.stats.steps       # every step changes the stance leg
    speed = ch.com_position()[0] / world.time
    assert 0.75 * constraints.speed < speed < 1.25 * constraints.speed


def test_the_tracker_recovers_from_a_push_and_falls_to_a_large_one(constraints):
    _, _, controller, _ = _walk(constraints, 6.0, push=(150.0, 3.0))
    assert not controller.has_fallen()
    _, _, controller, _ = _walk(constraints, 6.0, push=(1500.0, 3.0))
    assert controller.has_fallen()


@pytest.mark.parametrize("retraces", [True, False])
def test_pushed_back_as_its_heel_rises_the_walker_retraces_its_swing_and_steps_back(constraints, retraces):
    """400 N backwards 0.28 s into a step (protocol 1's hardest phase): the walker stops on its stance toe and rolls
    back onto the flat of the foot. Running the motion backwards, its swing foot comes down behind and takes a
    backward step; held at the stage's first pose, the swing foot stays in the air and the walker falls."""
    from strider.bench.tracking import episode

    params = TrackParams(swing_retraces=retraces)
    walk = episode(constraints, 10.0, push=(-400.0, 0.2833), push_after_steps=5, min_steps_after=4, params=params)
    assert walk.fell != retraces


def test_the_double_support_shares_the_ground_force_between_the_feet(constraints):
    """In the fitted heel/toe stage the FRI lies behind the front heel, between the feet, and the engine's
    contacts carry weight on both: the trailing toe pushes, as in the clip."""
    shared = []

    def watch(controller):
        if controller.stage_now.label == "heel/toe" and controller.stats.steps >= 2:
            rear = controller.foot_point(controller.swing_side, "toe")[0]
            front = controller.foot_point(controller.stance, "heel")[0]
            forces = controller._point_forces(controller.soles())
            shared.append((rear < controller.last_fri < front,
                           forces[controller.swing_side, "toe"] > 0.0 and forces[controller.stance, "heel"] > 0.0))

    _, _, controller, _ = _walk(constraints, 3.0, watch=watch)
    assert not controller.has_fallen()
    between, both = np.array(shared).T
    assert len(shared) > 20 and between.mean() > 0.9 and both.mean() > 0.5


def test_a_gentle_slope_down_is_walked_and_not_counted_a_fall(constraints):
    """3 deg down: after 8 s the pelvis is far below its start height, yet no fall (it is measured above the
    ground beneath it)."""
    from strider.courses.library import parse_course
    from strider.datafile import Fields

    course = parse_course(Fields({"name": "down", "start": -2.0, "pieces": [
        {"flat": {"length": 3.0}}, {"slope": {"length": 20.0, "degrees": -3.0}}, {"flat": {"length": 5.0}}]}, "test"))
    _, ch, controller, _ = _walk(constraints, 8.0, course=course)
    assert not controller.has_fallen()
    assert ch.com_position()[2] < 0.55        # below the fall rule's height above level ground


def test_contact_damping_plants_a_heel_that_strikes_a_slope_up_and_bounces(constraints):
    """3 deg up, the first heel strike on the ramp bounces off it. Rows that hold only the heel's acceleration (the
    source's) keep the velocity it left with, so it glides on above the ramp while the solve counts on its support,
    and the walker falls within a few steps; strider's rows bring it to rest and the walk goes on up the ramp."""
    from strider.courses.library import parse_course
    from strider.datafile import Fields

    course = parse_course(Fields({"name": "up", "start": -2.0, "pieces": [
        {"flat": {"length": 4.0}}, {"slope": {"length": 12.0, "degrees": 3.0}}, {"flat": {"length": 5.0}}]}, "test"))
    _, ch, controller, _ = _walk(constraints, 8.0, course=course)
    assert not controller.has_fallen()
    assert ch.com_position()[0] > 6.0            # 4 m and more along the ramp
    _, _, source, _ = _walk(constraints, 8.0, course=course, params=TrackParams(contact_damping=0.0))
    assert source.has_fallen()


def test_down_a_9_degree_slope_the_stance_knee_yields_to_a_late_strike(constraints):
    """9 deg down, the swing foot meets the lower ground after the step's phase has run out. Held at the step's last
    pose the walker pitches on over its stance toe, faster each step, and falls; with the stance knee bending on
    past the step's end (late_strike_yield) it lowers onto the swing foot and walks down the ramp."""
    from strider.courses.library import parse_course
    from strider.datafile import Fields

    course = parse_course(Fields({"name": "down", "start": -2.0, "pieces": [
        {"flat": {"length": 4.0}}, {"slope": {"length": 12.0, "degrees": -9.0}}, {"flat": {"length": 5.0}}]}, "test"))
    _, ch, controller, _ = _walk(constraints, 10.0, course=course)
    assert not controller.has_fallen()
    assert ch.com_position()[0] > 9.0             # 7 m and more down the ramp
    _, _, held, _ = _walk(constraints, 10.0, course=course, params=TrackParams(late_strike_yield=0.0))
    assert held.has_fallen()
    with pytest.raises(ValueError, match="late_strike_yield"):
        PhaseTrackingController(constraints, TrackParams(late_strike_yield=-1.0))
    with pytest.raises(ValueError, match="late_strike_drop"):
        PhaseTrackingController(constraints, TrackParams(late_strike_drop=math.nan))


def test_on_level_ground_a_late_strike_does_not_yield(constraints):
    """Pushed forward hard, the step's phase runs out before the swing foot lands on level ground too; the ground
    under it is not lower, so the stance knee holds, bit for bit as with the yield off."""
    late = []

    def watch(controller):
        late.append(controller.stage == len(constraints.stages) - 1
                    and controller.last_theta > constraints.stages[-1].theta[1])

    world, _, controller, _ = _walk(constraints, 4.0, push=(600.0, 2.0), watch=watch)
    held, _, _, _ = _walk(constraints, 4.0, push=(600.0, 2.0), params=TrackParams(late_strike_yield=0.0))
    assert sum(late) > 5 and not controller.has_fallen()      # the phase ran out before the strike
    assert np.array_equal(world.data.qpos, held.data.qpos)


def test_the_swing_knee_lift_clears_a_ramp_up_the_rectified_swing_scuffs(constraints):
    """The rectified swing clears flat ground by 4-5 mm. On a 6 deg ramp up the passing toe meets the ramp and the
    walker falls; with the swing knee bent 0.2 rad more at mid-swing (zero at lift-off and strike) it walks on."""
    from strider.courses.library import parse_course
    from strider.datafile import Fields

    course = parse_course(Fields({"name": "up", "start": -2.0, "pieces": [
        {"flat": {"length": 4.0}}, {"slope": {"length": 12.0, "degrees": 6.0}}, {"flat": {"length": 5.0}}]}, "test"))
    clearance = []

    def watch(controller):
        if controller.stage_now.label == "toe/free":
            clearance.append(controller.foot_point(controller.swing_side, "toe")[2])

    _, ch, lifted, _ = _walk(constraints, 8.0, course=course)
    assert not lifted.has_fallen() and ch.com_position()[0] > 6.0
    _walk(constraints, 2.0, watch=watch)      # on level ground, once its first step is done
    assert min(clearance[len(clearance) // 2:]) > 0.01
    _, _, rectified, _ = _walk(constraints, 8.0, course=course, params=TrackParams(swing_knee_lift=0.0))
    assert rectified.has_fallen()


def test_the_tracker_config_names_its_policy_and_its_settings(constraints):
    assert parse_config("default") == ("integral", {})
    assert parse_config("source") == ("integral", {"contact_damping": 0.0, "swing_knee_lift": 0.0,
                                                   "swing_retraces": False, "late_strike_yield": 0.0})
    assert parse_config("integral,swing_retraces=on") == ("integral", {"swing_retraces": True})
    assert parse_config("integral,late_strike_yield=1.5") == ("integral", {"late_strike_yield": 1.5})
    assert parse_config("vi,contact_damping=25") == ("vi", {"contact_damping": 25.0})
    assert parse_config("vi:my.fri,swing_knee_lift=0.1") == ("vi:my.fri", {"swing_knee_lift": 0.1})
    for bad, words in (("integral,contact_damping=-1", "finite number >= 0"), ("integral,gain=2", "takes the settings"),
                       ("nope", "names its FRI policy"), ("integral,contact_damping=x", "finite number >= 0"),
                       ("integral,swing_knee_lift=inf", "swing_knee_lift must be a finite number"),
                       ("integral,swing_retraces=2", "swing_retraces is on or off"),
                       ("integral,late_strike_yield=-2", "late_strike_yield must be a finite number >= 0")):
        with pytest.raises(UsageError, match=words):
            parse_config(bad)
    with pytest.raises(ValueError, match="contact_damping must be >= 0"):
        PhaseTrackingController(constraints, TrackParams(contact_damping=-1.0))


def test_track_walk_help_gives_strider_s_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["track", "walk", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"strider's, {TrackParams().contact_damping:g})" in text
    assert f"strider's, {TrackParams().swing_knee_lift:g})" in text
    assert f"strider's, {TrackParams().late_strike_yield:g})" in text
    assert f"ground {100 * TrackParams().late_strike_drop:g} cm or more below" in text


def test_the_controllers_friction_cone_tilts_with_the_ground_it_was_rectified_for():
    from strider.methods.tracking import controller as tracker

    mu = 0.8
    level, ramp = tracker.ground_frame(0.0), tracker.ground_frame(30.0)
    leaning = np.array([-0.9, 1.0])        # |fx| > mu fz, yet 0.28 along and 1.32 into a 30 deg ramp
    assert tracker._into_cone(leaning, mu, ramp) is None
    clipped = tracker._into_cone(leaning, mu, level)
    assert clipped is not None and abs(clipped[0]) == pytest.approx(mu * clipped[1])
    steep = np.array([0.2, 1.0])           # fine on level ground; 0.67 along and 0.77 into the ramp: clipped
    assert tracker._into_cone(steep, mu, level) is None
    along, normal = ramp @ tracker._into_cone(steep, mu, ramp)
    assert along == pytest.approx(mu * normal) and normal == pytest.approx((ramp @ steep)[1])


def test_the_walk_is_bit_identical_when_repeated(constraints):
    a = _walk(constraints, 1.0)[0].state_vector()
    b = _walk(constraints, 1.0)[0].state_vector()
    assert np.array_equal(a, b)


def test_track_walk_from_the_command_line(capsys):
    assert main(["track", "walk", "cmu-walk", "--seconds", "1.5", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert not result["fell"]
    assert result["distance_m"] > 0.8


@pytest.mark.parametrize("argv, words", [
    (["track", "walk", "no-such-walk"], "no track 'no-such-walk'"),
    (["track", "walk", "--seconds", "0"], "--seconds must be > 0"),
    (["track", "walk", "--contact-damping", "-5"], "--contact-damping must be a finite rate >= 0"),
    (["track", "walk", "--contact-damping", "1e12"], "contact damping must be at most 1 / timestep"),
    (["track", "jump", "--contact-damping", "5000"], "contact damping must be at most 1 / timestep"),
    (["track", "walk", "--swing-knee-lift", "nan"], "--swing-knee-lift must be a finite angle"),
    (["walk", "--controller", "track", "--character", "bipv3", "--actuation", "torque"], "planar walkers"),
])
def test_track_walk_refuses_bad_input(argv, words, capsys):
    assert main(argv) == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("content, words", [
    (b"", "not a strider track file"),
    (b"name: [unclosed\n", "not a strider track file"),
    (None, "a folder, not a track file"),
])
def test_track_walk_refuses_a_file_that_is_not_a_track(content, words, tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    if content is None:
        path.mkdir()
    else:
        path.write_bytes(content)
    assert main(["track", "walk", str(path), "--seconds", "0.2"]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err
