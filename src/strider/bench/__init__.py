"""Benchmarks: the same protocols for every registered controller, run in parallel, written as JSON,
Markdown and plots (``strider bench push|envelope|terrain|speed|soak|report``)."""
