"""queuetop: htop for job queues that live in SQL tables."""
__version__ = "0.1.0"
