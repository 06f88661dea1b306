"""RSR Studio core: Recursive Self-Rewrite of terminal-agent trajectories."""

__version__ = "0.1.0"
