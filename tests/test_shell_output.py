"""The shell tool's output log counts and keeps the same whatever the chunks: read a byte at a
time (every line taken one by one) or in one chunk (whole lines counted in bulk once the caps
are reached)."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, strategies as st

from graphagent.middleware._shell.output import OutputLog

LINES = st.lists(st.sampled_from([b"y\n", b"\n", b"abc", b"longer line\n", b"\xff\n"]))


def fed(pieces: list[tuple[bytes, bool]], max_lines: int, max_bytes: int | None, step: int) -> Any:
    log = OutputLog(max_lines, max_bytes)
    for data, stderr in pieces:
        for at in range(0, len(data), step or max(len(data), 1)):
            log.write(data[at : at + step] if step else data, stderr=stderr)
    log.end()
    return log.result(0)


@example([(b"y\ny\ny\n", False)], 6, 2)  # the byte cap filled exactly by a line
@given(
    st.lists(st.tuples(LINES.map(b"".join), st.booleans()), max_size=6),
    st.integers(1, 6),
    st.one_of(st.none(), st.integers(0, 40)),
)
def test_chunks_do_not_change_what_is_kept_or_counted(
    pieces: list[tuple[bytes, bool]], max_lines: int, max_bytes: int | None
) -> None:
    assert fed(pieces, max_lines, max_bytes, 0) == fed(pieces, max_lines, max_bytes, 1)


def test_past_the_caps_a_chunk_of_lines_is_counted_in_full() -> None:
    log = OutputLog(3, None)
    log.write(b"y\n" * 50_000, stderr=False)
    log.end()

    result = log.result(0)
    assert (result.output, result.total_lines, result.total_bytes) == ("y\ny\ny\n", 50_000, 100_000)
    assert result.truncated_by_lines
