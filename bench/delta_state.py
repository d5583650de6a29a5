"""LangChain's agent state with ``messages`` on langgraph's ``DeltaChannel``, as deepagents
declares it: langgraph's own delta reducer, a snapshot every 50 updates.

A module of its own, imported only where ``langchain`` is installed, and without postponed
annotations: LangChain resolves the schema's annotations in this module's namespace.
"""

from typing import Annotated, Required

from langchain.agents import AgentState
from langchain_core.messages import AnyMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.message import _messages_delta_reducer


class DeltaState(AgentState):  # type: ignore[type-arg]
    messages: Required[  # type: ignore[misc]
        Annotated[list[AnyMessage], DeltaChannel(_messages_delta_reducer, snapshot_frequency=50)]
    ]
