"""What the tests of configurable models share: a model pointed at the OpenAI stub, and configs
choosing its parameters (tests/weather.py has the tool and the schema they ask for)."""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from graphagent import init_chat_model
from tests.openai_stub import OpenAIStub

QUESTION = {"messages": ["What is the weather in Paris?"]}
SECRET = "sk-secret"
"""The API key every such model is given (its ``repr`` must never show it)."""


def configurable(stub: OpenAIStub, model: str | None = None, **kwargs: Any) -> Any:
    """``init_chat_model`` pointed at the stub (``base_url`` and ``api_key`` are defaults)."""
    return init_chat_model(model, base_url=stub.url, api_key=SECRET, max_retries=0, **kwargs)


def choose(**values: Any) -> RunnableConfig:
    """A config whose ``configurable`` holds ``values``."""
    return {"configurable": values}


def models(stub: OpenAIStub) -> list[str]:
    """The ``model`` of each request the stub received."""
    return [request["model"] for request in stub.requests]
