"""Scenarios, the runner loop, perturbations and results."""

from strider.runner.perturbation import Push
from strider.runner.scenario import CommandChange, EpisodeSnapshot, PushOutcome, Result, Runner, Scenario

__all__ = ["CommandChange", "EpisodeSnapshot", "Push", "PushOutcome", "Result", "Runner", "Scenario"]
