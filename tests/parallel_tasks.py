"""Task functions for the executor tests. They live in a module of their own (not a test file) so that
spawned worker processes and Ray actors can import them by name, with ``tests/`` on their path."""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

SLEEP_TASK_SECONDS = 0.25   # long enough that a sweep can be interrupted half-way


def square(task: int, context) -> int:
    return task * task


def blas_thread_count(task: int, context) -> int:
    import scipy.linalg  # noqa: F401 - its own OpenBLAS, loaded after the worker started

    from strider.parallel import blas_threads

    return blas_threads()


def raise_value_error(task: int, context) -> int:
    raise ValueError(f"bad task {task}")


def crash_once(task: tuple[str, int], context) -> int:
    """Kill this worker process the first time task ``i`` runs (a marker file remembers), then succeed."""
    folder, i = task
    marker = Path(folder) / f"crashed-{i}"
    if not marker.exists():
        marker.write_text(str(os.getpid()))
        os._exit(17)
    return i * 10


def always_crash(task: int, context) -> int:
    os._exit(3)


def record_setup(log: str) -> dict:
    """A worker's setup: note that it ran (one line per call) and return a context naming the process."""
    with open(log, "a") as f:
        f.write(f"{os.getpid()}\n")
    return {"pid": os.getpid()}


def context_pid(task: int, context: dict) -> tuple[int, int]:
    return context["pid"], os.getpid()


def load_bipv3():
    from strider.characters import load_character

    return load_character("bipv3")


def walk_digest(task: tuple[float, float, float], context) -> str:
    """A short GBWC walk on the real engine, pushed once; the SHA-256 of its final state, bit for bit."""
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import make_controller
    from strider.runner import Push, Runner, Scenario
    from strider.sim import CharacterPlacement, Scene

    speed, seconds, force = task
    scene = Scene((CharacterPlacement(context),))
    controller = make_controller("gbwc", LocomotionCommand(speed=speed))
    result = Runner(Scenario(scene, controller, seconds=seconds, pushes=(Push(force, seconds / 2, 90.0),))).run()
    return hashlib.sha256(result.final_state.tobytes()).hexdigest()


def sleep_task(task: int, context) -> int:
    time.sleep(SLEEP_TASK_SECONDS)
    return task * 3


def sweep_main(argv: list[str]) -> int:
    """``sweep CHECKPOINT N``: a checkpointed sweep of N sleep tasks on 2 processes; prints how many ran fresh."""
    from strider.parallel import Checkpoint, Executor, run_sweep

    path, n = argv[0], int(argv[1])
    fresh = []
    with Executor("processes", workers=2) as ex:
        results = run_sweep(ex, sleep_task, {f"t{i}": i for i in range(n)}, Checkpoint(path, "sleep-v1"),
                            on_result=lambda k, v: fresh.append(k))
    print(f"fresh={len(fresh)} total={len(results)} sum={sum(results.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(sweep_main(sys.argv[1:]))


def branch_scenario(kind: str):
    """The scenarios the episode tests branch: a pushed GBWC walk, or a skill (a forward roll) from the start."""
    from strider.characters import load_character
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import make_controller
    from strider.methods.skills.controller import SkillController
    from strider.methods.skills.skill import load_skill
    from strider.runner import Push, Scenario
    from strider.sim import CharacterPlacement, Scene

    scene = Scene((CharacterPlacement(load_character("bipv3")),))
    if kind == "gbwc":
        controller = make_controller("gbwc", LocomotionCommand(speed=0.8))
        return Scenario(scene, controller, seconds=16, pushes=(Push(250, 3.0, 90), Push(300, 8.0, 0)))
    return Scenario(scene, SkillController(load_skill(kind)), seconds=8)


def continue_episode(task: tuple[str, bytes, float], context) -> str:
    """Restore a pickled episode snapshot into a runner built here, run on; the digest of the final state."""
    import pickle

    from strider.runner import Runner

    kind, snapshot, seconds = task
    runner = Runner(branch_scenario(kind))
    runner.restore(pickle.loads(snapshot))
    runner.advance(seconds)
    return hashlib.sha256(runner.world.state_vector().tobytes()).hexdigest()
