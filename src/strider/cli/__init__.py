"""The ``strider`` command: a thin argparse layer over :mod:`strider.api` and the runner."""
