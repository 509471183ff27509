"""tools: mechanical, honest gates for agent-heavy repositories."""

__version__ = "0.1.0"
