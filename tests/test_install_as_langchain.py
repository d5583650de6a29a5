"""``install_as_langchain()``: ``import langchain.agents...`` resolves to graphagent, with and
without the real ``langchain`` installed, and ``GRAPHAGENT_AS_LANGCHAIN=1`` does it at startup.

Each case runs in a fresh interpreter, so no alias leaks into the other tests. The test venv
never holds ``langchain``; the cases beside a real one install LangChain 1.5.2 into a directory
of their own and put it on ``PYTHONPATH``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LANGCHAIN = "langchain==1.5.2"
TIMEOUT = 120  # one interpreter importing graphagent and running a small agent
INSTALL_TIMEOUT = 600  # pip fetching one wheel, however slow the index


def python(code: str, *, env: dict[str, str] | None = None, ok: bool = True) -> str:
    """What ``code`` prints in a fresh interpreter of the test venv; ``ok``: it must succeed."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        env={**os.environ, **(env or {})},
    )
    if ok:
        assert done.returncode == 0, done.stderr
    return done.stdout.strip() if ok else done.stdout.strip() + done.stderr


def test_the_test_venv_holds_no_langchain() -> None:
    assert python("import importlib.util; print(importlib.util.find_spec('langchain'))") == "None"


def test_langchains_agent_modules_are_graphagents() -> None:
    out = python(
        """
        import sys
        import graphagent
        graphagent.install_as_langchain()
        assert "langchain" not in sys.modules  # installing imports nothing

        import graphagent.middleware, graphagent.middleware.summarization, graphagent.models
        import graphagent.structured_output, graphagent.factory
        import langchain.agents, langchain.chat_models, langchain.agents.factory
        import langchain.agents.middleware, langchain.agents.middleware.types
        import langchain.agents.middleware.summarization, langchain.agents.structured_output
        from langchain.agents import AgentState, create_agent
        from langchain.agents.middleware import AgentMiddleware, HumanInTheLoopMiddleware
        from langchain.chat_models import BaseChatModel, init_chat_model

        assert langchain.agents is graphagent
        assert langchain.agents.factory is graphagent.factory
        assert langchain.agents.middleware is graphagent.middleware
        assert langchain.agents.middleware.types is graphagent.middleware.types
        assert langchain.agents.middleware.summarization is graphagent.middleware.summarization
        assert langchain.agents.structured_output is graphagent.structured_output
        assert langchain.chat_models is graphagent.models
        assert (create_agent, AgentMiddleware) == (graphagent.create_agent,
                                                   graphagent.middleware.AgentMiddleware)
        assert graphagent.middleware.__name__ == "graphagent.middleware"  # left as it was
        assert graphagent.middleware.__spec__.name == "graphagent.middleware"

        from graphagent.testing import ScriptedChatModel
        agent = create_agent(ScriptedChatModel(["hi"]), middleware=[HumanInTheLoopMiddleware({})])
        print(agent.invoke({"messages": [("user", "hello")]})["messages"][-1].content)
        """
    )
    assert out == "hi"


def test_what_langchain_re_exports_comes_from_langchain_core_and_langgraph() -> None:
    out = python(
        """
        import graphagent
        graphagent.install_as_langchain()

        import langchain_core.embeddings, langchain_core.messages, langchain_core.rate_limiters
        import langchain_core.tools, langgraph.prebuilt, langgraph.prebuilt.tool_node
        from langchain.messages import AIMessage, HumanMessage, trim_messages
        from langchain.tools import BaseTool, InjectedState, ToolRuntime, tool
        from langchain.tools.tool_node import ToolCallRequest
        from langchain.rate_limiters import InMemoryRateLimiter
        from langchain.embeddings import Embeddings

        assert HumanMessage is langchain_core.messages.HumanMessage
        assert trim_messages is langchain_core.messages.trim_messages
        assert (BaseTool, tool) == (langchain_core.tools.BaseTool, langchain_core.tools.tool)
        assert ToolRuntime is langgraph.prebuilt.ToolRuntime
        assert InjectedState is langgraph.prebuilt.InjectedState
        assert ToolCallRequest is langgraph.prebuilt.tool_node.ToolCallRequest
        assert InMemoryRateLimiter is langchain_core.rate_limiters.InMemoryRateLimiter
        assert Embeddings is langchain_core.embeddings.Embeddings
        try:
            from langchain.embeddings import init_embeddings
        except ImportError as error:
            print(error)
        """
    )
    assert out.startswith("langchain.embeddings.init_embeddings is LangChain's own code")
    assert "install langchain (pip install langchain)" in out


def test_a_langchain_module_graphagent_has_no_counterpart_of_is_not_found() -> None:
    out = python(
        """
        import sys
        import graphagent
        graphagent.install_as_langchain()

        import graphagent.middleware._kit.retry
        for name in ("langchain.agents.middleware._retry", "langchain.agents.nothing",
                     "langchain.agents.middleware.nothing", "langchain.nothing"):
            try:
                __import__(name)
            except ModuleNotFoundError as error:
                print(f"{error.name}: {error}")
        # graphagent's own private module was not loaded a second time under LangChain's name.
        assert "langchain.agents.middleware._retry" not in sys.modules
        """
    )
    lines = out.splitlines()
    assert lines[0] == (
        "langchain.agents.middleware._retry: No module named "
        "'langchain.agents.middleware._retry': with install_as_langchain(), "
        "langchain.agents.middleware is graphagent.middleware, which has no counterpart of this "
        "module. Import the names from the parent package instead; docs/langchain-apps.md lists "
        "what graphagent stands in for."
    )
    assert lines[1].startswith("langchain.agents.nothing: No module named 'langchain.agents.")
    assert lines[2].startswith("langchain.agents.middleware.nothing: No module named")
    assert lines[3] == "langchain.nothing: No module named 'langchain.nothing'"


def test_installing_twice_changes_nothing() -> None:
    out = python(
        """
        import sys
        import graphagent
        from graphagent._langchain.install import LangChainFinder
        graphagent.install_as_langchain()
        import langchain.agents
        graphagent.install_as_langchain()
        print(sum(isinstance(finder, LangChainFinder) for finder in sys.meta_path))
        """
    )
    assert out == "1"


def test_langchain_mcp_is_graphagents_mcp_where_graphagent_has_one() -> None:
    out = python(
        """
        import importlib, importlib.util
        import graphagent
        graphagent.install_as_langchain()
        if importlib.util.find_spec("graphagent.mcp") is None:
            try:
                import langchain.mcp
            except ModuleNotFoundError as error:
                print("no graphagent.mcp:", error.name)
        else:
            import langchain.mcp
            print(langchain.mcp is importlib.import_module("graphagent.mcp"))
        """
    )
    assert out in ("True", "no graphagent.mcp: langchain.mcp")


def fake_langchain(root: Path) -> Path:
    """A ``langchain`` package with an ``agents`` module, where the real one is not installed."""
    agents = root / "langchain" / "agents"
    agents.mkdir(parents=True)
    (root / "langchain" / "__init__.py").write_text("")
    (agents / "__init__.py").write_text("create_agent = None\n")
    return root


def test_installing_after_langchain_agents_was_imported_says_to_install_first(
    tmp_path: Path,
) -> None:
    out = python(
        """
        import langchain.agents
        import graphagent
        try:
            graphagent.install_as_langchain()
        except RuntimeError as error:
            print(type(error).__name__, error)
        """,
        env={"PYTHONPATH": str(fake_langchain(tmp_path))},
    )
    assert out.startswith(
        "LangChainImportedError install_as_langchain() was called after langchain.agents was "
        f"imported from LangChain ({tmp_path / 'langchain' / 'agents' / '__init__.py'}), so code "
        "already holds LangChain's classes"
    )
    assert "Call graphagent.install_as_langchain() first" in out
    assert "or set GRAPHAGENT_AS_LANGCHAIN=1" in out


@pytest.mark.parametrize(("value", "installed"), [("1", True), ("0", False), (None, False)])
def test_the_environment_variable_installs_it_when_python_starts(
    value: str | None, installed: bool
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GRAPHAGENT_AS_LANGCHAIN"}
    if value is not None:
        env["GRAPHAGENT_AS_LANGCHAIN"] = value
    done = subprocess.run(
        [sys.executable, "-c", "import langchain.agents, graphagent; print(langchain.agents)"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        env=env,
    )
    if installed:
        assert done.returncode == 0, done.stderr
        assert "graphagent/__init__.py" in done.stdout
    else:
        assert "No module named 'langchain'" in done.stderr


def test_without_the_variable_starting_python_imports_no_graphagent() -> None:
    env = {k: v for k, v in os.environ.items() if k != "GRAPHAGENT_AS_LANGCHAIN"}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; print('graphagent' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=True,
        env=env,
    )
    assert done.stdout.strip() == "False"


HEAVY = ("graphagent", "langgraph", "langchain", "langchain_core", "pydantic", "anyio", "typing")
"""What the start-up hook must not import: the engine and what it is built on."""

LOADED = f"import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))"


def test_with_the_variable_starting_python_imports_nothing_of_graphagents() -> None:
    without = {k: v for k, v in os.environ.items() if k != "GRAPHAGENT_AS_LANGCHAIN"}
    counted = "import sys; print(len(sys.modules))"

    assert python(LOADED, env={"GRAPHAGENT_AS_LANGCHAIN": "1"}) == "[]"
    extra = int(python(counted, env={"GRAPHAGENT_AS_LANGCHAIN": "1"})) - int(
        subprocess.run(
            [sys.executable, "-c", counted], capture_output=True, text=True, check=True, env=without
        ).stdout
    )
    assert extra <= 2, f"the hook imported {extra} modules at start"


def test_with_the_variable_the_first_langchain_import_installs_graphagent() -> None:
    out = python(
        f"""
        {LOADED}
        import langchain.agents.middleware as m, graphagent.middleware
        print(m is graphagent.middleware)
        import langchain.messages, langchain_core.messages
        print(langchain.messages.HumanMessage is langchain_core.messages.HumanMessage)
        """,
        env={"GRAPHAGENT_AS_LANGCHAIN": "1"},
    )
    assert out.splitlines() == ["[]", "True", "True"]


@pytest.mark.timeout(300)
def test_a_strict_pytest_run_of_langchain_code_passes_with_the_variable(tmp_path: Path) -> None:
    # pytest rewrites its plugins' modules (anyio's among them) and warns when one is imported
    # before it starts; a suite run with -W error then fails to collect.
    ini = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"  # what the app's would say
    (tmp_path / "pytest.ini").write_text(ini)
    (tmp_path / "test_app.py").write_text(
        textwrap.dedent(
            """
            from langchain.agents import create_agent
            from langchain.agents.middleware import AgentMiddleware

            import graphagent


            def test_langchain_is_graphagent() -> None:
                assert create_agent is graphagent.create_agent
                assert AgentMiddleware.__module__ == "graphagent.middleware.base"
            """
        )
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-W", "error", "-p", "no:cacheprovider", "-q"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "GRAPHAGENT_AS_LANGCHAIN": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


# -- beside a real langchain ------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_langchain(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of an interpreter that finds LangChain 1.5.2 installed (in a directory
    on ``PYTHONPATH``, never in the test venv) next to graphagent."""
    target = tmp_path_factory.mktemp("real-langchain")
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "--no-deps", "--target", str(target), LANGCHAIN],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
        check=True,
    )
    return {"PYTHONPATH": str(target)}


def test_beside_a_real_langchain_the_agent_modules_are_graphagents(
    real_langchain: dict[str, str],
) -> None:
    out = python(
        """
        import graphagent
        graphagent.install_as_langchain()

        import langchain, langchain.agents, langchain.chat_models, langchain.messages
        import langchain.tools, langchain.embeddings
        from langchain.agents.middleware import SummarizationMiddleware
        from langchain.embeddings import init_embeddings

        assert langchain.agents is graphagent
        assert SummarizationMiddleware.__module__ == "graphagent.middleware.summarization"
        print(langchain.__version__)
        for module in (langchain, langchain.messages, langchain.tools, langchain.embeddings):
            print(module.__name__, module.__file__.startswith(langchain.__path__[0]))
        print(init_embeddings.__module__)
        """,
        env=real_langchain,
    )
    assert out.splitlines() == [
        "1.5.2",
        "langchain True",
        "langchain.messages True",
        "langchain.tools True",
        "langchain.embeddings True",
        "langchain.embeddings.base",
    ]


def test_beside_a_real_langchain_installing_late_is_refused(
    real_langchain: dict[str, str],
) -> None:
    out = python(
        """
        from langchain.agents import create_agent
        import graphagent
        try:
            graphagent.install_as_langchain()
        except RuntimeError as error:
            print(type(error).__name__, str(error).split(" was imported")[0])
        """,
        env=real_langchain,
    )
    assert out == (
        "LangChainImportedError install_as_langchain() was called after langchain.agents"
    )


def test_beside_a_real_langchain_the_variable_installs_it(real_langchain: dict[str, str]) -> None:
    out = python(
        "import langchain.agents, graphagent; print(langchain.agents is graphagent)",
        env={**real_langchain, "GRAPHAGENT_AS_LANGCHAIN": "1"},
    )
    assert out == "True"


KINDS = """
import ast, importlib, inspect, json, typing

def kind(value):
    if isinstance(value, typing.TypeVar):
        return "type variable"
    if inspect.isclass(value):
        return "generic class" if getattr(value, "__parameters__", ()) else "class"
    if inspect.isfunction(value):
        return "function"
    if typing.get_origin(value) is not None:
        return "generic alias" if getattr(value, "__parameters__", ()) else "alias"
    return "constant"

def public(module):
    \"\"\"Its __all__, or what its source defines at the top under a public name.\"\"\"
    if hasattr(module, "__all__"):
        return list(module.__all__)
    tree = ast.parse(open(module.__file__, encoding="utf-8").read())
    names = []
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return [name for name in dict.fromkeys(names) if not name.startswith("_")]

modules = {m: importlib.import_module(m) for m in MODULES}
names = NAMES or {m: public(module) for m, module in modules.items()}
print(json.dumps({
    m: {n: kind(getattr(modules[m], n)) if hasattr(modules[m], n) else "missing" for n in listed}
    for m, listed in names.items()
}))
"""

LANGCHAIN_MODULES = (
    "langchain.agents",
    "langchain.agents.middleware",
    "langchain.agents.middleware.types",
    "langchain.agents.structured_output",
    "langchain.chat_models",
)


def test_every_name_langchain_exports_exists_with_the_same_kind(
    real_langchain: dict[str, str],
) -> None:
    given = f"MODULES = {LANGCHAIN_MODULES!r}\nNAMES = None\n{KINDS}"
    theirs = json.loads(python(given, env=real_langchain).splitlines()[-1])
    names = {module: list(kinds) for module, kinds in theirs.items()}
    install = "import graphagent\ngraphagent.install_as_langchain()\n"
    code = f"{install}MODULES = {LANGCHAIN_MODULES!r}\nNAMES = {names!r}\n{KINDS}"
    ours = json.loads(python(code, env=real_langchain).splitlines()[-1])

    assert len(theirs["langchain.agents.middleware"]) == 50
    assert "ResponseFormat" in theirs["langchain.agents.structured_output"]
    assert ours == theirs
