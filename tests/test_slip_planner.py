"""The SLIP preview planner (Mordatch et al. 2010, Sec. 4-5): closed forms against integration, the schedule's
decoder, the objective terms, and CMA planning that is deterministic."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from strider.characters import load_character
from strider.methods.slip.controller import SlipParams
from strider.methods.slip.objectives import GaitGoals, apex_rise, plan_costs
from strider.methods.slip.planner import Planner, PlannerParams, shift, standing_guess
from strider.methods.slip.preview import FlightPhase, Preview, PreviewModel, StancePhase, end_state
from strider.methods.slip.reduce import ContactMemory, ReduceParams, body_geometry, reduce
from strider.methods.slip.schedule import (
    HEADING_ACCEL,
    SIZE,
    SWING,
    T1,
    THETA34,
    FootOnGround,
    PlanStart,
    Terrain,
    bilinear,
    decode,
    encode,
    largest_quad,
    roll_out,
    rotate45,
)
from strider.sim import CharacterPlacement, Scene, World

MODEL = PreviewModel()


def _stance(com, vel, T, cop0, copT, rest0, restT, model=MODEL):
    one = np.ones(1)
    return StancePhase.start(model, np.array([com]), np.array([vel]), 0.1 * one, 0.2 * one, T * one,
                             np.array([cop0]), np.array([copT]), 0.0 * one, rest0 * one, restT * one, 0.5 * one)


def test_stance_closed_form_solves_the_pendulum_and_spring_equations():
    com, vel, T = [0.05, -0.02, 0.95], [0.8, 0.1, -0.05], 0.7
    cop0, copT, rest0, restT = [0.0, 0.0], [0.3, 0.05], 10.6, 10.9
    phase = _stance(com, vel, T, cop0, copT, rest0, restT)
    nu = np.sqrt(MODEL.gravity / com[2])
    w = MODEL.spring_omega

    def rhs(t, s):
        p = np.array(cop0) + (np.array(copT) - np.array(cop0)) * t / T
        r = rest0 + (restT - rest0) * t / T
        acc = np.array([nu**2 * (s[0] - p[0]), nu**2 * (s[1] - p[1]), w**2 * (r - s[2]) - MODEL.gravity])
        return np.concatenate([s[3:], acc])

    times = np.linspace(0, T, 8)
    sol = solve_ivp(rhs, (0, T), np.concatenate([com, vel]), t_eval=times, rtol=1e-11, atol=1e-12)
    points = phase.at(MODEL, times[None])
    assert np.allclose(points.com[0], sol.y[:3].T, atol=1e-7)
    assert np.allclose(points.com_velocity[0], sol.y[3:].T, atol=1e-7)
    assert np.allclose(points.com_accel[0], np.array([rhs(t, s)[3:] for t, s in zip(times, sol.y.T)]), atol=1e-7)
    assert np.allclose(points.heading[0], 0.1 + 0.2 * times + 0.25 * times**2)


def test_taylor_form_is_the_sources_approximation_and_not_the_default():
    args = ([0.0, 0.0, 0.9], [1.0, 0.0, 0.0], 1.0, [0.0, 0.0], [0.2, 0.0], 10.7, 10.7)
    exact = _stance(*args).at(MODEL, np.array([[0.1, 0.6]]))
    taylor = _stance(*args, model=PreviewModel(taylor5=True)).at(PreviewModel(taylor5=True), np.array([[0.1, 0.6]]))
    close, far = np.abs(exact.com[0] - taylor.com[0])[:, 0]
    assert close < 1e-6          # nu t = 0.33: the polynomial is good
    assert far > 1e-4            # nu t = 2: it is not, which is why exact forms are the default


def test_phases_chain_continuously_and_flight_is_ballistic():
    first = _stance([0.0, 0.0, 0.95], [1.0, 0.0, 0.3], 0.4, [0.0, 0.0], [0.1, 0.0], 10.8, 10.9)
    com, vel, heading, rate = end_state(MODEL, first)
    flight = FlightPhase(np.array([0.2]), com, vel, heading, rate)
    preview = Preview(MODEL, [first, flight])
    t = np.array([[0.4 - 1e-9, 0.4 + 1e-9, 0.5]])
    points = preview.at(t)
    assert np.allclose(points.com[0, 0], points.com[0, 1], atol=1e-8)
    assert np.allclose(points.com_velocity[0, 0], points.com_velocity[0, 1], atol=1e-6)
    assert np.allclose(points.com_accel[0, 2], [0.0, 0.0, -MODEL.gravity])
    assert np.isnan(points.cop[0, 2]).all()


def test_a_whole_preview_reads_each_sample_as_its_own_phase_does_bit_for_bit():
    # The preview gathers each sample's phase coefficients from one table and evaluates the closed forms once;
    # that must be the phase's own formula, not an approximation of it.
    first = _stance([0.0, 0.0, 0.95], [1.0, 0.1, 0.3], 0.4, [0.0, 0.0], [0.1, 0.02], 10.8, 10.9)
    flight = FlightPhase(np.array([0.2]), *end_state(MODEL, first))
    com, vel, heading, rate = end_state(MODEL, flight)
    second = StancePhase.start(MODEL, com, vel, heading, rate, np.array([0.3]), np.array([[0.5, 0.0]]),
                               np.array([[0.6, 0.0]]), np.zeros(1), np.array([10.7]), np.array([10.8]),
                               np.array([-0.4]))
    preview = Preview(MODEL, [first, flight, second])
    t = np.array([[0.0, 0.13, 0.41, 0.55, 0.61, 0.77, 0.9]])
    points = preview.at(t)
    assert points.phase.tolist() == [[0, 0, 1, 1, 2, 2, 2]]
    phases = (first, flight, second)
    for k, i in enumerate(points.phase[0]):
        own = phases[i].at(MODEL, t[:, k:k + 1] - preview.starts[0, i])
        for name in ("com", "com_velocity", "com_accel", "heading", "heading_rate", "cop", "rest"):
            assert np.array_equal(getattr(points, name)[:, k], getattr(own, name)[:, 0], equal_nan=True), name


def test_a_population_previews_like_its_members_one_by_one():
    rng = np.random.default_rng(3)
    P = 6
    com = np.column_stack([rng.normal(size=(P, 2)) * 0.05, 0.9 + 0.05 * rng.random(P)])
    vel = rng.normal(size=(P, 3)) * 0.5
    args = (com, vel, rng.random(P), rng.random(P), 0.2 + rng.random(P), rng.normal(size=(P, 2)) * 0.1,
            rng.normal(size=(P, 2)) * 0.1, np.zeros(P), 10.7 + rng.random(P), 10.7 + rng.random(P), rng.random(P))
    batch = StancePhase.start(MODEL, *args).at(MODEL, np.tile([[0.05, 0.15]], (P, 1)))
    for i in range(P):
        one = StancePhase.start(MODEL, *(a[i:i + 1] for a in args)).at(MODEL, np.array([[0.05, 0.15]]))
        assert np.allclose(one.com[0], batch.com[i], rtol=1e-13, atol=1e-13)


def _settled_humanoid():
    """bipv3 after 0.3 s on both feet, its planner geometry and a fresh contact memory."""
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    world.step(300)
    character = world.character()
    return world, character, body_geometry(character), ContactMemory()


@pytest.fixture(scope="module")
def standing():
    _, character, geometry, memory = _settled_humanoid()
    memory.touchdown_com = tuple(character.com_position())
    return character, geometry, memory


def test_body_geometry_and_reduced_state_of_the_standing_humanoid(standing):
    character, geometry, memory = standing
    legs = character.spec.roles.legs
    hip, ankle = character.joint_anchor(legs["left"].hip), character.joint_anchor(legs["left"].ankle)
    assert geometry.rest_leg == pytest.approx(np.linalg.norm(hip - ankle), abs=0.01)
    assert geometry.leg_min < geometry.rest_leg < geometry.leg_max
    assert geometry.standing_com_height == pytest.approx(character.com_position()[2], abs=0.01)
    assert geometry.hips["left"][1] == pytest.approx(-geometry.hips["right"][1])
    assert geometry.sole.half_length > geometry.sole.half_width > 0
    start = reduce(character, memory, geometry, 0.0)
    assert start.start_phase == 1                   # both feet down
    assert start.feet["left"].centre[1] > 0 > start.feet["right"].centre[1]
    quad = start.double_support_quad
    area = 0.5 * abs(np.dot(quad[:, 0], np.roll(quad[:, 1], -1)) - np.dot(quad[:, 1], np.roll(quad[:, 0], -1)))
    width = start.feet["left"].centre[1] - start.feet["right"].centre[1] + 2 * geometry.sole.half_width
    assert area == pytest.approx(width * 2 * geometry.sole.half_length, rel=0.02)


def _start(geometry, phase=1, velocity=(1.2, 0.0, 0.0)):
    feet = {"left": FootOnGround((0.0, 0.09, 0.0), 0.0), "right": FootOnGround((0.0, -0.09, 0.0), 0.0)}
    return PlanStart(com=(0.0, 0.0, geometry.standing_com_height), com_velocity=velocity, heading=0.0,
                     heading_rate=0.0, start_phase=phase, stance_side="left", feet=feet,
                     com_at_touchdown=(0.0, 0.0, geometry.standing_com_height)).with_quad(geometry.sole)


def test_the_schedule_decodes_signed_theta_and_round_trips(standing):
    _, geometry, _ = standing
    rng = np.random.default_rng(0)
    x = rng.random((50, SIZE))
    d = decode(x, _start(geometry), geometry)
    assert ((d.durations[:, 2] == 0) | (d.durations[:, 3] == 0)).all()     # never both flight and DS
    assert (d.durations[x[:, THETA34] > 0.55, 3] == 0).all()
    assert (d.durations[x[:, THETA34] < 0.45, 2] == 0).all()
    again = decode(encode(d, geometry), _start(geometry), geometry)
    assert np.allclose(again.durations, d.durations, atol=1e-12)
    assert np.allclose(again.cop_uv, d.cop_uv) and np.allclose(again.swing_offset, d.swing_offset)
    one_foot = decode(x, _start(geometry, phase=2), geometry)
    in_air = decode(x, _start(geometry, phase=3), geometry)
    assert (one_foot.durations[:, 0] == 0).all()
    assert (in_air.durations[:, [0, 1, 3]] == 0).all()


def test_quads_and_bilinear_knots():
    left = np.array([[0.1, 0.15], [0.1, 0.05], [-0.1, 0.05], [-0.1, 0.15]])
    quad = largest_quad(np.concatenate([left, left - [0, 0.2]]))
    assert sorted(map(tuple, np.round(quad, 6))) == sorted([(0.1, 0.15), (0.1, -0.15), (-0.1, -0.15), (-0.1, 0.15)])
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 2.0], [0.0, 2.0]])
    uv = np.array([[0.0, 0.0], [1.0, 1.0], [0.5, 0.25]])
    assert np.allclose(bilinear(np.broadcast_to(corners, (3, 4, 2)), uv), [[0, 0], [1, 2], [0.5, 0.5]])


def test_the_new_foot_lands_within_half_a_leg_of_the_com(standing):
    _, geometry, _ = standing
    x = np.random.default_rng(1).random((40, SIZE))
    rollout = roll_out(x, _start(geometry), geometry)
    com_at_touchdown = rollout.preview.at(rollout.touchdown_time[:, None]).com[:, 0, :2]
    offset = np.abs(rollout.swing_target[:, :2] - com_at_touchdown).sum(axis=1)
    assert (offset <= geometry.rest_leg / 2 + 1e-9).all()
    assert (rollout.knots[:, 1:3, 1] > 0).all()        # K1, K2 lie under foot A, the left one


def test_objective_terms(standing):
    _, geometry, _ = standing
    start = _start(geometry, velocity=(1.0, 0.0, 2.0))
    x = standing_guess()[None].repeat(2, axis=0)
    x[1, THETA34] = 0.9          # a 0.4 s flight after phase 2
    x[:, T1] = 0.0
    rollout = roll_out(x, start, geometry)
    rise = apex_rise(rollout)
    assert rise[0] == 0.0 and rise[1] > 0.0
    d = rollout.decoded.durations
    t0 = d[1, 0] + d[1, 1]
    begin = rollout.preview.at(np.array([[t0, t0 + d[1, 2]]]).repeat(2, axis=0))
    vz = begin.com_velocity[1, 0, 2]
    apex = begin.com[1, 0, 2] + vz**2 / (2 * MODEL.gravity) if vz > 0 else begin.com[1, 0, 2]
    assert rise[1] == pytest.approx(apex - min(begin.com[1, 0, 2], begin.com[1, 1, 2]), abs=1e-9)
    goals = GaitGoals(step_duration=float(d[0, :3].sum()), w_apex=1.0, apex_height=0.3)
    costs = plan_costs(rollout, start, geometry, goals, heading_goal=0.0)
    assert costs["apex"][0] == pytest.approx(0.09) and costs["step_time"][0] == pytest.approx(
        10 * (d[0, 3:].sum() - d[0, :3].sum()) ** 2)
    assert set(costs) >= {"step_time", "step_length", "heading", "accel", "leg", "hip", "leg_limits", "landing"}
    assert all(np.isfinite(v).all() and (v >= 0).all() for v in costs.values())


def test_the_planner_improves_on_its_start_and_repeats_itself_bit_for_bit(standing):
    _, geometry, _ = standing
    start = _start(geometry)
    planner = Planner(geometry, GaitGoals(), PlannerParams(max_evaluations=600))
    guess = standing_guess()
    first = planner.plan(start, 0.0, warm=guess)
    second = planner.plan(start, 0.0, warm=guess)
    assert np.array_equal(first.x, second.x) and first.cost == second.cost
    assert first.cost < planner.cost(guess[None], start, 0.0)[0][0]
    assert first.cost == pytest.approx(sum(first.terms.values()))
    assert 0 < first.evaluations <= 1 + 600 + planner.params.popsize   # the start, then whole generations


def test_the_continuity_term_holds_a_warm_started_plan_near_the_previous_one(standing):
    """strider's continuity term: a warm-started plan pays its weight per squared normalized unit away from the
    previous plan; without a warm start, or at weight 0 (the source), there is no such term."""
    _, geometry, _ = standing
    start = _start(geometry)
    guess = standing_guess()
    params = PlannerParams(max_evaluations=300)
    source = Planner(geometry, GaitGoals(), params)
    held = Planner(geometry, GaitGoals(), dataclasses.replace(params, continuity_weight=1e6))
    nudged = np.clip(guess + 0.05, 0.0, 1.0)
    total, terms, _ = held.cost(nudged[None], start, 0.0, previous=guess)
    plain_total, plain_terms, _ = source.cost(nudged[None], start, 0.0, previous=guess)
    assert "continuity" not in plain_terms
    assert terms["continuity"][0] == pytest.approx(1e6 * np.sum((nudged - guess) ** 2))
    assert total[0] == pytest.approx(plain_total[0] + terms["continuity"][0])
    free, kept = source.plan(start, 0.0, warm=guess), held.plan(start, 0.0, warm=guess)
    assert "continuity" in kept.terms and "continuity" not in held.plan(start, 0.0).terms
    assert np.sum((kept.x - guess) ** 2) < 0.1 * np.sum((free.x - guess) ** 2)


def test_a_warm_start_shifts_the_schedule_by_the_time_elapsed(standing):
    _, geometry, _ = standing
    start = _start(geometry)
    x = standing_guess()
    d0 = decode(x[None], start, geometry).durations[0]
    later = decode(shift(x, 0.05, geometry, start_phase=1, stepped=False)[None], start, geometry).durations[0]
    assert later[0] == pytest.approx(d0[0] - 0.05) and np.allclose(later[1:], d0[1:])
    x[SWING] = [0.8, 0.3]
    before = rotate45(decode(x[None], start, geometry).swing_offset)[0]
    stepped = shift(x, 0.0, geometry, start_phase=1, stepped=True)
    after = rotate45(decode(stepped[None], start, geometry).swing_offset)[0]
    assert after == pytest.approx(before * [1, -1])      # the other foot leads now: the offset mirrors
    assert decode(stepped[None], start, geometry).durations[0, 1] == pytest.approx(d0[4])


def test_the_swing_path_reaches_its_foothold_and_a_replan_does_not_make_it_jump():
    from strider.methods.slip.swing import SwingPath
    path = SwingPath(1.0, [0.0, -0.1, 0.0])
    path.aim(1.0, [0.6, -0.1, 0.05], touchdown_time=1.4)
    middle = path.at(1.2)
    assert middle.position[2] == pytest.approx(0.025 + 0.10)          # the line's midpoint plus the clearance
    before = path.at(1.25)
    path.aim(1.25, [0.7, -0.05, 0.05], touchdown_time=1.45)             # a replan moves the foothold
    after = path.at(1.25)
    assert np.allclose(before.position, after.position[:2].tolist() + [before.position[2]], atol=1e-12)
    assert np.allclose(before.velocity[:2], after.velocity[:2], atol=1e-12)
    end = path.at(1.45)
    assert np.allclose(end.position, [0.7, -0.05, 0.05], atol=1e-9) and np.allclose(end.velocity[:2], 0, atol=1e-9)


def test_the_whole_body_qp_alone_stands_the_torque_driven_humanoid_and_centres_its_com():
    from strider.methods.slip.wbc import BodyTargets, WholeBodyQP
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),)))
    world.forward()
    hero = world.character()
    qp = WholeBodyQP(world, hero, rest_leg=body_geometry(hero).rest_leg)
    feet = [hero.sole_corners(leg.foot).mean(axis=0) for leg in hero.spec.roles.legs.values()]
    target = np.array([np.mean([f[0] for f in feet]), 0.0, hero.com_position()[2]])
    assert abs(hero.com_position()[0] - target[0]) > 0.01          # it starts off centre
    for _ in range(500):                                            # 2 s at 250 Hz
        acc = 100.0 * (target - hero.com_position()) - 20.0 * hero.com_velocity()
        hero.motor_torques[:] = qp.torques(BodyTargets(com_accel=acc, heading=0.0))
        world.step(4)
    assert np.allclose(hero.com_position(), target, atol=0.005)
    assert not hero.non_foot_contact()
    assert qp.solver.stats.solves == 500 and qp.solver.stats.failures == 0


def test_the_qp_does_not_pull_a_landing_foot_back_up():
    """A planted foot's residual velocity decays, except motion into the ground, which the ground stops: decaying
    that too asked a landing foot to accelerate upward, and it bounced."""
    from strider.methods.slip.wbc import BodyTargets, WholeBodyQP
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),)))
    world.forward()
    hero = world.character()
    qp = WholeBodyQP(world, hero, rest_leg=body_geometry(hero).rest_leg)
    solutions = []
    solve = qp.solver.solve
    qp.solver.solve = lambda *args, **kwargs: solutions.append(solve(*args, **kwargs)) or solutions[-1]
    root, _ = hero.root_pose()
    hero.set_root_position(root + [0, 0, 0.01])          # dropped 1 cm, it lands at 0.44 m/s
    world.forward()
    while not hero.contact_normal_forces().any():
        world.step(1)
    assert hero.com_velocity()[2] < -0.3
    qp.torques(BodyTargets(com_accel=np.zeros(3), heading=0.0))
    qdd = solutions[-1][qp.nu:qp.nu + qp.nv]
    for leg in hero.spec.roles.legs.values():
        origin = hero.body_position(leg.foot)
        lift = qp.dynamics.point_jacobian(leg.foot, origin) @ qdd + qp.dynamics.point_bias_acceleration(
            leg.foot, origin)[0]
        assert lift[2] < 1.0          # m/s^2; decaying the 0.45 m/s downward would have asked for 9 upward


def test_a_foot_that_just_landed_keeps_its_contact_while_it_takes_the_load():
    world, hero, _, _ = _settled_humanoid()
    memory = ContactMemory(ReduceParams(landing_hold=0.2))
    memory.landed_at["left"] = 0.2
    root, _ = hero.root_pose()
    hero.set_root_position(root + [0, 0, 0.3])          # both feet unloaded
    world.forward()
    for t in (0.304, 0.308):
        changed = memory.update(hero, t, world.scene.gravity, held=("left", "right"))
    assert changed == ["right"] and memory.down["left"]     # the left landed 0.1 s ago, and the plan keeps it
    memory.update(hero, 0.404, world.scene.gravity, held=("left",))
    assert memory.update(hero, 0.408, world.scene.gravity, held=("left",)) == ["left"]   # after 0.2 s it lifts
    source = ContactMemory()
    source.landed_at["left"] = 0.2
    source.update(hero, 0.304, world.scene.gravity, held=("left",))
    assert sorted(source.update(hero, 0.308, world.scene.gravity, held=("left",))) == ["left", "right"]


def test_contact_events_are_debounced_and_set_the_start_phase():
    world, hero, geometry, memory = _settled_humanoid()
    assert memory.update(hero, 0.3, world.scene.gravity) == []                       # both feet down, as assumed
    root, _ = hero.root_pose()
    hero.set_root_position(root + [0, 0, 0.3])
    world.forward()
    assert memory.update(hero, 0.304, world.scene.gravity) == []                     # one tick is not yet an event
    assert sorted(memory.update(hero, 0.308, world.scene.gravity)) == ["left", "right"]
    assert reduce(hero, memory, geometry, 0.308).start_phase == 3


def test_an_unknown_step_timing_rule_is_refused():
    from strider.errors import UsageError
    with pytest.raises(UsageError, match="step_timing 'lateral' is not one of touchdown, literal"):
        GaitGoals(step_timing="lateral")


def test_the_heading_goal_at_each_step_also_weighs_the_first_touchdown(standing):
    """Eq. 21 alone weighs the heading at the preview's end; strider's switch weighs it at the first touchdown
    too, so a plan turning away now cannot hide behind a promise to turn back later."""
    _, geometry, _ = standing
    turning = dataclasses.replace(_start(geometry), heading_rate=-1.0)
    x = standing_guess()[None]
    x[0, HEADING_ACCEL] = [0.5, 0.5, 1.0, 1.0]     # no turn in the first step, turning back in the second
    rollout = roll_out(x, turning, geometry)
    at = rollout.preview.at(np.stack([rollout.touchdown_time, rollout.preview.total], axis=1))
    at_touchdown, at_end = at.heading[0]
    assert at_touchdown < -0.05
    source = plan_costs(rollout, turning, geometry, GaitGoals(w_heading=2.0), heading_goal=0.0)["heading"][0]
    each = plan_costs(rollout, turning, geometry, GaitGoals(w_heading=2.0, heading_each_step=True),
                      heading_goal=0.0)["heading"][0]
    assert source == pytest.approx(2.0 * at_end**2)
    assert each == pytest.approx(2.0 * (at_touchdown**2 + at_end**2))
    assert SlipParams().configured("default").goals.heading_each_step
    assert not SlipParams().configured("source").goals.heading_each_step


# --- sloped ground ---------------------------------------------------------------------------------
def _ramp_terrain(degrees: float = 15.0, at: float = 0.5):
    from strider.bench.protocol import TerrainFeature
    from strider.bench.terrain import course_for
    from strider.methods.slip.schedule import CourseTerrain

    return CourseTerrain(course_for(TerrainFeature("ramp", "ramp", degrees, tread=5.0), at=at, seed=0))


def test_a_sole_lies_parallel_to_a_ramp_and_level_on_flat_ground(standing):
    from strider.methods.slip.schedule import sole_normal

    _, geometry, _ = standing
    ramp = _ramp_terrain(15.0)
    normal = sole_normal(ramp, geometry.sole, (1.5, 0.0), 0.0)
    slope = math.radians(15.0)
    assert normal == pytest.approx([-math.sin(slope), 0.0, math.cos(slope)], abs=1e-9)
    across = sole_normal(ramp, geometry.sole, (1.5, 0.0), math.pi / 2)     # turned across the ramp: still its plane
    assert across == pytest.approx(normal, abs=1e-9)
    assert sole_normal(Terrain(), geometry.sole, (1.5, 0.3), 0.7).tolist() == [0.0, 0.0, 1.0]


def test_a_foothold_on_a_ramp_is_supported_and_one_over_a_step_edge_is_not(standing):
    from strider.bench.protocol import TerrainFeature
    from strider.bench.terrain import course_for
    from strider.methods.slip.objectives import ConstraintWeights, foothold_costs
    from strider.methods.slip.schedule import CourseTerrain

    _, geometry, _ = standing
    start = _start(geometry)
    x = standing_guess()[None]
    ramp = _ramp_terrain(15.0, at=0.0)
    rollout = roll_out(x, start, geometry, terrain=ramp)
    assert rollout.swing_target[0, 0] > 0.15 and rollout.swing_target[0, 2] > 0.03     # the foothold is on the ramp
    assert foothold_costs(rollout, geometry, ramp, ConstraintWeights())["unsupported"][0] == 0.0
    edge = float(rollout.swing_target[0, 0])      # a 5 cm step up under the sole's centre: half the sole hangs
    step = CourseTerrain(course_for(TerrainFeature("step", "step_up", 0.05), at=edge, seed=0))
    on_step = roll_out(x, start, geometry, terrain=step)
    assert foothold_costs(on_step, geometry, step, ConstraintWeights())["unsupported"][0] > 1e3


def test_the_swing_arc_rises_over_a_step_up_and_keeps_the_spec_clearance_elsewhere():
    from strider.methods.slip.swing import SwingParams, SwingPath

    def step_up(xy):
        return np.where(np.asarray(xy)[..., 0] >= 0.4, 0.2, 0.0)

    flat = SwingPath(0.0, [0.0, 0.0, 0.0], ground=lambda xy: np.zeros(np.shape(xy)[:-1]), sole_reach=0.1)
    flat.aim(0.0, [0.6, 0.0, -0.02], touchdown_time=0.4)
    assert flat.arc == SwingParams().clearance
    up = SwingPath(0.0, [0.0, 0.0, 0.0], ground=step_up, sole_reach=0.1)
    up.aim(0.0, [0.6, 0.0, 0.2], touchdown_time=0.4)
    assert SwingParams().clearance < up.arc <= SwingParams().max_clearance
    margin = SwingParams().terrain_margin
    checked = 0
    for s in np.linspace(0.05, 0.95, 19):     # wherever the step stands above the line, the whole sole clears it
        floor = max(float(step_up(np.array([0.6 * s + dx, 0.0]))) for dx in (-0.1, 0.0, 0.1))
        if floor - 0.2 * s > margin:
            checked += 1
            assert 0.2 * s + up.arc * math.sin(math.pi * s) >= floor + margin - 0.01   # 24 samples, not 19
    assert checked >= 5


def test_the_balls_term_has_a_slope_for_a_hit_plan_only_at_striders_scale(standing):
    """A ball through the planned COM, and one passing 0.25 m off it, are both inside the 0.5 m clearance. At the
    spec's 0.01 m^2 the sigmoid is flat there, so both plans pay the same and the planner sees no way out; at
    strider's scale the nearer miss pays less."""
    from strider.methods.slip.objectives import ConstraintWeights, Projectile

    _, geometry, _ = standing
    start = _start(geometry, velocity=(0.0, 0.0, 0.0))
    rollout = roll_out(standing_guess()[None], start, geometry)
    com = np.asarray(start.com)

    def ball_cost(offset: float, constraints: ConstraintWeights) -> float:
        # past the COM's height 0.5 s after the plan starts, 1 m from where it was thrown, ``offset`` to its side
        ball = Projectile(tuple(com + [-1.0, offset, 0.0]), (2.0, 0.0, 0.5 * MODEL.gravity * 0.5))
        costs = plan_costs(rollout, start, geometry, GaitGoals(), 0.0, constraints, projectiles=(ball,))
        return float(costs["projectile"][0])

    source = ConstraintWeights()
    strider = SlipParams().configured("default").constraints
    assert SlipParams().configured("source").constraints == source and strider.projectile_scale > 0.01
    flat = pytest.approx(source.projectile_weight, abs=0.01)   # next to the other terms' size: no slope
    assert ball_cost(0.0, source) == flat and ball_cost(0.25, source) == flat
    assert ball_cost(0.25, strider) < ball_cost(0.0, strider) - 50.0
    assert ball_cost(1.5, strider) < 1.0       # a ball that passes well clear costs next to nothing
