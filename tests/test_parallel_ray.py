"""The Ray backend against a real local Ray instance: same results as the process pool, crash retries,
and workers that import this checkout's sources."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import parallel_tasks as pt
import strider
from strider.parallel import Executor, TaskFailed

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.ray

TESTS = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def local_ray():
    # Actors must import the task module too; the backend passes PYTHONPATH on to them.
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(TESTS), old) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()
    if old is None:
        del os.environ["PYTHONPATH"]
    else:
        os.environ["PYTHONPATH"] = old


def test_ray_workers_run_this_checkouts_strider(local_ray):
    with Executor("ray", workers=2) as ex:
        places = ex._impl.where()
    assert len({pid for pid, _ in places}) == 2
    assert all(path == strider.__file__ for _, path in places)
    with Executor("ray", workers=2) as ex:
        assert [n for _, n in ex.map(pt.blas_thread_count, range(2))] == [1, 1]


def test_ray_gives_the_same_results_as_processes_and_retries_killed_actors(local_ray, tmp_path):
    tasks = [(0.6, 1.0, 0.0), (1.0, 1.0, 300.0), (0.3, 1.0, 150.0)]
    with Executor("processes", workers=2, setup=pt.load_bipv3) as ex:
        expected = dict(ex.map(pt.walk_digest, tasks))
    with Executor("ray", workers=2, setup=pt.load_bipv3) as ex:
        assert dict(ex.map(pt.walk_digest, tasks)) == expected
        crashes = [(str(tmp_path), i) for i in range(3)]
        assert dict(ex.map(pt.crash_once, crashes)) == {i: i * 10 for i in range(3)}
        with pytest.raises(TaskFailed, match="ValueError: bad task 2"):
            list(ex.map(pt.raise_value_error, [2]))
    assert len(list(tmp_path.glob("crashed-*"))) == 3


def test_a_push_bench_on_ray_matches_the_process_pool_trial_for_trial(local_ray, tmp_path):
    from strider.bench.output import without_timings
    from strider.cli.main import main
    from test_bench import TINY, result_file

    protocol = tmp_path / "push.yaml"
    protocol.write_text(TINY["push"])
    for backend in ("ray", "processes"):
        out = tmp_path / backend / "results"
        assert main(["bench", "push", "--backend", backend, "--workers", "2", "--protocol", str(protocol),
                     "--out", str(out), "--no-progress"]) == 0
    ray_run, pool_run = result_file(tmp_path / "ray", "push"), result_file(tmp_path / "processes", "push")
    assert ray_run["run"]["backend"] == "ray"
    assert without_timings(ray_run["trials"]) == without_timings(pool_run["trials"])
    assert without_timings(ray_run["summary"]) == without_timings(pool_run["summary"])
