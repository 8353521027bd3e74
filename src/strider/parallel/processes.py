"""The ``processes`` backend: a pool of spawned worker processes that survives its workers dying.

``concurrent.futures.ProcessPoolExecutor`` marks the whole pool broken when one
worker dies and cannot say which task killed it. This pool gives each worker its
own pipe and hands it one task at a time, so when a worker's process ends
without answering, the parent knows exactly which task was lost, requeues it
and starts a replacement worker.

Workers are started with ``spawn`` rather than ``fork``: a forked child would
inherit the parent's threads (Ray's, a progress bar's) and MuJoCo state, and
spawn behaves the same on every platform. A spawned child gets the parent's
``sys.path``, so it imports the same strider sources as the parent.

Workers ignore SIGINT: Ctrl-C in a terminal reaches the whole process group,
and it is the parent's job to stop cleanly (and keep what was computed).
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import traceback
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

from strider.parallel.tasks import Setup, TaskFailed, TaskFn, WorkerCrashed
from strider.parallel.threads import limit_blas_threads

START_METHOD = "spawn"
JOIN_SECONDS = 5.0   # how long a closing worker gets to exit before it is killed

_OK, _ERROR, _SETUP_ERROR = "ok", "error", "setup-error"


def _worker_main(conn: Connection, setup: Setup) -> None:
    """A worker: build the context once, then run tasks from the pipe until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    limit_blas_threads()
    try:
        context = setup() if setup is not None else None
    except Exception:  # noqa: BLE001 - the parent reports it; the worker cannot go on
        conn.send((_SETUP_ERROR, -1, traceback.format_exc()))
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        index, fn, task = message
        try:
            reply = (_OK, index, fn(task, context))
        except Exception:  # noqa: BLE001 - any error of a task goes back to the parent
            reply = (_ERROR, index, traceback.format_exc())
        conn.send(reply)


@dataclass
class _Worker:
    process: mp.process.BaseProcess
    conn: Connection
    task: int | None = None   # index of the task it is running

    def stop(self, kill: bool = False) -> None:
        if kill:
            self.process.kill()
        else:
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
        self.process.join(JOIN_SECONDS)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


@dataclass
class ProcessBackend:
    workers: int
    setup: Setup
    max_attempts: int
    _pool: list[_Worker] = field(default_factory=list)

    def _start_worker(self) -> _Worker:
        ctx = mp.get_context(START_METHOD)
        parent, child = ctx.Pipe(duplex=True)
        process = ctx.Process(target=_worker_main, args=(child, self.setup), daemon=True,
                              name="strider-worker")
        process.start()
        child.close()
        return _Worker(process, parent)

    def map(self, fn: TaskFn, tasks: list) -> Iterator[tuple[int, Any]]:
        pending = deque(range(len(tasks)))
        attempts = [0] * len(tasks)
        finished = False
        try:
            while len(self._pool) < min(self.workers, len(tasks)):
                self._pool.append(self._start_worker())
            while pending or any(w.task is not None for w in self._pool):
                for worker in self._pool:
                    if worker.task is None and pending:
                        index = pending.popleft()
                        attempts[index] += 1
                        worker.task = index
                        worker.conn.send((index, fn, tasks[index]))
                busy = [w for w in self._pool if w.task is not None]
                wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
                for worker in busy:
                    outcome = self._collect(worker)
                    if outcome is None:
                        continue
                    index = worker.task
                    worker.task = None
                    if outcome == "crashed":
                        self._replace(worker)
                        if attempts[index] >= self.max_attempts:
                            raise WorkerCrashed(index, attempts[index],
                                                f"exit code {worker.process.exitcode}")
                        pending.appendleft(index)
                        continue
                    kind, _, payload = outcome
                    if kind == _OK:
                        yield index, payload
                    elif kind == _SETUP_ERROR:
                        raise TaskFailed(index, "worker setup failed:\n" + payload)
                    else:
                        raise TaskFailed(index, payload)
            finished = True
        finally:
            if not finished:
                # Interrupted (Ctrl-C, an error, or the caller stopped reading): busy workers are
                # still computing results nobody will read, so they go; idle ones stay for reuse.
                for worker in [w for w in self._pool if w.task is not None]:
                    self._pool.remove(worker)
                    worker.stop(kill=True)

    def _collect(self, worker: _Worker):
        """The worker's reply, ``"crashed"`` if its process died without one, or None if still working."""
        try:
            if worker.conn.poll():
                return worker.conn.recv()
        except (EOFError, OSError):
            return "crashed"
        if not worker.process.is_alive():
            return "crashed"
        return None

    def _replace(self, dead: _Worker) -> None:
        dead.stop(kill=True)
        self._pool[self._pool.index(dead)] = self._start_worker()

    def close(self) -> None:
        pool, self._pool = self._pool, []
        for worker in pool:
            worker.stop()
