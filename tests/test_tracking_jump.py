"""Phase tracking of a broad jump (Abe 2012, Sec. 3.4.3 and 5.3.2): DeepMimic's jump rectified into a cycle whose
flight is ballistic, its constraints fitted, the shipped jump played with its VI table in MuJoCo, a jump's VI
table on a small grid, and the refusals."""

from __future__ import annotations

import dataclasses
import itertools
import json
from pathlib import Path

import numpy as np
import pytest

from strider.characters import load_character
from strider.cli import track as track_cli
from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.tracking import rectify as rectify_module
from strider.methods.tracking.constraints import fit_constraints
from strider.methods.tracking.controller import FriPolicy, PhaseTrackingController, TrackParams
from strider.methods.tracking.fri_value import FriGrid, policy_table, solve_fri_table
from strider.methods.tracking.mocap_import import FLAT, FREE, HEEL, TOE, load_planar_clip
from strider.methods.tracking.planar_model import PlanarModel
from strider.methods.tracking.rectify import RectifyParams, rectify
from strider.methods.tracking.track_file import load_track, resolve_track
from strider.sim import CharacterPlacement, Scene, World

MOCAP = Path(__file__).resolve().parents[2] / "shared" / "mocap"
JUMP = MOCAP / "deepmimic" / "humanoid3d_jump.txt"
WALK = MOCAP / "bvh" / "cmu_02_01_walk.bvh"
TOLERANCE = 1e-5     # NumPy's re-check of the NLP's answer


@pytest.fixture(scope="module")
def model() -> PlanarModel:
    return PlanarModel.from_spec(load_character("planar14"))


@pytest.fixture(scope="module")
def jump(model):
    return rectify(model, load_planar_clip(JUMP), RectifyParams(window="jump", rate=30.0))


@pytest.fixture(scope="module")
def shipped():
    rectified, character = load_track(resolve_track("jump"))
    constraints = fit_constraints(PlanarModel.from_spec(load_character(character)), rectified)
    return constraints, policy_table(constraints, resolve_track("jump"))


def test_the_rectified_jump_lands_pushes_off_and_flies_ballistically(model, jump):
    assert jump.solution.success, (jump.solution.status, jump.solution.worst_constraint)
    left, right = jump.modes["left"], jump.modes["right"]
    assert (left == right).all()                                   # the legs move together
    # nothing ties the two legs in the NLP; the capture's legs, averaged, pull both alike (within 1 mrad here)
    pairs = [(i, j) for i, j in enumerate(model.mirror) if i != j]
    assert all(np.abs(jump.q[:, i] - jump.q[:, j]).max() < 0.01 for i, j in pairs)
    # landing on flat feet, then up on the toes, then the flight that ends the window
    changes = [int(left[0])] + [int(m) for a, m in itertools.pairwise(left) if m != a]
    assert changes == [FLAT, TOE, FREE]
    # in the air the momentum changes by gravity alone: the flight is ballistic, its spin kept
    momenta = np.array([model.momentum(list(q), list(qd)) for q, qd in zip(jump.q, jump.qd)])
    flight = np.flatnonzero(left == FREE)[:-1]
    weight = model.mass * RectifyParams().gravity
    assert np.abs(momenta[flight + 1, 0] - momenta[flight, 0]).max() < TOLERANCE * weight
    assert np.allclose(momenta[flight + 1, 1] - momenta[flight, 1], -weight * jump.dt, atol=TOLERANCE * weight)
    assert np.abs(momenta[flight + 1, 2] - momenta[flight, 2]).max() < TOLERANCE * weight
    # the next jump starts where this one ends: the first frame moved forward by the jump's length
    following = np.array([jump.q[0, 0] + jump.shift, *jump.q[0, 1:]])
    assert np.allclose(jump.q[-1] + jump.dt * jump.qd[-1], following, atol=TOLERANCE)
    assert 0.5 < jump.shift < 1.3


def test_the_jump_fits_one_stage_per_contact_mode_with_a_rising_phase(model, jump):
    constraints = fit_constraints(model, jump)
    assert constraints.motion == "jump"
    assert [s.label for s in constraints.stages] == ["flat/flat", "toe/toe", "free/free"]
    assert (np.diff(constraints.reference_theta) > 0).all()
    assert constraints.rms_fit < 0.02
    # the push-off's rectified ground force is there for the source's option of following it
    assert constraints.takeoff_force is not None and (constraints.takeoff_force[:, 2] > 0).all()


def test_a_jump_whose_toes_never_touch_is_one_message(model, jump):
    heels_only = {side: np.where(m == FREE, FREE, HEEL).astype(np.int8) for side, m in jump.modes.items()}
    with pytest.raises(UsageError, match="toes never touch"):
        fit_constraints(model, dataclasses.replace(jump, modes=heels_only))


def test_the_shipped_jump_jumps_again_and_again_in_mujoco(shipped):
    constraints, table = shipped
    spec = load_character("planar14").with_actuation("torque")
    world = World(Scene((CharacterPlacement(spec),), timestep=0.002))
    controller = PhaseTrackingController(constraints, TrackParams(policy=FriPolicy(kind="vi")), table)
    controller.reset(world, world.character())
    start_x = world.character().com_position()[0]
    labels, heel_off = [], []
    while world.time < 6.0 and not controller.has_fallen():
        controller.control(world.time)
        if not labels or labels[-1] != controller.stage_now.label:
            labels.append(controller.stage_now.label)
            if labels[-1] == "toe/toe":
                heel_off.append(controller.last_rate)
        world.step()
    assert not controller.has_fallen()
    assert controller.stats.steps >= 3
    assert labels[:4] == ["flat/flat", "toe/toe", "free/free", "flat/flat"]
    # the table holds the phase rate at heel-off steady, jump after jump (a return map's fixed point; with strider's
    # contact rows it lies at about 1.5 x the rectified rate, where the jumps go on: docs/tracking.md, jumps)
    heel_off = np.array(heel_off)
    assert np.abs(heel_off / heel_off.mean() - 1.0).max() < 0.15
    assert world.character().com_position()[0] - start_x > 2.0


def test_a_jump_table_covers_the_flat_footed_ground_phase_and_scores_its_last_row(shipped):
    constraints, _ = shipped
    table = solve_fri_table(constraints, FriGrid(phases=4, rates=4, actions=3), TrackParams(), backend="serial",
                            workers=1)
    assert table.info.theta_range == pytest.approx(constraints.stages[0].theta)
    assert np.isnan(table.shares[-1]).all()                      # where the value is scored, nothing to choose
    chosen = table.shares[:-1][~np.isnan(table.shares[:-1])]
    assert len(chosen) and set(np.round(chosen, 9)) <= {0.0, 0.5, 1.0}
    assert table.matches(constraints)


def test_cli_jumps_the_shipped_jump_and_refuses_a_walk_as_a_jump(tmp_path, capsys):
    assert main(["track", "jump", "--seconds", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["steps"] >= 1 and not report["fell"]
    assert main(["track", "rectify", str(WALK), "--window", "jump", "--out", str(tmp_path / "w.track")]) == 2
    assert "both feet off the ground" in capsys.readouterr().err
    assert not (tmp_path / "w.track").exists()
    assert main(["track", "walk", "jump"]) == 2
    assert "strider track jump jump" in capsys.readouterr().err
    assert main(["track", "jump", "cmu-walk"]) == 2
    assert "strider track walk cmu-walk" in capsys.readouterr().err


def test_the_cli_names_the_rectifiers_windows():
    assert track_cli.WINDOWS == rectify_module.WINDOWS
