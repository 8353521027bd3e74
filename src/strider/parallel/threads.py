"""One BLAS thread per strider process: its linear algebra is small, and its parallelism is processes.

strider's matrices are small: a 26-D CMA-ES covariance, a 100-variable QP, k-NN fits over a few dozen
examples, 19 x 19 solves. OpenBLAS spreads even these over every core by default, and on a 2-core machine
with a second process busy that costs more than it gives (measured: a 26 x 26 eigendecomposition 104 us on
two threads against 51 us on one, a 60 x 60 SVD 2.6 ms against 0.64 ms, and one generation of pycma's ask and
tell 3.5 ms against 1.1 ms). strider runs parallel work on worker processes instead (:mod:`strider.parallel`),
so the command line and every worker it starts take one BLAS thread each.

A thread count the user set in the environment (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or
``MKL_NUM_THREADS``) is left as it is. From Python, call :func:`limit_blas_threads` once to get the same.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
BLAS_THREADS = 1


def limit_blas_threads(threads: int = BLAS_THREADS) -> bool:
    """Limit this process's BLAS to ``threads`` threads, unless the environment already sets a count; True if it
    did. The limit holds for the rest of the process and for the processes it starts.

    Two steps, because each BLAS library reads its count once, when it loads: the libraries loaded so far
    (NumPy's) are limited through threadpoolctl, and ``OPENBLAS_NUM_THREADS`` is set for those loaded later
    (SciPy wheels bring an OpenBLAS of their own) and for child processes."""
    if any(name in os.environ for name in THREAD_VARIABLES):
        return False
    os.environ["OPENBLAS_NUM_THREADS"] = str(threads)
    import numpy  # noqa: F401 - loads NumPy's BLAS, which may have been loaded before the variable was set
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")
    return True


def blas_threads() -> int:
    """The largest thread count of this process's BLAS libraries (NumPy's among them)."""
    import numpy  # noqa: F401 - loads NumPy's BLAS, so it is counted
    from threadpoolctl import threadpool_info

    return max((pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"), default=1)
