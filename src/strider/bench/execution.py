"""Running a bench's trials: one executor per command, a checkpoint per bench run, a progress bar.

The checkpoint lives in ``<results>/.partial/`` and is named by a fingerprint of
the bench, the controller, the protocol and the code version, so running the
same command again after Ctrl-C picks up where it stopped, while a changed
protocol or a new commit starts afresh. It is deleted once the results file is
written.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from strider.bench.output import CHECKPOINT_DIR, DEFAULT_RESULTS_DIR, versions
from strider.bench.protocol import Protocol
from strider.bench.trial import BenchContext, Trial, run_trial
from strider.parallel import Checkpoint, Executor, run_sweep
from strider.parallel.executor import TaskFn
from strider.parallel.sweep import fingerprint


@dataclass(frozen=True)
class RunOptions:
    backend: str = "processes"
    workers: int | None = 2
    results_dir: Path = DEFAULT_RESULTS_DIR
    progress: bool = True
    fresh: bool = False   # ignore (and replace) a checkpoint of an interrupted run


class BenchRun:
    """One bench on one controller: trials go through the shared executor and one checkpoint."""

    def __init__(self, executor: Executor, options: RunOptions, protocol: Protocol, controller: str,
                 variant: str = "", config: str = "default"):
        self.executor = executor
        self.options = options
        self.protocol = protocol
        self.controller = controller
        self.config = config
        self.checkpoint = bench_checkpoint(options.results_dir, protocol, controller, variant, config,
                                           fresh=options.fresh)

    @property
    def subject(self) -> str:
        """The controller under test, with its configuration when not the default: for titles and labels."""
        return self.controller if self.config == "default" else f"{self.controller} ({self.config})"

    def run(self, trials: dict[str, Trial], label: str = "", task: TaskFn = run_trial) -> dict[str, dict]:
        refuse_unfollowable_commands(trials.values())
        desc = f"{self.protocol.bench} {self.subject}" + (f" {label}" if label else "")
        return run_sweep(self.executor, task, trials, self.checkpoint, progress=self.options.progress,
                         description=desc)

    def finish(self) -> None:
        self.checkpoint.remove()


def bench_checkpoint(results_dir: str | Path, protocol: Protocol, subject: str, *identity: str,
                     fresh: bool = False) -> Checkpoint:
    """The checkpoint of one bench run in ``results_dir``/.partial: named by a fingerprint of the bench, what it
    measures (``subject``, and any more ``identity``), the protocol and the code version, so the same command run
    again after an interruption resumes it, while a changed protocol or a new commit starts afresh. ``fresh``:
    discard a checkpoint left by an interrupted run."""
    code = versions()
    key = fingerprint(protocol.bench, subject, *identity, protocol.as_dict(), code["strider"], code.get("git_commit"))
    checkpoint = Checkpoint(Path(results_dir) / CHECKPOINT_DIR / f"{protocol.bench}-{subject}-{key}.jsonl", key)
    if fresh:
        checkpoint.remove()
    return checkpoint


def make_executor(options: RunOptions) -> Executor:
    return Executor(options.backend, workers=options.workers, setup=BenchContext)


def refuse_unfollowable_commands(trials) -> None:
    """Refuse, before any trial runs, a commanded speed or period its controller cannot follow (a protocol or a
    flag such as ``--speeds`` may ask for one): one clear error here instead of a failed task in a worker."""
    from strider.control.controller import LocomotionCommand
    from strider.methods.registry import check_commands, controller_entry

    seen = set()
    for t in trials:
        if not isinstance(t, Trial):   # a task of its own (a crate skill) checks what it runs itself
            continue
        key = (t.controller, t.config, t.style, t.speed, t.period)
        if key not in seen:
            seen.add(key)
            command = LocomotionCommand(speed=t.speed, period=t.period)
            built = controller_entry(t.controller).build(command, t.style, t.config)
            check_commands(t.controller, built.command_range, command)


def trial_base(protocol: Protocol, controller: str, config: str = "default", **fields: Any) -> Trial:
    """A trial of ``controller`` in its configuration ``config``, carrying the protocol's character, style and
    seed."""
    return Trial(controller=controller, config=config, style=protocol.style, character=protocol.character,
                 seed=protocol.seed, **fields)
