"""What the shell session keeps of a command's output, bounded whatever the command prints.

Output arrives in chunks of at most ``CHUNK`` bytes, which may end in the middle of a line (a
command can print 200 MB without a newline). :class:`OutputLog` counts every byte and line but
keeps only what fits the policy's caps, cutting a line at the byte cap, so the memory a command
costs is its caps, never its output. :class:`MarkerScanner` finds the end-of-command marker in
the shell's stdout while holding back only the few bytes that could be its start.
"""

from __future__ import annotations

from dataclasses import dataclass

CHUNK = 65536
"""The most bytes read from a pipe at once."""

_STATUS_LENGTH = 32  # the marker's status field ("0", "127") is never longer


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What one command did: its output (capped), its status, how much it really wrote, and how
    many bytes that background jobs of earlier commands printed were dropped meanwhile."""

    output: str
    exit_code: int | None
    timed_out: bool
    truncated_by_lines: bool
    truncated_by_bytes: bool
    total_lines: int
    total_bytes: int
    dropped_bytes: int = 0


class OutputLog:
    """A command's output lines in the order they end, stderr lines marked, kept up to the caps.

    The line cap counts whole lines; the byte cap counts bytes, and cuts the line that crosses
    it. Each stream (stdout, stderr) has at most one unfinished line at a time.
    """

    def __init__(self, max_lines: int, max_bytes: int | None) -> None:
        self.max_lines, self.max_bytes = max_lines, max_bytes
        self.kept: list[str] = []
        self.lines = self.bytes = self.dropped = 0
        self.over_lines = self.over_bytes = False
        self._kept_bytes = 0
        self._open: dict[bool, bytearray] = {}  # each stream's unfinished line, as far as kept

    def write(self, data: bytes, *, stderr: bool) -> None:
        """Take a chunk of one stream's output. Once nothing more can be kept, the chunk's whole
        lines are counted in bulk rather than one by one (``yes`` prints 32,768 lines a chunk)."""
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            if end < 0:
                self._take(data[start:], stderr)
                return
            self._take(data[start : end + 1], stderr)
            self._finish(stderr)
            start = end + 1
            if self._full():
                start = self._count_lines(data, start)

    def _full(self) -> bool:
        """Whether no later output can be kept: the line cap or the byte cap is reached (both
        only grow, so this stays true)."""
        return self.lines >= self.max_lines or (
            self.max_bytes is not None and self._kept_bytes >= self.max_bytes
        )

    def _count_lines(self, data: bytes, start: int) -> int:
        """Count the whole lines of ``data[start:]`` (no line of the stream is open) as
        ``_take`` and ``_finish`` would once full, and return where the last one ends."""
        last = data.rfind(b"\n", start)
        if last < 0:
            return start
        if self.lines < self.max_lines:  # full by bytes: each line would be cut to nothing
            self.over_bytes = True
        self.lines += data.count(b"\n", start, last + 1)
        self.bytes += last + 1 - start
        self.over_lines = self.over_lines or self.lines > self.max_lines
        return last + 1

    def drop(self, count: int) -> None:
        """Count bytes that are not this command's (a background job's of an earlier one)."""
        self.dropped += count

    def end(self) -> None:
        """The streams are done: an unfinished line counts as a line."""
        for stderr in sorted(self._open):
            self._finish(stderr)

    def result(self, exit_code: int | None, *, timed_out: bool = False) -> CommandResult:
        output = "" if timed_out else "".join(self.kept)
        return CommandResult(
            output,
            exit_code,
            timed_out,
            self.over_lines,
            self.over_bytes,
            self.lines,
            self.bytes,
            self.dropped,
        )

    def _take(self, piece: bytes, stderr: bool) -> None:
        self.bytes += len(piece)
        line = self._open.setdefault(stderr, bytearray())
        if self.lines >= self.max_lines:  # this line is past the line cap, whatever comes
            return
        room = len(piece) if self.max_bytes is None else self.max_bytes - self._kept_bytes
        if room < len(piece):
            self.over_bytes = True
            piece = piece[: max(room, 0)]
        line += piece
        self._kept_bytes += len(piece)

    def _finish(self, stderr: bool) -> None:
        line = self._open.pop(stderr)
        self.lines += 1
        if self.lines > self.max_lines:
            self.over_lines = True
            self._kept_bytes -= len(line)
        elif line:
            text = line.decode("utf-8", "replace")
            self.kept.append(f"[stderr] {text}" if stderr else text)


class MarkerScanner:
    """Finds ``marker`` and the status after it in the shell's stdout, chunk by chunk."""

    def __init__(self, marker: bytes) -> None:
        self._marker = marker
        self._held = b""
        self._found = False
        self.done = False
        self.status: int | None = None
        self.after = 0
        """Bytes that came after the status line (a background job's), dropped."""

    def feed(self, chunk: bytes) -> bytes:
        """The output in ``chunk`` that comes before the marker (some of it may come out with
        the next chunk)."""
        data = self._held + chunk
        passed = b""
        if not self._found:
            at = data.find(self._marker)
            if at < 0:
                keep = min(len(data), len(self._marker) - 1)
                self._held = data[len(data) - keep :]
                return data[: len(data) - keep]
            self._found = True
            passed, data = data[:at], data[at + len(self._marker) :]
        newline = data.find(b"\n")
        if newline < 0 and len(data) <= _STATUS_LENGTH:
            self._held = data
            return passed
        field = data[:newline] if newline >= 0 else data
        self.status = _status(field)
        self.after = len(data) - len(field) - (newline >= 0)
        self.done = True
        self._held = b""
        return passed

    def rest(self) -> bytes:
        """What is held back, once the stream has ended without the marker."""
        held, self._held = self._held, b""
        return b"" if self._found else held


def _status(text: bytes) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None
