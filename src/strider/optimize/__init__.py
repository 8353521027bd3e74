"""Offline optimization: a CMA-ES harness shared by skills and other methods."""
