"""Benchmarks for local_assistant: scripts that print numbers (run with `python -m`)."""
