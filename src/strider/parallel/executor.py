"""One ``map`` interface over three backends: ``serial``, ``processes`` (the default) and ``ray``.

The contract every backend keeps:

* **Tasks are small and picklable.** ``fn(task, context)`` is a module-level
  function; ``task`` is a plain description (numbers, strings, small dataclasses),
  never a world or a file.
* **Workers build their context once.** ``setup`` (a picklable zero-argument
  callable, or None) runs once per worker process (or Ray actor) and its return
  value is passed as ``context`` to every task that worker runs: loaded
  characters, compiled models, caches. A context must not carry results from one
  task to the next, or results would depend on which worker ran what.
* **Results stream back in completion order**, as ``(index, result)`` pairs with
  the task's position in the input, so a progress bar can follow. ``ordered=True``
  buffers them into input order instead.
* **A crashed or killed worker's task is retried**, on a fresh worker, up to
  ``max_attempts`` times in all; then :class:`WorkerCrashed` is raised. An
  exception raised *by* a task is a bug, not bad luck: it is not retried and
  arrives as :class:`TaskFailed` with the worker's traceback.
* **Deterministic.** The executor adds no randomness and no shared state, so a
  job whose tasks carry their own seeds gives the same results on every backend
  and for every worker count.

Workers persist across ``map`` calls until :meth:`Executor.close` (or the end of
a ``with`` block), so an optimizer can call ``map`` once per generation without
paying for process start-up and ``setup`` each time.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from strider.errors import UsageError
from strider.parallel.tasks import Setup, TaskFailed, TaskFn

if TYPE_CHECKING:
    from typing_extensions import Self

BACKENDS = ("serial", "processes", "ray")
DEFAULT_BACKEND = "processes"
DEFAULT_MAX_ATTEMPTS = 3   # a task whose worker dies this many times is a crash of its own, not bad luck

def check_workers(workers: int | None) -> int:
    """The worker count to use: ``None`` means one per CPU; anything below 1 is a usage error."""
    if workers is None:
        return os.cpu_count() or 1
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise UsageError(f"--workers must be a whole number >= 1, got {workers!r}")
    return workers


class ClosedOnExit:
    """A context manager whose exit calls the owner's ``close``: the executor, and what owns one."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Executor(ClosedOnExit):
    """Runs ``fn(task, context)`` over many tasks on the chosen backend.

    ``backend``: ``serial`` (this process; for debugging and tiny jobs),
    ``processes`` (a pool of spawned worker processes) or ``ray`` (Ray actors on
    a local or existing Ray instance; needs the ``ray`` extra).
    """

    def __init__(self, backend: str = DEFAULT_BACKEND, workers: int | None = None, setup: Setup = None,
                 max_attempts: int = DEFAULT_MAX_ATTEMPTS):
        if backend not in BACKENDS:
            raise UsageError(f"--backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
        if max_attempts < 1:
            raise UsageError(f"max_attempts must be >= 1, got {max_attempts}")
        self.backend = backend
        if workers is not None:
            check_workers(workers)   # a serial run ignores the count, but a bad one is still a mistake to report
        self.workers = 1 if backend == "serial" else check_workers(workers)
        self.setup = setup
        self.max_attempts = max_attempts
        self._impl = self._make_backend()

    def _make_backend(self):
        if self.backend == "serial":
            return _SerialBackend(self.setup)
        if self.backend == "processes":
            from strider.parallel.processes import ProcessBackend

            return ProcessBackend(self.workers, self.setup, self.max_attempts)
        from strider.parallel.ray_backend import RayBackend, require_ray

        require_ray()
        return RayBackend(self.workers, self.setup, self.max_attempts)

    def map(self, fn: TaskFn, tasks: Iterable[Any], ordered: bool = False) -> Iterator[tuple[int, Any]]:
        """Yield ``(index, fn(task, context))`` for every task: in completion order, or input order if ``ordered``."""
        stream = self._impl.map(fn, list(tasks))
        return _in_order(stream) if ordered else stream

    def close(self) -> None:
        self._impl.close()


def _in_order(stream: Iterator[tuple[int, Any]]) -> Iterator[tuple[int, Any]]:
    waiting: dict[int, Any] = {}
    next_index = 0
    for index, result in stream:
        waiting[index] = result
        while next_index in waiting:
            yield next_index, waiting.pop(next_index)
            next_index += 1


class _SerialBackend:
    """Everything in this process, in input order; ``setup`` runs once, on the first ``map``."""

    _UNSET = object()

    def __init__(self, setup: Setup):
        self.setup = setup
        self.context: Any = self._UNSET

    def map(self, fn: TaskFn, tasks: list) -> Iterator[tuple[int, Any]]:
        if self.context is self._UNSET:
            self.context = self.setup() if self.setup is not None else None
        for index, task in enumerate(tasks):
            try:
                result = fn(task, self.context)
            except Exception as exc:
                raise TaskFailed(index, traceback.format_exc()) from exc
            yield index, result

    def close(self) -> None:
        self.context = self._UNSET
