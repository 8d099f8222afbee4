"""Ready-made scenarios that step the engine through time (examples and acceptance checks)."""
