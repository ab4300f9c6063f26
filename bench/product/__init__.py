"""Product benchmarks: a user's operation measured through the product's own path (CLI, HTTP, the
facade, real processes), default settings."""
