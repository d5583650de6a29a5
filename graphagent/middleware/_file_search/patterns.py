"""The two pattern languages of ``FilesystemFileSearchMiddleware``: path globs (``glob_search``)
and file-name filters (``grep_search``'s ``include``).

Both come from the model, so both are bounded: a glob is matched segment by segment with
memoisation (no exponential ``**`` backtracking), and brace alternatives in a filter are counted
while they are expanded, so ``{a,b}{a,b}...`` is refused before it can grow.
"""

from __future__ import annotations

import fnmatch
import functools
import re

Parts = tuple[str, ...]
"""A path below the walk's start, one name per level."""

MAX_ALTERNATIVES = 1000
"""The most file-name globs one ``include`` may expand to."""

MAX_INCLUDE_LENGTH = 1000
"""The longest ``include`` taken (expanding braces holds partial names of about this size)."""


class IncludeError(ValueError):
    """An ``include`` filter that cannot be used; the message is the model's answer."""


# -- path globs (glob_search) ----------------------------------------------------------------


def glob_segments(pattern: str) -> Parts | None:
    """A glob pattern split into its segments; ``None`` for one that is empty, absolute or
    climbs with ``..``."""
    if not pattern or pattern.startswith("/"):
        return None
    segments = tuple(s for s in pattern.split("/") if s not in ("", "."))
    if not segments or ".." in segments:
        return None
    return segments


def glob_matches(parts: Parts, segments: Parts) -> bool:
    """Whether a file's path matches the pattern: ``*``, ``?`` and ``[...]`` within one name,
    ``**`` for any number of directories (zero included)."""

    @functools.cache
    def match(i: int, j: int) -> bool:
        if j == len(segments):
            return i == len(parts)
        if segments[j] == "**":  # directories only: the file name is never swallowed
            return match(i, j + 1) or (i < len(parts) - 1 and match(i + 1, j))
        return i < len(parts) and fnmatch.fnmatch(parts[i], segments[j]) and match(i + 1, j + 1)

    return match(0, 0)


def glob_may_enter(parts: Parts, segments: Parts) -> bool:
    """Whether a file below the directory ``parts`` could match: prunes the walk."""
    for depth, name in enumerate(parts):
        if segments[depth] == "**":
            return True
        if depth == len(segments) - 1 or not fnmatch.fnmatch(name, segments[depth]):
            return False  # the last segment names the file, so no directory matches it
    return True


# -- include filters (grep_search) -----------------------------------------------------------


def include_filter(pattern: str, bad: str) -> re.Pattern[str]:
    """A file-name filter such as ``*.py`` or ``*.{ts,tsx}`` as one compiled pattern.

    Raises:
        IncludeError: ``bad`` for a malformed filter; a message saying so for one longer than
            ``MAX_INCLUDE_LENGTH`` or whose braces expand to more than ``MAX_ALTERNATIVES``
            names.
    """
    if not pattern or any(c in pattern for c in "\x00\r\n"):
        raise IncludeError(bad)
    if len(pattern) > MAX_INCLUDE_LENGTH:
        raise IncludeError(
            f"Invalid include pattern: it is longer than {MAX_INCLUDE_LENGTH} characters."
        )
    globs = _expand_braces(pattern, bad)
    try:
        return re.compile("|".join(fnmatch.translate(glob) for glob in globs))
    except re.error:
        raise IncludeError(bad) from None


def _expand_braces(pattern: str, bad: str) -> list[str]:
    """``a{b,c}d{e,f}`` as its four alternatives, refusing an unmatched or empty brace and an
    expansion past ``MAX_ALTERNATIVES``."""
    expanded: list[str] = []
    pending = [pattern]
    while pending:
        current = pending.pop()
        opening = current.find("{")
        if opening < 0:
            if "}" in current:
                raise IncludeError(bad)
            expanded.append(current)
            if len(expanded) > MAX_ALTERNATIVES:
                raise IncludeError(
                    f"Invalid include pattern: its braces expand to more than "
                    f"{MAX_ALTERNATIVES} file-name patterns; use fewer alternatives."
                )
            continue
        closing = current.find("}", opening + 1)
        if closing < 0 or closing == opening + 1:
            raise IncludeError(bad)
        head, tail = current[:opening], current[closing + 1 :]
        options = current[opening + 1 : closing].split(",")
        pending.extend(head + option + tail for option in reversed(options))
    return expanded
