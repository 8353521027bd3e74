"""The value-iteration FRI policy (Abe 2012, Sec. 5.2.1): value iteration itself against hand-worked values, the
transitions sampled in MuJoCo (their physics, their determinism across backends, resuming), the shipped table
walking, and the refusals."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from strider.cli.main import main
from strider.errors import UsageError
from strider.methods.tracking.constraints import fit_constraints
from strider.methods.tracking.controller import TrackParams
from strider.methods.tracking.fri_value import (
    FriGrid,
    load_fri_table,
    make_sampler,
    policy_table,
    save_fri_table,
    solve_fri_table,
    table_path,
)
from strider.methods.tracking.mocap_import import FLAT
from strider.methods.tracking.planar_model import PlanarModel
from strider.methods.tracking.track_file import load_track, resolve_track
from strider.optimize.value_iteration import Transitions, value_iteration

TINY = FriGrid(phases=6, rates=5, actions=3)


@pytest.fixture(scope="module")
def constraints():
    from strider.characters import load_character

    rectified, character = load_track(resolve_track("cmu-walk"))
    return fit_constraints(PlanarModel.from_spec(load_character(character)), rectified)


def test_value_iteration_matches_the_hand_worked_values():
    # two states; from 0, action 0 stays (reward 1 a step), action 1 lands halfway to 1; state 1 fails always
    lower = np.array([[0, 0], [0, 0]])
    upper = np.array([[1, 1], [1, 1]])
    weight = np.array([[0.0, 0.5], [0.0, 0.0]])
    valid = np.array([[True, True], [False, False]])
    reward = np.array([1.0, 0.0])
    result = value_iteration(Transitions(lower, upper, weight, valid), reward, discount=0.9, sweeps=2000,
                             failure=-100.0)
    v1 = 0.0 + 0.9 * -100.0
    v0 = 1.0 / (1.0 - 0.9)            # staying forever beats any share of a failing state
    assert result.values == pytest.approx([v0, v1], rel=1e-9)
    assert result.policy.tolist() == [0, -1]


def test_value_iteration_refuses_bad_tables():
    good = np.zeros((2, 1), dtype=int)
    with pytest.raises(UsageError, match="must lie in"):
        Transitions(good, good + 5, np.zeros((2, 1)), np.ones((2, 1), dtype=bool))
    with pytest.raises(UsageError, match="discount"):
        value_iteration(Transitions(good, good, np.zeros((2, 1)), np.ones((2, 1), dtype=bool)), np.zeros(2),
                        discount=1.0, sweeps=10)


def test_a_front_fri_slows_the_phase_and_a_rear_one_speeds_it(constraints):
    """In MuJoCo: from a flat-foot row at the reference rate, the FRI at the toe arrives at the next rows slower
    than at the heel (the ground force's moment about the ankle opposes the fall forward)."""
    grid = FriGrid(phases=12, rates=5, actions=3)
    sampler = make_sampler(constraints, grid, TrackParams())
    rows = [i for i, t in enumerate(sampler.phases)
            if constraints.stages[constraints.stage_at(float(t))].stance == FLAT]
    row = rows[len(rows) // 2]
    rate = constraints.reference_rate_at(float(sampler.phases[row]))
    heel, middle, toe = sampler.transitions(row, rate, (0.0, 0.5, 1.0))
    assert heel is not None and toe is not None and middle is not None
    assert heel[0] == toe[0] == row + 1
    assert heel[1] > middle[1] > toe[1]
    assert abs(middle[1] - rate) < 0.2 * rate


def test_the_table_is_the_same_on_every_backend_and_after_a_resume(constraints, tmp_path):
    serial = solve_fri_table(constraints, TINY, backend="serial")
    checkpoint = tmp_path / "vi.checkpoint.jsonl"
    pooled = solve_fri_table(constraints, TINY, backend="processes", workers=2, checkpoint=checkpoint)
    np.testing.assert_array_equal(serial.shares, pooled.shares)
    np.testing.assert_array_equal(serial.values, pooled.values)
    resumed = solve_fri_table(constraints, TINY, backend="serial", checkpoint=checkpoint)
    np.testing.assert_array_equal(resumed.values, serial.values)
    assert resumed.info.sample_seconds < serial.info.sample_seconds     # every row came from the checkpoint
    assert 0.2 < serial.info.feasible <= 1.0
    path = save_fri_table(serial, tmp_path / "tiny.fri")
    loaded = load_fri_table(path)
    np.testing.assert_array_equal(loaded.shares, serial.shares)
    assert loaded.info == serial.info


def test_the_shipped_table_walks_the_shipped_motion(capsys):
    assert main(["track", "walk", "cmu-walk", "--policy", "vi", "--seconds", "4", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert not result["fell"]
    assert result["distance_m"] > 2.0


def test_on_the_longer_step_the_vi_table_walks_where_the_constant_fri_falls(capsys):
    # the source's contrast (Sec. 5.3.1), on the shipped cmu-long: the CMU step rectified 1.1 x as long
    assert main(["track", "walk", "cmu-long", "--policy", "constant", "--seconds", "12", "--json"]) in (0, 1)
    constant = json.loads(capsys.readouterr().out)
    assert constant["fell"]
    assert main(["track", "walk", "cmu-long", "--policy", "vi", "--seconds", "12", "--json"]) == 0
    vi = json.loads(capsys.readouterr().out)
    assert not vi["fell"] and vi["steps"] > constant["steps"]


def test_a_table_of_another_motion_or_a_broken_file_is_refused(constraints, tmp_path, capsys):
    shipped = policy_table(constraints, resolve_track("cmu-walk"))
    other = dataclasses.replace(shipped, info=dataclasses.replace(shipped.info, theta_range=(-0.3, 0.5)))
    save_fri_table(other, tmp_path / "other.fri")
    assert main(["track", "walk", "cmu-walk", "--policy", str(tmp_path / "other.fri"), "--seconds", "0.2"]) == 2
    assert "made for another motion" in capsys.readouterr().err
    (tmp_path / "broken.fri").write_bytes(b"not a table")
    assert main(["track", "walk", "cmu-walk", "--policy", str(tmp_path / "broken.fri"), "--seconds", "0.2"]) == 2
    assert "not a strider FRI table" in capsys.readouterr().err
    assert main(["track", "walk", "cmu-walk", "--policy", "fastest"]) == 2
    assert "--policy must be" in capsys.readouterr().err
    assert main(["track", "vi", "cmu-walk", "--phases", "1", "--out", str(tmp_path / "x.fri")]) == 2
    assert "at least 2 phases" in capsys.readouterr().err


def test_where_the_table_has_no_answer_the_nearest_answered_rate_of_the_row_is_taken():
    """The shipped walk's table: every state of a row whose own entry failed falls back to the answered rate
    nearest it in the same phase row, or to None (the rectified centre of pressure) when asked for exactly."""
    table = load_fri_table(table_path(resolve_track("cmu-walk")))
    lo, hi = table.info.theta_range
    m, n = table.shares.shape
    blanks = [(i, j) for i in range(m) for j in range(n)
              if np.isnan(table.shares[i, j]) and not np.isnan(table.shares[i]).all()]
    assert blanks      # a walk's table has failing states (1 in 10 of them)
    for i, j in blanks[:: max(1, len(blanks) // 50)]:
        theta, rate = lo + i * (hi - lo) / (m - 1), j * table.rate_step
        assert table.action(theta, rate) is None
        answered = np.flatnonzero(~np.isnan(table.shares[i]))
        nearest = answered[np.argmin(np.abs(answered - j))]
        assert table.action(theta, rate, nearest_answer=True) == table.shares[i, nearest]


def test_the_unanswered_rule_is_checked(constraints):
    from strider.methods.tracking.controller import FriPolicy, PhaseTrackingController

    with pytest.raises(ValueError, match="unanswered must be one of nearest, rectified"):
        PhaseTrackingController(constraints, TrackParams(policy=FriPolicy(unanswered="guess")))
