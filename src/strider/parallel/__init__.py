"""Executors for long jobs: run many small, independent tasks on processes or Ray, with one interface.

>>> from strider.parallel import Executor
>>> with Executor("serial") as ex:
...     sorted(ex.map(pow_task, [(2, 3), (3, 2)]))   # doctest: +SKIP
[(0, 8), (1, 9)]

See :mod:`strider.parallel.executor` for the contract every backend keeps and
:mod:`strider.parallel.sweep` for checkpointed, resumable sweeps with a progress bar. Each worker, and the
command line, runs one BLAS thread (:mod:`strider.parallel.threads`).
"""

from strider.parallel.executor import BACKENDS, DEFAULT_BACKEND, ClosedOnExit, Executor
from strider.parallel.sweep import Checkpoint, Resumable, run_sweep
from strider.parallel.tasks import TaskFailed, WorkerCrashed
from strider.parallel.threads import blas_threads, limit_blas_threads

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "Checkpoint", "ClosedOnExit", "Executor", "Resumable", "TaskFailed",
           "WorkerCrashed", "blas_threads", "limit_blas_threads", "run_sweep"]
