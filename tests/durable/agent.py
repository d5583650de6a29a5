"""The agent that the durable-run tests and their worker processes build, identically.

Every process builds it from scratch, so nothing may live in memory between turns: the model
decides from the conversation alone (a scripted *policy*, not a script consumed call by call),
and the tools record each execution in a file of the work directory, which the test reads to
count how often a tool really ran, whichever process ran it.

The last human message chooses what the model does:

- ``ask: <question>`` calls ``ask_human``, which pauses the run with ``interrupt(question)``;
- ``publish: <text>`` calls ``publish``, which a HumanInTheLoopMiddleware reviews first;
- ``record: <note>`` calls ``record_step``;
- ``plan: a; b; c`` calls ``write_todos`` with those items, all pending;
- ``recall`` answers with the to-do lines the model was shown in its system message;
- ``history`` answers with every human message of the thread, joined by `` | ``;
- ``slow: <note>`` calls ``record_step`` too, but only once the test lets it: the model call
  creates ``<note>.calling`` in the work directory, then waits until ``<note>.release`` exists
  (another run can start on the thread meanwhile: a double submit);
- anything else is echoed back.

After a tool answered, the model replies ``done: <tool output>``. An agent built with
``die_after_tool="kill"`` makes its process kill itself with SIGKILL at that point instead (a
crash: nothing runs after it), and with ``die_after_tool="raise"`` the model call raises
(a provider outage: the run fails with an exception). Either way the tool has run and the next
model call does not happen.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command, Durability, StateSnapshot, interrupt

from graphagent import create_agent
from graphagent.agent import CompiledAgent
from graphagent.middleware.base import AgentMiddleware
from graphagent.middleware.human_in_the_loop import HumanInTheLoopMiddleware
from graphagent.middleware.model_call_limit import ModelCallLimitMiddleware
from graphagent.middleware.todo import TodoListMiddleware
from graphagent.state import FullHistoryState
from graphagent.testing import ScriptedChatModel, tool_call

ACTIONS = ("say", "say-text", "resume", "review", "continue", "inspect")
RELEASE_TIMEOUT = 120  # seconds; a sanity bound for a test that never releases, not a pause

DeathAfterTool = Literal["kill", "raise"] | None
"""How a process stops after a tool ran: SIGKILL, an exception from the model, or not at all."""


class ProviderDown(RuntimeError):
    """What the model raises with ``die_after_tool="raise"``."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One thing done to a thread by one process: the same record runs in the test process
    (:func:`take_turn`) or, as JSON, in a worker process (``python -m tests.durable.worker``)."""

    store: str
    """``"sqlite:<file>"`` or ``"postgres:<conninfo>"``."""
    workdir: str
    """Where the tools log their executions."""
    thread_id: str
    action: str
    """``"say"`` (``value`` is the message), ``"say-text"`` (the same, sent as a plain string:
    the message has no id until graphagent gives it one), ``"resume"`` (``value`` is the answer
    to the interrupt), ``"review"`` (``value`` is the decision on the reviewed call:
    ``"approve"`` or ``"reject"``), ``"continue"`` (``invoke(None)``) or ``"inspect"`` (no run,
    only the state)."""
    value: str | None = None
    is_async: bool = False
    """Run with the asyncio checkpointer and ``ainvoke``."""
    thread_limit: int | None = None
    die_after_tool: DeathAfterTool = None
    durability: Durability = "async"
    """langgraph's default."""
    fuse_hooks: bool = False
    full_history: bool = False
    """Store the messages whole in every checkpoint (``FullHistoryState``), not as deltas."""
    tag: str | None = None
    """With a tag, the run's checkpoints carry it in their metadata (``turn``), and the summary
    adds what the last checkpoint carrying it reads back (``"inspect"`` reads that of an earlier
    run)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Turn:
        return cls(**json.loads(text))


def take_turn(turn: Turn) -> dict[str, Any]:
    """Open the checkpointer, build the agent, do ``turn`` and summarise the thread afterwards."""
    if turn.is_async:
        return asyncio.run(_atake_turn(turn))
    config = thread_config(turn.thread_id)
    with open_saver(turn.store) as saver:
        agent, model = _build_for(turn, saver)
        returned = None
        if turn.action != "inspect":
            returned = agent.invoke(
                agent_input(turn.action, turn.value),
                _tagged(config, turn.tag),
                durability=turn.durability,
            )
        summary = summarise(agent.get_state(config), model)
        if turn.tag is not None:
            last = next(saver.list(config, filter={"turn": turn.tag}, limit=1))
            summary["run_last"] = _shown(agent.get_state(last.config).values["messages"])
        return _with_returned(summary, returned)


async def _atake_turn(turn: Turn) -> dict[str, Any]:
    config = thread_config(turn.thread_id)
    async with aopen_saver(turn.store) as saver:
        agent, model = _build_for(turn, saver)
        returned = None
        if turn.action != "inspect":
            returned = await agent.ainvoke(
                agent_input(turn.action, turn.value),
                _tagged(config, turn.tag),
                durability=turn.durability,
            )
        summary = summarise(await agent.aget_state(config), model)
        if turn.tag is not None:
            # read to its end: AsyncSqliteSaver holds its connection until the listing ends
            (last,) = [c async for c in saver.alist(config, filter={"turn": turn.tag}, limit=1)]
            summary["run_last"] = _shown((await agent.aget_state(last.config)).values["messages"])
        return _with_returned(summary, returned)


def _with_returned(summary: dict[str, Any], returned: Any) -> dict[str, Any]:
    return summary if returned is None else {**summary, "returned": _shown(returned["messages"])}


def _tagged(config: RunnableConfig, tag: str | None) -> RunnableConfig:
    return config if tag is None else {**config, "metadata": {"turn": tag}}


def _shown(messages: list[BaseMessage]) -> list[list[Any]]:
    """Messages as JSON data: type, text, id and the ids of the tool calls or the call answered."""
    return [[m.type, m.text, m.id, _call_ids(m)] for m in messages]


def _call_ids(message: BaseMessage) -> list[str]:
    if isinstance(message, ToolMessage):
        return [message.tool_call_id]
    return [call["id"] or "" for call in getattr(message, "tool_calls", [])]


def _build_for(
    turn: Turn, saver: BaseCheckpointSaver[Any]
) -> tuple[CompiledAgent, ScriptedChatModel]:
    return build_agent(
        saver,
        Path(turn.workdir),
        thread_limit=turn.thread_limit,
        die_after_tool=turn.die_after_tool,
        fuse_hooks=turn.fuse_hooks,
        full_history=turn.full_history,
    )


def wait_for_release(workdir: Path, note: str) -> None:
    """Say that the model call for ``note`` has started, then wait until the test releases it
    (a file the test creates: the test decides when, never a timer)."""
    (workdir / f"{note}.calling").touch()
    release = workdir / f"{note}.release"
    deadline = time.monotonic() + RELEASE_TIMEOUT
    while not release.exists():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{release} was never created")
        time.sleep(0.01)


def tool_log(workdir: Path, tool_name: str) -> list[str]:
    """What each execution of ``tool_name`` recorded, in order, across all processes."""
    path = workdir / f"{tool_name}.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _log(workdir: Path, tool_name: str, entry: str) -> None:
    with (workdir / f"{tool_name}.log").open("a", encoding="utf-8") as file:
        file.write(entry + "\n")


def make_tools(workdir: Path) -> list[BaseTool]:
    """``ask_human`` (pauses for an answer), ``publish`` (reviewed) and ``record_step``, each
    logging its executions."""

    @tool
    def ask_human(question: str) -> str:
        """Ask the person a question and wait for the answer."""
        # Logged before interrupt(): on resume the tool starts again from its first line.
        _log(workdir, "ask_human", question)
        return f"the person said {interrupt({'question': question})}"

    @tool
    def record_step(note: str) -> str:
        """Record a finished step of the work."""
        _log(workdir, "record_step", note)
        return f"recorded {note}"

    @tool
    def publish(text: str) -> str:
        """Publish a text, once a person approved it."""
        _log(workdir, "publish", text)
        return f"published {text}"

    return [ask_human, record_step, publish]


def make_model(workdir: Path, *, die_after_tool: DeathAfterTool = None) -> ScriptedChatModel:
    """The scripted policy described in the module docstring."""

    def reply(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            if die_after_tool == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            if die_after_tool == "raise":
                raise ProviderDown("the model provider is down")
            return _unique(f"done: {last.text}")
        verb, _, rest = last.text.partition(":")
        rest = rest.strip()
        if verb == "ask":
            return _unique(call=("ask_human", {"question": rest}))
        if verb == "record":
            return _unique(call=("record_step", {"note": rest}))
        if verb == "slow":
            wait_for_release(workdir, rest)
            return _unique(call=("record_step", {"note": rest}))
        if verb == "publish":
            return _unique(call=("publish", {"text": rest}))
        if verb == "plan":
            todos = [{"content": item.strip(), "status": "pending"} for item in rest.split(";")]
            return _unique(call=("write_todos", {"todos": todos}))
        if verb == "recall":
            return _unique(_todo_lines(messages))
        if verb == "history":
            return _unique(" | ".join(m.text for m in messages if isinstance(m, HumanMessage)))
        return _unique(f"echo: {last.text}")

    return _ThreadedModel([reply], repeat_last=True)


class _ThreadedModel(ScriptedChatModel):
    """Under ``ainvoke``, the policy runs in a thread, as a provider's reply is awaited: a
    ``slow`` call waiting for its release never blocks the event loop, where the saver's
    writes (and their commits) must go on."""

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return await asyncio.to_thread(self._generate, messages, stop, None, **kwargs)


def _unique(text: str = "", *, call: tuple[str, dict[str, Any]] | None = None) -> AIMessage:
    """An AI message whose id and tool call id are unique across processes.

    ScriptedChatModel numbers its ids per process ("run-scripted-1", "call_1", ...), so a second
    process writing to the same thread would reuse them, and the messages reducer would replace
    the first process's messages with the second's.
    """
    tool_calls = [tool_call(*call, id=f"call-{uuid.uuid4().hex}")] if call else []
    return AIMessage(content=text, tool_calls=tool_calls, id=f"ai-{uuid.uuid4().hex}")


def _todo_lines(messages: list[BaseMessage]) -> str:
    system = messages[0].text if isinstance(messages[0], SystemMessage) else ""
    lines = [line for line in system.splitlines() if line[:1].isdigit() and ". [" in line]
    return "\n".join(lines) or "no to-do list"


def build_agent(
    checkpointer: BaseCheckpointSaver[Any],
    workdir: Path,
    *,
    thread_limit: int | None = None,
    die_after_tool: DeathAfterTool = None,
    fuse_hooks: bool = False,
    full_history: bool = False,
) -> tuple[CompiledAgent, ScriptedChatModel]:
    """The agent (with a to-do list it is reminded of, a review of ``publish``, and a thread-level
    model call limit if asked) and its model."""
    middleware: list[AgentMiddleware[Any, Any, Any]] = [
        TodoListMiddleware(reminder=True),
        HumanInTheLoopMiddleware(interrupt_on={"publish": True}),
    ]
    if thread_limit is not None:
        middleware.append(ModelCallLimitMiddleware(thread_limit=thread_limit))
    model = make_model(workdir, die_after_tool=die_after_tool)
    agent = create_agent(
        model,
        make_tools(workdir),
        middleware=middleware,
        checkpointer=checkpointer,
        fuse_hooks=fuse_hooks,
        state_schema=FullHistoryState if full_history else None,
    )
    return agent, model


def agent_input(action: str, value: str | None) -> Any:
    """What ``invoke`` receives: a new human message, a resume value, or ``None`` to continue."""
    if action == "say":
        return {"messages": [HumanMessage(value or "")]}
    if action == "say-text":
        return {"messages": value or ""}
    if action == "resume":
        return Command(resume=value)
    if action == "review":
        decision = {"type": value, **({"message": "not now"} if value == "reject" else {})}
        return Command(resume={"decisions": [decision]})
    if action == "continue":
        return None
    raise ValueError(f"unknown action {action!r}; expected one of {ACTIONS}")


def thread_config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


def summarise(snapshot: StateSnapshot, model: ScriptedChatModel) -> dict[str, Any]:
    """The checkpointed thread as plain JSON data, plus how often this process called the model."""
    values = snapshot.values
    return {
        "messages": [[m.type, m.text] for m in values.get("messages", [])],
        "detail": _shown(values.get("messages", [])),
        "next": list(snapshot.next),
        "interrupts": [i.value for i in snapshot.interrupts],
        "todos": values.get("todos"),
        "thread_model_call_count": values.get("thread_model_call_count"),
        "model_calls": model.call_count,
    }


def stored_histories(store: str, thread_id: str) -> int:
    """How many times the thread stores its whole history (otherwise it stores deltas): the
    versions of ``messages`` that checkpoints hold whole. (PostgreSQL stores a version once and
    gives it to every checkpoint until the next write; SQLite stores it in one checkpoint.)"""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    with open_saver(store) as saver:
        stored = [c.checkpoint for c in saver.list(thread_config(thread_id))]
    return len(
        {
            checkpoint["channel_versions"]["messages"]
            for checkpoint in stored
            if isinstance(checkpoint["channel_values"].get("messages"), _DeltaSnapshot | list)
        }
    )


# -- checkpointers: "sqlite:<file>" or "postgres:<conninfo>" ---------------------------------------


@contextmanager
def open_saver(store: str) -> Iterator[BaseCheckpointSaver[Any]]:
    """A synchronous checkpointer on ``store``; PostgreSQL tables must exist (``setup()``)."""
    kind, _, target = store.partition(":")
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(target) as saver:
            yield saver
    elif kind == "postgres":
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(target) as pg_saver:
            yield pg_saver
    else:
        raise ValueError(f"unknown store {store!r}")


@asynccontextmanager
async def aopen_saver(store: str) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The asyncio checkpointer on ``store`` (AsyncSqliteSaver / AsyncPostgresSaver)."""
    kind, _, target = store.partition(":")
    if kind == "sqlite":
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with AsyncSqliteSaver.from_conn_string(target) as saver:
            yield saver
    elif kind == "postgres":
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(target) as pg_saver:
            yield pg_saver
    else:
        raise ValueError(f"unknown store {store!r}")
