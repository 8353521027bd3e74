"""The control vocabulary: quaternions, PD servos, trajectories, IK, IPM, gravity compensation,
virtual forces and fall detection. Physics checks run on the real engine through ``strider.sim``."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from strider import quat
from strider.characters import load_character
from strider.control.falls import FallCriteria, has_fallen, tilt
from strider.control.frames import CharacterFrame
from strider.control.gravity import gravity_compensation
from strider.control.ik import orient_segment, two_link, universal_angles
from strider.control.ipm import IPMParams, slope_step_offset, step_offset
from strider.control.pd import pd_torque, quaternion_error, servo_command
from strider.control.trajectory import CatmullRom
from strider.control.virtual_force import com_relative_to_foot, jacobian_transpose
from strider.sim import CharacterPlacement, Scene, World

G = 9.81
finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)


@st.composite
def unit_quats(draw) -> np.ndarray:
    q = np.array([draw(finite) for _ in range(4)])
    assume(np.linalg.norm(q) > 0.2)
    return q / np.linalg.norm(q)


@st.composite
def rotvecs(draw, max_angle: float = 3.0) -> np.ndarray:
    axis = draw(vec3)
    assume(np.linalg.norm(axis) > 0.2)
    angle = draw(st.floats(-max_angle, max_angle))
    return axis / np.linalg.norm(axis) * angle


def _scipy(q: np.ndarray) -> Rotation:
    return Rotation.from_quat([q[1], q[2], q[3], q[0]])


def _same_rotation(a: np.ndarray, b: np.ndarray, atol: float = 1e-9) -> None:
    assert min(np.abs(a - b).max(), np.abs(a + b).max()) < atol, (a, b)


# --- quaternions -------------------------------------------------------------------------------
@given(unit_quats(), unit_quats(), unit_quats())
def test_mul_is_associative_and_composes_rotations(a, b, c):
    np.testing.assert_allclose(quat.mul(quat.mul(a, b), c), quat.mul(a, quat.mul(b, c)), atol=1e-12)
    np.testing.assert_allclose(quat.to_matrix(quat.mul(a, b)), quat.to_matrix(a) @ quat.to_matrix(b), atol=1e-12)
    np.testing.assert_allclose(quat.mul(a, quat.conj(a)), quat.IDENTITY, atol=1e-12)
    np.testing.assert_allclose(quat.mul(quat.IDENTITY, a), a, atol=1e-15)


@given(unit_quats(), vec3)
def test_rotate_matches_the_rotation_matrix_and_scipy(q, v):
    r = quat.to_matrix(q)
    np.testing.assert_allclose(quat.rotate(q, v), r @ v, atol=1e-12)
    np.testing.assert_allclose(r, _scipy(q).as_matrix(), atol=1e-12)
    np.testing.assert_allclose(r.T @ r, np.eye(3), atol=1e-12)
    assert np.linalg.det(r) == pytest.approx(1.0)


@given(unit_quats())
def test_from_matrix_inverts_to_matrix(q):
    back = quat.from_matrix(quat.to_matrix(q))
    _same_rotation(back, q, atol=1e-9)
    assert back[0] >= 0.0


@pytest.mark.parametrize("q", [quat.about_x(math.pi), quat.about_y(math.pi), quat.about_z(math.pi),
                               quat.about_x(3.0), quat.from_axis_angle([1.0, 1.0, 0.0], 3.1)])
def test_from_matrix_near_half_turns(q):
    _same_rotation(quat.from_matrix(quat.to_matrix(q)), q, atol=1e-9)


@given(unit_quats())
def test_exp_log_round_trip_and_scipy_rotvec(q):
    r = quat.log(q)
    assert np.linalg.norm(r) <= math.pi + 1e-12          # the shorter way round
    _same_rotation(quat.exp(r), q, atol=1e-12)
    sc = _scipy(q).as_rotvec()
    if np.linalg.norm(sc) < math.pi - 1e-6:
        np.testing.assert_allclose(r, sc, atol=1e-9)


@given(rotvecs(max_angle=3.1))
def test_log_inverts_exp(r):
    np.testing.assert_allclose(quat.log(quat.exp(r)), r, atol=1e-9)


def test_log_and_exp_are_exact_for_tiny_angles():
    r = np.array([1e-12, -2e-12, 3e-13])
    np.testing.assert_allclose(quat.log(quat.exp(r)), r, rtol=1e-9, atol=0)
    assert quat.log(quat.IDENTITY) == pytest.approx(np.zeros(3))


def test_batched_log_exp_match_single_calls():
    rng = np.random.default_rng(0)
    qs = quat.normalize(rng.normal(size=(7, 4)))
    np.testing.assert_allclose(quat.log(qs), np.array([quat.log(q) for q in qs]))
    rs = rng.normal(size=(7, 3))
    np.testing.assert_allclose(quat.exp(rs), np.array([quat.exp(r) for r in rs]))
    np.testing.assert_allclose(quat.mul(qs, qs[::-1]), np.array([quat.mul(a, b) for a, b in zip(qs, qs[::-1])]))


@given(st.floats(-3.1, 3.1), st.floats(-1.5, 1.5), st.floats(-1.5, 1.5))
def test_yaw_is_the_heading_of_the_x_axis(heading, pitch, roll):
    q = quat.mul(quat.about_z(heading), quat.mul(quat.about_y(pitch), quat.about_x(roll)))
    assert quat.yaw(q) == pytest.approx(heading, abs=1e-9)
    x_axis = quat.rotate(q, [1.0, 0.0, 0.0])
    assert quat.yaw(q) == pytest.approx(math.atan2(x_axis[1], x_axis[0]), abs=1e-9)
    frame = CharacterFrame.of(q, np.zeros(3))
    assert frame.heading == pytest.approx(heading, abs=1e-9)


@given(unit_quats(), unit_quats(), st.floats(0.0, 1.0))
def test_slerp_moves_at_constant_rate_along_the_short_arc(a, b, t):
    q = quat.slerp(a, b, t)
    assert np.linalg.norm(q) == pytest.approx(1.0)
    _same_rotation(quat.slerp(a, b, 0.0), a, atol=1e-9)
    _same_rotation(quat.slerp(a, b, 1.0), b, atol=1e-9)
    total = np.linalg.norm(quat.log(quat.mul(quat.conj(a), b)))
    assert total <= math.pi + 1e-9
    assert np.linalg.norm(quat.log(quat.mul(quat.conj(a), q))) == pytest.approx(t * total, abs=1e-8)
    assert np.linalg.norm(quat.log(quat.mul(quat.conj(q), b))) == pytest.approx((1 - t) * total, abs=1e-8)


@given(st.floats(-50.0, 50.0))
def test_wrap_angle(a):
    w = quat.wrap_angle(a)
    assert -math.pi <= w <= math.pi
    assert math.cos(w) == pytest.approx(math.cos(a), abs=1e-9)
    assert math.sin(w) == pytest.approx(math.sin(a), abs=1e-9)


# --- character frame ---------------------------------------------------------------------------
@given(st.floats(-3.1, 3.1), vec3, vec3)
def test_character_frame_round_trips(heading, v, origin):
    f = CharacterFrame(heading, origin)
    np.testing.assert_allclose(f.to_world(f.to_local(v)), v, atol=1e-12)
    np.testing.assert_allclose(f.to_world([1.0, 0.0, 0.0]), f.forward, atol=1e-12)
    np.testing.assert_allclose(f.to_world([0.0, 1.0, 0.0]), f.left, atol=1e-12)
    np.testing.assert_allclose(f.to_world(v), quat.rotate(f.quat, v), atol=1e-12)
    np.testing.assert_allclose(f.point_to_world([0.0, 0.0, 0.0]), origin)


# --- PD -----------------------------------------------------------------------------------------
@given(unit_quats(), rotvecs(max_angle=3.0))
def test_quaternion_error_is_the_child_frame_rotation_to_the_target(q, e):
    target = quat.mul(q, quat.exp(e))
    np.testing.assert_allclose(quaternion_error(q, target), e, atol=1e-9)
    np.testing.assert_allclose(quaternion_error(q, -target), e, atol=1e-9)   # sign of the quaternion is irrelevant


def test_pd_torque_points_back_to_the_target_and_damps():
    r = np.array([0.3, -0.2, 0.1])
    tau = pd_torque(quat.exp(r), quat.IDENTITY, np.zeros(3), kp=100.0, kd=10.0)
    np.testing.assert_allclose(tau, -100.0 * r)
    omega = np.array([1.0, 2.0, -1.0])
    damped = pd_torque(quat.IDENTITY, quat.IDENTITY, omega, kp=100.0, kd=10.0)
    assert damped @ omega < 0
    assert np.abs(pd_torque(quat.exp(r), quat.IDENTITY, omega, 1e4, 0.0, limit=50.0)).max() == pytest.approx(50.0)


def _floating_world(spec=None) -> World:
    return World(Scene((CharacterPlacement(spec or load_character("bipv3")),), gravity=0.0))


def _joint_error(world: World, joint: str, target: np.ndarray) -> float:
    q = world.data.qpos[world.character().joint(joint).qpos]
    return float(np.linalg.norm(quaternion_error(q, target)))


def test_pd_torque_applied_as_joint_torque_drives_a_ball_joint_to_its_target():
    world = _floating_world()
    ch, d = world.character(), world.data
    neck = ch.joint("torso_head")
    ch.set_servo_gains("torso_head", 0.0, 0.0)   # only the controller's torque acts on the neck
    target = quat.exp([0.25, -0.3, 0.2])
    start = _joint_error(world, "torso_head", target)
    errors = []
    for k in range(1500):
        q, omega = d.qpos[neck.qpos], d.qvel[neck.dof]   # ball-joint velocity is in the child frame
        d.qfrc_applied[neck.dof] = pd_torque(q, target, omega, kp=20.0, kd=3.0)
        world.step(1)
        if k % 250 == 249:
            errors.append(_joint_error(world, "torso_head", target))
    assert errors[0] < start
    assert errors[-1] < 1e-3 * start + 1e-4


def test_servo_torque_equals_kp_times_quaternion_error_at_the_update(bipv3, random_pose):
    world = World(Scene((CharacterPlacement(bipv3),)))
    ch, d = world.character(), world.data
    rng = np.random.default_rng(7)
    random_pose(world, ch, rng, spread=0.5)
    balls = [j for j in ch.joints.values() if j.kind == "ball"]
    assert len(balls) == 7
    expected = {}
    for j in balls:
        kp = bipv3.joint_gains(j.name).kp
        limit = bipv3.joint_gains(j.name).limit
        e = rng.normal(size=3)
        e *= 0.8 * limit / kp / np.abs(e).max() if kp * np.abs(e).max() > 0.8 * limit else 1.0
        q = d.qpos[j.qpos].copy()
        target = quat.mul(q, quat.exp(e))                  # so log(q^-1 qd) = e by construction
        d.ctrl[j.servos] = servo_command(q, target)
        expected[j.name] = kp * e
    world.forward()
    assert not d.qvel.any()
    for j in balls:
        np.testing.assert_allclose(d.actuator_force[j.servos], expected[j.name], atol=1e-9, err_msg=j.name)
    # The batched form (all ball joints in one call) gives the same commands.
    qs = np.array([d.qpos[j.qpos] for j in balls])
    targets = quat.mul(qs, quat.exp(rng.normal(scale=0.2, size=(len(balls), 3))))
    np.testing.assert_allclose(servo_command(qs, targets), np.array([servo_command(a, b) for a, b in zip(qs, targets)]))


def test_ball_servo_driven_by_servo_command_reaches_its_target():
    world = _floating_world()
    ch, d = world.character(), world.data
    hip = ch.joint("lHip")
    target = quat.exp([0.3, -0.4, 0.2])
    errors = []
    for k in range(750):                       # control at 500 Hz, physics at 1 kHz
        d.ctrl[hip.servos] = servo_command(d.qpos[hip.qpos], target)
        world.step(2)
        if k % 150 == 149:
            errors.append(_joint_error(world, "lHip", target))
    assert errors[-1] < 2e-3
    assert errors[0] < 0.5 * np.linalg.norm([0.3, -0.4, 0.2])


# --- Catmull-Rom --------------------------------------------------------------------------------
@st.composite
def knots(draw, min_n: int = 2):
    n = draw(st.integers(min_n, 7))
    gaps = [draw(st.floats(0.05, 1.0)) for _ in range(n - 1)]
    start = draw(st.floats(-1.0, 1.0))
    phases = tuple(np.concatenate([[start], start + np.cumsum(gaps)]).tolist())
    values = tuple(draw(st.floats(-5.0, 5.0)) for _ in range(n))
    return phases, values


@given(knots())
def test_catmull_rom_passes_through_knots_and_clamps(k):
    phases, values = k
    curve = CatmullRom(phases, values)
    for p, v in zip(phases, values):
        assert curve(p) == pytest.approx(v, abs=1e-12)
    assert curve(phases[0] - 0.5) == values[0]
    assert curve(phases[-1] + 0.5) == values[-1]


@given(knots(min_n=3))
@settings(max_examples=50)
def test_catmull_rom_is_c1_at_interior_knots(k):
    phases, values = k
    curve = CatmullRom(phases, values)
    h = 1e-7
    curvature = 12 * (max(map(abs, values)) + 1) / min(np.diff(phases)) ** 2
    for p in phases[1:-1]:
        left = (curve(p) - curve(p - h)) / h
        right = (curve(p + h) - curve(p)) / h
        assert left == pytest.approx(right, abs=curvature * h + 1e-6)


@given(knots(), st.floats(-3.0, 3.0), st.floats(-3.0, 3.0), st.floats(0.0, 1.0))
def test_catmull_rom_reproduces_straight_lines(k, slope, offset, s):
    phases, _ = k
    curve = CatmullRom(phases, tuple(offset + slope * p for p in phases))
    p = phases[0] + s * (phases[-1] - phases[0])
    assert curve(p) == pytest.approx(offset + slope * p, abs=1e-9)


def test_catmull_rom_rejects_bad_knots():
    with pytest.raises(ValueError):
        CatmullRom((0.0, 0.5, 0.5), (1.0, 2.0, 3.0))
    with pytest.raises(ValueError):
        CatmullRom((0.0, 1.0), (1.0,))
    assert CatmullRom.constant(0.7)(12.0) == 0.7


# --- IK -----------------------------------------------------------------------------------------
@st.composite
def limbs(draw):
    upper, lower = draw(st.floats(0.2, 0.6)), draw(st.floats(0.2, 0.6))
    root = draw(vec3)
    direction = draw(vec3)
    assume(np.linalg.norm(direction) > 0.2)
    direction = direction / np.linalg.norm(direction)
    bend = draw(vec3)
    assume(np.linalg.norm(np.cross(bend, direction)) > 0.2)
    return upper, lower, root, direction, bend


@given(limbs(), st.floats(0.02, 0.98), st.floats(-1.5, 1.5))
def test_two_link_reaches_reachable_targets(limb, frac, twist):
    upper, lower, root, direction, bend = limb
    lo, hi = abs(upper - lower) + 1e-3, upper + lower - 1e-3
    dist = lo + frac * (hi - lo)
    target = root + dist * direction
    middle, angle = two_link(root, target, upper, lower, bend, twist)
    assert np.linalg.norm(middle - root) == pytest.approx(upper, abs=1e-9)
    assert np.linalg.norm(target - middle) == pytest.approx(lower, abs=1e-9)
    a, b = middle - root, target - middle
    assert angle == pytest.approx(math.acos(np.clip(a @ b / (upper * lower), -1, 1)), abs=1e-7)
    # The middle joint bends towards ``bend`` (its part across the root-target line), turned by
    # ``twist`` about that line.
    offset = (middle - root) - ((middle - root) @ direction) * direction
    bend_across = bend - (bend @ direction) * direction
    expected = quat.rotate(quat.from_axis_angle(direction, twist), bend_across / np.linalg.norm(bend_across))
    np.testing.assert_allclose(offset / np.linalg.norm(offset), expected, atol=1e-6)


@given(limbs(), st.floats(1.01, 3.0))
def test_two_link_straightens_towards_unreachable_targets(limb, stretch):
    upper, lower, root, direction, bend = limb
    target = root + stretch * (upper + lower) * direction
    middle, angle = two_link(root, target, upper, lower, bend)
    assert angle < 0.01
    assert np.linalg.norm(middle - root) == pytest.approx(upper, abs=1e-9)
    np.testing.assert_allclose((middle - root) / upper, direction, atol=5e-3)


@given(vec3, vec3, vec3, vec3)
def test_orient_segment_maps_local_axes_onto_the_requested_ones(d_local, a_local, d_world, a_world):
    for d, a in ((d_local, a_local), (d_world, a_world)):
        assume(np.linalg.norm(d) > 0.2 and np.linalg.norm(np.cross(d, a)) > 0.1)
    q = orient_segment(d_local, a_local, d_world, a_world)
    assert np.linalg.norm(q) == pytest.approx(1.0)
    unit = d_world / np.linalg.norm(d_world)
    np.testing.assert_allclose(quat.rotate(q, d_local / np.linalg.norm(d_local)), unit, atol=1e-9)

    def perp(a, d):
        d = d / np.linalg.norm(d)
        p = a - d * (a @ d)
        return p / np.linalg.norm(p)

    np.testing.assert_allclose(quat.rotate(q, perp(a_local, d_local)), perp(a_world, d_world), atol=1e-9)


@given(st.floats(-1.4, 1.4), st.floats(-1.4, 1.4))
def test_universal_angles_invert_rx_ry(a, b):
    assert universal_angles(quat.mul(quat.about_x(a), quat.about_y(b))) == pytest.approx((a, b), abs=1e-9)
    # The right ankle's first axis is -x: a rotation of ``a`` about -x, then ``b`` about y.
    right = quat.mul(quat.from_axis_angle([-1.0, 0.0, 0.0], a), quat.about_y(b))
    assert universal_angles(right, first_sign=-1.0) == pytest.approx((a, b), abs=1e-9)


# --- IPM ----------------------------------------------------------------------------------------
EXACT, LINEAR, VEL = IPMParams(variant="exact"), IPMParams(variant="linear"), IPMParams(variant="vel")
BIG_LEG = 100.0   # a leg long enough that the cap does not bind


@given(st.floats(0.0, 3.0), st.floats(0.5, 1.5))
def test_exact_ipm_conserves_pendulum_energy(v, h):
    d = step_offset(v, h, 0.0, BIG_LEG, EXACT)
    # 1/2 v^2 + g h = g sqrt(h^2 + d^2): the pendulum comes to rest over the new foot.
    assert 0.5 * v * v + G * h == pytest.approx(G * math.hypot(h, d), rel=1e-12)
    assert d >= step_offset(v, h, 0.0, BIG_LEG, LINEAR) - 1e-15
    assert step_offset(v, h, 0.0, BIG_LEG, LINEAR) == pytest.approx(v * math.sqrt(h / G))


@given(st.floats(-3.0, 3.0), st.floats(-2.0, 2.0), st.floats(0.5, 1.5))
def test_vel_ipm_keeps_the_desired_speed(v, vd, h):
    assume(abs(v) > abs(vd) + 1e-3)
    d = step_offset(v, h, vd, BIG_LEG, VEL)
    assert 0.5 * v * v + G * h == pytest.approx(0.5 * vd * vd + G * math.hypot(h, d), rel=1e-12)
    assert math.copysign(1.0, d) == math.copysign(1.0, v)


@given(st.floats(-3.0, 3.0), st.floats(0.5, 1.5), st.floats(0.0, 1.0))
def test_slope_ipm_pays_for_the_rise(v, h, rise):
    d = slope_step_offset(v, h, rise, G)
    # 1/2 v^2 = g rise |d| + g d^2 / (2 h): the linear pendulum lifts the COM by the foothold's rise as well.
    assert 0.5 * v * v == pytest.approx(G * rise * abs(d) + G * d * d / (2 * h), rel=1e-9, abs=1e-12)
    assert abs(d) <= abs(step_offset(v, h, 0.0, BIG_LEG, LINEAR)) + 1e-12
    assert d == 0.0 or math.copysign(1.0, d) == math.copysign(1.0, v)
    assert slope_step_offset(v, h, 0.0, G) == pytest.approx(step_offset(v, h, 0.0, BIG_LEG, LINEAR))


@pytest.mark.parametrize("params", [EXACT, LINEAR, VEL])
@given(v=st.floats(0.01, 3.0), h=st.floats(0.5, 1.5))
def test_ipm_sign_follows_velocity_and_is_capped(params, v, h):
    leg = 0.86
    forward, backward = step_offset(v, h, 0.0, leg, params), step_offset(-v, h, 0.0, leg, params)
    assert forward > 0 > backward
    assert forward == pytest.approx(-backward)
    cap = params.max_fraction * leg
    assert abs(forward) <= cap + 1e-12
    assert step_offset(50.0, h, 0.0, leg, params) == pytest.approx(cap)
    assert step_offset(-50.0, h, 0.0, leg, params) == pytest.approx(-cap)


def test_ipm_alpha_shortens_the_step_by_alpha_times_desired_speed():
    base = step_offset(1.0, 1.0, 0.0, BIG_LEG, EXACT)
    assert step_offset(1.0, 1.0, 1.2, BIG_LEG, EXACT) == pytest.approx(base - EXACT.alpha * 1.2)
    assert step_offset(0.0, 1.0, 0.0, BIG_LEG, EXACT) == 0.0


# --- gravity compensation -------------------------------------------------------------------------
@pytest.mark.parametrize("name, seed", [("bipv3", 1), ("bipv3", 2), ("robot", 3)])
def test_gravity_compensation_matches_mujoco_gravity_forces(name, seed, random_pose):
    spec = load_character(name)
    world = World(Scene((CharacterPlacement(spec),)))
    ch, d = world.character(), world.data
    random_pose(world, ch, np.random.default_rng(seed), spread=0.6)
    torques = gravity_compensation(ch.dof_axes(), ch.dof_anchors(), *ch.dof_subtree(), G)
    reference = d.qfrc_bias[ch.internal_dofs]     # qvel = 0: pure gravity, the torque that holds the pose
    assert np.abs(reference).max() > 10.0
    np.testing.assert_allclose(torques, reference, atol=1e-9)


# --- virtual forces -----------------------------------------------------------------------------
def test_jacobian_transpose_torques_deliver_the_force_power(random_pose):
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    ch, d = world.character(), world.data
    rng = np.random.default_rng(11)
    random_pose(world, ch, rng)
    d.qvel[ch.internal_dofs] = rng.normal(size=len(ch.internal_dofs))
    world.forward()
    force = rng.normal(size=3) * 100.0
    jac, _ = world.jacobian("hero/torso")
    tau = jacobian_transpose(jac, force, ch.internal_dofs)
    assert tau.shape == (31,)
    velocity = ch.body_velocity("torso")        # computed by MuJoCo from body velocities, not from J
    assert tau @ d.qvel[ch.internal_dofs] == pytest.approx(force @ velocity, rel=1e-9)


def test_com_jacobian_relative_to_the_foot(random_pose):
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    ch, d = world.character(), world.data
    rng = np.random.default_rng(12)
    random_pose(world, ch, rng)
    d.qvel[:] = rng.normal(size=world.model.nv)          # root moving too
    world.forward()
    com = ch.com_position()
    jv = com_relative_to_foot(ch.com_jacobian(), ch.point_jacobian("rFoot", com))
    foot_point_velocity = ch.body_velocity("rFoot") + np.cross(ch.body_angular_velocity("rFoot"),
                                                               com - ch.body_position("rFoot"))
    np.testing.assert_allclose(jv @ d.qvel, ch.com_velocity() - foot_point_velocity, atol=1e-9)
    # The free root moves COM and foot alike, so it has no share in J_V.
    np.testing.assert_allclose(jv[:, ch.root_dof:ch.root_dof + 6], 0.0, atol=1e-9)


# --- falls --------------------------------------------------------------------------------------
def _up(angle: float) -> np.ndarray:
    return np.array([math.sin(angle), 0.0, math.cos(angle)])


def test_has_fallen_thresholds():
    c = FallCriteria()
    assert tilt(_up(0.3)) == pytest.approx(0.3)
    assert not has_fallen(False, _up(0.0), 1.0, 1.0)
    assert not has_fallen(False, _up(c.max_tilt - 0.01), 1.0, 1.0)
    assert has_fallen(False, _up(c.max_tilt + 0.01), 1.0, 1.0)
    assert not has_fallen(False, _up(0.0), (c.min_height_fraction + 0.01) * 0.9, 0.9)
    assert has_fallen(False, _up(0.0), (c.min_height_fraction - 0.01) * 0.9, 0.9)
    assert has_fallen(True, _up(0.0), 1.0, 1.0)
    assert has_fallen(False, np.array([0.0, 0.0, -1.0]), 1.0, 1.0)      # upside down
    strict = FallCriteria(max_tilt=0.2, min_height_fraction=0.9)
    assert has_fallen(False, _up(0.25), 1.0, 1.0, strict)
    assert has_fallen(False, _up(0.0), 0.85, 1.0, strict)


def test_has_fallen_on_the_engine_standing_versus_lying(stiffen):
    world = World(Scene((CharacterPlacement(load_character("bipv3")),)))
    ch = world.character()
    stiffen(ch)
    standing = ch.body_position("pelvis")[2]

    def fallen() -> bool:
        up = ch.body_rotation("torso")[:, 2]
        return has_fallen(ch.non_foot_contact(), up, ch.body_position("pelvis")[2], standing)

    world.step(500)
    assert not fallen()
    d = world.data
    d.qpos[ch.root_qpos + 2] = 1.2
    d.qpos[ch.root_qpos + 3:ch.root_qpos + 7] = quat.about_y(math.pi / 2)   # lying face down, in the air
    d.qvel[:] = 0.0
    world.forward()
    assert fallen()                      # tilted, though touching nothing
    world.step(1500)
    assert ch.non_foot_contact() and fallen()


def test_stance_hip_servo_applies_the_root_pd_torque_to_the_pelvis():
    """Eq. 2.3 through the hip servo: the pelvis feels exactly the root PD's torque at the update."""
    from strider.control.stance_hip import root_torque, stance_hip_servo_command

    rng = np.random.default_rng(7)
    kp, kd = 1000.0, 200.0
    for _ in range(20):
        pelvis, thigh, target = (quat.exp(rng.normal(scale=0.4, size=3)) for _ in range(3))
        w_pelvis, w_thigh = rng.normal(size=3), rng.normal(size=3)
        hip = quat.mul(quat.conj(pelvis), thigh)
        hip_velocity = quat.rotate(quat.conj(thigh), w_thigh - w_pelvis)  # child (thigh) frame, as MuJoCo's qvel
        ctrl = stance_hip_servo_command(hip, target, thigh, w_thigh, kp, kd)
        servo = kp * (ctrl - quat.log(hip)) - kd * hip_velocity   # MuJoCo's affine servo, thigh frame
        on_pelvis = -quat.rotate(thigh, servo)
        expected = root_torque(pelvis, target, w_pelvis, kp, kd, limit=np.inf)
        np.testing.assert_allclose(on_pelvis, expected, atol=1e-9)


def test_within_reach_keeps_reachable_targets_and_the_height_of_far_ones():
    from strider.control.ik import within_reach

    hip = np.array([0.0, 0.0, 1.0])
    near = np.array([0.2, 0.1, 0.3])
    np.testing.assert_array_equal(within_reach(hip, near, 0.85), near)
    far = np.array([0.9, 0.3, 0.2])
    pulled = within_reach(hip, far, 0.85)
    assert pulled[2] == pytest.approx(far[2])
    assert np.linalg.norm(pulled - hip) == pytest.approx(0.85)
    # Still in the same horizontal direction.
    np.testing.assert_allclose(pulled[:2] / np.linalg.norm(pulled[:2]), far[:2] / np.linalg.norm(far[:2]))


def test_reachable_share_gives_up_the_extra_offset_first():
    from strider.control.ik import reachable_share

    # All of it fits.
    assert reachable_share((0.1, 0.1), (0.1, 0.0), 0.5) == 1.0
    # Part of it: |(0.3 + 0.4 s, 0.3)| = 0.5 at s = 0.25.
    assert reachable_share((0.3, 0.3), (0.4, 0.0), 0.5) == pytest.approx(0.25)
    # The base alone is out of reach: nothing of an extra that leads further out...
    assert reachable_share((0.6, 0.0), (0.1, 0.0), 0.5) == 0.0
    # ...all of one that brings it closer, and no more than returns it to the base's distance.
    assert reachable_share((0.6, 0.0), (-0.1, 0.0), 0.5) == 1.0
    assert reachable_share((0.6, 0.0), (-2.4, 0.0), 0.5) == pytest.approx(0.5)
    # No extra offset.
    assert reachable_share((0.1, 0.0), (0.0, 0.0), 0.5) == 1.0


def test_capture_point_against_the_support_polygon():
    from strider.control.capture import capture_margin, convex_hull, distance_outside, sole_corners
    from strider.control.support import Sole

    square = convex_hull(np.array([[0, 0], [1, 0], [1, 1], [0, 1], [0.5, 0.5]]))
    assert len(square) == 4
    assert distance_outside(np.array([0.5, 0.5]), square) == pytest.approx(-0.5)
    assert distance_outside(np.array([2.0, 0.5]), square) == pytest.approx(1.0)
    assert distance_outside(np.array([2.0, 2.0]), square) == pytest.approx(np.sqrt(2.0))
    sole = Sole(half_width=0.05, front=0.1, back=0.05)
    feet = [sole_corners(np.array([0.0, y, 0.06]), np.eye(3), sole) for y in (0.1, -0.1)]
    # At rest over the feet: inside; at 0.5 m/s forward from 1 m high the pendulum rests 0.16 m ahead: outside.
    assert capture_margin(np.array([0.0, 0.0, 1.0]), np.zeros(3), 0.0, 9.81, feet) < 0
    outside = capture_margin(np.array([0.0, 0.0, 1.0]), np.array([0.5, 0.0, 0.0]), 0.0, 9.81, feet)
    assert outside == pytest.approx(0.5 * np.sqrt(1.0 / 9.81) - 0.1)
