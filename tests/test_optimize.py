"""The CMA-ES harness (seed 003, Sec. 6): deterministic, checkpointed every generation, resumable, backend-independent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from strider.errors import UsageError
from strider.methods.skills.optimize import (
    SkillObjective,
    parameter_bounds,
    parameter_vector,
    trial_seeds,
    with_parameters,
    worker_cache,
)
from strider.methods.skills.rollout import cost, cost_bodies, rollout
from strider.methods.skills.skill import load_skill, parse_skill, skill_path
from strider.optimize.cma_es import default_popsize, minimize, whole_generations
from strider.parallel import Executor

SRC = Path(__file__).resolve().parents[1] / "src"


def rosenbrock(x, context=None) -> float:
    x = np.asarray(x)
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2))


class Interrupted(Exception):
    pass


def test_converges_on_a_known_function():
    with Executor("serial") as ex:
        result = minimize(rosenbrock, np.zeros(4), ex, sigma0=0.5, maxfevals=3000, seed=3)
    assert result.cost < 1e-6
    assert np.allclose(result.x, 1.0, atol=1e-3)
    assert result.history[-1].best == result.cost


def test_resume_after_an_interruption_gives_the_uninterrupted_result(tmp_path):
    with Executor("serial") as ex:
        whole = minimize(rosenbrock, np.zeros(5), ex, maxfevals=600, seed=7)

        def stop_after_five(generation):
            if len(calls) == 5:
                raise Interrupted
            calls.append(generation)

        calls: list = []
        ckpt = tmp_path / "run.pkl"
        with pytest.raises(Interrupted):
            minimize(rosenbrock, np.zeros(5), ex, maxfevals=600, seed=7, checkpoint=ckpt, on_generation=stop_after_five)
        np.random.seed(12345)   # whatever the process did in between must not matter
        resumed = minimize(rosenbrock, np.zeros(5), ex, maxfevals=600, seed=7, checkpoint=ckpt, resume=True)
    assert resumed.cost == whole.cost
    assert np.array_equal(resumed.x, whole.x)
    assert resumed.evaluations == whole.evaluations


def test_resume_without_a_checkpoint_is_a_clear_error(tmp_path):
    with Executor("serial") as ex, pytest.raises(UsageError, match="no checkpoint"):
        minimize(rosenbrock, np.zeros(2), ex, checkpoint=tmp_path / "none.pkl", resume=True)


def test_bounds_keep_the_search_inside():
    """A bound that cuts off Rosenbrock's optimum (1, 1, 1): no candidate goes beyond it, the result sits on it."""
    seen: list[np.ndarray] = []

    def recorded(x, context=None) -> float:
        seen.append(np.asarray(x).copy())
        return rosenbrock(x)

    with Executor("serial") as ex:
        result = minimize(recorded, np.zeros(3), ex, sigma0=0.5, maxfevals=3000, seed=3,
                          bounds=([-2.0, -2.0, -2.0], [0.5, np.inf, np.inf]))
    assert max(x[0] for x in seen) <= 0.5
    assert result.x[0] == pytest.approx(0.5, abs=1e-3) and result.cost > 0.2


def test_knot_bounds_cover_knots_and_leave_axes_free():
    assert parameter_bounds(load_skill("roll-supine-to-prone")) is None   # unbounded unless asked
    data = yaml.safe_load(skill_path("roll-supine-to-prone").read_text())
    data["optimize"]["knot_bound"] = 3.0
    bounded = parse_skill(data, "bounded.yaml")
    lower, upper = parameter_bounds(bounded)
    assert len(lower) == len(parameter_vector(bounded)) == 14   # 4 trajectories x 2 knots, 2 axes x 3
    assert lower[:4] == [-3.0] * 4 and lower[4:7] == [-np.inf] * 3   # spine and rHip knots, then rHip's axis
    assert upper == [-v for v in lower]


def test_knot_ranges_bound_their_own_knots():
    skill = load_skill("initial/forward-roll")
    lower, upper = parameter_bounds(skill)
    ranges = [p.range for p in skill.optimize.params for _ in p.knots]
    assert list(zip(lower, upper)) == ranges and (-1.0, 1.0) in ranges   # the hip's cone, both knots


def test_default_population_is_pycmas():
    assert default_popsize(14) == 4 + int(np.floor(3 * np.log(14)))


def test_skill_parameters_round_trip():
    skill = load_skill("roll-supine-to-prone")
    x = parameter_vector(skill)
    assert len(x) == 14   # 4 trajectories x 2 knots, plus 2 axes of 3 (Sec. 6.2)
    again = parameter_vector(with_parameters(skill, x))
    assert np.allclose(again, x)


def test_a_robust_objective_averages_the_nominal_start_and_seeded_perturbed_ones(tmp_path):
    """``optimize.trials: 3``: the nominal start plus two perturbed ones, seeded apart from P6's test seeds 0-49."""
    data = yaml.safe_load(skill_path("roll-supine-to-prone").read_text())
    data["optimize"]["trials"] = 3
    path = tmp_path / "robust.yaml"
    path.write_text(yaml.safe_dump(data))
    skill = load_skill(path)
    assert trial_seeds(skill.optimize) == [None, 1000, 1001]
    x = parameter_vector(skill)
    robust = SkillObjective(str(path))(x, {})
    assert SkillObjective(str(path))(x, worker_cache()) == robust   # deterministic, fresh worker or not
    bodies = cost_bodies(skill)
    each = [cost(skill.optimize.cost, rollout(skill, 3.0, perturb=0.05 if s is not None else 0.0, seed=s,
                                              bodies=bodies)) for s in (None, 1000, 1001)]
    assert len(set(each)) == 3   # the perturbed starts really differ from the nominal one
    assert robust == pytest.approx(float(np.mean(each)), rel=0, abs=1e-12)


def _one_generation(backend: str, **kwargs) -> tuple[np.ndarray, float]:
    path = str(skill_path("roll-supine-to-prone"))
    skill = load_skill(path)
    with Executor(backend, workers=2, setup=worker_cache, **kwargs) as ex:
        result = minimize(SkillObjective(path), parameter_vector(skill), ex, sigma0=1.5, maxfevals=4, popsize=4, seed=5)
    return result.x, result.cost


def test_processes_give_the_serial_result():
    x_serial, c_serial = _one_generation("serial")
    x_proc, c_proc = _one_generation("processes")
    assert c_proc == c_serial and np.array_equal(x_proc, x_serial)


@pytest.mark.ray
def test_ray_gives_the_serial_result():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, ignore_reinit_error=True, log_to_driver=False)
    try:
        x_ray, c_ray = _one_generation("ray")
    finally:
        ray.shutdown()
    x_serial, c_serial = _one_generation("serial")
    assert c_ray == c_serial and np.array_equal(x_ray, x_serial)


def _cli(*args: str, out: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(SRC), MUJOCO_GL=os.environ.get("MUJOCO_GL", "egl"))
    return subprocess.Popen([sys.executable, "-m", "strider", "optimize", "skill", *args, "--out", str(out), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)


@pytest.mark.slow
def test_killed_and_resumed_cli_run_matches_an_uninterrupted_one(tmp_path):
    """Acceptance: kill `strider optimize skill` mid-way, --resume, and get the uninterrupted run's result."""
    budget = ["--budget", "120", "--workers", "2", "--seed", "3"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    whole = json.loads(_cli("roll-supine-to-prone", *budget, out=tmp_path / "a").communicate()[0])
    proc = _cli("roll-supine-to-prone", *budget, out=tmp_path / "b")
    ckpt = tmp_path / "b" / "roll-supine-to-prone.checkpoint.pkl"
    while not ckpt.exists() and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(3.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    resumed = json.loads(_cli("roll-supine-to-prone", *budget, "--resume", out=tmp_path / "b").communicate()[0])
    assert resumed["x"] == whole["x"] and resumed["cost"] == whole["cost"]


def test_a_budget_is_kept_in_whole_generations():
    popsize = default_popsize(5)
    with Executor("serial") as ex:
        result = minimize(rosenbrock, np.zeros(5), ex, maxfevals=popsize + 1, seed=7)
    assert result.evaluations == 2 * popsize == whole_generations(popsize + 1, popsize)
    assert whole_generations(2 * popsize, popsize) == 2 * popsize


def test_resuming_with_a_larger_budget_continues_to_it(tmp_path):
    ckpt = tmp_path / "run.pkl"
    with Executor("serial") as ex:
        whole = minimize(rosenbrock, np.zeros(5), ex, maxfevals=400, seed=7)
        first = minimize(rosenbrock, np.zeros(5), ex, maxfevals=200, seed=7, checkpoint=ckpt)
        more = minimize(rosenbrock, np.zeros(5), ex, maxfevals=400, seed=7, checkpoint=ckpt, resume=True)
    assert first.evaluations < more.evaluations == whole.evaluations
    assert more.cost == whole.cost and np.array_equal(more.x, whole.x)
