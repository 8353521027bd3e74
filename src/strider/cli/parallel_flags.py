"""The flags every parallel command shares: how many workers, and where they run.

``--ray`` is short for ``--backend ray``: the work goes to the Ray cluster this machine is connected to, or to a
local one started for the run (:mod:`strider.parallel.ray_backend`). Results are the same on every backend and
for any worker count; only the wall time changes.
"""

from __future__ import annotations

import argparse

DEFAULT_WORKERS = 2   # the machines strider is measured on have two cores


def add_parallel_flags(parser: argparse.ArgumentParser, what: str, workers: int = DEFAULT_WORKERS) -> None:
    """``--workers N``, and ``--backend serial|processes|ray`` or ``--ray``, for a command whose parallel tasks
    are ``what`` (plural, for the help: "samples", "trials", ...)."""
    from strider.parallel import BACKENDS, DEFAULT_BACKEND  # on use: the CLI starts without the executors

    parser.add_argument("--workers", type=int, default=workers, metavar="N",
                        help=f"parallel workers for the {what} (default: %(default)s)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--backend", default=DEFAULT_BACKEND, choices=BACKENDS,
                       help=f"where the {what} run: in this process, in worker processes, or on Ray "
                            "(default: %(default)s)")
    where.add_argument("--ray", dest="backend", action="store_const", const="ray",
                       help="short for --backend ray: on the Ray cluster this machine is connected to, or on a "
                            "local one started for the run")
