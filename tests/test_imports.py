"""What ``import graphagent`` loads: the core, not the built-ins, which load on first use."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import langgraph.runtime
import pytest

import graphagent.middleware as middleware


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_building_an_agent_loads_no_built_in() -> None:
    loaded = _run(
        """
        import sys
        from graphagent import create_agent
        from graphagent.middleware import before_model
        from graphagent.testing import ScriptedChatModel

        @before_model
        def log(state, runtime):
            pass

        create_agent(ScriptedChatModel(["hi"]), middleware=[log]).invoke({"messages": ["hi"]})
        core = ("base", "decorators")
        print(sorted(name for name in sys.modules
                     if name.startswith("graphagent.middleware.")
                     and name.rsplit(".", 1)[1] not in core))
        """
    )
    assert loaded == "[]"


def test_a_broken_built_in_breaks_only_its_own_import() -> None:
    out = _run(
        """
        import sys
        sys.modules["graphagent.middleware.todo"] = None  # importing it now fails
        from graphagent import create_agent
        from graphagent.middleware import ModelCallLimitMiddleware
        from graphagent.testing import ScriptedChatModel

        limit = ModelCallLimitMiddleware(run_limit=2)
        agent = create_agent(ScriptedChatModel(["hi"]), middleware=[limit])
        print(agent.invoke({"messages": ["hi"]})["messages"][-1].content)
        try:
            from graphagent.middleware import TodoListMiddleware
        except ImportError:
            print("TodoListMiddleware: ImportError")
        """
    )
    assert out.splitlines() == ["hi", "TodoListMiddleware: ImportError"]


def test_every_exported_name_resolves() -> None:
    for name in middleware.__all__:
        assert getattr(middleware, name) is not None, name
    assert set(middleware.__all__) <= set(dir(middleware))


def test_a_name_that_is_not_exported_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchMiddleware"):
        middleware.NoSuchMiddleware  # type: ignore[attr-defined]  # noqa: B018


def test_runtime_is_langgraphs_as_in_langchain() -> None:
    assert middleware.Runtime is langgraph.runtime.Runtime
