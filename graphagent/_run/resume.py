"""Refuse a ``Command`` the thread cannot take as an answer, before anything runs.

LangGraph runs ``Command(resume=...)`` on a thread with nothing to answer as if it were a run
with no input (a fresh thread calls the model with no messages; a finished one silently does
nothing), fails on ``Command(resume=None)`` with an internal ``UnboundLocalError``, and drops
answers keyed by an interrupt id that does not wait, pausing again on the same interrupts. The
agent's entry points check such commands against the thread's saved state first. Only a
``Command`` pays for that read. A parent graph resuming the agent as its node passes it the
parent's state, not the ``Command``, so that resume is the parent's to check.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from langchain_core.runnables.config import ensure_config, merge_configs
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.constants import CONF, CONFIG_KEY_CHECKPOINTER
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, StateSnapshot

from graphagent._core.langgraph_internals import is_interrupt_id
from graphagent.errors import ResumeError

Graph = CompiledStateGraph[Any, Any, Any, Any]

_START = "to start a run, send input: agent.invoke({'messages': [...]}, config)"


def needs_check(input: Any) -> bool:
    """Whether ``input`` is a ``Command`` meant to answer an interrupt, or one carrying nothing."""
    if not isinstance(input, Command):
        return False
    carries_nothing = input.update is None and not input.goto and input.graph is None
    return input.resume is not None or carries_nothing


def checked(
    graph: Graph, input: Command[Any], config: Any, start: Callable[[], Iterator[Any]]
) -> Iterator[Any]:
    """``start()``'s stream, once the thread's state shows that ``input`` can be taken."""
    thread = _thread_config(graph, config)
    refuse_unanswerable(input, graph.get_state(thread) if thread else None)
    yield from start()


async def achecked(
    graph: Graph, input: Command[Any], config: Any, start: Callable[[], AsyncIterator[Any]]
) -> AsyncIterator[Any]:
    """Async twin of :func:`checked`."""
    thread = _thread_config(graph, config)
    refuse_unanswerable(input, await graph.aget_state(thread) if thread else None)
    stream: Any = start()
    try:
        async for chunk in stream:
            yield chunk
    finally:
        await stream.aclose()


def _thread_config(graph: Graph, config: Any) -> Any:
    """The config to read the thread's state with; ``None`` when the run has no thread (no
    checkpointer, or no thread id: langgraph's own error then says so)."""
    merged = merge_configs(graph.config, ensure_config(config))
    # Where langgraph finds the saver: a parent lends its own through the config.
    saver = merged[CONF].get(CONFIG_KEY_CHECKPOINTER, graph.checkpointer)
    has_saver = graph.checkpointer is not False and isinstance(saver, BaseCheckpointSaver)
    return merged if has_saver and merged[CONF].get("thread_id") is not None else None


def refuse_unanswerable(command: Command[Any], snapshot: StateSnapshot | None) -> None:
    """Raise :class:`ResumeError` unless ``command`` answers what the thread waits for."""
    waiting = (
        [(task.name, i) for task in snapshot.tasks for i in task.interrupts] if snapshot else []
    )
    if command.resume is None and waiting:
        expected = " ".join(_expectation(node, interrupt) for node, interrupt in waiting)
        raise ResumeError(
            "Command(resume=None) answers nothing: LangGraph reads a None resume value as no "
            f"answer at all. {expected} Nothing ran; resume with Command(resume=<the answer>)."
        )
    if command.resume is None:
        raise ResumeError(
            "Command(resume=None) carries nothing to do: no resume value, update or goto. "
            f"Nothing ran; {_START}."
        )
    if snapshot is not None and not waiting and not _resumable(snapshot):
        raise ResumeError(
            f"Command(resume=...) answers a pending interrupt, but {_why_nothing_waits(snapshot)}"
        )
    _refuse_unknown_ids(command.resume, [interrupt for _, interrupt in waiting])


def _refuse_unknown_ids(resume: Any, waiting: list[Interrupt]) -> None:
    """An answer keyed by an interrupt id that does not wait (a stale or mistyped id) would be
    dropped by LangGraph without a word, and the run would pause again on the same interrupts."""
    if not (waiting and _answers_by_id(resume)):
        return
    pending = [interrupt.id for interrupt in waiting]
    if not resume:
        raise ResumeError(
            "Command(resume={}) answers nothing: LangGraph reads an empty dict as answers keyed "
            f"by interrupt id, and it names none; the pending ones are {pending}. Nothing ran; "
            "key each answer by the id of an interrupt that waits."
        )
    unknown = [key for key in resume if key not in pending]
    if unknown:
        raise ResumeError(
            f"Command(resume={{...}}) answers interrupt id(s) {unknown}, which do not wait on "
            f"this thread; the pending ones are {pending}. Nothing ran; key each answer by the id "
            "of an interrupt that waits (result['__interrupt__'][i].id)."
        )


def _answers_by_id(resume: Any) -> bool:
    """Whether LangGraph reads ``resume`` as answers keyed by interrupt id."""
    return isinstance(resume, dict) and all(
        isinstance(key, str) and is_interrupt_id(key) for key in resume
    )


def _resumable(snapshot: StateSnapshot) -> bool:
    """Whether steps wait to run that did not fail: a breakpoint, a run cut off between steps, or
    a state updated after an interrupt. The resume value answers the interrupt they raise."""
    return any(task.error is None for task in snapshot.tasks)


def _expectation(node: str, interrupt: Interrupt) -> str:
    """What the interrupt raised in ``node`` expects as its answer, as far as it says."""
    schema = interrupt.response_schema
    described = schema.get("description") if isinstance(schema, dict) else None
    return f"'{node}' waits for {described}." if described else f"'{node}' waits for an answer."


def _why_nothing_waits(snapshot: StateSnapshot) -> str:
    """Why the thread waits for no answer, and what to do instead."""
    thread = f"thread {snapshot.config[CONF].get('thread_id')!r}"
    if snapshot.created_at is None:
        return f"{thread} has no checkpoint yet. Nothing ran; {_START}."
    if snapshot.tasks:
        steps = sorted({task.name for task in snapshot.tasks})
        return (
            f"{thread} has none: its last run failed at {steps}. Nothing ran; continue that run "
            "with agent.invoke(None, config)."
        )
    return f"{thread} has none: its last run finished. Nothing ran; {_START}."
