"""``ModelCallLimitMiddleware``: stop an agent after a number of model calls per thread or per run.

How the counts are kept
-----------------------
Both counts live in the agent state as private fields (never part of the input or the output):

- ``thread_model_call_count`` is an ordinary field, so with a checkpointer it is saved with the
  thread and keeps growing across invocations on the same ``thread_id``.
- ``run_model_call_count`` is an ordinary field too, set back to 0 by ``before_agent``.

LangChain keeps the run count in langgraph's ``UntrackedValue`` channel instead, which is never
written to a checkpoint. That also forgets the count whenever a run is resumed from a checkpoint:
after an ``interrupt()`` (human-in-the-loop approval, a tool asking the user) the resumed run starts
again from 0, so a run that is interrupted before every model call never reaches its run limit.
Resetting in ``before_agent`` is right in every case:

- a new invocation starts at the graph's entry, so ``before_agent`` runs and the count restarts;
- a resume (``Command(resume=...)``, or ``invoke(None, config)`` after an error) continues from
  the checkpoint without passing ``before_agent``, so the run keeps its count;
- run as a subgraph node, each call of that node is a new invocation of the agent, so the count
  restarts per call, and a resumed subgraph keeps it, exactly as standalone.

What counts as a model call
---------------------------
One turn of the model node: the ``wrap_model_call`` layer of this middleware adds one to both
counts when the call inside it returns (retries or fallbacks nested inside count once). Counting
there rather than in ``after_model`` means a later middleware's ``after_model`` jump cannot skip
the count, and two instances (with distinct names) write the same new value instead of counting
a call twice. ``before_model`` checks the counts before each call.

Limits are whole numbers of calls, 0 or more; 0 allows no model call at all (the first
``before_model`` already stops the run). Negative limits are refused when the middleware is built.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from langchain_core.messages import AIMessage
from langgraph.types import Command
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import GraphAgentError
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware._kit.limits import check_some_limit, checked_exit_behavior, checked_limit
from graphagent.middleware.base import hook_config
from graphagent.requests import ExtendedModelResponse, ModelRequest
from graphagent.state import AgentState, PrivateStateAttr, ResponseT

if TYPE_CHECKING:
    from langgraph.runtime import Runtime

__all__ = [
    "ModelCallLimitExceededError",
    "ModelCallLimitMiddleware",
    "ModelCallLimitState",
]

_EXIT_BEHAVIORS = ("end", "error")


class ModelCallLimitState(AgentState[ResponseT]):
    """The agent state with the model call counts of :class:`ModelCallLimitMiddleware`."""

    thread_model_call_count: NotRequired[Annotated[int, PrivateStateAttr]]
    """Model calls made in the thread so far (private: neither input nor output)."""
    run_model_call_count: NotRequired[Annotated[int, PrivateStateAttr]]
    """Model calls made in the current invocation so far (private)."""


class ModelCallLimitExceededError(GraphAgentError):
    """A model call limit was reached with ``exit_behavior="error"``.

    The counts are the calls already made when the next one was refused; the limit that was
    reached has its count equal to (or above) its limit. Each argument is kept as an attribute
    of the same name.

    Args:
        thread_count: Model calls made in the thread.
        run_count: Model calls made in the current invocation.
        thread_limit: The middleware's ``thread_limit`` (``None``: none).
        run_limit: The middleware's ``run_limit`` (``None``: none).
    """

    def __init__(
        self,
        thread_count: int,
        run_count: int,
        thread_limit: int | None,
        run_limit: int | None,
    ) -> None:
        self.thread_count = thread_count
        self.run_count = run_count
        self.thread_limit = thread_limit
        self.run_limit = run_limit
        super().__init__(_limit_reached_message(thread_count, run_count, thread_limit, run_limit))

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.thread_count, self.run_count, self.thread_limit, self.run_limit)


def _limit_reached_message(
    thread_count: int, run_count: int, thread_limit: int | None, run_limit: int | None
) -> str:
    """Which model call limits are reached, with their counts: shown to users and in errors, in
    LangChain's words."""
    reached = [
        f"{scope} limit ({count}/{limit})"
        for scope, count, limit in (
            ("thread", thread_count, thread_limit),
            ("run", run_count, run_limit),
        )
        if limit is not None and count >= limit
    ]
    return f"Model call limits exceeded: {', '.join(reached)}"


@refuse_unknown_arguments
class ModelCallLimitMiddleware(ModelCallCore[ModelCallLimitState[ResponseT], ContextT, ResponseT]):
    """Stop the agent once it has called its model ``thread_limit`` times in the thread (across
    invocations, with a checkpointer) or ``run_limit`` times in the current invocation.

    Args:
        thread_limit: Model calls allowed per thread, across invocations (with a checkpointer;
            without one, a thread is a single invocation). ``None``: no thread limit.
        run_limit: Model calls allowed per invocation. ``None``: no run limit. At least one of
            the two limits must be set.
        exit_behavior: ``"end"`` ends the run with an AI message naming the limit that was
            reached; ``"error"`` raises ``ModelCallLimitExceededError``.

    Raises:
        MiddlewareError: No limit, a limit that is not a whole number of calls 0 or more, or an
            unknown ``exit_behavior``.
    """

    state_schema = ModelCallLimitState

    def __init__(
        self,
        *,
        thread_limit: int | None = None,
        run_limit: int | None = None,
        exit_behavior: Literal["end", "error"] = "end",
    ) -> None:
        owner = type(self).__name__
        self.thread_limit = checked_limit(owner, "thread_limit", thread_limit)
        self.run_limit = checked_limit(owner, "run_limit", run_limit)
        check_some_limit(owner, self.thread_limit, self.run_limit)
        self.exit_behavior: Literal["end", "error"] = checked_exit_behavior(
            owner,
            exit_behavior,
            _EXIT_BEHAVIORS,
            f"Invalid exit_behavior: {exit_behavior}. Must be 'end' or 'error'",
        )

    def before_agent(
        self, state: ModelCallLimitState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """A new run starts counting from 0."""
        return {"run_model_call_count": 0}

    @hook_config(can_jump_to=["end"])
    def before_model(
        self, state: ModelCallLimitState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Let the model call happen, or end the run / raise once a limit is reached."""
        thread_count = state.get("thread_model_call_count", 0)
        run_count = state.get("run_model_call_count", 0)
        if not self._reached(thread_count, run_count):
            return None
        if self.exit_behavior == "error":
            raise ModelCallLimitExceededError(
                thread_count, run_count, self.thread_limit, self.run_limit
            )
        text = _limit_reached_message(thread_count, run_count, self.thread_limit, self.run_limit)
        return {"jump_to": "end", "messages": [AIMessage(content=text)]}

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ExtendedModelResponse:
        """Count the call once it has returned."""
        return ExtendedModelResponse(await mode.call(handler, request), _counted(request.state))

    def _reached(self, thread_count: int, run_count: int) -> bool:
        return (self.thread_limit is not None and thread_count >= self.thread_limit) or (
            self.run_limit is not None and run_count >= self.run_limit
        )


def _counted(state: Any) -> Command[Any]:
    """Both counts one up from the state the model node started with (so a retried call, which
    starts from the same state, writes the same values)."""
    return Command(
        update={
            "thread_model_call_count": state.get("thread_model_call_count", 0) + 1,
            "run_model_call_count": state.get("run_model_call_count", 0) + 1,
        }
    )
