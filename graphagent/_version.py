"""The version of the installed distribution: pyproject.toml holds the one number."""

from importlib import metadata

DISTRIBUTION = "graphagent-langgraph"
"""The name pip knows the package by (``graphagent`` on the index is another project)."""


def installed_version() -> str:
    """The installed distribution's version; ``0+unknown`` for a source tree never installed."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "0+unknown"
