"""Questions an MCP server asks in the middle of a tool call, put to a person as an interrupt.

A server that needs input before it can finish a call (a party size, a confirmation, a sign-in
at some URL) answers ``tools/call`` with its questions instead of a result. The MCP tool then
pauses the run with a LangGraph ``interrupt()`` whose value is an
:class:`MCPElicitationInterrupt`; the run goes on when it is resumed with
``Command(resume=MCPElicitationResume)``, one answer per question, keyed as the questions are::

    paused = agent.invoke({"messages": [("user", "Book a table")]}, config)
    [question] = paused["__interrupt__"][0].value["requests"]
    answer = {"action": "accept", "content": {"guests": 4}}
    agent.invoke(Command(resume={"responses": {question["key"]: answer}}), config)

The answer is checked before anything is sent: every question answered, each action one of
``accept``, ``decline`` and ``cancel``, and form content that fits the server's schema. A bad
answer raises :class:`~graphagent.mcp.errors.MCPElicitationAnswerError` and the question stays
open for another ``Command(resume=...)``. Since nothing but the checkpoint holds the pause, a
durable checkpointer lets another process answer it.

On resume the tool call starts again and is sent to the server again, with the answers: a
server that asks before doing any work repeats nothing.
"""

from __future__ import annotations

from typing import Any, Final, Literal, NotRequired, TypeAlias, TypedDict

from fastmcp.client import Client
from mcp.types.version import MODERN_PROTOCOL_VERSIONS

__all__ = [
    "ELICITATION_INTERRUPT_TYPE",
    "MCPElicitationAccept",
    "MCPElicitationCancel",
    "MCPElicitationDecline",
    "MCPElicitationFormRequest",
    "MCPElicitationInterrupt",
    "MCPElicitationRequest",
    "MCPElicitationResponse",
    "MCPElicitationResume",
    "MCPElicitationUrlRequest",
    "MCPFormContent",
]

ELICITATION_INTERRUPT_TYPE: Final = "mcp_elicitation"
"""The ``type`` of an :class:`MCPElicitationInterrupt`, to tell it from other interrupts."""

MAX_ELICITATION_ROUNDS: Final = 10
"""Rounds of questions one tool call may ask; a server that asks more fails the call."""

MCPFormContent: TypeAlias = dict[str, str | int | float | bool | list[str] | None]
"""The values an accepted form answer carries, as MCP allows them."""


class MCPElicitationFormRequest(TypedDict):
    """A question answered by filling in a form.

    Attributes:
        key: The server's name for the question; its answer goes under the same key.
        message: The question, for a person to read.
        mode: ``"form"``.
        requested_schema: The JSON schema the answer's ``content`` must fit.
    """

    key: str
    message: str
    mode: Literal["form"]
    requested_schema: dict[str, Any]


class MCPElicitationUrlRequest(TypedDict):
    """A request to open a URL (to sign in, pay, consent) before the call goes on.

    Attributes:
        key: The server's name for the request; its answer goes under the same key.
        message: Why, for a person to read.
        mode: ``"url"``.
        url: The address to open.
    """

    key: str
    message: str
    mode: Literal["url"]
    url: str


MCPElicitationRequest: TypeAlias = MCPElicitationFormRequest | MCPElicitationUrlRequest
"""One question of a server; ``mode`` tells which kind."""


class MCPElicitationInterrupt(TypedDict):
    """The value of the interrupt that pauses a run until the server's questions are answered.

    Attributes:
        type: ``"mcp_elicitation"`` (:data:`ELICITATION_INTERRUPT_TYPE`).
        tool_name: The tool whose call waits, as the agent knows it.
        requests: The questions of this round, in the server's order.
    """

    type: Literal["mcp_elicitation"]
    tool_name: str
    requests: list[MCPElicitationRequest]


class MCPElicitationAccept(TypedDict):
    """An answer given.

    Attributes:
        action: ``"accept"``.
        content: For a form, the answer, fitting its ``requested_schema``; a URL request takes
            none.
    """

    action: Literal["accept"]
    content: NotRequired[MCPFormContent | None]


class MCPElicitationDecline(TypedDict):
    """The person will not answer this question; the server decides how the call goes on.

    Attributes:
        action: ``"decline"``.
    """

    action: Literal["decline"]


class MCPElicitationCancel(TypedDict):
    """The person dismissed the question without a choice; the server decides how the call
    goes on.

    Attributes:
        action: ``"cancel"``.
    """

    action: Literal["cancel"]


MCPElicitationResponse: TypeAlias = (
    MCPElicitationAccept | MCPElicitationDecline | MCPElicitationCancel
)
"""One answer; ``action`` tells which kind, and only an accepted form answer carries content."""


class MCPElicitationResume(TypedDict):
    """What ``Command(resume=...)`` carries to answer an :class:`MCPElicitationInterrupt`.

    Attributes:
        responses: One answer per request of the interrupt, keyed by the request's ``key``.
    """

    responses: dict[str, MCPElicitationResponse]


_ARMED: Final = "_graphagent_mcp_asks_by_interrupt"
"""Set on a client whose tools answer elicitation with an interrupt (copied by ``new()``)."""


async def _refuse_server_initiated(*_: object) -> Any:
    """The elicitation handler of an armed client. FastMCP only declares the elicitation
    capability for a client with a handler, so one is set; the questions of a current server
    come back as the call's result and are answered by an interrupt, never here. Only a server
    of an older protocol version asks through this handler, in the middle of its request."""
    raise NotImplementedError(
        "This MCP server asked for input over the legacy server-initiated elicitation path, "
        "which interrupt-based elicitation cannot answer. It asked in the middle of its request "
        "(the protocol before 2026-07-28); a server on a current protocol version returns its "
        "questions with the call's result, and they become an interrupt. Otherwise give the "
        "client an elicitation_handler of your own: fastmcp.Client(target, "
        "elicitation_handler=...)."
    )


def arm(client: Client[Any]) -> None:
    """Make the tools of ``client`` answer its server's questions with an interrupt."""
    client.set_elicitation_callback(_refuse_server_initiated)
    setattr(client, _ARMED, True)


def is_armed(client: Client[Any]) -> bool:
    return getattr(client, _ARMED, False) is True


def has_own_handler(client: Client[Any]) -> bool:
    """Whether the caller gave ``client`` an elicitation handler (FastMCP keeps no public
    record of one)."""
    return getattr(client, "_elicitation_callback", None) is not None


def asks_by_interrupt(client: Client[Any]) -> bool:
    """Whether a call through the connected ``client`` answers questions with an interrupt: it
    is armed, and its server speaks a protocol whose questions come back with the call's result
    (older servers never ask that way)."""
    return is_armed(client) and client.protocol_version in MODERN_PROTOCOL_VERSIONS
