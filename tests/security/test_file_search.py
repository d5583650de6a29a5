"""Attacks on ``FilesystemFileSearchMiddleware``: the model, and whatever else can write below the
root, are hostile. Each test passes only when nothing outside the root leaks, no search hangs,
and every answer is text a provider can be sent.

Every test runs under a hard time limit (``pytest-timeout``, which ends the whole run if it must),
and each attack is bounded on its own as well, so a regression fails instead of hanging CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from graphagent import create_agent
from graphagent.middleware import FilesystemFileSearchMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent

LIMIT = 60.0  # seconds: far beyond any healthy search, even on a loaded machine
pytestmark = pytest.mark.timeout(4 * LIMIT, method="thread")

SECRET = "TOPSECRET"


def within_limit(call: Callable[[], str], limit: float = LIMIT) -> str:
    """What ``call`` returns, run in a thread; fails the test if it takes past ``limit``."""
    answer: list[str] = []
    worker = threading.Thread(target=lambda: answer.append(call()), daemon=True)
    worker.start()
    worker.join(limit)
    assert not worker.is_alive(), f"the search was still running after {limit} s"
    assert answer, "the search raised (see the thread's traceback above)"
    return answer[0]


def ask(how: str, search: FilesystemFileSearchMiddleware, tool: str, **args: Any) -> ToolMessage:
    """The answer ``tool`` gives the model in a run through ``how``."""
    agent = create_agent(ScriptedChatModel([calls((tool, args)), "done"]), middleware=[search])
    result = run_agent(agent, how, {"messages": [("user", "search")]})
    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    return answer


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root with a file inside, beside a directory outside it that holds a secret."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (outside / f"{SECRET}_name.txt").write_text("x\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "inside.txt").write_text("INSIDE\n")
    return project


# -- reading outside the root through a symlink swapped during the search -----------------------

SWAPPER = """
import os, signal, sys

root, outside = sys.argv[1], sys.argv[2]
secret = os.path.join(outside, "secret.txt")
inside = os.path.join(root, "inside.txt")
swaps = 0

def stop(*_):
    print(swaps, flush=True)
    os._exit(0)

signal.signal(signal.SIGTERM, stop)

def put(make, name):
    # Build the new entry beside the old one, then rename it over: the name always exists.
    temporary = os.path.join(root, "." + name + ".new")
    make(temporary)
    os.replace(temporary, os.path.join(root, name))

def link_to(target):
    return lambda path: os.symlink(target, path)

def plain_file(path):
    with open(path, "w") as file:
        file.write("INSIDE\\n")

def plain_directory(path):
    os.mkdir(path)
    with open(os.path.join(path, "inside.txt"), "w") as file:
        file.write("INSIDE\\n")

def swap_directory(state):
    # A directory cannot be renamed over a symlink (nor the reverse): move the old one aside.
    target = os.path.join(root, "dir")
    aside = os.path.join(root, ".dir.old")
    os.rename(target, aside)
    if state:
        os.symlink(outside, target)
    else:
        plain_directory(target)
    if os.path.islink(aside):
        os.unlink(aside)
    else:
        os.unlink(os.path.join(aside, "inside.txt"))
        os.rmdir(aside)

put(link_to(inside), "race.txt")
put(plain_file, "flip.txt")
plain_directory(os.path.join(root, "dir"))
print("ready", flush=True)
state = False
while True:
    state = not state
    put(link_to(secret if state else inside), "race.txt")
    put(link_to(secret) if state else plain_file, "flip.txt")
    swap_directory(state)
    swaps += 1
"""


@pytest.fixture
def swapping(root: Path) -> Iterator[Callable[[], int]]:
    """Another process that keeps swapping entries of the root between something inside and a
    link to the outside secret: ``race.txt`` (a link whose target changes), ``flip.txt`` (a
    file, then a link) and ``dir`` (a directory, then a link to the outside directory). Gives a
    function that stops it and returns how many swaps it made."""
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(root), str(root.parent / "outside")],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert swapper.stdout is not None
    assert swapper.stdout.readline() == "ready\n"  # bounded by the test's time limit

    def stop() -> int:
        swapper.terminate()
        out, _ = swapper.communicate(timeout=LIMIT)
        return int(out)

    try:
        yield stop
    finally:
        if swapper.poll() is None:
            swapper.kill()
            swapper.wait(LIMIT)


def test_a_symlink_swapped_during_searches_never_leaks_what_is_outside(
    root: Path, swapping: Callable[[], int]
) -> None:
    search = FilesystemFileSearchMiddleware(root_path=root)
    contents = search.grep_search.func  # type: ignore[attr-defined]
    names = search.glob_search.func  # type: ignore[attr-defined]
    answers: list[str] = []
    deadline = time.monotonic() + LIMIT

    for _ in range(400):
        assert time.monotonic() < deadline, "the searches took past the limit"
        answers.append(contents(pattern=f"{SECRET}|INSIDE", output_mode="content"))
        answers.append(names(pattern="**/*.txt"))
    swaps = swapping()

    assert swaps > 0, "the other process never swapped anything"
    assert not [answer for answer in answers if SECRET in answer]
    assert all("/inside.txt" in answer for answer in answers)  # the search went on working


# -- a symlink loop ------------------------------------------------------------------------------


def test_a_symlink_loop_is_skipped_and_the_rest_is_searched(how_call: str, root: Path) -> None:
    (root / "loopA").symlink_to("loopB")
    (root / "loopB").symlink_to("loopA")
    (root / "deeper").mkdir()
    (root / "deeper" / "self").symlink_to("../deeper/self/x")
    search = FilesystemFileSearchMiddleware(root_path=root)

    found = ask(how_call, search, "grep_search", pattern="INSIDE")
    listed = ask(how_call, search, "glob_search", pattern="**/*")
    through = ask(how_call, search, "grep_search", pattern="INSIDE", path="/loopA")

    assert (found.content, found.status) == ("/inside.txt", "success")
    assert (listed.content, listed.status) == ("/inside.txt", "success")
    assert (through.content, through.status) == ("No matches found", "success")


# -- patterns that would run for ever ------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+$", "(x+x+)+y", "^(\\w+\\s?)*$"])
def test_a_catastrophic_regex_answers_within_the_time_limit(tmp_path: Path, pattern: str) -> None:
    line = "a" * 60 + "!" + " a" * 30 + "!"
    (tmp_path / "bait.txt").write_text(f"{line}\n" * 50)
    search = FilesystemFileSearchMiddleware(root_path=tmp_path, search_timeout=1)

    started = time.monotonic()
    answer = within_limit(lambda: search.grep_search.invoke({"pattern": pattern}))

    assert time.monotonic() - started < LIMIT
    assert answer in (
        "No matches found",
        "No matches found before the search was cut short after 1 s; narrow the pattern "
        "or the path.",
    )


def test_a_search_past_its_time_limit_says_it_was_cut_short(tmp_path: Path) -> None:
    for number in range(2000):
        (tmp_path / f"file{number:04}.txt").write_text("needle\n")
    search = FilesystemFileSearchMiddleware(root_path=tmp_path, search_timeout=0.001)

    found = within_limit(lambda: search.grep_search.invoke({"pattern": "needle"}))
    listed = within_limit(lambda: search.glob_search.invoke({"pattern": "*.txt"}))

    for answer in (found, listed):
        *results, note = answer.splitlines()
        assert len(results) < 2000
        assert note in (
            "No matches found before the search was cut short after 0.001 s; narrow the "
            "pattern or the path.",
            "No files found before the search was cut short after 0.001 s; narrow the "
            "pattern or the path.",
            "... (the search was cut short after 0.001 s, so these are only the results "
            "found by then; narrow the pattern or the path)",
        )


def test_braces_that_expand_without_end_are_refused_at_once(how_call: str, root: Path) -> None:
    search = FilesystemFileSearchMiddleware(root_path=root)

    answer = ask(how_call, search, "grep_search", pattern="INSIDE", include="*" + "{a,b}" * 18)
    modest = ask(how_call, search, "grep_search", pattern="INSIDE", include="*.{txt,md}")

    assert answer.content == (
        "Invalid include pattern: its braces expand to more than 1000 file-name patterns; use "
        "fewer alternatives."
    )
    assert modest.content == "/inside.txt"


def test_a_fifo_in_the_root_does_not_stall_a_search(root: Path) -> None:
    os.mkfifo(root / "pipe.txt")
    (root / "to-pipe.txt").symlink_to("pipe.txt")
    search = FilesystemFileSearchMiddleware(root_path=root)

    assert within_limit(lambda: search.grep_search.invoke({"pattern": "INSIDE"})) == "/inside.txt"


# -- file names that are not UTF-8 -------------------------------------------------------------


def test_a_file_name_that_is_not_utf8_reaches_the_model_escaped(how_call: str, root: Path) -> None:
    odd = os.fsdecode(b"caf\xe9 \xff\xfe.txt")
    (root / odd).write_text("INSIDE\n")
    (root / "two\nlines.txt").write_text("INSIDE\n")  # a newline would forge a result line
    search = FilesystemFileSearchMiddleware(root_path=root)

    found = ask(how_call, search, "grep_search", pattern="INSIDE", output_mode="content")
    listed = ask(how_call, search, "glob_search", pattern="*.txt")

    for answer in (found, listed):
        text = str(answer.content)
        text.encode("utf-8")  # what a provider's SDK does with it: no lone surrogate left
        json.dumps({"content": text}, ensure_ascii=False).encode("utf-8")
        assert "/caf\\xe9 \\xff\\xfe.txt" in text
        assert "/two\\nlines.txt" in text
    assert str(found.content).splitlines() == [
        "/caf\\xe9 \\xff\\xfe.txt:1:INSIDE",
        "/inside.txt:1:INSIDE",
        "/two\\nlines.txt:1:INSIDE",
    ]
