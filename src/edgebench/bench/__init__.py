"""Benchmark reps: a worker that runs in a fresh process, and the parent that guards it."""
