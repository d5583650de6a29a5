"""An MCP tool result as what a ``ToolMessage`` carries: LangChain content blocks for the model,
and the structured content as the artifact.

Each MCP content block becomes the LangChain block of the same kind, as
``langchain-mcp-adapters`` and LangChain's ``langchain.mcp`` make them, so a model sees an MCP
tool's result in the same shape whichever of the three loaded the tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeAlias, TypedDict, cast

from langchain_core.messages.content import (
    FileContentBlock,
    ImageContentBlock,
    TextContentBlock,
    create_file_block,
    create_image_block,
    create_text_block,
)
from langchain_core.tools import ToolException
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from graphagent.mcp._servers import ERROR_TEXT_LIMIT, cut

Block: TypeAlias = TextContentBlock | ImageContentBlock | FileContentBlock
"""The LangChain content blocks an MCP tool result becomes."""


class MCPToolArtifact(TypedDict):
    """The artifact of the ``ToolMessage`` answering a call to an MCP tool: the parts of the MCP
    result that are data for code, not text for the model.

    Attributes:
        structured_content: The result's ``structuredContent``, as the server sent it.
    """

    structured_content: Any


class ServerCallResult(Protocol):
    """What is read from a result: FastMCP's ``CallServerCallResult`` and the MCP SDK's both fit."""

    content: list[ContentBlock]
    structured_content: dict[str, Any] | None
    is_error: bool


class ToolFailed(ToolException):
    """A call that the model should read as failed (the tool reported ``isError``, or its server
    could not be reached): ``blocks`` become the content of a ``ToolMessage(status="error")``."""

    def __init__(self, message: str, blocks: list[Block] | None = None) -> None:
        super().__init__(message)
        self.blocks: list[Block] = blocks if blocks else [create_text_block(text=message)]


def failed_call_content(error: ToolException) -> Sequence[str | dict[str, Any]]:
    """The tools' ``handle_tool_error``: the content of the error ``ToolMessage``. Any other
    ``ToolException`` (raised by a layer of user code) keeps propagating."""
    if isinstance(error, ToolFailed):
        return cast("list[dict[str, Any]]", error.blocks)
    raise error


def split(result: ServerCallResult) -> tuple[list[Block], MCPToolArtifact | None]:
    """The content blocks and the artifact of a result; a result with ``isError`` set raises
    :class:`ToolFailed` carrying its blocks."""
    blocks = [convert(block) for block in result.content]
    if result.is_error:
        blocks = [_cut(block) for block in blocks if not _blank(block)]
        text = _error_text(blocks)
        if not any(block["type"] == "text" for block in blocks):
            blocks.insert(0, create_text_block(text=text))
        raise ToolFailed(text, blocks)
    if result.structured_content is None:
        return blocks, None
    return blocks, MCPToolArtifact(structured_content=result.structured_content)


def _blank(block: Block) -> bool:
    return block["type"] == "text" and not block["text"].strip()


def _cut(block: Block) -> Block:
    """A text block of an error cut to :data:`ERROR_TEXT_LIMIT` characters, with a marker."""
    if block["type"] != "text" or len(block["text"]) <= ERROR_TEXT_LIMIT:
        return block
    return create_text_block(text=cut(block["text"], ERROR_TEXT_LIMIT))


def _error_text(blocks: list[Block]) -> str:
    """The error's text: the text blocks, else a count (never an image's base64 payload)."""
    texts = [block["text"] for block in blocks if block["type"] == "text"]
    if texts:
        return "\n".join(texts)
    if blocks:
        return (
            "The MCP tool reported an error with no text content "
            f"({len(blocks)} non-text content block(s))."
        )
    return "The MCP tool reported an error with empty content."


def convert(block: ContentBlock) -> Block:
    """One MCP content block as the LangChain block of the same kind."""
    if isinstance(block, TextContent):
        return create_text_block(text=block.text)
    if isinstance(block, ImageContent):
        return create_image_block(base64=block.data, mime_type=block.mime_type)
    if isinstance(block, ResourceLink):
        return _by_mime_type(block.mime_type, url=str(block.uri))
    if isinstance(block, EmbeddedResource):
        return _embedded(block.resource)
    if isinstance(block, AudioContent):
        raise NotImplementedError(
            "Converting MCP audio content to a LangChain content block is not yet supported. "
            f"Received audio with mime type: {block.mime_type}. A server can send it as an "
            "embedded resource (a blob), which becomes a file block."
        )
    raise ValueError(  # an `mcp` newer than this module
        f"Unknown MCP content type: {type(block).__name__}; the installed `mcp` package may be "
        "newer than graphagent.mcp supports."
    )


def _embedded(resource: TextResourceContents | BlobResourceContents) -> Block:
    if isinstance(resource, TextResourceContents):
        return create_text_block(text=resource.text)
    if isinstance(resource, BlobResourceContents):
        return _by_mime_type(resource.mime_type, base64=resource.blob)
    raise ValueError(  # an `mcp` newer than this module
        f"Unknown embedded resource type: {type(resource).__name__}; the installed `mcp` "
        "package may be newer than graphagent.mcp supports."
    )


def _by_mime_type(mime_type: str | None, **source: str) -> Block:
    """An image block for an image, a file block for anything else."""
    mime = mime_type or None
    if mime and mime.startswith("image/"):
        return create_image_block(mime_type=mime, **source)
    return create_file_block(mime_type=mime, **source)
