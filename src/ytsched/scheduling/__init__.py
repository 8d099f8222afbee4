"""Node heartbeats: placing allocations, starvation, preemption and graceful preemption."""
