"""The controller's fast paths give the same bits as the straightforward NumPy code they replaced.

Each reference below is the earlier implementation, kept here as the specification:
a speed-up of the control loop must not change a single simulated trajectory, so
these compare with ``np.array_equal`` / ``==``, not with a tolerance.

The exception is a comparison with NumPy's own reductions (``np.dot``, ``np.linalg.norm``): NumPy picks its
summation order and its use of fused multiply-adds by the CPU's instruction set, so on some CPUs it differs
from the same sum written out in the last bit or two. Those comparisons allow ``NUMPY_ULPS`` units in the last
place; what strider promises is the same trajectory on the same machine and build, which the walk hashes test.
"""

from __future__ import annotations

import numpy as np
import pytest

from strider import quat
from strider.control.fastmath import clamp, dot3, norm3
from strider.control.frames import CharacterFrame
from strider.control.ik import orient_frame, orient_segment, segment_frame, two_link, within_reach
from strider.control.ipm import IPMParams, step_offset
from strider.control.trajectory import CatmullRom

SAMPLES = 2000
NUMPY_ULPS = 4
"""How far (units in the last place) a hand-written sum may be from NumPy's reduction of the same terms."""


PROPAGATED_TOLERANCE = 1e-9
"""Relative and absolute bound on a result computed from NumPy norms and dots (see the module's docstring):
the last-bit differences pass through square roots, divisions and arccos, which can grow them."""


def _assert_propagated(actual, expected) -> None:
    np.testing.assert_allclose(actual, expected, rtol=PROPAGATED_TOLERANCE, atol=PROPAGATED_TOLERANCE)


def _assert_ulps(actual, expected) -> None:
    np.testing.assert_array_max_ulp(np.asarray(actual, dtype=float), np.asarray(expected, dtype=float),
                                    maxulp=NUMPY_ULPS)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20240601)


# --- references: the earlier implementations ------------------------------------------------------
def _mul_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def _log_reference(q: np.ndarray) -> np.ndarray:
    q = np.where(q[..., :1] < 0, -q, q)
    v = q[..., 1:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    angle = 2.0 * np.arctan2(s, q[..., :1])
    scale = np.where(s > 1e-9, angle / np.where(s > 1e-9, s, 1.0), 2.0)
    return v * scale


def _from_matrix_reference(m: np.ndarray) -> np.ndarray:
    tr = np.trace(m)
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
    q = np.array(q)
    return q if q[0] >= 0 else -q


def _orient_segment_reference(d_local, a_local, d, a) -> np.ndarray:
    def frame(d, a):
        d = d / np.linalg.norm(d)
        a = a - d * np.dot(a, d)
        a = a / np.linalg.norm(a)
        return np.column_stack([d, a, quat.cross(d, a)])
    return _from_matrix_reference(frame(d, a) @ frame(d_local, a_local).T)


def _random_quats(rng: np.random.Generator, n: int) -> np.ndarray:
    q = rng.normal(size=(n, 4))
    q[: n // 10, 1:] *= 1e-12   # tiny rotations take log's series branch
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


# --- quaternions ------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 6, 7, SAMPLES])
def test_batched_mul_and_log_match_the_reference_bit_for_bit(rng, n):
    a, b = _random_quats(rng, n), _random_quats(rng, n)
    assert np.array_equal(quat.mul(a, b), _mul_reference(a, b))
    assert np.array_equal(quat.mul(a[0], b), _mul_reference(np.broadcast_to(a[0], b.shape), b))
    assert np.array_equal(quat.log(a), _log_reference(a))


def test_from_matrix_matches_the_array_reference_in_every_branch(rng):
    qs = _random_quats(rng, SAMPLES)
    # Half turns about each axis drive the three non-trace branches.
    qs = np.concatenate([qs, [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]]])
    for q in qs:
        m = quat.to_matrix(q)
        assert np.array_equal(quat.from_matrix(m), _from_matrix_reference(m))


# --- IK helpers ---------------------------------------------------------------------------------------
def test_norm3_and_dot3_match_numpy(rng):
    for a, b in rng.normal(size=(SAMPLES, 2, 3)):
        _assert_ulps(norm3(a), np.linalg.norm(a))
        # A dot product may cancel: its rounding error is bounded by the size of its terms, not of its result.
        scale = float(np.abs(a * b).sum())
        assert abs(dot3(a, b) - np.dot(a, b)) <= NUMPY_ULPS * np.finfo(float).eps * scale


def test_orient_frame_with_a_precomputed_local_frame_matches_the_reference(rng):
    for d_local, a_local, d, a in rng.normal(size=(SAMPLES, 4, 3)):
        expected = _orient_segment_reference(d_local, a_local, d, a)
        _assert_propagated(orient_frame(segment_frame(d_local, a_local), d, a), expected)
        _assert_propagated(orient_segment(d_local, a_local, d, a), expected)


def _two_link_reference(root, target, upper, lower, bend):
    axis = target - root
    dist = float(np.linalg.norm(axis))
    axis = axis / dist
    reach = min(max(dist, abs(upper - lower) + 1e-6), upper + lower - 1e-6)
    along = (upper**2 - lower**2 + reach**2) / (2 * reach)
    offset = np.sqrt(max(upper**2 - along**2, 0.0))
    bend = bend - axis * np.dot(bend, axis)
    bend = bend / np.linalg.norm(bend)
    middle = root + axis * along + bend * offset
    cos_inner = (upper**2 + lower**2 - reach**2) / (2 * upper * lower)
    return middle, float(np.pi - np.arccos(np.clip(cos_inner, -1.0, 1.0)))


def _within_reach_reference(root, target, reach):
    offset = target - root
    if float(np.linalg.norm(offset)) <= reach:
        return target
    dz = float(np.clip(offset[2], -reach, reach))
    horizontal = offset[:2]
    h = float(np.linalg.norm(horizontal))
    h_max = float(np.sqrt(max(reach * reach - dz * dz, 0.0)))
    if h > 1e-9:
        horizontal = horizontal * (h_max / h)
    return root + np.array([horizontal[0], horizontal[1], dz])


def test_two_link_and_within_reach_match_the_reference(rng):
    for root, target, bend in rng.normal(size=(SAMPLES, 3, 3)):
        upper, lower = rng.uniform(0.2, 0.6, size=2)
        middle, angle = two_link(root, target, upper, lower, bend)
        ref_middle, ref_angle = _two_link_reference(root, target, upper, lower, bend)
        _assert_propagated(middle, ref_middle)
        _assert_propagated(angle, ref_angle)
        reach = float(rng.uniform(0.1, 3.0))
        _assert_propagated(within_reach(root, target, reach), _within_reach_reference(root, target, reach))


# --- frames, IPM, trajectories ---------------------------------------------------------------------------
def test_character_frame_maps_as_with_per_call_trigonometry(rng):
    for heading, v, origin in zip(rng.uniform(-4, 4, SAMPLES), rng.normal(size=(SAMPLES, 3)),
                                  rng.normal(size=(SAMPLES, 3))):
        frame = CharacterFrame(float(heading), origin)
        c, s = np.cos(heading), np.sin(heading)
        assert np.array_equal(frame.to_local(v), np.array([c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2]]))
        assert np.array_equal(frame.to_world(v), np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]]))
        assert np.array_equal(frame.point_to_world(v), origin + frame.to_world(v))
        assert np.array_equal(frame.forward, np.array([np.cos(heading), np.sin(heading), 0.0]))


def _step_offset_reference(velocity, height, desired, leg_length, params):
    g = params.gravity
    h = max(height, 1e-3)
    if params.variant == "linear":
        d = velocity * np.sqrt(h / g) - params.alpha * desired
    else:
        d = velocity * np.sqrt(h / g + velocity**2 / (4 * g * g)) - params.alpha * desired
    cap = params.max_fraction * leg_length
    return float(np.clip(d, -cap, cap))


@pytest.mark.parametrize("variant", ["exact", "linear"])
def test_step_offset_matches_the_reference(rng, variant):
    params = IPMParams(variant=variant)
    for v, h, vd in zip(rng.normal(size=SAMPLES) * 2, rng.uniform(0.5, 1.2, SAMPLES), rng.normal(size=SAMPLES)):
        assert step_offset(np.float64(v), float(h), float(vd), 0.9, params) == \
            _step_offset_reference(np.float64(v), float(h), float(vd), 0.9, params)


def test_catmull_rom_finds_the_same_segment_as_searchsorted(rng):
    curve = CatmullRom((0.0, 0.3, 0.5, 1.0), (0.0, 0.12, 0.1, -0.01))
    for phase in list(rng.uniform(-0.2, 1.2, SAMPLES)) + list(curve.phases):
        p, v = curve.phases, curve.values
        if phase <= p[0] or phase >= p[-1]:
            continue
        i = int(np.searchsorted(p, phase, side="right")) - 1
        h = p[i + 1] - p[i]
        s = (phase - p[i]) / h
        m0, m1 = curve._tangent(i) * h, curve._tangent(i + 1) * h
        s2, s3 = s * s, s * s * s
        expected = float((2 * s3 - 3 * s2 + 1) * v[i] + (s3 - 2 * s2 + s) * m0
                         + (-2 * s3 + 3 * s2) * v[i + 1] + (s3 - s2) * m1)
        assert curve(phase) == expected


def test_single_rotate_conj_and_batched_cross_match_the_array_formulas(rng):
    qs, vs = _random_quats(rng, SAMPLES), rng.normal(size=(SAMPLES, 3))
    # The batched formulas, as they were written before the fast paths.
    t = 2.0 * np.stack([qs[:, 2] * vs[:, 2] - qs[:, 3] * vs[:, 1], qs[:, 3] * vs[:, 0] - qs[:, 1] * vs[:, 2],
                        qs[:, 1] * vs[:, 1] - qs[:, 2] * vs[:, 0]], axis=-1)
    u = qs[:, 1:]
    ut = np.stack([u[:, 1] * t[:, 2] - u[:, 2] * t[:, 1], u[:, 2] * t[:, 0] - u[:, 0] * t[:, 2],
                   u[:, 0] * t[:, 1] - u[:, 1] * t[:, 0]], axis=-1)
    expected = vs + qs[:, :1] * t + ut
    assert np.array_equal(quat.rotate(qs, vs), expected)
    assert np.array_equal(np.array([quat.rotate(q, v) for q, v in zip(qs, vs)]), expected)
    assert np.array_equal(quat.cross(u, t), ut)
    signed = np.concatenate([qs, [[1.0, 0.0, -0.0, 0.0]]])
    for q in signed:
        c = quat.conj(q)
        assert np.array_equal(c, q * np.array([1.0, -1.0, -1.0, -1.0]))
        assert np.array_equal(np.signbit(c), np.signbit(q * np.array([1.0, -1.0, -1.0, -1.0])))


def test_clamp_is_np_clip_for_one_number(rng):
    for x in list(rng.normal(size=SAMPLES) * 3) + [np.nan, np.inf, -np.inf, -0.0]:
        expected = np.clip(x, -1.0, 2.0)
        got = clamp(x, -1.0, 2.0)
        assert (np.isnan(expected) and np.isnan(got)) or got == expected


def test_mul_floats_is_mul(rng):
    for a, b in zip(_random_quats(rng, SAMPLES), _random_quats(rng, SAMPLES)):
        assert np.array_equal(np.array(quat.mul_floats(a.tolist(), b.tolist())), quat.mul(a, b))


def test_yaw_of_plain_floats_is_the_yaw_of_the_array(rng):
    """The runner reads the facing from plain floats every control tick; pushes aim by it, so it must not move."""
    for q in _random_quats(rng, SAMPLES):
        assert quat.yaw(q.tolist()) == quat.yaw(q)


# --- the character view on the real engine ------------------------------------------------------------------
def test_contact_forces_and_dof_axes_match_the_per_element_reference():
    from strider.characters import load_character
    from strider.sim import CharacterPlacement, Scene, World

    world = World(Scene((CharacterPlacement(load_character()),)))
    ch = world.character()
    checked = fallen = 0
    world.apply_force(ch.body_ids[ch.spec.roles.torso], (300.0, 200.0, 0.0), duration=0.4)   # topple it: limbs touch down
    for _ in range(40):
        world.step(25)   # contacts on the feet, then the body on the ground
        m, d = world.model, world.data
        expected = np.zeros(m.nbody)
        n = d.ncon
        adr = d.contact.efc_address[:n]
        fn = np.where(adr >= 0, d.efc_force[np.where(adr >= 0, adr, 0)], 0.0)
        bodies = m.geom_bodyid[d.contact.geom[:n]]
        np.add.at(expected, bodies[:, 0], fn)
        np.add.at(expected, bodies[:, 1], fn)
        mine = np.zeros(m.nbody, dtype=bool)
        mine[ch.all_bodies] = True
        expected[~mine] = 0.0
        assert np.array_equal(ch.contact_normal_forces(), expected)
        groups = (ch.foot_bodies, ch.all_bodies[::3], ch.all_bodies[1:2])
        for some in groups:
            assert ch.contact_normal_force(some.tolist()) == expected[some].sum()
        assert ch.contact_normal_force_each([g.tolist() for g in groups]) == [expected[g].sum() for g in groups]
        checked += n > 0
        rot = d.xmat[ch._dof_body].reshape(-1, 3, 3)
        ball = rot[np.arange(len(ch._dof_col)), :, np.maximum(ch._dof_col, 0)]
        assert np.array_equal(ch.dof_axes(), np.where(ch._dof_is_ball[:, None], ball, d.xaxis[ch._dof_joint]))
        not_foot = mine.copy()
        not_foot[ch.foot_bodies] = False
        touching = bool((not_foot[bodies] & (bodies == 0)[:, ::-1]).any())
        assert ch.non_foot_contact() == touching
        fallen += touching
    assert checked > 10 and fallen > 5


def test_the_fall_judge_on_floats_gives_the_array_formulas_verdict():
    from strider.characters import load_character
    from strider.control.falls import FallJudge, has_fallen
    from strider.sim import CharacterPlacement, Scene, World

    world = World(Scene((CharacterPlacement(load_character()),)))
    ch = world.character()
    judge = FallJudge(world, ch)
    roles = ch.spec.roles
    world.apply_force(ch.body_ids[roles.torso], (300.0, 200.0, 0.0), duration=0.4)
    verdicts = []
    for _ in range(60):
        world.step(20)
        for name in ch.body_ids:
            assert ch.body_up_floats(name) == ch.body_rotation(name)[:, 2].tolist()
            assert ch.body_position_floats(name) == ch.body_position(name).tolist()
        root = ch.body_position(roles.root)
        height = float(root[2] - world.ground_height(root[0], root[1]))
        assert judge._root_height() == height
        expected = has_fallen(ch.non_foot_contact(), ch.body_rotation(roles.torso)[:, 2], height,
                              judge.standing_height)
        assert judge() == expected
        verdicts.append(expected)
    assert not verdicts[0] and verdicts[-1]   # standing, then down


def test_setting_servo_gains_again_or_after_a_restore_leaves_the_model_as_written():
    from strider.characters import load_character
    from strider.sim import CharacterPlacement, Scene, World

    world = World(Scene((CharacterPlacement(load_character()),)))
    ch, m = world.character(), world.model
    joint = next(name for name, j in ch.joints.items() if len(j.servos) == 3)
    ids = ch.joints[joint].servos
    before = world.snapshot()
    for kp, kd in ((300.0, 30.0), (300.0, 30.0), (np.array([100.0, 200.0, 300.0]), np.array([10.0, 20.0, 30.0]))):
        ch.set_servo_gains(joint, kp, kd)
        assert np.array_equal(m.actuator_gainprm[ids, 0], np.broadcast_to(kp, 3))
        assert np.array_equal(m.actuator_biasprm[ids, 1], -np.broadcast_to(kp, 3))
        assert np.array_equal(m.actuator_biasprm[ids, 2], -np.broadcast_to(kd, 3))
    world.restore(before)
    ch.set_servo_gains(joint, 100.0, 10.0)   # the gains the restore brought back differ: written again
    assert np.array_equal(m.actuator_gainprm[ids, 0], [100.0] * 3)
    assert np.array_equal(m.actuator_biasprm[ids, 2], [-10.0] * 3)


def test_batched_servo_command_is_the_sum_of_two_logs(rng):
    from strider.control.pd import FLOAT_PATH_MAX_JOINTS, quaternion_error, servo_command

    for n in (1, 6, 7, FLOAT_PATH_MAX_JOINTS + 4):
        q, target = _random_quats(rng, n), _random_quats(rng, n)
        batched = quat.log(q) + quat.log(quat.mul(quat.conj(q), target))
        if n <= FLOAT_PATH_MAX_JOINTS:
            # A character's few joints go one by one on plain floats: exactly the single-joint result, and
            # the batched formula to rounding (math.atan2 and NumPy's arctan2 may differ in the last bit).
            singles = np.array([servo_command(a, b) for a, b in zip(q, target)])
            assert np.array_equal(servo_command(q, target), singles)
            np.testing.assert_allclose(servo_command(q, target), batched, rtol=0, atol=1e-12)
        else:
            assert np.array_equal(servo_command(q, target), _log_reference(q) + quaternion_error(q, target))
            assert np.array_equal(servo_command(q, target), batched)


# --- the float paths of the GBWC update -------------------------------------------------------------------------
def test_universal_angles_match_the_matrix_reference(rng):
    from strider.control.ik import universal_angles

    for q in _random_quats(rng, SAMPLES):
        r = quat.to_matrix(q)
        expected = (-float(np.arctan2(-r[1, 2], r[2, 2])), float(np.arcsin(np.clip(r[0, 2], -1.0, 1.0))))
        assert universal_angles(q, -1.0) == expected
        assert universal_angles(tuple(q.tolist()), -1.0) == expected


def _remaining_step_time_reference(offset, velocity, height, gravity, leg_length, params, outer_side):
    reach = leg_length * np.array([params.sagittal_reach, params.lateral_reach])
    omega = np.sqrt(gravity / max(height, 1e-3))
    if outer_side and outer_side * (offset[1] + velocity[1] / omega) > 0.0:
        reach[1] = leg_length * params.outward_reach
    capture = np.abs(offset + velocity / omega)
    out = np.inf
    for c, r in zip(capture, reach):
        if c > 1e-9:
            out = min(out, max(np.log(r / c), 0.0) / omega)
    return None if not np.isfinite(out) else max(float(out), params.min_remaining)


def test_remaining_step_time_on_floats_matches_the_array_reference(rng):
    from strider.control.step_timing import StepTimingParams, remaining_step_time

    params = StepTimingParams()
    for offset, velocity, height, side in zip(rng.normal(size=(SAMPLES, 2)) * 0.3, rng.normal(size=(SAMPLES, 2)),
                                              rng.uniform(0.5, 1.2, SAMPLES), rng.choice([-1.0, 0.0, 1.0], SAMPLES)):
        expected = _remaining_step_time_reference(offset, velocity, height, 9.81, 0.9, params, side)
        assert remaining_step_time(offset.tolist(), velocity.tolist(), float(height), 9.81, 0.9, params, side) \
            == expected


def test_float_frame_maps_and_servo_commands_match_the_array_versions(rng):
    from strider.control.pd import servo_command, servo_commands

    for heading, v in zip(rng.uniform(-4, 4, SAMPLES), rng.normal(size=(SAMPLES, 3))):
        frame = CharacterFrame(float(heading), np.zeros(3))
        assert np.array_equal(np.array(frame.to_local_floats(v.tolist())), frame.to_local(v))
        assert np.array_equal(np.array(frame.to_world_floats(v.tolist())), frame.to_world(v))
        assert np.array_equal(quat.about_z(heading), np.array(quat.about_z_floats(heading)))
    q, target = _random_quats(rng, 7), _random_quats(rng, 7)
    assert np.array_equal(servo_commands(q, [tuple(t) for t in target.tolist()]), servo_command(q, target))


def _simbicon_targets_reference(body, frame, st, phase, sagittal, coronal, stance_side, swing_side):
    """SIMBICON's humanoid targets as written before they moved to plain floats: one NumPy call per operation."""
    from strider.control.leg_geometry import SIDE_SIGN, SIDES
    from strider.control.pd import servo_command

    ch, roles = body.character, body.roles
    ctrl, qpos = ch.servo_targets.copy(), ch.qpos
    heading_q = frame.quat
    swing, stance = roles.legs[swing_side], roles.legs[stance_side]
    thigh = quat.mul(heading_q, quat.mul(quat.about_x(SIDE_SIGN[swing_side] * coronal), quat.about_y(-sagittal)))
    hip = ch.joints[swing.hip]
    ctrl[hip.servos] = servo_command(qpos[hip.qpos], quat.mul(quat.conj(ch.body_quat(roles.root)), thigh))
    ctrl[ch.joints[swing.knee].servos[0]] = st.swing_knee(phase)
    ctrl[ch.joints[stance.knee].servos[0]] = st.stance_knee(phase)
    ctrl[ch.joints[swing.ankle].servos] = (0.0, -st.swing_ankle(phase))
    ctrl[ch.joints[stance.ankle].servos] = (0.0, -st.stance_ankle(phase))
    if swing.toe:
        ctrl[ch.joints[swing.toe].servos[0]] = 0.0
        ctrl[ch.joints[stance.toe].servos[0]] = 0.0
    parent_q = ch.body_quat(roles.root)
    chain = list(roles.spine) + [roles.neck]
    torso = st.torso(phase)
    for k, name in enumerate(chain):
        j = ch.joints[name]
        lean = torso * min(1.0, (k + 1) / len(roles.spine))
        target = quat.mul(quat.conj(parent_q), quat.mul(heading_q, quat.about_y(lean)))
        ctrl[j.servos] = servo_command(qpos[j.qpos], target)
        parent_q = quat.mul(parent_q, qpos[j.qpos])
    for side in SIDES:
        arm = roles.arms[side]
        j = ch.joints[arm.shoulder]
        ctrl[j.servos] = servo_command(qpos[j.qpos], quat.about_x(-SIDE_SIGN[side] * body.gait.arm_down))
        ctrl[ch.joints[arm.elbow].servos[0]] = -body.gait.elbow_bend
    return ctrl


@pytest.mark.parametrize("character", ["bipv3", "robot"])
def test_simbicon_humanoid_targets_on_floats_match_the_array_reference(rng, character):
    from strider.characters import load_character
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import locomotion_scenario
    from strider.runner import Runner

    runner = Runner(locomotion_scenario("simbicon", LocomotionCommand(), load_character(character), seconds=3.0))
    runner.start()
    body, ch = runner.scenario.controller.body, runner.character
    compared = 0
    for _ in range(12):
        runner.advance(0.25)   # a walking pose: every joint away from its rest
        for stance, swing in (("left", "right"), ("right", "left")):
            state = body.gait.states[int(rng.integers(len(body.gait.states)))]
            frame = CharacterFrame(float(rng.uniform(-3, 3)), ch.com_position())
            args = (frame, state, float(rng.uniform(0, 1)), float(rng.normal()), float(rng.normal()), stance, swing)
            expected = _simbicon_targets_reference(body, *args)
            body.write_targets(*args)
            assert np.array_equal(ch.servo_targets, expected)
            compared += 1
    assert compared == 24 and not runner.fall_time
