"""What the executor and its backends share: the task and setup signatures and the two failures a map can end in.

Kept apart from :mod:`strider.parallel.executor`, which picks a backend, so that the backends import these
without importing the executor back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

TaskFn = Callable[[Any, Any], Any]
Setup = Callable[[], Any] | None


class TaskFailed(RuntimeError):
    """A task raised an exception in its worker; ``remote_traceback`` is the worker's traceback text."""

    def __init__(self, index: int, remote_traceback: str):
        self.index = index
        self.remote_traceback = remote_traceback
        last = remote_traceback.strip().splitlines()[-1] if remote_traceback.strip() else "unknown error"
        super().__init__(f"task {index} failed: {last}\n{remote_traceback}")


class WorkerCrashed(RuntimeError):
    """A task's worker died (killed, segfault, os._exit) on every one of its attempts."""

    def __init__(self, index: int, attempts: int, detail: str = ""):
        self.index = index
        self.attempts = attempts
        super().__init__(f"task {index}: its worker died on all {attempts} attempts{': ' + detail if detail else ''}")
