"""LangChain's deprecated arguments and attributes, which graphagent still takes: one warning."""

from __future__ import annotations

import os
import sys
import warnings

# graphagent/, as code objects spell their files
_PACKAGE = os.path.dirname(os.path.dirname(__file__)) + os.sep


def warn_deprecated(
    owner: str, old: str, replacement: str, *, stacklevel: int | None = None
) -> None:
    """Warn that ``old`` (an argument or attribute of ``owner``) is deprecated in favour of
    ``replacement``.

    The warning points at the first caller outside graphagent (the line that passed the
    argument, or the ``super().__init__`` call of a user's subclass), however many graphagent
    frames lie between; ``stacklevel`` overrides that with a fixed count.
    """
    warnings.warn(
        f"{owner}: {old} is deprecated; use {replacement} instead.",
        DeprecationWarning,
        stacklevel=_outside_graphagent() if stacklevel is None else stacklevel,
    )


def _outside_graphagent() -> int:
    """The ``stacklevel`` (as ``warn_deprecated`` passes it) of the nearest frame whose code is
    not graphagent's."""
    frame = sys._getframe(2)  # the caller of warn_deprecated, i.e. stacklevel 2
    level = 2
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame = frame.f_back
        level += 1
    return level
