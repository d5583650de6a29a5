"""A server's questions in the middle of a call pause the run with an interrupt, and
``Command(resume=...)`` answers them: accept with data, decline or cancel. A bad answer is
refused, nothing is sent, and the question stays open."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client, Context, FastMCP
from fastmcp.client.group import ClientGroup
from fastmcp.client.transports import StdioTransport
from langgraph.types import Command
from mcp.types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    InputRequiredResult,
    SamplingMessage,
    TextContent,
)

from graphagent import ResumeError
from graphagent.mcp import MCPAdapter, as_langchain_tool
from graphagent.mcp.elicitation import ELICITATION_INTERRUPT_TYPE
from graphagent.mcp.errors import MCPElicitationAnswerError
from tests.conftest import Run, run_agent
from tests.mcp import servers
from tests.mcp.helpers import THREAD, texts, tool_messages, with_memory
from tests.mcp.processes import STDIO_SERVER, HttpServer

BOOK = ("book_table", {})


def adapter_tools(target: Any) -> list[Any]:
    return asyncio.run(MCPAdapter(target).list_tools())


def only_interrupt(result: dict[str, Any]) -> Any:
    [pause] = result["__interrupt__"]
    return pause.value


def accept(question: dict[str, Any], content: dict[str, Any] | None = None) -> Command[Any]:
    answer: dict[str, Any] = {"action": "accept"}
    if content is not None:
        answer["content"] = content
    return Command(resume={"responses": {question["key"]: answer}})


def test_the_interrupt_carries_the_question_and_the_tool_waits(run: Run) -> None:
    counts = servers.Counts()
    agent = with_memory(adapter_tools(servers.restaurant(counts)), BOOK)

    paused = run(agent, {"messages": [("user", "Book a table")]}, config=THREAD)

    [pause] = paused["__interrupt__"]
    assert pause.value["type"] == ELICITATION_INTERRUPT_TYPE == "mcp_elicitation"
    assert pause.value["tool_name"] == "book_table"
    [question] = pause.value["requests"]
    assert question["message"] == "How many guests are dining?"
    assert question["mode"] == "form"
    assert question["requested_schema"]["required"] == ["guests"]
    assert (
        "answers to the questions of the MCP tool 'book_table'"
        in (pause.response_schema["description"])
    )
    assert counts["booked"] == 0


def test_an_accepted_answer_completes_the_call(run: Run) -> None:
    counts = servers.Counts()
    agent = with_memory(adapter_tools(servers.restaurant(counts)), BOOK)
    paused = run(agent, {"messages": [("user", "Book a table")]}, config=THREAD)
    [question] = only_interrupt(paused)["requests"]

    resumed = run(agent, accept(question, {"guests": 4}), config=THREAD)

    [answer] = tool_messages(resumed)
    assert texts(answer) == ["Booked a table for 4."]
    assert answer.status == "success"
    assert resumed["messages"][-1].content == "done"
    assert counts["booked"] == 1
    assert counts["asked"] >= 2  # the call is sent again on resume, and asks again


@pytest.mark.parametrize("action", ["decline", "cancel"])
def test_a_declined_or_cancelled_question_tells_the_server(run: Run, action: str) -> None:
    counts = servers.Counts()
    agent = with_memory(adapter_tools(servers.process_server(counts)), BOOK)
    paused = run(agent, {"messages": [("user", "Book a table")]}, config=THREAD)
    [question] = only_interrupt(paused)["requests"]

    resumed = run(
        agent, Command(resume={"responses": {question["key"]: {"action": action}}}), config=THREAD
    )

    assert texts(tool_messages(resumed)[0]) == [f"No booking: the answer was {action}."]
    assert counts["booked"] == 0


def test_a_server_may_fail_the_call_when_its_question_is_declined(run: Run) -> None:
    counts = servers.Counts()
    agent = with_memory(adapter_tools(servers.restaurant(counts)), BOOK)
    paused = run(agent, {"messages": [("user", "Book a table")]}, config=THREAD)
    [question] = only_interrupt(paused)["requests"]

    decline = Command(resume={"responses": {question["key"]: {"action": "decline"}}})
    resumed = run(agent, decline, config=THREAD)

    [answer] = tool_messages(resumed)
    assert answer.status == "error"
    assert "decline" in texts(answer)[0]
    assert resumed["messages"][-1].content == "done"
    assert counts["booked"] == 0


BAD_ANSWERS = [
    pytest.param(
        lambda key: {"responses": {key: {"action": "accept", "content": {"guests": "four"}}}},
        r"The content accepted for 'party' does not fit the requested schema: "
        r"\['guests'\] 'four' is not of type 'integer'",
        id="wrong type",
    ),
    pytest.param(
        lambda key: {"responses": {key: {"action": "accept", "content": {"guests": 0}}}},
        r"\['guests'\] 0 is less than the minimum of 1",
        id="out of range",
    ),
    pytest.param(
        lambda key: {"responses": {key: {"action": "accept"}}},
        r"The content accepted for 'party' must be an object fitting the requested schema, "
        r"got None",
        id="no content",
    ),
    pytest.param(
        lambda key: {"responses": {key: {"action": "maybe"}}},
        r"Elicitation answer for 'party' has action 'maybe'; expected 'accept', 'decline', or "
        r"'cancel'. The answer was \{'action': 'maybe'\}",
        id="unknown action",
    ),
    pytest.param(
        lambda key: {"responses": {"other": {"action": "decline"}}},
        r"Resuming the MCP tool 'book_table' needs an answer for every elicitation request, but "
        r"these had none: party. Answer each request of the interrupt under its key \('party'\)",
        id="unanswered",
    ),
    pytest.param(
        lambda key: {"action": "accept", "content": {"guests": 2}},
        r"Resume with \{'responses': \{<key>: <answer>\}\} with an answer for each of 'party'",
        id="not keyed",
    ),
]


@pytest.mark.parametrize(("bad", "problem"), BAD_ANSWERS)
def test_a_bad_answer_is_refused_and_the_question_stays_open(
    how_call: str, bad: Any, problem: str
) -> None:
    counts = servers.Counts()
    agent = with_memory(adapter_tools(servers.process_server(counts)), BOOK)
    paused = run_agent(agent, how_call, {"messages": [("user", "Book a table")]}, config=THREAD)
    [question] = only_interrupt(paused)["requests"]

    with pytest.raises(MCPElicitationAnswerError, match=problem) as refused:
        run_agent(agent, how_call, Command(resume=bad(question["key"])), config=THREAD)

    assert isinstance(refused.value, ResumeError)
    assert isinstance(refused.value, ValueError)
    assert refused.value.tool_name == "book_table"
    assert str(refused.value).endswith(
        " graphagent.mcp refused this answer to the questions of the MCP tool 'book_table': "
        "nothing was sent to the server, and the question is still open for another "
        "Command(resume=...)."
    )
    [still_open] = agent.get_state(THREAD).interrupts
    assert still_open.value == only_interrupt(paused)
    assert counts["booked"] == 0

    resumed = run_agent(agent, how_call, accept(question, {"guests": 2}), config=THREAD)

    assert texts(tool_messages(resumed)[0]) == ["Booked a table for 2."]
    assert counts["booked"] == 1


def test_questions_asked_together_share_one_interrupt_and_one_answer(run: Run) -> None:
    counts = servers.Counts()
    agent = with_memory(adapter_tools(servers.planner(counts)), ("plan_trip", {}))

    first = run(agent, {"messages": [("user", "Plan a trip")]}, config=THREAD)

    questions = only_interrupt(first)["requests"]
    assert [(q["key"], q["message"]) for q in questions] == [
        ("city", "Which city?"),
        ("month", "Which month?"),
    ]

    partial = {"responses": {"city": {"action": "accept", "content": {"answer": "Lisbon"}}}}
    with pytest.raises(MCPElicitationAnswerError, match=r"these had none: month\. "):
        run(agent, Command(resume=partial), config=THREAD)

    both = {
        "responses": {
            "city": {"action": "accept", "content": {"answer": "Lisbon"}},
            "month": {"action": "accept", "content": {"answer": "May"}},
        }
    }
    second = run(agent, Command(resume=both), config=THREAD)

    [hotel] = only_interrupt(second)["requests"]
    assert hotel["key"] == "hotel"

    done = run(agent, accept(hotel, {"answer": "Avenida"}), config=THREAD)

    assert texts(tool_messages(done)[0]) == ["Lisbon in May, at the Avenida."]
    assert counts["planned"] == 1


def test_a_url_request_carries_its_url_and_takes_an_answer_without_content(run: Run) -> None:
    agent = with_memory(adapter_tools(servers.planner(servers.Counts())), ("sign_in", {}))

    paused = run(agent, {"messages": [("user", "Sign me in")]}, config=THREAD)

    [request] = only_interrupt(paused)["requests"]
    assert request == {
        "key": "login",
        "message": "Sign in to continue.",
        "mode": "url",
        "url": "https://example.com/login",
    }
    resumed = run(agent, accept(request), config=THREAD)
    assert texts(tool_messages(resumed)[0]) == ["signed in: accept"]


def test_a_groups_tool_asks_under_its_group_name(run: Run) -> None:
    counts = servers.Counts()
    group = ClientGroup(
        {"info": Client(servers.whoami("info")), "dining": Client(servers.restaurant(counts))}
    )
    agent = with_memory(adapter_tools(group), ("dining_book_table", {}))

    paused = run(agent, {"messages": [("user", "Book")]}, config=THREAD)

    assert only_interrupt(paused)["tool_name"] == "dining_book_table"
    [question] = only_interrupt(paused)["requests"]
    resumed = run(agent, accept(question, {"guests": 3}), config=THREAD)
    assert texts(tool_messages(resumed)[0]) == ["Booked a table for 3."]


def test_two_calls_asking_at_once_are_answered_by_interrupt_id(run: Run) -> None:
    counts = servers.Counts()
    agent = with_memory(adapter_tools(servers.process_server(counts)), [BOOK, BOOK])

    run(agent, {"messages": [("user", "Book two tables")]}, config=THREAD)

    pauses = agent.get_state(THREAD).interrupts  # a stream shows each in a chunk of its own
    assert len(pauses) == 2
    answers = {
        pause.id: {"responses": {"party": {"action": "accept", "content": {"guests": n}}}}
        for n, pause in enumerate(pauses, start=2)
    }
    resumed = run(agent, Command(resume=answers), config=THREAD)

    assert sorted(texts(m)[0] for m in tool_messages(resumed)) == [
        "Booked a table for 2.",
        "Booked a table for 3.",
    ]
    assert counts["booked"] == 2


def test_over_stdio_http_and_a_config_of_servers_the_same_questions_pause_the_run(
    how_call: str, http: HttpServer, server_log: Path
) -> None:
    config = {"mcpServers": {"remote": {"url": http.url}, "mirror": {"url": http.url}}}
    targets = [
        (StdioTransport(sys.executable, [str(STDIO_SERVER), str(server_log)]), "book_table"),
        (http.url, "book_table"),
        (config, "remote_book_table"),
    ]
    for target, tool_name in targets:
        agent = with_memory(adapter_tools(target), (tool_name, {}))
        paused = run_agent(agent, how_call, {"messages": [("user", "Book")]}, config=THREAD)
        assert only_interrupt(paused)["tool_name"] == tool_name
        [question] = only_interrupt(paused)["requests"]

        resumed = run_agent(agent, how_call, accept(question, {"guests": 5}), config=THREAD)

        assert texts(tool_messages(resumed)[0]) == ["Booked a table for 5."]


def test_a_tool_made_while_its_client_was_not_connected_still_asks_by_interrupt(
    run: Run,
) -> None:
    client = MCPAdapter(servers.process_server(servers.Counts())).client
    assert isinstance(client, Client)

    async def made_after_disconnecting() -> list[Any]:
        async with client:
            listed = await client.list_tools()
        assert not client.is_connected()
        return [await as_langchain_tool(tool, client) for tool in listed]

    agent = with_memory(asyncio.run(made_after_disconnecting()), BOOK)

    paused = run(agent, {"messages": [("user", "Book")]}, config=THREAD)

    assert only_interrupt(paused)["tool_name"] == "book_table"


def test_a_client_with_a_handler_of_its_own_answers_instead_of_an_interrupt(run: Run) -> None:
    asked: list[str] = []

    async def handler(message: str, response_type: Any, params: Any, context: Any) -> Any:
        asked.append(message)
        return {"guests": 6}

    client: Client[Any] = Client(
        servers.process_server(servers.Counts()), elicitation_handler=handler
    )
    agent = with_memory(adapter_tools(client), BOOK)

    result = run(agent, {"messages": [("user", "Book")]}, config=THREAD)

    assert "__interrupt__" not in result
    assert asked == ["How many guests are dining?"]
    assert texts(tool_messages(result)[0]) == ["Booked a table for 6."]


def test_a_server_on_the_older_protocol_asking_mid_request_gets_a_clear_refusal(
    run: Run,
) -> None:
    server: FastMCP[None] = FastMCP("legacy")

    @server.tool
    async def confirm(ctx: Context) -> str:
        """Asks the client, in the middle of the request."""
        answer = await ctx.elicit("Sure?", response_type=bool)
        return f"answered {answer.action}"

    agent = with_memory(adapter_tools(Client(server, mode="legacy")), ("confirm", {}))

    result = run(agent, {"messages": [("user", "Go")]}, config=THREAD)

    [answer] = tool_messages(result)
    assert answer.status == "error"
    assert "over the legacy server-initiated elicitation path" in texts(answer)[0]
    assert result["messages"][-1].content == "done"


def _unanswerable() -> FastMCP[None]:
    server: FastMCP[None] = FastMCP("unanswerable")

    @server.tool
    async def summarize() -> InputRequiredResult:
        """Asks the client for a model sample."""
        message = SamplingMessage(role="user", content=TextContent(type="text", text="hi"))
        params = CreateMessageRequestParams(messages=[message], max_tokens=16)
        sample = CreateMessageRequest(method="sampling/createMessage", params=params)
        return InputRequiredResult(input_requests={"sample": sample}, request_state="s")

    @server.tool
    async def later() -> InputRequiredResult:
        """Asks only to be called again later."""
        return InputRequiredResult(request_state="still working")

    return server


@pytest.mark.parametrize(
    ("tool", "problem"),
    [
        ("summarize", r"cannot answer: sample \(sampling/createMessage\)\. graphagent.mcp puts"),
        ("later", "returned a continuation round with no input requests"),
    ],
)
def test_requests_other_than_questions_are_refused_by_name(tool: str, problem: str) -> None:
    tools = {t.name: t for t in adapter_tools(_unanswerable())}

    with pytest.raises(NotImplementedError, match=problem):
        asyncio.run(tools[tool].ainvoke({}))
