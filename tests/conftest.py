"""Shared fixtures: run an agent through each entry point and get its final state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from blockbuster import blockbuster_ctx

from graphagent import create_agent
from tests.openai_stub import OpenAIStub

ENTRY_POINTS = ("invoke", "ainvoke", "stream", "astream")
Run = Callable[..., dict[str, Any]]


def run_agent(agent: Any, how: str, inputs: Any, **kwargs: Any) -> dict[str, Any]:
    """The agent's final output, reached through ``invoke``/``ainvoke``/``stream``/``astream``."""
    if how == "invoke":
        return agent.invoke(inputs, **kwargs)  # type: ignore[no-any-return]
    if how == "ainvoke":
        return asyncio.run(agent.ainvoke(inputs, **kwargs))  # type: ignore[no-any-return]
    if how == "stream":
        return _last(list(agent.stream(inputs, stream_mode="values", **kwargs)))
    if how == "astream":

        async def collect() -> list[Any]:
            return [chunk async for chunk in agent.astream(inputs, stream_mode="values", **kwargs)]

        return _last(asyncio.run(collect()))
    raise ValueError(how)


def _last(chunks: list[Any]) -> dict[str, Any]:
    assert chunks, "the stream produced nothing"
    return chunks[-1]  # type: ignore[no-any-return]


@pytest.fixture(params=ENTRY_POINTS)
def how(request: pytest.FixtureRequest) -> str:
    """Each entry point in turn."""
    return request.param  # type: ignore[no-any-return]


@pytest.fixture(params=("invoke", "ainvoke"))
def how_call(request: pytest.FixtureRequest) -> str:
    """invoke and ainvoke."""
    return request.param  # type: ignore[no-any-return]


HOOK_MODES = ("nodes", "fused")


@pytest.fixture(params=HOOK_MODES)
def hook_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way node hooks run in turn: one node per hook (the default), then fused, one node per
    position: ``create_agent`` builds with ``fuse_hooks`` set accordingly unless told otherwise."""
    fused = request.param == "fused"
    monkeypatch.setitem(create_agent.__kwdefaults__, "fuse_hooks", fused)
    return request.param  # type: ignore[no-any-return]


def hook_node(node: str, mode: str) -> str:
    """The graph node running the hook node ``node`` (``"Audit.before_model"``) in ``mode``: the
    hook's own node, or the node of its position when fused."""
    return node.rpartition(".")[2] if mode == "fused" else node


@pytest.fixture
def run(how: str) -> Run:
    """``run(agent, inputs, **kwargs)`` through the entry point of this test instance."""
    return lambda agent, inputs, **kw: run_agent(agent, how, inputs, **kw)


@pytest.fixture(autouse=True, scope="session")
def _no_blocking_calls_on_the_event_loop() -> Iterator[None]:
    """Fail any test in which graphagent blocks a running event loop, as LangGraph's API server
    does: a blocking call (sleep, file or socket I/O, a lock wait...) made on the loop's thread
    with graphagent on the stack raises ``blockbuster.BlockingError``."""
    with blockbuster_ctx("graphagent"):
        yield


@pytest.fixture(scope="module")
def openai_server() -> Iterator[OpenAIStub]:
    """A local OpenAI-compatible server (tests/openai_stub.py) for a test module: one per module,
    since ChatOpenAI caches its HTTP clients per base URL and building them costs ~0.2 s."""
    with OpenAIStub(lifetime=120) as server:
        yield server


@pytest.fixture
def stub(openai_server: OpenAIStub) -> Iterator[OpenAIStub]:
    """The module's server with an empty script; afterwards it must have seen no problem and
    been asked for every reply it was scripted with."""
    openai_server.reset()
    yield openai_server
    assert openai_server.problems == []
    assert openai_server.unused == [], "the agent made fewer model calls than scripted"


@pytest.fixture
def review_log() -> Iterator[list[str]]:
    """``tests.review_tools.RAN``, empty when the test starts and after it ends."""
    from tests.review_tools import RAN

    RAN.clear()
    yield RAN
    RAN.clear()
