"""Every bench by name: build its trials, run them through the shared executor, summarize."""

from __future__ import annotations

import time

from strider.bench.execution import BenchRun, RunOptions
from strider.bench.output import BenchOutput, as_subset
from strider.bench.protocol import Protocol
from strider.parallel import Executor


def run_bench(protocol: Protocol, controller: str, executor: Executor, options: RunOptions,
              variant: str = "", config: str = "default") -> BenchOutput:
    from strider.bench import bodies, crates, envelope, push, random_push, simbicon, slip, soak, speed, terrain, turning

    run = BenchRun(executor, options, protocol, controller, variant, config)
    start = time.perf_counter()
    if protocol.bench == "push":
        out = push.run_find_max(run) if variant == "find-max" else push.run_grid(run)
    else:
        out = {"envelope": envelope.run, "turning": turning.run, "terrain": terrain.run, "bodies": bodies.run,
               "slip-terrain": terrain.run, "slip-push": random_push.run, "slip-gaits": slip.run_gaits,
               "slip-dodge": slip.run_dodge, "simbicon-gaits": simbicon.run,
               "crates": crates.run,
               "speed": speed.run, "soak": soak.run}[protocol.bench](run)
    out.run = {"backend": executor.backend, "workers": executor.workers, "variant": variant or None,
               "wall_seconds": time.perf_counter() - start, **out.run}
    out.variant = variant
    out.config = config
    run.finish()
    return as_subset(out, protocol.changed) if protocol.changed and protocol.shipped else out
