"""``TodoListMiddleware``: a ``write_todos`` tool and a ``todos`` state field for planning.

The model keeps a to-do list for multi-step work by calling ``write_todos`` with the whole list;
the list lives in the agent state (so a checkpointer keeps it across turns and restarts). Before
every model call the middleware appends its planning instructions to the system message and,
with ``reminder=True`` (off by default, as LangChain has no reminder), the current list, so the
plan stays in view even after the calls that wrote it have scrolled far back or been summarised
away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.runtime import Runtime
from langgraph.types import Command
from langgraph.typing import ContextT
from typing_extensions import TypedDict

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, OmitFromInput, ResponseT

__all__ = [
    "WRITE_TODOS_SYSTEM_PROMPT",
    "WRITE_TODOS_TOOL_DESCRIPTION",
    "PlanningState",
    "Todo",
    "TodoListMiddleware",
    "write_todos",
]

TOOL_NAME = "write_todos"

TodoStatus = Literal["pending", "in_progress", "completed"]


class Todo(TypedDict):
    """One item of the to-do list."""

    content: str
    """What is to be done, as a short imperative sentence."""
    status: TodoStatus
    """``"pending"``, ``"in_progress"`` or ``"completed"``."""


class PlanningState(AgentState[ResponseT]):
    """The state of an agent with a to-do list: ``todos`` is ordinary, checkpointed state."""

    todos: NotRequired[Annotated[list[Todo], OmitFromInput]]
    """The current list, replaced as a whole by each ``write_todos`` call."""


WRITE_TODOS_TOOL_DESCRIPTION = """\
Write your to-do list for the current task. Each call replaces the whole list, so always send \
every item, with its current status.

Keep a list when the work has several distinct steps (roughly three or more), when the user \
hands you several things to do at once, when the user asks you to plan or track the work, or \
when the plan is likely to change as you learn more. Skip it for a single simple step or a \
purely conversational request: then just answer.

Statuses:
- pending: not started yet.
- in_progress: being worked on now. Set this before you start a step; keep at least one item \
in progress until everything is done.
- completed: fully done. Mark an item completed as soon as it is finished, not in batches \
later. Do not mark it completed if it failed, is only partly done or is blocked; keep it in \
progress and add an item for whatever blocks it.

Revise the list as you go: add steps you discover, drop steps that turned out unnecessary, but \
leave completed items as they are. Write items as short, concrete actions.

The list only tracks your work; it is not your answer. When everything is done, give the user \
the result itself (the data, the text, the conclusion) in a normal message after your last \
write_todos call."""
"""The default description of the ``write_todos`` tool (see ``TodoListMiddleware``)."""

WRITE_TODOS_SYSTEM_PROMPT = """\
## `write_todos`

You can keep a to-do list with the `write_todos` tool. Use it for tasks that take several \
steps, so that you work through them in order and nothing is forgotten; for a simple request, \
answer directly without a list.

- Each call replaces the whole list: send every item with its current status.
- Update the list as soon as a step is finished; do not save several completions for later.
- Change the plan when you learn something new: add, remove or reword the open items.
- Call `write_todos` at most once per turn, never several times in parallel.
- When all items are completed, reply with the actual result the user asked for, in a message \
after your last `write_todos` call; a finished list is not an answer."""
"""The default planning instructions appended to the system message (see ``TodoListMiddleware``)."""

_STATUS_LABELS: dict[str, str] = {
    "pending": "pending",
    "in_progress": "in progress",
    "completed": "completed",
}

# LangChain's words: agents and tests written for it read this text.
_PARALLEL_CALLS_ERROR = (
    "Error: The `write_todos` tool should never be called multiple times in parallel. "
    "Please call it only once per model invocation to update the todo list."
)


def render_todos(todos: Sequence[Todo]) -> str:
    """The list as numbered lines: ``1. [in progress] Draft the answer``."""
    return "\n".join(
        f"{number}. [{_label(todo.get('status'))}] {todo.get('content', '')}"
        for number, todo in enumerate(todos, start=1)
    )


def _label(status: object) -> str:
    return _STATUS_LABELS.get(status, status) if isinstance(status, str) else "no status"


def render_reminder(todos: Sequence[Todo]) -> str:
    """What the model is reminded of before each call while the list is not empty."""
    return (
        "## Your current to-do list\n\n"
        f"{render_todos(todos)}\n\n"
        "Keep it up to date with `write_todos` as you work."
    )


def _write_todos(
    todos: list[Todo], tool_call_id: Annotated[str, InjectedToolCallId]
) -> Command[Any]:
    # LangChain's answer, word for word: agents and tests written for it read this text.
    message = ToolMessage(
        f"Updated todo list to {todos}", tool_call_id=tool_call_id, name=TOOL_NAME
    )
    return Command(update={"todos": todos, "messages": [message]})


async def _awrite_todos(
    todos: list[Todo], tool_call_id: Annotated[str, InjectedToolCallId]
) -> Command[Any]:
    return _write_todos(todos, tool_call_id)


def make_write_todos(description: str = WRITE_TODOS_TOOL_DESCRIPTION) -> BaseTool:
    """A ``write_todos`` tool with the given description."""
    return StructuredTool.from_function(
        func=_write_todos,
        coroutine=_awrite_todos,
        name=TOOL_NAME,
        description=description,
    )


write_todos: BaseTool = make_write_todos()
"""The ``write_todos`` tool with the default description."""


@refuse_unknown_arguments
class TodoListMiddleware(ModelCallCore[PlanningState[ResponseT], ContextT, ResponseT]):
    """Give the agent a to-do list: the ``write_todos`` tool, the ``todos`` state field, and
    instructions appended to the system message of every model call.

    Several ``write_todos`` calls in one turn are answered with an error instead of running,
    because each call replaces the whole list.

    Args:
        system_prompt: The instructions appended to the system message of every model call
            (``WRITE_TODOS_SYSTEM_PROMPT`` by default).
        tool_description: The description of the ``write_todos`` tool the model reads
            (``WRITE_TODOS_TOOL_DESCRIPTION`` by default).
        reminder: Also show the current list to the model before each call, at the end of
            the system message; it is rendered per call and never stored. Off by default, as
            LangChain shows the list only through the earlier ``write_todos`` calls.

    Raises:
        MiddlewareError: An empty prompt or description, or a ``reminder`` that is not a bool.
    """

    state_schema = PlanningState

    def __init__(
        self,
        *,
        system_prompt: str = WRITE_TODOS_SYSTEM_PROMPT,
        tool_description: str = WRITE_TODOS_TOOL_DESCRIPTION,
        reminder: bool = False,
    ) -> None:
        """Customise the planning instructions, the tool's description, or turn the reminder off."""
        super().__init__()
        _check_text("system_prompt", system_prompt)
        _check_text("tool_description", tool_description)
        if not isinstance(reminder, bool):
            raise MiddlewareError(
                f"TodoListMiddleware: reminder must be True or False, got {reminder!r}."
            )
        self.system_prompt = system_prompt
        self.tool_description = tool_description
        self.reminder = reminder
        tool = write_todos
        if tool_description != WRITE_TODOS_TOOL_DESCRIPTION:
            tool = make_write_todos(tool_description)
        self.tools = [tool]

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Call the model with the planning instructions (and the reminder) added."""
        response: ModelResponse = await mode.call(handler, self._with_planning(request))
        return response

    def after_model(
        self, state: PlanningState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Reject parallel ``write_todos`` calls: answer each with an error so none runs."""
        return _reject_parallel_writes(state["messages"])

    async def aafter_model(
        self, state: PlanningState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """The same check, for a caller that awaits the hook itself (the agent runs the sync
        one in async runs too)."""
        return self.after_model(state, runtime)

    def _with_planning(self, request: ModelRequest[ContextT]) -> ModelRequest[ContextT]:
        additions = [self.system_prompt]
        todos = _todos_of(request.state)
        if self.reminder and todos:
            additions.append(render_reminder(todos))
        return request.override(
            system_message=_appended(request.system_message, "\n\n".join(additions))
        )


def _check_text(parameter: str, value: object) -> None:
    if not isinstance(value, str) or not value.strip():
        raise MiddlewareError(
            f"TodoListMiddleware: {parameter} must be a non-empty string, got {value!r}; "
            "leave it out to use the default."
        )


def _todos_of(state: Any) -> list[Any]:
    todos = state.get("todos") if isinstance(state, dict) else None
    # Checked item by item: the list may come from update_state rather than from the tool.
    return [t for t in todos if isinstance(t, dict)] if isinstance(todos, list) else []


def _appended(system: SystemMessage | None, text: str) -> SystemMessage:
    """``system`` with ``text`` after its content, keeping its other fields and any blocks."""
    if system is None:
        return SystemMessage(text)
    content = system.content
    if isinstance(content, str):
        joined: str | list[str | dict[str, Any]] = f"{content}\n\n{text}" if content else text
    else:
        joined = [*content, {"type": "text", "text": f"\n\n{text}"}]
    return system.model_copy(update={"content": joined})


def _reject_parallel_writes(messages: Sequence[Any]) -> dict[str, Any] | None:
    turn = next(
        (i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None
    )
    if turn is None:
        return None
    writes = [call for call in messages[turn].tool_calls if call["name"] == TOOL_NAME]
    if len(writes) < 2:
        return None
    answered = {m.tool_call_id for m in messages[turn + 1 :] if isinstance(m, ToolMessage)}
    errors = [
        ToolMessage(_PARALLEL_CALLS_ERROR, tool_call_id=call["id"], status="error")
        for call in writes
        if call["id"] not in answered
    ]
    return {"messages": errors} if errors else None
