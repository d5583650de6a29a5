"""``HumanInTheLoopMiddleware(interrupt_mode="per_call")``'s parts: the interrupt's
``response_schema`` (which also checks the answer) and the decisions already taken in the
tool-node task running now.

A per-call review is asked inside the ``wrap_tool_call`` onion, as the call starts. Each tool
call is a LangGraph task of its own (one ``Send`` per call), so parallel calls pause with one
interrupt each, and a resume runs again only the tasks that paused: calls that were not reviewed,
or whose answers were saved, do not run twice.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Union

from langchain_core.messages import ToolCall
from langchain_core.tools import BaseTool
from langgraph.prebuilt.tool_node import ToolCallRequest
from pydantic import (
    BaseModel,
    Discriminator,
    TypeAdapter,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    WrapValidator,
    create_model,
)

from graphagent.middleware._hitl.settings import OWNER
from graphagent.middleware._hitl.types import (
    ApproveDecision,
    Decision,
    DecisionType,
    RejectDecision,
    RespondDecision,
)


def still_open(call: ToolCall) -> str:
    """The note a refused answer carries: what was refused, and that the review is open."""
    return (
        f"{OWNER}: the answer for the call {call['id']!r} to '{call['name']}' does not fit its "
        "review (the interrupt's response_schema). Nothing ran for this call and its review is "
        "still open: resume again with a corrected decision, "
        "Command(resume={interrupt.id: decision})."
    )


# -- what the reviewer is sent -------------------------------------------------------------------


class DecisionShapes:
    """The type a per-call interrupt gets as its ``response_schema``, built once per tool.

    It takes the decisions allowed for the tool, matched on ``type``, as LangChain's does; an
    edit's ``name`` is the tool's own (an edit cannot switch tools) and its ``args`` follow the
    tool's argument schema (any object for a tool without a pydantic one; arguments the schema
    does not declare pass, and the tool ignores them as it would from the model). langgraph
    checks the answer against it before saving it, raising pydantic's ``ValidationError``; the
    answer is then returned as it was sent.
    """

    def __init__(self) -> None:
        self._built: dict[tuple[Any, ...], tuple[BaseTool | None, Any]] = {}
        self._lock = threading.Lock()

    def get(self, allowed: Sequence[DecisionType], name: str, tool: BaseTool | None) -> Any:
        key = (tuple(allowed), name, id(tool))
        built = self._built.get(key)
        if built is None:
            # Reviews of parallel calls ask from several threads at once, and pydantic's schema
            # building is not thread-safe: the first one builds the type, and its schema (which
            # langgraph builds again on every interrupt) is made once, here, while the others
            # wait; later builds only read it.
            with self._lock:
                built = self._built.get(key)
                if built is None:
                    shape = _decision_type(allowed, name, tool)
                    TypeAdapter(shape).json_schema()
                    built = self._built[key] = (tool, shape)  # the tool kept: its id not reused
        return built[1]


def _decision_type(allowed: Sequence[DecisionType], name: str, tool: BaseTool | None) -> Any:
    shapes: dict[DecisionType, Any] = {
        "approve": ApproveDecision,
        "reject": RejectDecision,
        "respond": RespondDecision,
    }
    if "edit" in allowed:
        shapes["edit"] = _edit_type(name, tool)
    members = tuple(shapes[kind] for kind in dict.fromkeys(allowed))
    shape: Any = members[0]
    if len(members) > 1:
        shape = Annotated[Union[members], Discriminator("type")]  # noqa: UP007 - a runtime tuple
    return Annotated[shape, WrapValidator(_as_sent)]


def _as_sent(answer: Any, check: ValidatorFunctionWrapHandler) -> Any:
    """``answer`` as sent, once it fits: the tool checks its arguments itself when it runs."""
    check(answer)
    return answer


def _edit_type(name: str, tool: BaseTool | None) -> type[BaseModel]:
    schema = tool.tool_call_schema if tool is not None else None
    args: Any = schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        shown = schema if isinstance(schema, dict) else {"type": "object"}
        args = Annotated[dict[str, Any], WithJsonSchema(shown)]
    pinned: Any = Literal[name]  # built at runtime: type checkers cannot follow it
    edit_type: Any = Literal["edit"]
    action = create_model("EditedAction", name=(pinned, ...), args=(args, ...))
    edit: type[BaseModel] = create_model(
        "EditDecision", type=(edit_type, ...), edited_action=(action, ...)
    )
    return edit


# -- decisions already taken -----------------------------------------------------------------------


class DecidedCalls:
    """The decisions taken in each tool-node task running now, so that a layer around the review
    that calls its handler again (a retry) does not put the same call to the reviewer twice.

    A task is known by its ``ToolRuntime``, which every handler call of the task shares; a
    decision is reused only for the very call (name and arguments) it was taken about. Entries
    go when the task's runtime does.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[int, tuple[weakref.ref[Any], dict[str, tuple[ToolCall, Decision]]]] = {}

    def get(self, request: ToolCallRequest) -> Decision | None:
        decided = self._decided(request.runtime)
        call = request.tool_call
        found = decided.get(call["id"] or "") if decided is not None else None
        if found is None or not _same_call(found[0], call):
            return None
        return found[1]

    def put(self, request: ToolCallRequest, decision: Decision) -> None:
        runtime: Any = request.runtime  # None only when a hook is called by hand
        if runtime is None:
            return
        with self._lock:
            decided = self._decided(runtime)
            if decided is None:
                decided = {}
                key = id(runtime)

                def forget(_: Any) -> None:
                    self._tasks.pop(key, None)

                self._tasks[key] = (weakref.ref(runtime, forget), decided)
            decided[request.tool_call["id"] or ""] = (request.tool_call, decision)

    def _decided(self, runtime: Any) -> dict[str, tuple[ToolCall, Decision]] | None:
        entry = self._tasks.get(id(runtime)) if runtime is not None else None
        if entry is None or entry[0]() is not runtime:
            return None
        return entry[1]


def _same_call(reviewed: ToolCall, call: ToolCall) -> bool:
    return reviewed["name"] == call["name"] and reviewed["args"] == call["args"]
