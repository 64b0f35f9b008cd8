"""What watches a queue without changing it: the one engine's poll (collector), its bounded reads (watermarks,
recount), the Snapshot it makes, the monitor around it, blocking chains, SLOs."""
