"""Checkpointed sweeps: run named tasks through an :class:`Executor`, with a progress bar, resumable.

Every result is appended to a JSON-lines checkpoint as soon as it arrives, keyed
by its task id. If the sweep is interrupted (Ctrl-C, a crash, a closed
terminal), running it again with the same checkpoint skips the tasks already
done. The first line of the file is a header holding the sweep's fingerprint
(a hash of everything that determines the results); a checkpoint written for
other inputs is refused rather than mixed in.

Results pass through JSON on the way in, whether fresh or resumed, so a sweep
returns exactly the same values either way (tuples become lists, NaN stays NaN).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from strider.errors import UsageError
from strider.parallel.executor import Executor
from strider.parallel.tasks import TaskFn
from strider.progress import progress_bar


def fingerprint(*parts: Any) -> str:
    """A short, stable hash of JSON-serializable inputs (sorted keys), for naming checkpoints."""
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _through_json(value: Any) -> Any:
    return json.loads(json.dumps(value))


class Checkpoint:
    """A JSON-lines file of ``{"id": ..., "result": ...}`` records after a ``{"fingerprint": ...}`` header."""

    def __init__(self, path: str | Path, fingerprint: str):
        self.path = Path(path)
        self.fingerprint = fingerprint

    def load(self) -> dict[str, Any]:
        """Results already recorded, by task id; empty if there is no file yet."""
        if not self.path.exists():
            return {}
        done: dict[str, Any] = {}
        with self.path.open() as f:
            for n, line in enumerate(f):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue   # a line cut short when the sweep was killed mid-write
                if n == 0:
                    if record.get("fingerprint") != self.fingerprint:
                        raise UsageError(f"{self.path}: checkpoint of a different sweep (fingerprint "
                                         f"{record.get('fingerprint')!r}, expected {self.fingerprint!r}); "
                                         "delete it to start again")
                    continue
                done[record["id"]] = record["result"]
        return done

    def append(self, task_id: str, result: Any) -> None:
        new = not self.path.exists()
        if new:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as f:
            if new:
                f.write(json.dumps({"fingerprint": self.fingerprint}) + "\n")
            f.write(json.dumps({"id": task_id, "result": result}) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


class Resumable:
    """Named tasks run one at a time in this process, each result recorded to ``checkpoint`` as it comes: what
    :func:`run_sweep` does for a batch, for a loop whose next task depends on the last results (a bisection).
    Without a checkpoint every task runs. A result passes through JSON either way, so a resumed run reads the same
    values as one that ran straight through."""

    def __init__(self, checkpoint: Checkpoint | None = None):
        self.checkpoint = checkpoint
        self.done = checkpoint.load() if checkpoint is not None else {}

    def result(self, task_id: str, compute: Callable[..., Any], *args: Any) -> Any:
        """The recorded result of ``task_id``, or ``compute(*args)``'s, recorded."""
        if task_id not in self.done:
            result = _through_json(compute(*args))
            if self.checkpoint is not None:
                self.checkpoint.append(task_id, result)
            self.done[task_id] = result
        return self.done[task_id]


def run_sweep(executor: Executor, fn: TaskFn, tasks: Mapping[str, Any], checkpoint: Checkpoint | None = None,
              progress: bool = False, description: str = "",
              on_result: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """Run ``fn`` over ``tasks`` (task id -> task) and return the results by task id, in the tasks' order.

    Tasks whose ids the checkpoint already holds are not run again. ``on_result``
    is called with each fresh result as it arrives (for live summaries).
    """
    done = checkpoint.load() if checkpoint is not None else {}
    done = {k: v for k, v in done.items() if k in tasks}
    todo = [k for k in tasks if k not in done]
    with progress_bar(len(tasks), description, unit="task", enabled=progress, initial=len(done)) as bar:
        for index, result in executor.map(fn, [tasks[k] for k in todo]):
            task_id = todo[index]
            result = _through_json(result)
            if checkpoint is not None:
                checkpoint.append(task_id, result)
            done[task_id] = result
            if on_result is not None:
                on_result(task_id, result)
            bar.update(1)
    return {k: done[k] for k in tasks}
