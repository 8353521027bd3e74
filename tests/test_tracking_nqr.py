"""Phase tracking, protocol 2: the engine's one-step linearization, the time-varying LQR, the NQR baseline that
tracks a recorded walk with them, and the phase-indexed walker under protocol 2's torque clamp, on MuJoCo."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from strider.bench.tracking import _constraints, _nqr_case, _planar_world, _pushed_trial
from strider.methods.tracking.controller import PhaseTrackingController, TrackParams
from strider.methods.tracking.nqr import NqrController, NqrParams, nqr_gains, record_reference
from strider.optimize.lqr import time_varying_lqr
from strider.sim.dynamics import Dynamics

CLAMP = 300.0        # N m (protocol 2)
STEPS = 3            # a shorter reference than the protocol's 6 keeps the tests quick


@pytest.fixture(scope="module")
def constraints():
    return _constraints("cmu-walk")


@pytest.fixture(scope="module")
def baseline(constraints):
    world, character = _planar_world()
    reference = record_reference(world, character, constraints, STEPS, TrackParams(max_torque=CLAMP))
    return reference, nqr_gains(world, reference, NqrParams(max_torque=CLAMP))


def test_a_long_horizon_lqr_converges_to_the_stationary_one():
    dt = 0.01
    A = np.array([[1.0, dt], [0.0, 1.0]])        # a double integrator
    B = np.array([[0.5 * dt * dt], [dt]])
    Q, R = np.diag([10.0, 1.0]), np.array([[0.1]])
    K = time_varying_lqr(np.repeat(A[None], 3000, 0), np.repeat(B[None], 3000, 0), Q, R, np.zeros((2, 2)))
    P = scipy.linalg.solve_discrete_are(A, B, Q, R)
    stationary = np.linalg.solve(R + B.T @ P @ B, B.T @ P @ A)
    # hand-written recursion against SciPy's Schur solver: agreement to rounding, across BLAS builds
    np.testing.assert_allclose(K[0], stationary, rtol=1e-8)
    assert abs(K[-1]).max() < 1e-12 < abs(K[0]).max()     # no cost to come at the end: no feedback there


def test_the_engine_linearization_predicts_a_small_perturbation(constraints):
    world, character = _planar_world()
    controller = PhaseTrackingController(constraints)
    controller.reset(world, character)
    for _ in range(60):                 # into the single support, feet on the ground
        controller.control(world.time)
        world.step()
    controller.control(world.time)
    dyn = Dynamics(world)
    A, B = dyn.transition_jacobians()
    nv = dyn.nv
    assert A.shape == (2 * nv, 2 * nv) and B.shape == (2 * nv, world.model.nu)
    start = world.snapshot()
    torques = character.motor_torques.copy()
    world.step()
    nominal = np.r_[world.data.qpos.copy(), world.data.qvel.copy()]
    world.restore(start)
    dv = 1e-4 * np.linspace(-1.0, 1.0, nv)
    du = 1e-2 * np.linspace(1.0, -1.0, len(torques))
    world.data.qvel[:] += dv
    character.motor_torques[:] = torques + du
    world.step()
    moved = np.r_[dyn.position_difference(nominal[:nv], world.data.qpos), world.data.qvel - nominal[nv:]]
    predicted = A @ np.r_[np.zeros(nv), dv] + B @ du
    assert np.linalg.norm(moved - predicted) < 0.05 * np.linalg.norm(predicted)


def test_the_nqr_replays_its_reference_exactly_and_holds_it_after_a_push(constraints, baseline):
    reference, gains = baseline
    assert len(reference.step_ends) == STEPS and np.all(np.diff(reference.step_ends) > 100)
    assert np.all(np.abs(reference.torques) <= CLAMP)

    def walk(gains_used, force):
        world, character = _planar_world()
        controller = NqrController(reference, gains_used, NqrParams(max_torque=CLAMP))
        controller.reset(world, character)
        begin, end = reference.step_span(2)
        while not controller.finished and not controller.has_fallen():
            if controller.index == (begin + end) // 2 and force:
                world.apply_force(character.spec.roles.torso, (force, 0.0, 0.0), duration=0.1)
            controller.control(world.time)
            world.step()
        return controller, world.data.qpos.copy()

    controller, final = walk(gains, 0.0)
    assert not controller.has_fallen() and np.array_equal(final, reference.qpos[-1])   # u_ref + K 0, bit for bit
    closed, pushed = walk(gains, 10.0)
    open_loop, drifted = walk(np.zeros_like(gains), 10.0)
    assert not closed.has_fallen()
    error = np.abs(pushed - reference.qpos[-1]).max()
    assert error < 0.05 and (open_loop.has_fallen() or error < np.abs(drifted - reference.qpos[-1]).max())


def test_the_clamp_aware_walker_keeps_within_the_clamp_through_a_push(constraints):
    world, character = _planar_world()
    controller = PhaseTrackingController(constraints, TrackParams(max_torque=CLAMP, clamp_aware=True))
    controller.reset(world, character)
    peak = 0.0
    while controller.stats.steps < 6 and not controller.has_fallen() and world.time < 10.0:
        if world.time == pytest.approx(0.8):
            world.apply_force(character.spec.roles.torso, (-100.0, 0.0, 0.0), duration=0.1)
        controller.control(world.time)
        peak = max(peak, float(np.abs(character.motor_torques).max()))
        world.step()
    stats = controller.stats
    assert not controller.has_fallen() and stats.steps == 6
    assert stats.clamp_solves > 0 and stats.clamp_failures == 0 and peak <= CLAMP + 1e-6
    with pytest.raises(ValueError, match="max_torque"):
        PhaseTrackingController(constraints, TrackParams(clamp_aware=True))


def test_the_nqr_case_passes_only_at_its_reference_end(baseline):
    reference, gains = baseline
    survived, seconds = _pushed_trial(_nqr_case(reference, gains, NqrParams(max_torque=CLAMP)), 0.0, 10, 0.1,
                                     "planar14")
    assert survived and seconds == pytest.approx(reference.length * reference.timestep)
