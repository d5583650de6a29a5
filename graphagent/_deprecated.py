"""LangChain's deprecated arguments and attributes, which graphagent still takes: one warning."""

from __future__ import annotations

import warnings


def warn_deprecated(owner: str, old: str, replacement: str, *, stacklevel: int = 3) -> None:
    """Warn that ``old`` (an argument or attribute of ``owner``) is deprecated in favour of
    ``replacement``; the default ``stacklevel`` points at the caller of the function that warns."""
    warnings.warn(
        f"{owner}: {old} is deprecated; use {replacement} instead.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )
