"""Generators for reference documentation that must stay in step with the code."""
