"""The simulation layer on the real engine: snapshots, determinism, pushes, contacts, terrain, props."""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from strider import quat
from strider.sim import Box, CharacterPlacement, Prop, Scene, Terrain, World

G = 9.81


def _run(world: World, n: int, every: int = 25) -> np.ndarray:
    """Step ``n`` physics steps, recording the state vector every ``every`` steps."""
    out = []
    for _ in range(n // every):
        world.step(every)
        out.append(world.state_vector())
    return np.array(out)


# --- snapshots and determinism ----------------------------------------------------------------
def test_restore_is_exact_with_an_active_push_and_changed_gains(make_world):
    world = make_world()
    ch = world.character()
    world.step(50)
    # An off-centre push, still on when the snapshot is taken.
    world.apply_force("hero/torso", (250.0, -120.0, 0.0), point=(0.1, 0.05, 0.15), duration=0.1)
    world.step(40)
    s = world.snapshot()
    a = _run(world, 300)

    world.restore(s)
    b = _run(world, 300)
    np.testing.assert_array_equal(a, b)

    # Changing servo gains changes the trajectory ...
    world.restore(s)
    ch.set_servo_gains("lKnee", 20.0, 2.0)
    ch.set_servo_gains("torso_head", 400.0, 1.0)
    changed = _run(world, 300)
    assert not np.array_equal(changed, a)
    # ... and restoring the snapshot brings the gains back with the state.
    world.restore(s)
    np.testing.assert_array_equal(_run(world, 300), a)

    # A snapshot taken with changed gains keeps them.
    world.restore(s)
    ch.set_servo_gains("lKnee", 20.0, 2.0)
    s2 = world.snapshot()
    c = _run(world, 200)
    world.restore(s)          # back to the spec gains
    world.restore(s2)
    np.testing.assert_array_equal(_run(world, 200), c)
    assert world.model.actuator_gainprm[ch.joint("lKnee").servos, 0] == pytest.approx(20.0)


def test_restore_brings_back_servo_force_limits(make_world):
    world = make_world()
    ch = world.character()
    world.step(50)
    s = world.snapshot()
    a = _run(world, 300)
    world.restore(s)
    ch.set_servo_force_limit("lHip", 2, 0.0)
    ch.set_servo_force_limit("lKnee", 0, 0.0)
    ch.set_servo_force_limit("rKnee", 0, 0.0)
    assert not np.array_equal(_run(world, 300), a)
    world.restore(s)
    np.testing.assert_array_equal(_run(world, 300), a)
    assert tuple(world.model.actuator_forcerange[ch.joint("lHip").servos[2]]) == (-200.0, 200.0)


def test_trajectory_does_not_depend_on_how_steps_are_grouped(make_world):
    """step(300) and 300 x step(1) give the same trajectory, including through an off-centre push."""
    a, b = make_world(), make_world()
    for w in (a, b):
        w.apply_force("hero/torso", (300.0, 80.0, 0.0), point=(0.0, 0.1, 0.2), duration=0.1, start=0.02)
        w.apply_force("hero/lUpperArm", (0.0, 0.0, 60.0), duration=0.037, start=0.051)
    a.step(300)
    for _ in range(300):
        b.step(1)
    np.testing.assert_array_equal(a.state_vector(), b.state_vector())


@pytest.mark.parametrize("integrator", ["IMPLICITFAST", "IMPLICIT", "EULER", "RK4"])
def test_stepping_reuses_the_last_forward_only_while_the_state_is_untouched(make_world, integrator):
    """World.step skips the position and velocity stages it computed last; the result is mj_step's, bit for bit,
    whether controls change between steps or the pose is edited by hand without calling forward(), for each of
    the engine's integrators."""
    fast, plain = make_world(), make_world()
    for w in (fast, plain):
        w.model.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator}")
    rng = np.random.default_rng(3)
    for k in range(40):
        ctrl = rng.normal(0.0, 0.2, fast.model.nu)
        for w in (fast, plain):
            w.data.ctrl[:] = ctrl
            w.data.qfrc_applied[6:] = 0.5 * ctrl[:1]
            if k == 20:   # a hand edit of the pose, not followed by forward()
                w.data.qpos[7:11] = quat.normalize(w.data.qpos[7:11] + 0.05)
        fast.step(10)
        mujoco.mj_step(plain.model, plain.data, nstep=10)
        mujoco.mj_forward(plain.model, plain.data)
        np.testing.assert_array_equal(fast.state_vector(), plain.state_vector())


def test_two_worlds_from_one_scene_give_identical_trajectories(bipv3):
    scene = Scene((CharacterPlacement(bipv3, x=0.3, heading=0.4),),
                  props=(Prop("ball", "sphere", (0.1,), 2.0, (1.5, 0.0, 1.0), velocity=(-2.0, 0.0, 0.0)),))
    worlds = [World(scene), World(scene)]
    for w in worlds:
        w.apply_force("hero/torso", (0.0, 200.0, 0.0), duration=0.1, start=0.1)
    a, b = (_run(w, 600, every=50) for w in worlds)
    np.testing.assert_array_equal(a, b)
    assert np.ptp(a[:, 1:], axis=0).max() > 1e-3  # something actually moved


class _Balancer:
    """A small feedback controller reading what walking controllers read (COM, contact forces, joint angles)."""

    def __init__(self, world: World):
        self.world, self.ch = world, world.character()

    def control(self) -> None:
        ch, d = self.ch, self.world.data
        com, vel = ch.com_position(), ch.com_velocity()
        forces = ch.contact_normal_forces()
        feet = (ch.body_position("lFoot") + ch.body_position("rFoot")) / 2
        lean = 0.8 * (com[0] - feet[0]) + 0.3 * vel[0]
        shift = (forces[ch.body("lFoot")] - forces[ch.body("rFoot")]) / (ch.mass * G)
        for side in ("l", "r"):
            d.ctrl[ch.joint(f"{side}Ankle").servos[1]] = lean
            d.ctrl[ch.joint(f"{side}Hip").servos[0]] = 0.05 * shift
        d.ctrl[ch.joint("lKnee").servos[0]] = 0.2 + 0.1 * math.sin(20 * self.world.time)


def _run_controlled(world: World, controller: _Balancer, n: int, period: int = 10) -> np.ndarray:
    out = []
    for _ in range(n // period):
        controller.control()
        world.step(period)
        out.append(world.state_vector())
    return np.array(out)


def test_branching_from_a_snapshot_is_exact_with_a_controller_in_the_loop(make_world):
    world = make_world()
    ctrl = _Balancer(world)
    world.apply_force("hero/torso", (150.0, 40.0, 0.0), duration=0.1, start=0.2)
    _run_controlled(world, ctrl, 300)
    s = world.snapshot()
    a = _run_controlled(world, ctrl, 400)
    world.restore(s)
    b = _run_controlled(world, ctrl, 400)
    np.testing.assert_array_equal(a, b)


def test_queries_after_step_describe_the_current_state(make_world):
    world = make_world()
    ch = world.character()
    world.apply_force("hero/torso", (200.0, 0.0, 0.0), duration=0.05)
    world.step(37)
    after_step = (ch.com_position(), ch.com_velocity(), ch.contact_normal_forces(), ch.body_position("lFoot"))
    world.forward()
    fresh = (ch.com_position(), ch.com_velocity(), ch.contact_normal_forces(), ch.body_position("lFoot"))
    for x, y in zip(after_step, fresh):
        np.testing.assert_array_equal(x, y)


# --- external forces ----------------------------------------------------------------------------
def _com_velocity_now(world: World) -> np.ndarray:
    return world.character().com_velocity()


def test_push_changes_com_velocity_by_the_impulse(make_world, bipv3):
    world = make_world(gravity=0.0)
    ch = world.character()
    m = ch.mass
    force = np.array([120.0, -60.0, 30.0])
    duration = 0.1
    v0 = _com_velocity_now(world)
    world.apply_force("hero/torso", force, duration=duration)
    world.step(300)
    assert world.data.ncon == 0  # floating: only the push acts on the body as a whole
    dv = _com_velocity_now(world) - v0
    np.testing.assert_allclose(dv, force * duration / m, rtol=5e-3, atol=1e-4)
    assert m == pytest.approx(bipv3.total_mass)


def test_push_switches_on_and_off_on_the_exact_steps(make_world):
    world = make_world(gravity=0.0)
    dt, m = world.timestep, world.character().mass
    fx = 200.0
    start_steps, duration_steps = 5, 12
    world.apply_force("hero/torso", (fx, 0.0, 0.0), duration=duration_steps * dt, start=start_steps * dt)
    v = [_com_velocity_now(world)[0]]
    for _ in range(40):
        world.step(1)
        v.append(_com_velocity_now(world)[0])
    dv = np.diff(v)
    per_step = fx * dt / m
    on = np.abs(dv) > 0.5 * per_step
    expected = np.zeros(40, dtype=bool)
    expected[start_steps:start_steps + duration_steps] = True
    np.testing.assert_array_equal(on, expected)
    np.testing.assert_allclose(dv[expected], per_step, rtol=1e-2)
    assert np.abs(dv[~expected]).max() < 1e-3 * per_step
    assert not world.data.xfrc_applied.any()  # nothing left applied


def test_com_velocity_follows_state_edits_at_the_same_time(make_world):
    world = make_world(gravity=0.0)
    ch = world.character()
    world.step(10)
    s = world.snapshot()
    world.forward()
    v0 = ch.com_velocity()
    # Editing qvel by hand (same time): a uniform root velocity adds to the COM velocity.
    kick = np.array([0.5, -0.2, 0.1])
    world.data.qvel[ch.root_dof:ch.root_dof + 3] += kick
    world.forward()
    np.testing.assert_allclose(ch.com_velocity() - v0, kick, atol=1e-12)
    # Restoring the earlier state (same time again) gives the earlier velocity back.
    world.restore(s)
    np.testing.assert_allclose(ch.com_velocity(), v0, atol=1e-12)


# --- contacts -----------------------------------------------------------------------------------
def test_feet_carry_the_body_weight_when_standing(make_world, stiffen):
    world = make_world()
    ch = world.character()
    stiffen(ch)
    world.step(800)
    world.forward()
    forces = ch.contact_normal_forces()
    weight = ch.mass * G
    feet = forces[ch.foot_bodies].sum()
    assert feet == pytest.approx(weight, rel=1e-2)
    assert forces.sum() == pytest.approx(feet)
    left = sum(forces[ch.body(b)] for b in ("lFoot", "lToes"))
    right = sum(forces[ch.body(b)] for b in ("rFoot", "rToes"))
    assert left == pytest.approx(right, rel=2e-2)
    assert not ch.non_foot_contact()
    assert np.linalg.norm(ch.com_velocity()) < 0.02


def test_non_foot_contact_when_dropped_on_its_side(make_world):
    world = make_world()
    ch = world.character()
    d = world.data
    d.qpos[ch.root_qpos + 2] = 1.2   # the T-pose arm now points down
    d.qpos[ch.root_qpos + 3:ch.root_qpos + 7] = quat.about_x(math.pi / 2)  # lying on its right side
    world.forward()
    assert not ch.non_foot_contact()          # still in the air
    touched_at = None
    for k in range(300):
        world.step(10)
        if touched_at is None and ch.non_foot_contact():
            touched_at = world.time
    assert touched_at is not None and 0.3 < touched_at < 0.5   # falls ~0.8 m before the arm lands
    world.forward()
    assert ch.non_foot_contact()
    # At rest on the ground, the contacts carry its weight.
    assert np.linalg.norm(ch.com_velocity()) < 0.01
    assert ch.contact_normal_forces().sum() == pytest.approx(ch.mass * G, rel=2e-2)


def test_props_touching_the_body_are_not_ground_contact(bipv3, stiffen):
    """A ball landing on the arm is a contact, but not a non-foot contact with the terrain."""
    ball = Prop("ball", "sphere", (0.08,), 0.5, (0.0, -0.35, 1.75))
    world = World(Scene((CharacterPlacement(bipv3),), props=(ball,)))
    ch = world.character()
    stiffen(ch)
    ball_body = world.body_id("ball")
    hit = False
    for _ in range(100):
        world.step(5)
        bodies = world.model.geom_bodyid[world.data.contact.geom[:world.data.ncon]]
        hit = hit or any(ball_body in pair and np.isin(pair, ch.all_bodies).any() for pair in bodies)
        assert not ch.non_foot_contact()
    assert hit


def test_an_obstacle_against_the_shin_is_non_foot_contact(bipv3):
    shin_front = Box("wall", pos=(0.139, 0.0, 0.3), size=(0.1, 0.3, 0.15))
    world = World(Scene((CharacterPlacement(bipv3),), obstacles=(shin_front,)))
    assert world.character().non_foot_contact()


# --- kinematics and terrain ---------------------------------------------------------------------
def test_com_position_is_the_mass_weighted_mean_of_body_coms(make_world, random_pose):
    world = make_world()
    ch, m, d = world.character(), world.model, world.data
    random_pose(world, ch, np.random.default_rng(3))
    bodies = ch.all_bodies
    expected = (m.body_mass[bodies, None] * d.xipos[bodies]).sum(0) / m.body_mass[bodies].sum()
    np.testing.assert_allclose(ch.com_position(), expected, atol=1e-12)


@pytest.mark.parametrize("slope_deg", [10.0, -15.0])
def test_ground_height_on_a_slope(make_world, slope_deg):
    world = make_world(terrain=Terrain("slope", slope_deg))
    for x, y in [(0.0, 0.0), (1.0, 0.3), (-2.5, -1.0), (4.0, 2.0), (30.0, 0.5), (-30.0, -0.5)]:
        assert world.ground_height(x, y) == pytest.approx(math.tan(math.radians(slope_deg)) * x, abs=1e-9)
    assert world.scene.terrain.height(2.0) == pytest.approx(math.tan(math.radians(slope_deg)) * 2.0)


def _lowest_points(world: World) -> tuple[float, int]:
    """Smallest signed distance of any character geom to the ground plane, and that geom's body."""
    m, d = world.model, world.data
    ground = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "ground")
    normal = d.geom_xmat[ground].reshape(3, 3)[:, 2]
    origin = d.geom_xpos[ground]
    ch = world.character()
    best, body = math.inf, -1
    for g in np.flatnonzero(np.isin(m.geom_bodyid, ch.all_bodies)):
        rot, pos, size = d.geom_xmat[g].reshape(3, 3), d.geom_xpos[g], m.geom_size[g]
        if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
            signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
            dist = ((pos + (signs * size) @ rot.T - origin) @ normal).min()
        elif m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE:
            ends = pos + np.outer([-1, 1], rot[:, 2] * size[1])
            dist = ((ends - origin) @ normal).min() - size[0]
        else:
            dist = (pos - origin) @ normal - size[0]
        if dist < best:
            best, body = dist, int(m.geom_bodyid[g])
    return best, body


@pytest.mark.parametrize("slope_deg, heading", [(0.0, 0.0), (10.0, 0.0), (-10.0, 0.0), (20.0, 0.8)])
def test_character_is_placed_with_its_soles_on_the_terrain(make_world, slope_deg, heading, stiffen):
    world = make_world(x=1.5, heading=heading, terrain=Terrain("slope", slope_deg))
    ch = world.character()
    lowest, body = _lowest_points(world)
    assert 0.0 <= lowest < 3e-3          # touching the slope, nowhere inside it
    assert body in ch.foot_bodies
    assert all(world.data.contact.dist[:world.data.ncon] >= 0.0)
    # Held stiff, it settles onto its feet without any other body touching.
    stiffen(ch)
    world.step(300)
    assert ch.contact_normal_forces()[ch.foot_bodies].sum() > 0.5 * ch.mass * G
    assert not ch.non_foot_contact()


def test_a_ball_prop_falls_under_gravity(bipv3):
    ball = Prop("ball", "sphere", (0.1,), 1.5, (3.0, 1.0, 2.0), velocity=(1.0, 0.0, 0.0))
    world = World(Scene((CharacterPlacement(bipv3),), props=(ball,)))
    body = world.body_id("ball")
    z0 = world.body_position(body)[2]
    t = 0.4
    world.step(round(t / world.timestep))
    world.forward()
    p = world.body_position(body)
    assert p[2] == pytest.approx(z0 - 0.5 * G * t * t, abs=5e-3)
    assert p[0] == pytest.approx(3.0 + 1.0 * t, abs=1e-6)   # thrown with its scene velocity
    assert world.model.body_mass[body] == pytest.approx(1.5)
    world.step(1500)
    world.forward()
    assert world.body_position(body)[2] == pytest.approx(0.1, abs=5e-3)   # comes to rest on the ground


def test_ground_height_ray_hits_obstacle_boxes_but_not_props(bipv3):
    step = Box("step", pos=(2.0, 0.0, 0.15), size=(0.3, 0.4, 0.15))
    turned = Box("turned", pos=(-2.0, 0.0, 0.25), size=(0.5, 0.1, 0.25), yaw=math.pi / 2)
    ball = Prop("ball", "sphere", (0.2,), 1.0, (0.0, 3.0, 0.2))
    world = World(Scene((CharacterPlacement(bipv3),), obstacles=(step, turned), props=(ball,)))
    assert world.ground_height(2.0, 0.0) == pytest.approx(0.3)
    assert world.ground_height(2.25, -0.35) == pytest.approx(0.3)
    assert world.ground_height(2.35, 0.0) == pytest.approx(0.0)
    # Rotated a quarter turn, the long side of the box now runs along y.
    assert world.ground_height(-2.0, 0.45) == pytest.approx(0.5)
    assert world.ground_height(-2.3, 0.0) == pytest.approx(0.0)
    assert world.ground_height(0.0, 3.0) == pytest.approx(0.0)   # the ball is not terrain
    assert world.ground_height(0.0, 0.0) == pytest.approx(0.0)   # nor is the character
