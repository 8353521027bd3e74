"""The ``ray`` backend: one Ray actor per worker, each holding the context its ``setup`` built.

Each actor runs one task at a time, so results stream back as they finish and
the load balances itself. When an actor dies (its process killed or exiting),
its task is requeued and the actor replaced, with the same attempt count as the
process backend: retries are decided here rather than by Ray's own actor
restarts, so both backends behave the same way and count attempts exactly.

Actors import strider from the same source tree as the driver: the actor's
``runtime_env`` puts that tree first on ``PYTHONPATH``, so a worktree's sources
are used even where another copy of strider is installed.

If Ray is not running, it is started locally with one CPU per worker and no
dashboard, and shut down again by :meth:`RayBackend.close`.
"""

from __future__ import annotations

import os
import traceback
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from strider.errors import UsageError
from strider.parallel.tasks import Setup, TaskFailed, TaskFn, WorkerCrashed
from strider.parallel.threads import limit_blas_threads

INSTALL_HINT = "pip install 'strider[ray]'"


def require_ray() -> None:
    """Raise a one-line usage error if Ray cannot be imported."""
    try:
        import ray  # noqa: F401
    except ImportError:
        raise UsageError("--ray (--backend ray) needs Ray, which is not installed; install the extra: "
                         f"{INSTALL_HINT}") from None


def strider_source_root() -> str:
    """The directory holding the ``strider`` package this process imported."""
    import strider

    return str(Path(strider.__file__).resolve().parent.parent)


def _worker_env() -> dict:
    paths = [strider_source_root()] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}}


class _Worker:
    """The actor body: the context lives as long as the actor."""

    def __init__(self, setup: Setup):
        limit_blas_threads()
        self.context = setup() if setup is not None else None

    def run(self, fn: TaskFn, task: Any) -> tuple[bool, Any]:
        # Exceptions come back as values, so a task's own error is never confused with a dead actor.
        try:
            return True, fn(task, self.context)
        except Exception:  # noqa: BLE001 - any error of a task goes back to the driver
            return False, traceback.format_exc()

    def where(self) -> tuple[int, str]:
        import strider

        return os.getpid(), strider.__file__


@dataclass
class RayBackend:
    workers: int
    setup: Setup
    max_attempts: int
    _actors: list = field(default_factory=list)
    _started_ray: bool = False

    def __post_init__(self) -> None:
        import ray

        if not ray.is_initialized():
            ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False,
                     runtime_env=_worker_env())
            self._started_ray = True
        # An actor holds one CPU, so asking for more actors than CPUs would leave some never scheduled.
        cpus = int(ray.cluster_resources().get("CPU", 1))
        self.workers = max(1, min(self.workers, cpus))
        self._actor_class = ray.remote(num_cpus=1, max_restarts=0)(_Worker).options(runtime_env=_worker_env())

    def _new_actor(self):
        return self._actor_class.remote(self.setup)

    def where(self) -> list[tuple[int, str]]:
        """(pid, strider.__file__) of each actor: which process and which sources run the tasks."""
        import ray

        while len(self._actors) < self.workers:
            self._actors.append(self._new_actor())
        return ray.get([a.where.remote() for a in self._actors])

    def map(self, fn: TaskFn, tasks: list) -> Iterator[tuple[int, Any]]:
        import ray
        from ray.exceptions import RayActorError, WorkerCrashedError

        while len(self._actors) < min(self.workers, len(tasks)):
            self._actors.append(self._new_actor())
        pending = deque(range(len(tasks)))
        attempts = [0] * len(tasks)
        running: dict[Any, tuple[int, int]] = {}   # object ref -> (task index, actor slot)
        idle = deque(range(len(self._actors)))
        finished = False
        try:
            while pending or running:
                while pending and idle:
                    slot, index = idle.popleft(), pending.popleft()
                    attempts[index] += 1
                    running[self._actors[slot].run.remote(fn, tasks[index])] = (index, slot)
                done, _ = ray.wait(list(running), num_returns=1)
                ref = done[0]
                index, slot = running.pop(ref)
                try:
                    ok, payload = ray.get(ref)
                except (RayActorError, WorkerCrashedError) as exc:
                    ray.kill(self._actors[slot], no_restart=True)
                    self._actors[slot] = self._new_actor()
                    idle.append(slot)
                    if attempts[index] >= self.max_attempts:
                        raise WorkerCrashed(index, attempts[index], type(exc).__name__) from None
                    pending.appendleft(index)
                    continue
                idle.append(slot)
                if not ok:
                    raise TaskFailed(index, payload)
                yield index, payload
            finished = True
        finally:
            if not finished:
                # Stop work nobody will read; the busy actors are replaced lazily by the next map.
                for _, slot in running.values():
                    ray.kill(self._actors[slot], no_restart=True)
                busy = {slot for _, slot in running.values()}
                self._actors = [a for i, a in enumerate(self._actors) if i not in busy]

    def close(self) -> None:
        import ray

        for actor in self._actors:
            ray.kill(actor, no_restart=True)
        self._actors = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False
