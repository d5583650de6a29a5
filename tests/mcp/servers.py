"""The MCP servers the tests talk to: built here, and served in process, over stdio
(``tests/mcp/stdio_server.py``) or over streamable HTTP (``tests/mcp/http_server.py``).

No mocks of the protocol: each is a real FastMCP (or MCP SDK) server. Servers that count how
often something ran take a :class:`Counts`, kept in memory for an in-process server and in a
file for one in another process.

This module deliberately has no ``from __future__ import annotations``: the MCP SDK reads a
tool's annotations to find its ``Resolve`` markers, and cannot resolve strings declared in a
function.
"""

import asyncio
import json
import os
import signal
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import FunctionTool
from fastmcp.tools.base import ToolResult
from mcp import MCPError
from mcp.server.mcpserver import Elicit, MCPServer, Resolve
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitRequestURLParams,
    ElicitResult,
    EmbeddedResource,
    ImageContent,
    InputRequiredResult,
    ResourceLink,
    TextContent,
    TextResourceContents,
)
from pydantic import BaseModel

PNG = "iVBORw0KGgo="  # base64 of a PNG signature: what matters is that it passes through intact


@dataclass
class Counts:
    """How often each named thing ran on a server; also appended to ``log`` when it is set, so
    a test can count what a server in another process did."""

    log: Path | None = None
    seen: Counter[str] = field(default_factory=Counter)

    def add(self, what: str) -> None:
        self.seen[what] += 1
        if self.log is not None:
            with self.log.open("a", encoding="utf-8") as file:
                file.write(what + "\n")

    def __getitem__(self, what: str) -> int:
        if self.log is None:
            return self.seen[what]
        lines = self.log.read_text(encoding="utf-8").splitlines() if self.log.exists() else []
        return lines.count(what)


def calculator(name: str = "calc") -> FastMCP[None]:
    server: FastMCP[None] = FastMCP(name, version="1.2.0")

    @server.tool
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @server.tool
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        if b == 0:
            raise ToolError("cannot divide by zero")
        return a / b

    return server


def whoami(name: str) -> FastMCP[None]:
    """A server whose one tool names it, to see which server answered."""
    server: FastMCP[None] = FastMCP(name)

    @server.tool(name="whoami")
    def identify() -> str:
        """Name the server answering."""
        return name

    return server


def gallery() -> FastMCP[None]:
    """Tools answering with each kind of MCP content."""
    server: FastMCP[None] = FastMCP("gallery")

    @server.tool
    def picture() -> list[Any]:
        """A picture and its caption."""
        return [
            ImageContent(type="image", data=PNG, mime_type="image/png"),
            TextContent(type="text", text="a sunset"),
        ]

    @server.tool
    def documents() -> list[Any]:
        """Documents, embedded and linked."""
        return [
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///notes.txt", text="the notes"),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///report.pdf", blob="JVBERi0=", mime_type="application/pdf"
                ),
            ),
            ResourceLink(
                type="resource_link",
                uri="https://example.com/chart.png",
                name="chart",
                mime_type="image/png",
            ),
        ]

    @server.tool
    def forecast(city: str) -> dict[str, Any]:
        """Tomorrow's weather, as data."""
        return {"city": city, "high": 21, "sky": "clear"}

    @server.tool
    def broken_picture() -> list[Any]:
        """Fails, sending only a picture."""
        raise ToolError("the camera is jammed")

    @server.tool
    def store(payload: dict[str, Any]) -> str:
        """Store any object."""
        return json.dumps(payload, sort_keys=True)

    return server


def directory(counts: Counts) -> FastMCP[None]:
    """A server whose answers carry personal data, or content no LangChain block holds."""
    server: FastMCP[None] = FastMCP("directory")

    @server.tool
    def email_of(name: str) -> str:
        """The e-mail address of a colleague."""
        counts.add("email_of")
        return f"{name} can be reached at {name.lower()}@example.com."

    @server.tool
    def voicemail() -> list[Any]:
        """The last voicemail, as audio."""
        counts.add("voicemail")
        return [AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav")]

    return server


class PartySize(BaseModel):
    guests: int


def restaurant(counts: Counts) -> MCPServer:
    """An MCP SDK server whose tool cannot run before a person gives the party size: the SDK
    asks the client (``Resolve(Elicit)``) and runs the body only with the answer."""
    server = MCPServer("restaurant")

    def ask_party_size() -> Elicit[PartySize]:
        counts.add("asked")
        return Elicit("How many guests are dining?", PartySize)

    @server.tool()
    def book_table(party: Annotated[PartySize, Resolve(ask_party_size)]) -> str:
        """Book a table for the party."""
        counts.add("booked")
        return f"Booked a table for {party.guests}."

    return server


def _question(message: str, schema: dict[str, Any]) -> ElicitRequest:
    return ElicitRequest(
        method="elicitation/create",
        params=ElicitRequestFormParams(mode="form", message=message, requested_schema=schema),
    )


_TEXT = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def planner(counts: Counts) -> FastMCP[None]:
    """A FastMCP server that asks two questions at once, then a third in a second round. It
    keeps the answers of earlier rounds in the opaque ``request_state`` it gets back."""
    server: FastMCP[None] = FastMCP("planner")

    @server.tool
    async def plan_trip(ctx: Context) -> list[TextContent] | InputRequiredResult:
        """Plan a trip, asking for what is missing."""
        known: dict[str, str] = json.loads(ctx.request_state) if ctx.request_state else {}
        for key, answer in (ctx.input_responses or {}).items():
            if isinstance(answer, ElicitResult) and answer.action == "accept" and answer.content:
                known[key] = str(answer.content["answer"])
        missing = {"city": "Which city?", "month": "Which month?"}
        if not missing.keys() <= known.keys():
            counts.add("round 1")
            return _ask(known, missing)
        if "hotel" not in known:
            counts.add("round 2")
            return _ask(known, {"hotel": "Which hotel?"})
        counts.add("planned")
        text = f"{known['city']} in {known['month']}, at the {known['hotel']}."
        return [TextContent(type="text", text=text)]

    @server.tool
    async def sign_in(ctx: Context) -> str | InputRequiredResult:
        """Needs the person to sign in at a URL first."""
        answer = (ctx.input_responses or {}).get("login")
        if isinstance(answer, ElicitResult):
            return f"signed in: {answer.action}"
        params = ElicitRequestURLParams(
            mode="url",
            message="Sign in to continue.",
            url="https://example.com/login",
            elicitation_id="login-1",
        )
        request = ElicitRequest(method="elicitation/create", params=params)
        return InputRequiredResult(input_requests={"login": request}, request_state="login")

    return server


def _ask(known: dict[str, str], questions: dict[str, str]) -> InputRequiredResult:
    return InputRequiredResult(
        input_requests={key: _question(text, _TEXT) for key, text in questions.items()},
        request_state=json.dumps(known, sort_keys=True),
    )


@dataclass
class Waiting:
    """What a :func:`waiter` server saw: the call started, and its handler was cancelled."""

    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)


def waiter(seen: Waiting) -> FastMCP[None]:
    """A server whose tool waits until it is cancelled (an in-process server: same loop)."""
    server: FastMCP[None] = FastMCP("waiter")

    @server.tool
    async def wait_forever() -> str:
        """Never answers."""
        seen.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.cancelled.set()
            raise
        return "unreachable"

    return server


def process_server(counts: Counts) -> FastMCP[None]:
    """The server run in another process (stdio and HTTP): arithmetic, a booking that asks for
    the party size, a tool that ends its process mid-call, and one that waits to be cancelled,
    which ``waited`` reports on."""
    server = calculator("process")
    events = {"started": asyncio.Event(), "cancelled": asyncio.Event()}

    @server.tool
    def book_table(ctx: Context) -> str | InputRequiredResult:
        """Book a table for the party."""
        answer = (ctx.input_responses or {}).get("party")
        if not isinstance(answer, ElicitResult):
            counts.add("asked")
            schema = {
                "type": "object",
                "properties": {"guests": {"type": "integer", "minimum": 1}},
                "required": ["guests"],
            }
            question = _question("How many guests are dining?", schema)
            return InputRequiredResult(input_requests={"party": question}, request_state="x")
        if answer.action != "accept" or not answer.content:
            return f"No booking: the answer was {answer.action}."
        counts.add("booked")
        return f"Booked a table for {answer.content['guests']}."

    started = asyncio.Condition()
    waiting = [0]

    @server.tool
    async def crash(after: int = 0, kill: bool = False) -> str:
        """Ends the server's process in the middle of the call (killed by SIGKILL if ``kill``),
        once ``after`` calls of wait_forever have started."""
        async with started:
            await started.wait_for(lambda: waiting[0] >= after)
        counts.add("crashed")
        if kill:
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(1)

    @server.tool
    def pid() -> int:
        """The server's process id."""
        return os.getpid()

    @server.tool
    async def wait_forever() -> str:
        """Never answers, until cancelled."""
        events["started"].set()
        async with started:
            waiting[0] += 1
            started.notify_all()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events["cancelled"].set()
            raise
        return "unreachable"

    @server.tool
    async def waited(what: str) -> bool:
        """Whether a call to wait_forever has ``what`` (started, cancelled); waits up to 30 s."""
        try:
            await asyncio.wait_for(events[what].wait(), timeout=30)
        except TimeoutError:
            return False
        return True

    return server


def refuser() -> MCPServer:
    """An MCP SDK server that answers calls with JSON-RPC errors (FastMCP would turn them into
    ``isError`` results), and with errors too long or too empty to read."""
    server = MCPServer("refuser")

    @server.tool()
    def refuse(code: int) -> str:
        """Answers with the JSON-RPC error ``code``."""
        raise MCPError(code=code, message=f"refused with {code}")

    return server


def complainer() -> FastMCP[None]:
    """A FastMCP server whose tools fail with an error too long, or with no text."""
    server: FastMCP[None] = FastMCP("complainer")

    @server.tool
    def rant() -> str:
        """Fails with a 1 MiB message."""
        raise ToolError("x" * 2**20)

    @server.tool
    def sulk() -> CallToolResult:
        """Fails with nothing to say."""
        return CallToolResult(content=[TextContent(type="text", text="")], is_error=True)

    return server


def _nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def misfits() -> FastMCP[None]:
    """Tools no agent can use (a name providers refuse, a dangling ``$ref``, a schema
    40 objects deep) beside one that is fine."""
    server: FastMCP[None] = FastMCP("misfits")

    def echo(text: str = "") -> str:
        return text

    schemas = {
        "dangling": {"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}},
        "deep": {"type": "object", "properties": {"a": _nested(40)}},
    }
    server.tool(echo, name="fine")
    server.tool(echo, name="has space")
    for name, schema in schemas.items():
        tool = FunctionTool.from_function(echo, name=name)
        server.add_tool(tool.model_copy(update={"parameters": schema}))
    return server


_COUNT_SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def liar() -> FastMCP[None]:
    """Tools whose results break their own output schema."""
    server: FastMCP[None] = FastMCP("liar")

    @server.tool(output_schema=_COUNT_SCHEMA)
    def mistyped() -> ToolResult:
        """Structured content of the wrong type."""
        return ToolResult(
            content=[TextContent(type="text", text="n")], structured_content={"n": "x"}
        )

    @server.tool(output_schema=_COUNT_SCHEMA)
    def unstructured() -> ToolResult:
        """No structured content, though the schema asks for it."""
        return ToolResult(content=[TextContent(type="text", text="n")])

    return server


def pesterer(counts: Counts) -> FastMCP[None]:
    """A server whose tool asks forever, and tools whose questions have broken forms."""
    server: FastMCP[None] = FastMCP("pesterer")

    @server.tool
    async def forever(ctx: Context) -> InputRequiredResult:
        """Asks another question, whatever the answer."""
        counts.add("asked")
        question = _question("One more thing?", _TEXT)
        return InputRequiredResult(input_requests={"more": question}, request_state="again")

    broken = {
        "dangling": {"type": "object", "properties": {"a": {"$ref": "#/$defs/gone"}}},
        "unknown_type": {"type": "object", "properties": {"a": {"type": "colour"}}},
        "bad_regex": {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}},
    }
    for name, schema in broken.items():
        server.tool(_asking_with(schema), name=name)
    return server


def _asking_with(schema: dict[str, Any]) -> Any:
    """A tool that asks one question, with a form of ``schema``."""

    async def ask(ctx: Context) -> InputRequiredResult:
        """Asks a question."""
        return InputRequiredResult(
            input_requests={"q": _question("Well?", schema)}, request_state="x"
        )

    return ask
