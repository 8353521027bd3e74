"""Constrained walking (Coros 2010, Ch. 3): SIMBICON steps adapted offline to stepping stones, a step-to-step
dynamics model, and online step planning."""
