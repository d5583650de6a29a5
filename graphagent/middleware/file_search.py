"""``FilesystemFileSearchMiddleware``: ``glob_search`` and ``grep_search`` tools over the files
below one directory.

The model sees paths as if the root were ``/``: ``path="/src"`` is ``<root>/src``, and results
read ``/src/app.py``. The model is untrusted, and so is everything else that can write below the
root while a search runs:

- nothing outside the root is ever listed or read, even while another process swaps files for
  symlinks: every file is opened name by name below the root without following links, and a
  symlink is followed only to a place inside the root (``_file_search/walk.py``);
- no pattern can hang a search: regular expressions run on the ``regex`` engine with a time
  limit, brace alternatives in ``include`` are capped, and each call stops after
  ``search_timeout`` seconds, answering with what it found and saying it was cut short;
- a file name that is not UTF-8 (or holds control characters) is shown escaped, so the answer
  is always text a provider's SDK can send.

Searches run in Python, so results never depend on whether ``ripgrep`` is installed. Each answer
lists at most ``max_results`` lines, then says that more were left out; files larger than
``max_file_size_mb`` and files that are not UTF-8 text are not searched.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Literal

import regex
from langchain_core.tools import StructuredTool
from langgraph.typing import ContextT
from pydantic import BaseModel, Field

from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError, MiddlewareTypeError
from graphagent.middleware._file_search.patterns import (
    IncludeError,
    Parts,
    glob_matches,
    glob_may_enter,
    glob_segments,
    include_filter,
)
from graphagent.middleware._file_search.walk import Entry, Tree
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


class _Clock:
    """The wall-clock budget of one search."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._deadline = time.monotonic() + seconds

    def remaining(self) -> float:
        return self._deadline - time.monotonic()


@refuse_unknown_arguments
class FilesystemFileSearchMiddleware(AgentMiddleware[AgentState[ResponseT], ContextT, ResponseT]):
    """Give the agent ``glob_search`` and ``grep_search`` over the files below ``root_path``.

    The model sees paths as if the root were ``/``, and nothing outside the root is ever listed
    or read, even while other processes change the files. The tools are also attributes
    (``glob_search``, ``grep_search``), so they can be called directly, e.g.
    ``glob_search.invoke({...})``.

    Args:
        root_path: The directory searched (a str or a path). A directory that does not exist
            yet is accepted with a logged warning; searches find nothing until it does.
        use_ripgrep: Accepted for LangChain compatibility; it changes nothing, since searches
            always run in Python.
        max_file_size_mb: Files larger than this many megabytes are left out of content
            searches (``grep_search``).
        max_results: The most lines one answer lists; an answer with more lists that many and
            says the rest were left out.
        search_timeout: Seconds one search may take; a longer one stops there and answers with
            what it found so far, saying it was cut short.

    Raises:
        MiddlewareError: ``root_path`` is not a str or a path, or names something that is not
            a directory; ``max_file_size_mb`` or ``search_timeout`` is not a positive number;
            ``max_results`` is not a positive whole number.
    """

    def __init__(
        self,
        *,
        root_path: str | os.PathLike[str],
        use_ripgrep: bool = True,
        max_file_size_mb: float = 10,
        max_results: int = 1000,
        search_timeout: float = 30.0,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        self.root_path = _checked_root(owner, root_path)
        self.use_ripgrep = use_ripgrep
        size = _positive(owner, "max_file_size_mb", max_file_size_mb, whole=False)
        self.max_file_size_bytes = int(size * 1024 * 1024)
        self.max_results = int(_positive(owner, "max_results", max_results, whole=True))
        self.search_timeout = _positive(owner, "search_timeout", search_timeout, whole=False)
        self.glob_search = StructuredTool.from_function(
            self._glob, name="glob_search", description=_GLOB_DESCRIPTION, args_schema=_GlobArgs
        )
        self.grep_search = StructuredTool.from_function(
            self._grep, name="grep_search", description=_GREP_DESCRIPTION, args_schema=_GrepArgs
        )
        self.tools = [self.glob_search, self.grep_search]

    def _glob(self, pattern: str, path: str = "/") -> str:
        clock = _Clock(self.search_timeout)
        segments = glob_segments(pattern)
        tree = Tree.open(self.root_path)
        if tree is None or segments is None:
            return NO_FILES
        found: list[tuple[float, str]] = []
        with tree:
            start = tree.start(path)
            if start is None:
                return NO_FILES
            entries = tree.walk(start, lambda directory: glob_may_enter(directory, segments))
            with contextlib.closing(entries):
                for entry in entries:
                    if clock.remaining() <= 0:
                        return self._answer([shown for _, shown in sorted(found)], NO_FILES, clock)
                    if not glob_matches(entry.parts, segments):
                        continue
                    info = tree.file_stat(start, entry)
                    if info is not None:
                        found.append((-info.st_mtime, _virtual(start, entry.parts)))
        return self._answer([shown for _, shown in sorted(found)], NO_FILES)

    def _grep(
        self,
        pattern: str,
        path: str = "/",
        include: str | None = None,
        output_mode: OutputMode = "files_with_matches",
    ) -> str:
        clock = _Clock(self.search_timeout)
        try:
            compiled = regex.compile(pattern)
        except regex.error as error:
            return f"Invalid regex pattern: {error}"
        try:
            names = include_filter(include, BAD_INCLUDE) if include else None
        except IncludeError as error:
            return str(error)
        tree = Tree.open(self.root_path)
        if tree is None:
            return NO_MATCHES
        lines: list[str] = []
        with tree:
            start = tree.start(path)
            if start is None:
                return NO_MATCHES
            with contextlib.closing(tree.walk(start, _everywhere)) as entries:
                for entry in entries:
                    if names is not None and not names.match(entry.name):
                        continue
                    hits = self._matching_lines(tree, start, entry, compiled, clock)
                    if hits is None:
                        return self._answer(lines, NO_MATCHES, clock)
                    if hits:
                        lines += _shown(_virtual(start, entry.parts), hits, output_mode)
                        if len(lines) > self.max_results:  # enough to fill the answer and say so
                            break
        return self._answer(lines, NO_MATCHES)

    def _matching_lines(
        self, tree: Tree, start: Parts, entry: Entry, compiled: regex.Pattern[str], clock: _Clock
    ) -> list[str] | None:
        """The numbered matching lines (``"12:text"``) of one file, if it may be searched;
        ``None`` once the search is out of time."""
        if clock.remaining() <= 0:
            return None
        text = tree.read_text(start, entry, self.max_file_size_bytes)
        if text is None:  # unreadable, gone, too large, not a regular file, or not text
            return []
        hits: list[str] = []
        for number, line in enumerate(text.splitlines(), 1):
            remaining = clock.remaining()
            if remaining <= 0:
                return None
            try:
                if compiled.search(line, timeout=remaining):
                    hits.append(f"{number}:{line}")
            except TimeoutError:
                return None
        return hits

    def _answer(self, lines: list[str], nothing: str, cut_short: _Clock | None = None) -> str:
        """The answer: at most ``max_results`` lines and a note on what was left out; ``nothing``
        when there are none."""
        if cut_short is not None:
            seconds = f"{cut_short.seconds:g} s"
            if not lines:
                return (
                    f"{nothing} before the search was cut short after {seconds}; narrow the "
                    "pattern or the path."
                )
            note = (
                f"... (the search was cut short after {seconds}, so these are only the results "
                "found by then; narrow the pattern or the path)"
            )
            return "\n".join([*lines[: self.max_results], note])
        if not lines:
            return nothing
        if len(lines) <= self.max_results:
            return "\n".join(lines)
        note = (
            f"... (only the first {self.max_results} results are shown; narrow the pattern or "
            "the path to see the rest)"
        )
        return "\n".join([*lines[: self.max_results], note])


def _everywhere(directory: Parts) -> bool:
    return True


def _virtual(start: Parts, parts: Parts) -> str:
    """How the model sees a path: relative to the root, written from ``/``, each name escaped."""
    return "/" + "/".join(_escaped(name) for name in (*start, *parts))


def _escaped(name: str) -> str:
    """``name`` as printable text: a byte that is not UTF-8 (decoded by Python as a lone
    surrogate, which no provider's JSON accepts) as ``\\xNN``, and a control or other
    non-printable character (a newline could forge a result line) by its code."""
    if name.isprintable():
        return name
    shown: list[str] = []
    for char in name:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's escape of one undecodable byte
            shown.append(f"\\x{code - 0xDC00:02x}")
        elif char.isprintable():
            shown.append(char)
        else:
            shown.append(char.encode("unicode_escape").decode("ascii"))
    return "".join(shown)


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
    try:
        root = Path(root_path).resolve()
    except (OSError, RuntimeError) as error:  # a symlink loop (RuntimeError before 3.13)
        raise MiddlewareError(
            f"{owner}: root_path {str(root_path)!r} cannot be resolved ({error})."
        ) from None
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
