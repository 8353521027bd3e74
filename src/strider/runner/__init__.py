"""Scenarios, the runner loop, perturbations and results."""

from strider.runner.perturbation import Push
from strider.runner.scenario import CommandChange, PushOutcome, Result, Runner, Scenario

__all__ = ["CommandChange", "Push", "PushOutcome", "Result", "Runner", "Scenario"]
