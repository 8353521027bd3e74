"""The dynamics accessors agree with the engine itself: its equation of motion, its constraint forces,
its inverse dynamics, and finite differences of its own kinematics (not a copy of the same formula)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from strider.characters import load_character
from strider.sim import CharacterPlacement, Scene, World
from strider.sim.dynamics import Dynamics

FD_STEP = 1e-7   # rad or m along q̇ for the finite differences
# The constraint solver stops at a tolerance (1e-8 by default), so M q̈ + h = τ + Jᵀf holds only to it; the
# identities below are exact when it converges, so the tests ask it to.
SOLVER_TOLERANCE = 1e-12
SOLVER_ITERATIONS = 1000


def _world(gravity: float = 9.81) -> World:
    world = World(Scene((CharacterPlacement(load_character("bipv3")),), gravity=gravity))
    world.model.opt.tolerance = SOLVER_TOLERANCE
    world.model.opt.iterations = SOLVER_ITERATIONS
    return world


def _random_state(world: World, rng: np.random.Generator, height: float | None = None) -> None:
    """A standing pose disturbed a little, random velocities and servo targets; derived data recomputed."""
    d = world.data
    character = world.character()
    for j in character.joints.values():
        if j.kind == "ball":
            axis_angle = rng.normal(scale=0.1, size=3)
            quat = np.zeros(4)
            mujoco.mju_axisAngle2Quat(quat, axis_angle / np.linalg.norm(axis_angle), np.linalg.norm(axis_angle))
            d.qpos[j.qpos] = quat
        else:
            d.qpos[j.qpos] = rng.uniform(-0.1, 0.1, size=len(j.qpos))
    if height is not None:
        d.qpos[character.root_qpos + 2] = height
    d.qvel[:] = rng.normal(scale=0.5, size=world.model.nv)
    d.ctrl[:] = rng.normal(scale=0.2, size=world.model.nu)
    world.forward()


@pytest.fixture
def settled() -> tuple[World, Dynamics]:
    world = _world()
    world.step(300)
    return world, Dynamics(world)


def test_equation_of_motion_holds_on_random_states_with_contacts():
    world = _world()
    world.step(200)
    dyn = Dynamics(world)
    rng = np.random.default_rng(3)
    for _ in range(5):
        _random_state(world, rng)
        d = world.data
        lhs = dyn.mass_matrix() @ dyn.accelerations() + dyn.bias_forces() - dyn.passive_forces()
        rhs = dyn.actuator_forces() + d.qfrc_applied + dyn.constraint_forces()
        assert np.allclose(lhs, rhs, rtol=0, atol=1e-7 * max(1.0, np.abs(lhs).max()))


def test_contact_forces_are_the_engines_contact_rows():
    """Σ Jᵀ f over the contact list equals the engine's own Jᵀ λ restricted to its contact rows."""
    world = _world()
    world.step(300)
    dyn = Dynamics(world)
    d, m = world.data, world.model
    assert d.ncon >= 4
    contact_rows = np.isin(d.efc_type, [mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC,
                                        mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL,
                                        mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS])
    reference = np.zeros(m.nv)
    mujoco.mj_mulJacTVec(m, d, reference, np.where(contact_rows, d.efc_force, 0.0))
    ours = dyn.contact_generalized_forces()
    assert np.allclose(ours, reference, rtol=0, atol=1e-9 * np.abs(reference).max())


def test_contacts_carry_the_weight_and_friction_lies_in_the_tangent_plane(settled):
    world, dyn = settled
    contacts = dyn.contacts()
    feet = set(world.character().foot_bodies.tolist())
    assert contacts and all(c.bodies[1] in feet and c.bodies[0] == 0 for c in contacts)
    for c in contacts:
        assert c.normal_force >= 0.0
        assert abs(c.friction_force @ c.normal) < 1e-9 * max(1.0, c.normal_force)
    per_body = dyn.body_contact_forces()
    weight = world.character().mass * 9.81
    # Standing still after settling: the ground holds the character up within a few percent.
    assert per_body[list(feet), 2].sum() == pytest.approx(weight, rel=0.05)
    assert np.allclose(per_body.sum(axis=0), 0.0, atol=1e-9 * weight)   # the ground gets the opposite


def test_mass_matrix_solve_and_product_agree(settled):
    _, dyn = settled
    rng = np.random.default_rng(0)
    mass = dyn.mass_matrix()
    assert np.allclose(mass, mass.T) and np.all(np.linalg.eigvalsh(mass) > 0)
    b = rng.normal(size=dyn.nv)
    assert np.allclose(dyn.solve_mass(b), np.linalg.solve(mass, b), rtol=1e-9, atol=1e-12)
    many = rng.normal(size=(4, dyn.nv))
    assert np.allclose(dyn.solve_mass(many), np.linalg.solve(mass, many.T).T, rtol=1e-9, atol=1e-12)
    assert np.allclose(dyn.mass_times(b), mass @ b)


def test_inverse_dynamics_reproduces_a_chosen_acceleration_with_contacts(settled):
    world, dyn = settled
    d = world.data
    before = world.state_vector()
    assert np.allclose(dyn.inverse(d.qacc), d.qfrc_actuator + d.qfrc_applied, atol=1e-8)
    rng = np.random.default_rng(1)
    target = rng.normal(scale=2.0, size=dyn.nv)
    force = dyn.inverse(target)
    assert np.array_equal(world.state_vector(), before)   # the world's own data is untouched
    d.qfrc_applied[:] = force - d.qfrc_actuator
    world.forward()
    assert np.allclose(d.qacc, target, rtol=0, atol=1e-7)


def _advanced(world: World, h: float) -> np.ndarray:
    q = world.data.qpos.copy()
    mujoco.mj_integratePos(world.model, q, world.data.qvel, h)
    return q


def test_ground_contacts_are_each_foots_contacts_with_the_ground_and_carry_its_load(settled):
    world, dyn = settled
    feet = world.character().foot_bodies.tolist()
    per_body = dyn.body_contact_forces()
    found = dyn.ground_contacts(*feet)
    # every contact of the standing character is a foot's (or a toe's) with the ground, found once
    assert len(found) == len(feet) and sum(map(len, found)) == len(dyn.contacts()) > 0
    for foot, contacts in zip(feet, found):
        engine = [c for c in dyn.contacts() if c.bodies == (0, foot)]
        assert [point.tolist() for point, _ in contacts] == [c.point.tolist() for c in engine]
        # standing still on level ground, the normal forces carry the body's whole vertical load
        assert sum(force for _, force in contacts) == pytest.approx(per_body[foot, 2], rel=1e-6)
        (alone,) = dyn.ground_contacts(foot)
        assert [(point.tolist(), force) for point, force in alone] == [(point.tolist(), force) for point, force in contacts]
    torso = world.character().body_ids[world.character().spec.roles.torso]
    assert dyn.ground_contacts(torso) == [[]]
    with pytest.raises(ValueError, match="once"):
        dyn.ground_contacts(feet[0], feet[0])


def test_jacobian_derivatives_match_finite_differences():
    world = _world()
    dyn = Dynamics(world)
    rng = np.random.default_rng(2)
    _random_state(world, rng)
    d = world.data
    character = world.character()
    foot = int(character.foot_bodies[0])
    point = d.xipos[foot] + np.array([0.05, 0.02, -0.03])
    local = d.xmat[foot].reshape(3, 3).T @ (point - d.xpos[foot])
    jacp0, jacr0 = dyn.point_jacobian(foot, point), dyn.rotation_jacobian(foot)
    com_jac0 = dyn.subtree_com_jacobian(character.root_body)
    linear, angular = dyn.point_bias_acceleration(foot, point)
    assert np.array_equal(dyn.point_bias_linear(foot, point), linear)
    com_bias = dyn.subtree_com_bias_acceleration(character.root_body)
    jdot_p, jdot_r = dyn.point_jacobian_dot(foot, point)
    qvel = d.qvel.copy()
    d.qpos[:] = _advanced(world, FD_STEP)
    world.forward()
    moved = d.xpos[foot] + d.xmat[foot].reshape(3, 3) @ local
    fd_linear = (dyn.point_jacobian(foot, moved) - jacp0) @ qvel / FD_STEP
    fd_angular = (dyn.rotation_jacobian(foot) - jacr0) @ qvel / FD_STEP
    fd_com = (dyn.subtree_com_jacobian(character.root_body) - com_jac0) @ qvel / FD_STEP
    for ours, fd in ((linear, fd_linear), (angular, fd_angular), (com_bias, fd_com),
                     (jdot_p @ qvel, fd_linear), (jdot_r @ qvel, fd_angular)):
        assert np.allclose(ours, fd, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(fd).max()))


def test_com_jacobian_matches_finite_differences_of_the_com():
    world = _world()
    dyn = Dynamics(world)
    _random_state(world, np.random.default_rng(4))
    character = world.character()
    com0 = character.com_position()
    jac = dyn.subtree_com_jacobian(character.root_body)
    qvel = world.data.qvel.copy()
    world.data.qpos[:] = _advanced(world, FD_STEP)
    world.forward()
    fd = (character.com_position() - com0) / FD_STEP
    assert np.allclose(jac @ qvel, fd, rtol=1e-5, atol=1e-6)


def test_momentum_is_conserved_in_free_flight_without_gravity():
    world = _world(gravity=0.0)
    dyn = Dynamics(world)
    _random_state(world, np.random.default_rng(5), height=5.0)
    root = world.character().root_body
    start = dyn.momentum(root)
    assert np.allclose(start.linear, dyn.subtree_com_jacobian(root) @ world.data.qvel * start.mass)
    assert np.allclose(start.angular, dyn.angular_momentum_matrix(root) @ world.data.qvel)
    assert np.linalg.norm(start.angular) > 1.0   # something to conserve
    world.step(500)   # the servos pull the limbs about: internal forces only
    assert world.data.ncon == 0
    end = dyn.momentum(root)
    # The servos' damping is integrated implicitly, which is not exactly momentum-preserving: half a second
    # of it drifts both by under 0.2 percent. Angular momentum about the origin instead of the COM would
    # change by several percent here, as the COM moves 5 cm.
    assert np.allclose(end.linear, start.linear, rtol=0, atol=0.005 * np.linalg.norm(start.linear))
    assert np.allclose(end.angular, start.angular, rtol=0, atol=0.005 * np.linalg.norm(start.angular))


def test_out_arrays_are_filled_in_place_and_checked(settled):
    _, dyn = settled
    buffer = np.empty((3, dyn.nv))
    assert dyn.body_com_jacobian(1, out=buffer) is buffer
    with pytest.raises(ValueError, match="shape"):
        dyn.body_com_jacobian(1, out=np.empty((3, dyn.nv + 1)))


def test_actuator_moments_map_motor_torques_to_generalized_forces():
    world = World(Scene((CharacterPlacement(load_character("bipv3-torque")),)))
    hero = world.character()
    rng = np.random.default_rng(4)
    torques = rng.normal(size=world.model.nu) * 5
    hero.motor_torques[:] = torques
    world.forward()
    S_T = Dynamics(world).actuator_moments()
    assert S_T.shape == (world.model.nu, world.model.nv)
    assert np.allclose(torques @ S_T, world.data.qfrc_actuator, atol=1e-12)
    assert np.allclose(S_T[:, :6], 0.0)          # nothing acts on the floating root directly
    lower, upper = Dynamics(world).actuator_force_limits()
    knee = hero.joint("lKnee").servos[0]
    assert upper[knee] == 1000.0 and lower[knee] == -1000.0      # bipv3.yaml: knee limit 1000 N m
