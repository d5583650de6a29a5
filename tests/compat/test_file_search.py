"""``FilesystemFileSearchMiddleware``, as LangChain 1.5 documents it: ``glob_search`` and
``grep_search`` confined to a root, their answers, and what graphagent adds (result caps)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool

from graphagent import create_agent
from graphagent.errors import MiddlewareError, MiddlewareTypeError, UnknownArgumentError
from graphagent.middleware import FilesystemFileSearchMiddleware
from graphagent.testing import ScriptedChatModel, calls
from tests.conftest import run_agent


def ask(how: str, search: FilesystemFileSearchMiddleware, tool: str, **args: Any) -> str:
    """What ``tool`` answers the model, in a run through ``how``."""
    model = ScriptedChatModel([calls((tool, args)), "done"])
    agent = create_agent(model, middleware=[search])
    result = run_agent(agent, how, {"messages": [("user", "search")]})
    answer = result["messages"][2]
    assert isinstance(answer, ToolMessage)
    assert answer.status == "success"
    return str(answer.content)


def write(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root with a small project below it and a secret file beside it."""
    project = tmp_path / "project"
    write(project / "README.md", "hello readme\n")
    write(project / "src" / "app.py", "import os\nprint('hello')\n")
    write(project / "src" / "lib" / "util.py", "def hello():\n    return 'hello'\n")
    write(project / "docs" / "guide.txt", "nothing to see\n")
    write(tmp_path / "secret.txt", "TOPSECRET\n")
    return project


# -- the tools ---------------------------------------------------------------------------------


def test_the_tools_and_attributes_match_langchain(root: Path) -> None:
    search = FilesystemFileSearchMiddleware(root_path=str(root), max_file_size_mb=2)

    assert search.root_path == root.resolve()
    assert search.use_ripgrep is True
    assert search.max_file_size_bytes == 2 * 1024 * 1024
    assert [t.name for t in search.tools] == ["glob_search", "grep_search"]
    assert search.tools == [search.glob_search, search.grep_search]
    assert isinstance(search.glob_search, StructuredTool)
    assert search.glob_search.func is not None
    glob_args, grep_args = search.glob_search.args, search.grep_search.args
    assert list(glob_args) == ["pattern", "path"]
    assert glob_args["path"]["default"] == "/"
    assert list(grep_args) == ["pattern", "path", "include", "output_mode"]
    assert grep_args["include"]["default"] is None
    assert grep_args["output_mode"]["default"] == "files_with_matches"
    assert grep_args["output_mode"]["enum"] == ["files_with_matches", "content", "count"]


def test_the_model_searches_through_the_agent(how_call: str, root: Path) -> None:
    search = FilesystemFileSearchMiddleware(root_path=root)

    os.utime(root / "src" / "app.py", (1_000_000, 1_000_000))

    assert ask(how_call, search, "glob_search", pattern="**/*.py") == (
        "/src/lib/util.py\n/src/app.py"
    )
    assert ask(how_call, search, "grep_search", pattern="hello", output_mode="content") == (
        "/README.md:1:hello readme\n/src/app.py:2:print('hello')\n"
        "/src/lib/util.py:1:def hello():\n/src/lib/util.py:2:    return 'hello'"
    )


def test_the_tools_can_be_called_directly(root: Path) -> None:
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    assert search.grep_search.func(pattern="import") == "/src/app.py"  # type: ignore[misc]
    assert search.glob_search.invoke({"pattern": "*.md"}) == "/README.md"


# -- glob_search -------------------------------------------------------------------------------


def test_glob_lists_the_newest_file_first(how_call: str, root: Path) -> None:
    for name, stamp in [("a_oldest.txt", 1_000_000), ("b_middle.txt", 2_000_000)]:
        os.utime(write(root / name), (stamp, stamp))
    os.utime(write(root / "c_newest.txt"), (3_000_000, 3_000_000))
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    assert ask(how_call, search, "glob_search", pattern="*.txt").splitlines() == [
        "/c_newest.txt",
        "/b_middle.txt",
        "/a_oldest.txt",
    ]


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "/src", ["/src/app.py"]),
        ("src/*.py", "/", ["/src/app.py"]),
        ("**/util.py", "/", ["/src/lib/util.py"]),
        ("src/**/*.py", "/", ["/src/app.py", "/src/lib/util.py"]),
        ("*.py", "/", []),  # a name pattern does not reach into directories
        ("*.py", "/nonexistent", []),
        ("**", "/", []),  # directories are never listed, only files
    ],
)
def test_glob_patterns(
    how_call: str, root: Path, pattern: str, path: str, expected: list[str]
) -> None:
    for number, file in enumerate(sorted(root.rglob("*.py"))):
        os.utime(file, (1_000_000 - number, 1_000_000 - number))  # newest = first by name
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    answer = ask(how_call, search, "glob_search", pattern=pattern, path=path)

    assert answer == ("\n".join(expected) if expected else "No files found")


# -- grep_search -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"pattern": "hello"}, "/README.md\n/src/app.py\n/src/lib/util.py"),
        (
            {"pattern": "hello", "output_mode": "count"},
            "/README.md:1\n/src/app.py:1\n/src/lib/util.py:2",
        ),
        ({"pattern": "hello", "path": "/src/lib"}, "/src/lib/util.py"),
        ({"pattern": "hello", "include": "*.py"}, "/src/app.py\n/src/lib/util.py"),
        ({"pattern": "hello", "include": "*.{md,txt}"}, "/README.md"),
        ({"pattern": "(?i)HELLO README"}, "/README.md"),
        ({"pattern": "def.*:"}, "/src/lib/util.py"),
        ({"pattern": "absent"}, "No matches found"),
        ({"pattern": "hello", "include": "*.{py"}, "Invalid include pattern"),
        ({"pattern": "hello", "include": "*.{}"}, "Invalid include pattern"),
        ({"pattern": "hello", "include": "*.py}"}, "Invalid include pattern"),
    ],
)
def test_grep(how_call: str, root: Path, args: dict[str, Any], expected: str) -> None:
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    assert ask(how_call, search, "grep_search", **args) == expected


def test_an_invalid_regex_is_answered_not_raised(how_call: str, root: Path) -> None:
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    answer = ask(how_call, search, "grep_search", pattern="(unclosed")

    assert answer.startswith("Invalid regex pattern: missing )")


def test_grep_skips_large_and_binary_files(how_call: str, tmp_path: Path) -> None:
    write(tmp_path / "large.txt", "needle\n" + "x" * 2048)
    write(tmp_path / "small.txt", "needle\n")
    (tmp_path / "binary.dat").write_bytes(b"needle\xff\xfe\n")
    search = FilesystemFileSearchMiddleware(root_path=str(tmp_path), max_file_size_mb=0.001)

    assert ask(how_call, search, "grep_search", pattern="needle") == "/small.txt"


# -- confinement -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("glob_search", {"pattern": "*.txt", "path": "/../"}),
        ("glob_search", {"pattern": "*.txt", "path": ".."}),
        ("glob_search", {"pattern": "*.txt", "path": "/src/../.."}),
        ("glob_search", {"pattern": "*.txt", "path": "~"}),
        ("glob_search", {"pattern": "../*.txt"}),
        ("glob_search", {"pattern": "src/../../*.txt"}),
        ("glob_search", {"pattern": "/*.txt"}),
        ("grep_search", {"pattern": "TOPSECRET", "path": "/../"}),
        ("grep_search", {"pattern": "TOPSECRET", "path": "../"}),
        ("grep_search", {"pattern": "TOPSECRET", "path": "~/"}),
    ],
)
def test_paths_that_climb_out_of_the_root_find_nothing(
    how_call: str, root: Path, tool: str, args: dict[str, Any]
) -> None:
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    answer = ask(how_call, search, tool, **args)

    assert answer == ("No files found" if tool == "glob_search" else "No matches found")


def test_an_absolute_path_is_read_below_the_root(how_call: str, root: Path) -> None:
    search = FilesystemFileSearchMiddleware(root_path=str(root))
    outside = str(root.parent)  # where secret.txt really is

    assert ask(how_call, search, "glob_search", pattern="*.txt", path=outside) == "No files found"
    assert ask(how_call, search, "grep_search", pattern="TOPSECRET", path=outside) == (
        "No matches found"
    )
    assert ask(how_call, search, "glob_search", pattern="*.py", path="/src") == "/src/app.py"


def test_symlinks_out_of_the_root_are_neither_listed_nor_read(how_call: str, root: Path) -> None:
    secret = root.parent / "secret.txt"
    (root / "leak.txt").symlink_to(secret)
    (root / "parent").symlink_to(root.parent, target_is_directory=True)
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    listed = ask(how_call, search, "glob_search", pattern="**/*.txt")
    found = ask(how_call, search, "grep_search", pattern="TOPSECRET", output_mode="content")
    through_link = ask(how_call, search, "glob_search", pattern="*.txt", path="/parent")

    assert listed == "/docs/guide.txt"
    assert found == "No matches found"
    assert through_link == "No files found"


def test_symlinks_inside_the_root_are_followed_to_files_not_into_directories(
    how_call: str, root: Path
) -> None:
    (root / "alias.py").symlink_to(root / "src" / "app.py")
    (root / "code").symlink_to(root / "src", target_is_directory=True)
    search = FilesystemFileSearchMiddleware(root_path=str(root))

    assert ask(how_call, search, "grep_search", pattern="import") == "/alias.py\n/src/app.py"
    # A symlinked directory named as the path resolves to where it points.
    assert ask(how_call, search, "glob_search", pattern="app.py", path="/code") == "/src/app.py"


# -- caps --------------------------------------------------------------------------------------


def test_answers_are_capped_and_say_so(how_call: str, tmp_path: Path) -> None:
    for number in range(5):
        write(tmp_path / f"file{number}.txt", "match\nmatch\n")
    search = FilesystemFileSearchMiddleware(root_path=str(tmp_path), max_results=3)

    contents = ask(how_call, search, "grep_search", pattern="match", output_mode="content")
    files = ask(how_call, search, "grep_search", pattern="match")
    listed = ask(how_call, search, "glob_search", pattern="*.txt")

    note = (
        "... (only the first 3 results are shown; narrow the pattern or the path to see the rest)"
    )
    assert contents.splitlines() == [
        "/file0.txt:1:match",
        "/file0.txt:2:match",
        "/file1.txt:1:match",
        note,
    ]
    assert files.splitlines() == ["/file0.txt", "/file1.txt", "/file2.txt", note]
    assert len(listed.splitlines()) == 4
    assert listed.splitlines()[-1] == note


def test_an_answer_at_the_cap_has_no_note(how_call: str, tmp_path: Path) -> None:
    for number in range(3):
        write(tmp_path / f"file{number}.txt", "match\n")
    search = FilesystemFileSearchMiddleware(root_path=str(tmp_path), max_results=3)

    assert ask(how_call, search, "grep_search", pattern="match") == (
        "/file0.txt\n/file1.txt\n/file2.txt"
    )


# -- bad input ---------------------------------------------------------------------------------


def test_an_unknown_argument_names_the_class_and_the_closest_name() -> None:
    with pytest.raises(UnknownArgumentError) as caught:
        FilesystemFileSearchMiddleware(root="/tmp")  # type: ignore[call-arg]

    assert isinstance(caught.value, TypeError)
    assert str(caught.value).startswith(
        "FilesystemFileSearchMiddleware.__init__() got an unexpected keyword argument 'root'; "
        "did you mean 'root_path'?"
    )


def test_root_path_is_required() -> None:
    with pytest.raises(
        TypeError, match=r"FilesystemFileSearchMiddleware.__init__\(\) missing .* 'root_path'"
    ):
        FilesystemFileSearchMiddleware()  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("option", "value", "error"),
    [
        ("max_results", 0, MiddlewareError),
        ("max_results", 1.5, MiddlewareTypeError),
        ("max_file_size_mb", -1, MiddlewareError),
        ("max_file_size_mb", "10", MiddlewareTypeError),
        ("root_path", 42, MiddlewareTypeError),
    ],
)
def test_bad_options_are_refused_when_built(
    tmp_path: Path, option: str, value: Any, error: type[Exception]
) -> None:
    options: dict[str, Any] = {"root_path": str(tmp_path), option: value}

    with pytest.raises(error, match=f"FilesystemFileSearchMiddleware: {option}"):
        FilesystemFileSearchMiddleware(**options)


def test_a_file_as_root_is_refused(tmp_path: Path) -> None:
    file = write(tmp_path / "file.txt")

    with pytest.raises(ValueError, match="is not a directory"):
        FilesystemFileSearchMiddleware(root_path=str(file))
