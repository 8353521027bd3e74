"""The executor on a real process pool: streaming, per-worker setup, crash retries, errors, resume, determinism."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import parallel_tasks as pt
from strider.errors import UsageError
from strider.parallel import Checkpoint, Executor, TaskFailed, WorkerCrashed, run_sweep
from strider.parallel.sweep import fingerprint

TESTS = Path(__file__).resolve().parent
SRC = TESTS.parent / "src"


def test_serial_and_processes_stream_every_result_with_its_index():
    for backend, workers in (("serial", None), ("processes", 2)):
        with Executor(backend, workers=workers) as ex:
            got = list(ex.map(pt.square, range(7)))
        assert sorted(got) == [(i, i * i) for i in range(7)]


def test_ordered_map_yields_in_input_order():
    with Executor("processes", workers=2) as ex:
        assert list(ex.map(pt.square, [5, 1, 4, 2], ordered=True)) == [(0, 25), (1, 1), (2, 16), (3, 4)]


def test_setup_runs_once_per_worker_and_workers_persist_across_maps(tmp_path):
    log = tmp_path / "setup.log"
    with Executor("processes", workers=2, setup=functools.partial(pt.record_setup, str(log))) as ex:
        first = [r for _, r in ex.map(pt.context_pid, range(8))]
        second = [r for _, r in ex.map(pt.context_pid, range(8))]
    setups = log.read_text().split()
    assert len(setups) == 2
    # Each task saw the context its own worker built, and the second map reused the same workers.
    assert all(ctx_pid == pid for ctx_pid, pid in first + second)
    assert {pid for _, pid in first + second} == {int(p) for p in setups}


def test_a_killed_worker_has_its_task_retried_on_a_fresh_worker(tmp_path):
    tasks = [(str(tmp_path), i) for i in range(6)]
    with Executor("processes", workers=2) as ex:
        got = dict(ex.map(pt.crash_once, tasks))
        assert got == {i: i * 10 for i in range(6)}
        # The pool is whole again afterwards: two live workers take new work.
        assert sorted(ex.map(pt.square, range(3))) == [(0, 0), (1, 1), (2, 4)]
    assert len(list(tmp_path.glob("crashed-*"))) == 6   # every task did kill its first worker


def test_a_task_that_always_kills_its_worker_is_reported_after_its_attempts():
    with (Executor("processes", workers=2, max_attempts=2) as ex,
          pytest.raises(WorkerCrashed, match="task 0: its worker died on all 2 attempts")):
        list(ex.map(pt.always_crash, [0]))


def test_a_task_exception_is_not_retried_and_carries_the_worker_traceback():
    for backend in ("serial", "processes"):
        with (Executor(backend, workers=1) as ex,
              pytest.raises(TaskFailed, match="ValueError: bad task 4") as info):
            list(ex.map(pt.raise_value_error, [4]))
        assert "raise_value_error" in info.value.remote_traceback


@pytest.mark.parametrize("workers", [0, -1, 1.5])
def test_bad_worker_counts_and_backends_are_usage_errors(workers):
    with pytest.raises(UsageError, match="--workers must be a whole number >= 1"):
        Executor("processes", workers=workers)
    with pytest.raises(UsageError, match="--backend must be one of serial, processes, ray"):
        Executor("threads")


def test_results_do_not_depend_on_backend_or_worker_count(bipv3):
    tasks = [(0.6, 1.0, 0.0), (1.0, 1.0, 300.0), (0.3, 1.0, 150.0)]
    runs = []
    for backend, workers in (("serial", None), ("processes", 1), ("processes", 2)):
        with Executor(backend, workers=workers, setup=pt.load_bipv3) as ex:
            runs.append(dict(ex.map(pt.walk_digest, tasks)))
    assert runs[0] == runs[1] == runs[2]
    assert len(set(runs[0].values())) == 3   # different tasks really give different trajectories


def test_sweep_checkpoint_skips_done_tasks_and_refuses_another_sweeps_file(tmp_path):
    path = tmp_path / "sweep.jsonl"
    tasks = {f"k{i}": i for i in range(5)}
    with Executor("serial") as ex:
        first = run_sweep(ex, pt.square, dict(list(tasks.items())[:3]), Checkpoint(path, "a"))
        fresh = []
        second = run_sweep(ex, pt.square, tasks, Checkpoint(path, "a"), on_result=lambda k, v: fresh.append(k))
    assert first == {"k0": 0, "k1": 1, "k2": 4}
    assert second == {f"k{i}": i * i for i in range(5)}
    assert fresh == ["k3", "k4"]
    with open(path, "a") as f:
        f.write('{"id": "k9", "resu')   # a line cut short by a kill is ignored
    assert Checkpoint(path, "a").load() == second
    with pytest.raises(UsageError, match="checkpoint of a different sweep"):
        Checkpoint(path, "b").load()
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1}) != fingerprint({"a": 2, "b": 2})


def _run_sweep_script(checkpoint: Path, n: int, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), str(TESTS)])}
    return subprocess.Popen([sys.executable, "-m", "parallel_tasks", str(checkpoint), str(n)], cwd=TESTS, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def test_a_sweep_interrupted_with_ctrl_c_resumes_from_its_checkpoint(tmp_path):
    checkpoint, n = tmp_path / "sleep.jsonl", 16
    # As from a terminal: Ctrl-C is not ignored, even when the tests themselves run as a background job (a
    # non-interactive shell starts those with SIGINT ignored, and a child inherits that).
    proc = _run_sweep_script(checkpoint, n, start_new_session=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if checkpoint.exists() and len(checkpoint.read_text().splitlines()) >= 4:   # header + 3 results
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)   # as a terminal's Ctrl-C: the whole process group
    _, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    done_before = len(Checkpoint(checkpoint, "sleep-v1").load())
    assert 3 <= done_before < n
    rerun = _run_sweep_script(checkpoint, n)
    out, err = rerun.communicate(timeout=60)
    assert rerun.returncode == 0, err
    assert out.split() == [f"fresh={n - done_before}", f"total={n}", f"sum={3 * sum(range(n))}"]


def test_ray_backend_without_ray_installed_says_how_to_install_it():
    # A subprocess where importing ray fails, as on an install without the extra.
    code = ("import sys; sys.modules['ray'] = None\n"
            "from strider.parallel import Executor\n"
            "from strider.errors import UsageError\n"
            "try:\n    Executor('ray', workers=2)\nexcept UsageError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(SRC)},
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.stdout.strip() == ("--ray (--backend ray) needs Ray, which is not installed; install the extra: "
                                  "pip install 'strider[ray]'")


def _without_thread_variables(monkeypatch) -> None:
    from strider.parallel.threads import THREAD_VARIABLES

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_workers_run_one_blas_thread_unless_the_environment_sets_a_count(monkeypatch):
    _without_thread_variables(monkeypatch)
    with Executor("processes", workers=2) as ex:
        assert [n for _, n in ex.map(pt.blas_thread_count, range(2))] == [1, 1]
    # A count the user set is theirs: spawned workers inherit it and keep it.
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    with Executor("processes", workers=1) as ex:
        assert [n for _, n in ex.map(pt.blas_thread_count, [0])] == [2]


def test_the_command_line_runs_one_blas_thread(monkeypatch):
    _without_thread_variables(monkeypatch)
    # SciPy's own OpenBLAS loads after the command line starts: it must take the limit too.
    probe = ("from strider.cli.main import main; from strider.parallel import blas_threads; "
             "main(['character', 'list']); import scipy.linalg; print(blas_threads())")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "2"          # the user's count stands
    env.pop("OPENBLAS_NUM_THREADS")
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "1"
