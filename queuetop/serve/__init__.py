"""What answers for a target without the dashboard: the OpenMetrics exporter, `check`, `doctor`."""
