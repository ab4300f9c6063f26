"""Evals: retrieval and knowledge quality through the product's path, on public and shipped data."""
