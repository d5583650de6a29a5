"""The file side of ``FilesystemFileSearchMiddleware``: paths confined to a root, a walk that
never leaves it, and the two pattern languages (path globs and ``include`` name filters).

Confinement rests on three rules:

- a directory given by the model is a path *under* the root (``/`` is the root); one that names
  ``..`` or ``~``, or that resolves outside the root (through a symlink), is refused;
- the walk never enters a symlinked directory, so it stays below the directory it started in;
- a symlinked file is only listed or read when its target is inside the root.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

Parts = tuple[str, ...]
"""A path below the walk's start, one name per level."""


def directory_under(root: Path, path: str) -> Path | None:
    """The directory ``path`` names below ``root`` (resolved), or ``None`` if it is refused or is
    not an existing directory."""
    if ".." in path or "~" in path:
        return None
    try:
        candidate = (root / path.lstrip("/")).resolve()
    except (OSError, ValueError):  # a symlink loop, a NUL byte
        return None
    if not candidate.is_relative_to(root) or not candidate.is_dir():
        return None
    return candidate


def walk(start: Path, descend: Callable[[Parts], bool]) -> Iterator[tuple[os.DirEntry[str], Parts]]:
    """Every entry below ``start`` that is not a directory, with its parts, in the sorted order
    of the paths. Directories ``descend`` refuses are skipped; symlinked ones are never entered."""
    stack: list[tuple[Parts, Iterator[os.DirEntry[str]]]] = [((), _sorted_entries(start))]
    while stack:
        parts, entries = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        here = (*parts, entry.name)
        if entry.is_dir(follow_symlinks=False):
            if descend(here):
                stack.append((here, _sorted_entries(entry.path)))
        else:
            yield entry, here


def _sorted_entries(directory: str | Path) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as scan:
            entries = list(scan)
    except OSError:  # unreadable, or gone since it was listed
        return iter(())
    return iter(sorted(entries, key=_path_order))


def _path_order(entry: os.DirEntry[str]) -> str:
    # A directory sorts as "name/", so the walk yields paths in plain string order.
    return entry.name + "/" if entry.is_dir(follow_symlinks=False) else entry.name


def is_file_inside(entry: os.DirEntry[str], root: Path) -> bool:
    """Whether ``entry`` is a file that may be listed or read: a symlink only when its target is
    a file inside ``root`` (the walk reaches no other place outside it)."""
    try:
        if entry.is_symlink() and not Path(entry.path).resolve().is_relative_to(root):
            return False
        return entry.is_file()
    except (OSError, ValueError):
        return False


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


def include_globs(pattern: str) -> list[str] | None:
    """A file-name filter such as ``*.py`` or ``*.{ts,tsx}`` as plain globs, braces expanded;
    ``None`` for one that is malformed."""
    if not pattern or any(c in pattern for c in "\x00\r\n"):
        return None
    globs = _expand_braces(pattern)
    if globs is None:
        return None
    try:
        for glob in globs:
            re.compile(fnmatch.translate(glob))
    except re.error:
        return None
    return globs


def name_matches(name: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(name, glob) for glob in globs)


def _expand_braces(pattern: str) -> list[str] | None:
    """``a{b,c}d{e,f}`` as its four alternatives; ``None`` when a brace is unmatched or empty."""
    opening = pattern.find("{")
    closing = pattern.find("}", opening + 1) if opening >= 0 else -1
    if opening < 0:
        return None if "}" in pattern else [pattern]
    if closing < 0 or closing == opening + 1:
        return None
    head, options, tail = pattern[:opening], pattern[opening + 1 : closing], pattern[closing + 1 :]
    expanded: list[str] = []
    for option in options.split(","):
        rest = _expand_braces(head + option + tail)
        if rest is None:
            return None
        expanded.extend(rest)
    return expanded
