"""What an MCP tool's answer looks like: its content blocks as LangChain blocks, the structured
content as the artifact, an ``isError`` result as an error ToolMessage; and the tool itself (its
schema, description and metadata)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fastmcp import Client, FastMCP
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from mcp.types import AudioContent, CallToolResult, Tool, ToolAnnotations

from graphagent.mcp import MCPAdapter, as_langchain_tool
from graphagent.mcp.tools import normalized_schema
from tests.conftest import Run
from tests.mcp import servers
from tests.mcp.helpers import calling, tool_messages


def gallery_tools() -> dict[str, Any]:
    return {tool.name: tool for tool in asyncio.run(MCPAdapter(servers.gallery()).list_tools())}


def answer(tool: Any, args: dict[str, Any] | None = None) -> ToolMessage:
    call = {"name": tool.name, "args": args or {}, "id": "call-1", "type": "tool_call"}
    message = asyncio.run(tool.ainvoke(call))
    assert isinstance(message, ToolMessage)
    return message


def without_ids(content: Any) -> list[dict[str, Any]]:
    assert all(block["id"].startswith("lc_") for block in content)
    return [{k: v for k, v in block.items() if k != "id"} for block in content]


def test_an_image_and_text_become_an_image_block_and_a_text_block() -> None:
    message = answer(gallery_tools()["picture"])

    assert without_ids(message.content) == [
        {"type": "image", "base64": servers.PNG, "mime_type": "image/png"},
        {"type": "text", "text": "a sunset"},
    ]
    assert message.status == "success"


def test_resources_become_text_and_file_blocks_and_an_image_link_an_image_block() -> None:
    message = answer(gallery_tools()["documents"])

    assert without_ids(message.content) == [
        {"type": "text", "text": "the notes"},
        {"type": "file", "base64": "JVBERi0=", "mime_type": "application/pdf"},
        {"type": "image", "url": "https://example.com/chart.png", "mime_type": "image/png"},
    ]


def test_structured_content_is_the_artifact_and_its_text_the_content() -> None:
    message = answer(gallery_tools()["forecast"], {"city": "Oslo"})

    assert message.artifact == {"structured_content": {"city": "Oslo", "high": 21, "sky": "clear"}}
    assert [block["type"] for block in message.content] == ["text"]  # type: ignore[index]


def test_a_result_without_structured_content_has_no_artifact() -> None:
    message = answer(gallery_tools()["picture"])

    assert message.artifact is None


def test_a_tool_error_reaches_the_model_and_the_run_goes_on(run: Run) -> None:
    tools = asyncio.run(MCPAdapter(servers.calculator()).list_tools())
    agent = calling(tools, ("divide", {"a": 1, "b": 0}), ("divide", {"a": 1, "b": 2}))

    result = run(agent, {"messages": [("user", "1 / 0, then 1 / 2")]})

    failed, succeeded = tool_messages(result)
    assert failed.status == "error"
    assert "cannot divide by zero" in failed.content[0]["text"]  # type: ignore[index]
    assert succeeded.status == "success"
    assert result["messages"][-1].content == "done"


def test_audio_content_is_refused_by_name() -> None:
    server: FastMCP[None] = FastMCP("audio")

    @server.tool
    def voice() -> list[Any]:
        """A voice message."""
        return [AudioContent(type="audio", data="UklGRg==", mime_type="audio/wav")]

    [tool] = asyncio.run(MCPAdapter(server).list_tools())

    with pytest.raises(NotImplementedError, match=r"Received audio with mime type: audio/wav\."):
        answer(tool)


def test_the_tool_keeps_the_servers_name_description_and_argument_schema() -> None:
    tools = {t.name: t for t in asyncio.run(MCPAdapter(servers.calculator()).list_tools())}

    add = tools["add"]
    assert add.description == "Add two integers."
    assert add.args_schema["properties"] == {  # type: ignore[index]
        "a": {"type": "integer"},
        "b": {"type": "integer"},
    }
    assert add.metadata == {
        "mcp": {
            "tool": {"_meta": {"fastmcp": {"tags": []}}},
            "server": {"name": "calc", "version": "1.2.0"},
        }
    }


def test_annotations_and_meta_of_a_listed_tool_are_kept_under_mcp() -> None:
    listed = Tool(
        name="delete",
        input_schema={"type": "object", "properties": {}},
        annotations=ToolAnnotations(destructive_hint=True),
        _meta={"origin": "crm"},
    )

    tool = asyncio.run(as_langchain_tool(listed, Client("https://example.com/mcp")))

    # Nothing connected: the server's identity is unknown, the tool's own metadata is kept.
    assert tool.metadata == {
        "mcp": {"tool": {"annotations": {"destructive_hint": True}, "_meta": {"origin": "crm"}}}
    }


def test_a_tool_with_no_metadata_and_no_description_has_none() -> None:
    listed = Tool(name="noop", input_schema={"type": "object", "properties": {}})

    tool = asyncio.run(as_langchain_tool(listed, Client("https://example.com/mcp")))

    assert tool.metadata is None
    assert tool.description == ""


@pytest.mark.parametrize(
    "payload",
    [{"type": "object", "properties": {}}, {"type": "object"}, {"type": ["object", "null"]}],
)
def test_an_open_object_argument_stays_open_for_the_model(payload: dict[str, Any]) -> None:
    schema = {"type": "object", "properties": {"payload": payload}, "required": ["payload"]}
    listed = Tool(name="store", input_schema=schema)

    tool = asyncio.run(as_langchain_tool(listed, Client(servers.gallery())))
    parameters = convert_to_openai_tool(tool)["function"]["parameters"]

    assert parameters["properties"]["payload"]["additionalProperties"] is True
    assert parameters["properties"]["payload"]["type"] == payload["type"]
    assert parameters["required"] == ["payload"]
    assert listed.input_schema == schema  # not changed in place


@pytest.mark.parametrize(
    "constraint",
    [
        {"additionalProperties": False},
        {"additionalProperties": {"type": "string"}},
        {"unevaluatedProperties": False},
    ],
)
def test_an_object_argument_with_its_own_constraint_keeps_it(constraint: dict[str, Any]) -> None:
    payload = {"type": "object", **constraint}

    normalized = normalized_schema({"type": "object", "properties": {"payload": payload}})

    assert normalized["properties"]["payload"] == payload


def test_an_open_object_argument_reaches_the_server_whole() -> None:
    message = answer(gallery_tools()["store"], {"payload": {"b": [1, 2], "a": {"c": None}}})

    assert message.content[0]["text"] == '{"a": {"c": null}, "b": [1, 2]}'  # type: ignore[index]


def test_a_failed_result_with_no_text_says_so() -> None:
    server: FastMCP[None] = FastMCP("silent")

    @server.tool
    def fail_silently() -> Any:
        """Fails with nothing to say."""
        return CallToolResult(content=[], is_error=True)

    [tool] = asyncio.run(MCPAdapter(server).list_tools())
    message = answer(tool)

    assert message.status == "error"
    assert without_ids(message.content) == [
        {"type": "text", "text": "The MCP tool reported an error with empty content."}
    ]


def test_the_text_of_an_error_is_what_the_model_reads() -> None:
    message = answer(gallery_tools()["broken_picture"])

    assert message.status == "error"
    assert without_ids(message.content) == [{"type": "text", "text": "the camera is jammed"}]
