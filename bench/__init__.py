"""Benchmarks and evals of hive-mind, run as modules from the repository root (bench/README.md)."""
