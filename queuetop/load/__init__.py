"""Load tests: producers and consumers that drive a real queue through the same operations real workers use."""
