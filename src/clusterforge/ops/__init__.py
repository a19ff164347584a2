"""Operating a running cluster under faults: interrupts, process trees, drift, replace, doctor."""
