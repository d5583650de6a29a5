"""``FilesystemFileSearchMiddleware``: ``glob_search`` and ``grep_search`` tools over the files
below one directory.

The model sees paths as if the root were ``/``: ``path="/src"`` is ``<root>/src``, and results
read ``/src/app.py``. Nothing outside the root is ever listed or read: a ``path`` naming ``..``
or ``~`` or leading out through a symlink finds nothing, a glob pattern that is absolute or
climbs with ``..`` finds nothing, the walk never enters a symlinked directory, and a symlinked
file is skipped unless its target lies inside the root.

Searches run in Python, so results never depend on whether ``ripgrep`` is installed. Each answer
lists at most ``max_results`` lines, then says that more were left out; files larger than
``max_file_size_mb`` and files that are not UTF-8 text are not searched.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import Literal

from langchain_core.tools import StructuredTool
from langgraph.typing import ContextT
from pydantic import BaseModel, Field

from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError
from graphagent.middleware._file_walk import (
    Parts,
    directory_under,
    glob_matches,
    glob_may_enter,
    glob_segments,
    include_globs,
    is_file_inside,
    name_matches,
    walk,
)
from graphagent.middleware.base import AgentMiddleware
from graphagent.state import AgentState, ResponseT

__all__ = ["FilesystemFileSearchMiddleware"]

logger = logging.getLogger(__name__)

OutputMode = Literal["files_with_matches", "content", "count"]

# The answers LangChain's tools give, kept word for word: the model and callers may rely on them.
NO_FILES = "No files found"
NO_MATCHES = "No matches found"
BAD_INCLUDE = "Invalid include pattern"

_PATH = (
    "The directory to search, relative to the search root: '/' (the default) is the root itself."
)
_GLOB_DESCRIPTION = (
    "Find files by path pattern. `*` and `?` match within one name, `**` matches any number of "
    "directories: e.g. `**/*.py` or `src/**/*.ts`. Returns the matching file paths, most "
    "recently modified first, one per line, or 'No files found'."
)
_GREP_DESCRIPTION = (
    "Search the contents of files with a regular expression (Python syntax; start it with "
    "`(?i)` to ignore case). Returns 'No matches found' when no line matches."
)


class _GlobArgs(BaseModel):
    pattern: str = Field(description="The glob pattern file paths must match.")
    path: str = Field(default="/", description=_PATH)


class _GrepArgs(BaseModel):
    pattern: str = Field(description="The regular expression to look for in each line.")
    path: str = Field(default="/", description=_PATH)
    include: str | None = Field(
        default=None,
        description="Search only files whose name matches this glob, e.g. `*.py` or `*.{ts,tsx}`.",
    )
    output_mode: OutputMode = Field(
        default="files_with_matches",
        description=(
            "'files_with_matches': the paths of matching files; 'content': each matching line "
            "as `path:line_number:line`; 'count': `path:number_of_matching_lines` per file."
        ),
    )


@refuse_unknown_arguments
class FilesystemFileSearchMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Give the agent ``glob_search`` and ``grep_search`` over the files below ``root_path``.

    The model sees paths as if the root were ``/``, and nothing outside the root is ever listed
    or read. The tools are also attributes (``glob_search``, ``grep_search``), so they can be
    called directly, e.g. ``glob_search.invoke({...})``.

    Args:
        root_path: The directory searched (a str or a path). A directory that does not exist
            yet is accepted with a logged warning; searches find nothing until it does.
        use_ripgrep: Accepted for LangChain compatibility; it changes nothing, since searches
            always run in Python.
        max_file_size_mb: Files larger than this many megabytes are left out of content
            searches (``grep_search``).
        max_results: The most lines one answer lists; an answer with more lists that many and
            says the rest were left out.

    Raises:
        MiddlewareError: ``root_path`` is not a str or a path, or names something that is not
            a directory; ``max_file_size_mb`` is not a positive number; ``max_results`` is not
            a positive whole number.
    """

    def __init__(
        self,
        *,
        root_path: str | os.PathLike[str],
        use_ripgrep: bool = True,
        max_file_size_mb: float = 10,
        max_results: int = 1000,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        self.root_path = _checked_root(owner, root_path)
        self.use_ripgrep = use_ripgrep
        size = _positive(owner, "max_file_size_mb", max_file_size_mb, whole=False)
        self.max_file_size_bytes = int(size * 1024 * 1024)
        self.max_results = int(_positive(owner, "max_results", max_results, whole=True))
        self.glob_search = StructuredTool.from_function(
            self._glob, name="glob_search", description=_GLOB_DESCRIPTION, args_schema=_GlobArgs
        )
        self.grep_search = StructuredTool.from_function(
            self._grep, name="grep_search", description=_GREP_DESCRIPTION, args_schema=_GrepArgs
        )
        self.tools = [self.glob_search, self.grep_search]

    def _glob(self, pattern: str, path: str = "/") -> str:
        start = directory_under(self.root_path, path)
        segments = glob_segments(pattern)
        if start is None or segments is None:
            return NO_FILES
        found: list[tuple[float, str]] = []
        for entry, parts in walk(start, lambda directory: glob_may_enter(directory, segments)):
            if glob_matches(parts, segments) and is_file_inside(entry, self.root_path):
                try:
                    modified = entry.stat().st_mtime
                except OSError:  # gone since it was listed
                    continue
                found.append((-modified, self._virtual(start, parts)))
        return self._answer([shown for _, shown in sorted(found)]) or NO_FILES

    def _grep(
        self,
        pattern: str,
        path: str = "/",
        include: str | None = None,
        output_mode: OutputMode = "files_with_matches",
    ) -> str:
        try:
            regex = re.compile(pattern)
        except re.error as error:
            return f"Invalid regex pattern: {error}"
        globs = include_globs(include) if include else None
        if include and globs is None:
            return BAD_INCLUDE
        start = directory_under(self.root_path, path)
        if start is None:
            return NO_MATCHES
        lines: list[str] = []
        for entry, parts in walk(start, _everywhere):
            if globs is not None and not name_matches(entry.name, globs):
                continue
            hits = self._matching_lines(entry, regex)
            if hits:
                lines += _shown(self._virtual(start, parts), hits, output_mode)
                if len(lines) > self.max_results:  # enough to fill the answer and say so
                    break
        return self._answer(lines) or NO_MATCHES

    def _matching_lines(self, entry: os.DirEntry[str], regex: re.Pattern[str]) -> list[str]:
        """The numbered matching lines (``"12:text"``) of one file, if it may be searched."""
        if not is_file_inside(entry, self.root_path):
            return []
        try:
            if entry.stat().st_size > self.max_file_size_bytes:
                return []
            with open(entry.path, encoding="utf-8") as file:
                text = file.read()
        except (OSError, UnicodeDecodeError):  # unreadable, gone, or not text
            return []
        lines = enumerate(text.splitlines(), 1)
        return [f"{number}:{line}" for number, line in lines if regex.search(line)]

    def _virtual(self, start: Path, parts: Parts) -> str:
        """How the model sees a path: relative to the root, written from ``/``."""
        return "/" + "/".join((*start.relative_to(self.root_path).parts, *parts))

    def _answer(self, lines: list[str]) -> str:
        if len(lines) <= self.max_results:
            return "\n".join(lines)
        note = (
            f"... (only the first {self.max_results} results are shown; narrow the pattern or "
            "the path to see the rest)"
        )
        return "\n".join([*lines[: self.max_results], note])


def _everywhere(directory: Parts) -> bool:
    return True


def _shown(path: str, hits: list[str], output_mode: str) -> list[str]:
    if output_mode == "content":
        return [f"{path}:{hit}" for hit in hits]
    if output_mode == "count":
        return [f"{path}:{len(hits)}"]
    return [path]


def _checked_root(owner: str, root_path: object) -> Path:
    if not isinstance(root_path, str | os.PathLike):
        raise MiddlewareTypeError(
            f"{owner}: root_path is {type(root_path).__name__}; pass the directory to search, "
            "as a str or a Path."
        )
    root = Path(root_path).resolve()
    if root.exists() and not root.is_dir():
        raise MiddlewareError(f"{owner}: root_path {str(root)!r} is not a directory.")
    if not root.exists():
        logger.warning("%s: root_path %r does not exist (yet); searches find nothing", owner, root)
    return root


def _positive(owner: str, parameter: str, value: object, *, whole: bool) -> float:
    fix = f"pass a positive {'whole ' if whole else ''}number"
    if isinstance(value, bool) or not isinstance(value, int if whole else int | float):
        raise MiddlewareTypeError(f"{owner}: {parameter}={value!r} is not valid; {fix}.")
    if value <= 0:
        raise MiddlewareError(f"{owner}: {parameter}={value!r} is not valid; {fix}.")
    return value
