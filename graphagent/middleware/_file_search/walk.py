"""The file side of ``FilesystemFileSearchMiddleware``: a view of the files below one root that
never reads a byte outside it, whatever changes on disk while it looks.

Checking a path and then opening it is a race: between the two, another process (a shell
sharing the workspace, a sync client) can turn a checked name into a symlink that leads out.
So nothing here opens a path by name from the top. Every directory and file is opened relative
to the descriptor of its parent, one name at a time, with ``O_NOFOLLOW``: a name that is a
symlink at the moment it is opened fails to open instead of being followed. Symlinks are
followed only by :meth:`Tree.resolve`, which reads each link itself and keeps the walk inside
the root (a link out of it, or one of more than ``MAX_LINKS`` hops, as in a loop, leads
nowhere). What is reached that way is opened again name by name, with ``O_NOFOLLOW``.

Files are opened with ``O_NONBLOCK`` (a FIFO cannot stall the search) and read only when the
descriptor is a regular file.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType

from graphagent.middleware._file_search.patterns import Parts

MAX_LINKS = 40
"""Symlinks followed to resolve one path before giving up (the kernel's own limit)."""

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Entry:
    """A name the walk found that is not a directory: ``name`` in the open directory
    ``directory`` (valid until the walk moves on), at ``parts`` below the walk's start."""

    directory: int
    name: str
    parts: Parts
    is_link: bool


class Tree:
    """The files below ``root`` during one search: an open descriptor of the root, closed by
    ``with`` (``None`` from :meth:`open` when the root is missing)."""

    def __init__(self, root: Path, fd: int) -> None:
        self.root, self._fd = root, fd
        self._root_parts = PurePosixPath(root).parts

    @classmethod
    def open(cls, root: Path) -> Tree | None:
        try:
            return cls(root, os.open(root, _DIRECTORY))
        except OSError:
            return None

    def __enter__(self) -> Tree:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        os.close(self._fd)

    # -- names to places ------------------------------------------------------------------------

    def start(self, path: str) -> Parts | None:
        """Where the directory the model's ``path`` names really is below the root (symlinks
        inside the root followed); ``None`` if it is refused, outside, missing or a file."""
        if ".." in path or "~" in path:
            return None
        parts = self.resolve(path.split("/"))
        if parts is None:
            return None
        try:
            os.close(self.open_directory(parts))
        except OSError:  # not a directory, or changed since it was resolved
            return None
        return parts

    def resolve(self, names: Sequence[str]) -> Parts | None:
        """Where ``names`` (below the root) leads once each symlink on the way is followed, as
        real names below the root; ``None`` when it leaves the root, loops or is missing."""
        pending = [name for name in reversed(names) if name not in ("", ".")]
        done: list[str] = []
        opened = [self._fd]  # the descriptor of each directory in ``done``, the root first
        hops = 0
        try:
            while pending:
                name = pending.pop()
                if name == "..":
                    if not done:
                        return None
                    done.pop()
                    os.close(opened.pop())
                    continue
                info = os.stat(name, dir_fd=opened[-1], follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    hops += 1
                    target = os.readlink(name, dir_fd=opened[-1])
                    if hops > MAX_LINKS or not self._follow(target, pending, done, opened):
                        return None
                elif not pending:
                    return (*done, name)
                elif not stat.S_ISDIR(info.st_mode):
                    return None
                else:
                    opened.append(os.open(name, _DIRECTORY, dir_fd=opened[-1]))
                    done.append(name)
            return tuple(done)
        except (OSError, ValueError):  # missing, changed meanwhile, a NUL byte, an odd name
            return None
        finally:
            for fd in opened[1:]:
                os.close(fd)

    def _follow(self, target: str, names: list[str], done: list[str], opened: list[int]) -> bool:
        """Queue a link's target in ``names``; an absolute one restarts from the root, and only
        if it names a place below the root's real path."""
        if target.startswith("/"):
            parts = PurePosixPath(target).parts
            if parts[: len(self._root_parts)] != self._root_parts:
                return False
            while len(opened) > 1:
                os.close(opened.pop())
            done.clear()
            target = "/".join(parts[len(self._root_parts) :])
        names.extend(name for name in reversed(target.split("/")) if name not in ("", "."))
        return True

    def open_directory(self, parts: Parts) -> int:
        """The directory at the real ``parts``, opened name by name without following links."""
        fd = os.dup(self._fd)
        for name in parts:
            try:
                child = os.open(name, _DIRECTORY, dir_fd=fd)
            finally:
                os.close(fd)
            fd = child
        return fd

    # -- what a search reads -------------------------------------------------------------------

    def file_stat(self, start: Parts, entry: Entry) -> os.stat_result | None:
        """The status of the regular file ``entry`` is, or leads to inside the root."""
        try:
            if not entry.is_link:
                info = os.stat(entry.name, dir_fd=entry.directory, follow_symlinks=False)
            else:
                real = self.resolve((*start, *entry.parts))
                if not real:
                    return None
                fd = self.open_directory(real[:-1])
                try:
                    info = os.stat(real[-1], dir_fd=fd, follow_symlinks=False)
                finally:
                    os.close(fd)
        except (OSError, ValueError):
            return None
        return info if stat.S_ISREG(info.st_mode) else None

    def read_text(self, start: Parts, entry: Entry, limit: int) -> str | None:
        """The UTF-8 text of the regular file ``entry`` is, or leads to inside the root; ``None``
        for anything else, or for a file of more than ``limit`` bytes."""
        try:
            fd = self._open_file(start, entry)
        except (OSError, ValueError):
            return None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
                return None
            data = _read_at_most(fd, limit + 1)
            return None if len(data) > limit else data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        finally:
            os.close(fd)

    def _open_file(self, start: Parts, entry: Entry) -> int:
        if not entry.is_link:
            return os.open(entry.name, _FILE, dir_fd=entry.directory)
        real = self.resolve((*start, *entry.parts))
        if not real:
            raise FileNotFoundError(entry.name)
        directory = self.open_directory(real[:-1])
        try:
            return os.open(real[-1], _FILE, dir_fd=directory)
        finally:
            os.close(directory)

    # -- the walk ------------------------------------------------------------------------------

    def walk(self, start: Parts, descend: Callable[[Parts], bool]) -> Generator[Entry, None, None]:
        """Every entry below the directory ``start`` that is not a directory, in the sorted
        order of the paths. Directories ``descend`` refuses are skipped; symlinked ones are
        never entered. Every directory it opens is closed when it ends, or is closed."""
        levels: list[tuple[int, Parts, Iterator[os.DirEntry[str]]]] = []
        try:
            top = self.open_directory(start)
        except (OSError, ValueError):  # changed since it was resolved
            return
        try:
            levels.append((top, (), _sorted_entries(top)))
            while levels:
                fd, parts, entries = levels[-1]
                entry = next(entries, None)
                if entry is None:
                    os.close(levels.pop()[0])
                    continue
                here = (*parts, entry.name)
                if _is_directory(entry):
                    if descend(here):
                        with contextlib.suppress(OSError):  # gone, or now a symlink
                            child = os.open(entry.name, _DIRECTORY, dir_fd=fd)
                            levels.append((child, here, _sorted_entries(child)))
                else:
                    yield Entry(fd, entry.name, here, _is_link(entry))
        finally:
            for fd, _, _ in levels:
                os.close(fd)


def _sorted_entries(fd: int) -> Iterator[os.DirEntry[str]]:
    try:
        with os.scandir(fd) as scan:
            entries = list(scan)
    except OSError:  # unreadable, or gone since it was opened
        return iter(())
    return iter(sorted(entries, key=_path_order))


def _path_order(entry: os.DirEntry[str]) -> str:
    # A directory sorts as "name/", so the walk yields paths in plain string order.
    return entry.name + "/" if _is_directory(entry) else entry.name


def _is_directory(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _is_link(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _read_at_most(fd: int, size: int) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        chunk = os.read(fd, min(size, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
