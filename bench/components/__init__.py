"""Component benchmarks: one part of the engine measured alone (shortcuts, labelled as such)."""
