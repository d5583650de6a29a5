"""``PIIMiddleware``'s stream transformer: personal data rewritten on every surface of a v3 run.

``stream_events(version="v3")`` builds its projections (``run.messages``, ``run.tool_calls``,
``run.values``, the raw event log) from protocol events. The middleware rewrites what enters the
state; this transformer rewrites the events themselves, before LangGraph's built-in transformers
read them, as LangChain's does: streamed text, reasoning and tool-call arguments, the finished
content blocks, whole messages, the ``tools`` channel (a tool's input, output and error) and the
``values`` snapshots. Under ``"block"`` a match raises ``PIIDetectionError`` from the event, which
fails the run's stream.

Streamed text is held back by ``lookback`` characters per content block, so that data split
across two deltas is found before any of it is released; a block's finish event carries the whole
text, rewritten, and releases the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from langchain_core.messages import AIMessage, BaseMessage
from langgraph.stream import StreamTransformer

DEFAULT_LOOKBACK = 128
"""Characters held back per streamed block: more than any built-in detector's match needs."""

Rewrite = Callable[[str], str]
"""A text with every match replaced (raises ``PIIDetectionError`` under ``"block"``)."""

_DELTA_FIELDS = {"text-delta": "text", "reasoning-delta": "reasoning", "tool-call-delta": "args"}
_CHUNK_TYPES = frozenset({"tool_call_chunk", "server_tool_call_chunk"})
_CALL_BLOCKS = frozenset({"tool_call", "server_tool_call", "invalid_tool_call"})


class PIIStreamTransformer(StreamTransformer):
    """Rewrites the personal data one ``PIIMiddleware`` finds in a v3 run's events, in place.

    Args:
        scope: The namespace of the run stream it serves (``()`` for the root; each nested
            graph gets an instance of its own).
        rule: The middleware's ``ResolvedRedactionRule``: its ``apply(text)`` returns the
            rewritten text and the matches.
        lookback: How many characters of each streamed block are held back.
    """

    before_builtins: ClassVar[bool] = True
    required_stream_modes: ClassVar[tuple[str, ...]] = ("messages", "tools", "values")

    def __init__(
        self, scope: tuple[str, ...] = (), *, rule: Any, lookback: int = DEFAULT_LOOKBACK
    ) -> None:
        super().__init__(scope)
        self._rule = rule
        self._lookback = lookback
        self._blocks: dict[tuple[str, int], str] = {}  # held text, by (model run, block index)
        self._tools: dict[str, str] = {}  # held tool output, by tool call id

    def init(self) -> dict[str, Any]:
        """No projection of its own: it only rewrites events."""
        return {}

    def process(self, event: Any) -> bool:
        """Rewrite ``event`` in place; every event is kept."""
        method, params = event["method"], event["params"]
        if method == "messages":
            self._message_event(params)
        elif method == "tools" and isinstance(params.get("data"), dict):
            self._tool_event(params["data"])
        elif method == "values" and params.get("data") is not None:
            params["data"] = self.rewritten(params["data"])
        return True

    def finalize(self) -> None:
        self._blocks.clear()
        self._tools.clear()

    def fail(self, err: BaseException) -> None:
        self.finalize()

    # -- values of any shape ---------------------------------------------------------------

    def rewrite(self, text: str) -> str:
        """``text`` with the rule applied."""
        return self._rule.apply(text)[0] if text else text

    def rewritten(self, value: Any) -> Any:
        """``value`` with every string in it rewritten; a message becomes a rewritten copy
        (content and tool-call arguments); the same object when nothing changed."""
        if isinstance(value, str):
            return self.rewrite(value)
        if isinstance(value, BaseMessage):
            return self._message_rewritten(value)
        if isinstance(value, dict):
            items = {key: self.rewritten(item) for key, item in value.items()}
            same = all(items[key] is item for key, item in value.items())
            return value if same else items
        if isinstance(value, list | tuple):
            parts = [self.rewritten(item) for item in value]
            if all(new is old for new, old in zip(parts, value, strict=True)):
                return value
            return parts if isinstance(value, list) else tuple(parts)
        return value

    def _message_rewritten(self, message: BaseMessage) -> BaseMessage:
        update: dict[str, Any] = {}
        content = self.rewritten(message.content)
        if content is not message.content:
            update["content"] = content
        if isinstance(message, AIMessage):
            for field in ("tool_calls", "invalid_tool_calls"):
                calls = getattr(message, field)
                new = [{**c, "args": self.rewritten(c["args"])} for c in calls]
                if any(n["args"] is not c["args"] for n, c in zip(new, calls, strict=True)):
                    update[field] = new
        return message.model_copy(update=update) if update else message

    # -- the messages channel ----------------------------------------------------------------

    def _message_event(self, params: dict[str, Any]) -> None:
        data = params.get("data")
        if not isinstance(data, tuple) or len(data) != 2:
            return
        payload, metadata = data
        if isinstance(payload, BaseMessage):  # a whole message, from a model that did not stream
            params["data"] = (self._message_rewritten(payload), metadata)
            return
        if not isinstance(payload, dict):
            return
        run = str((metadata or {}).get("run_id") or "")
        kind, index = payload.get("event"), payload.get("index")
        if kind == "content-block-delta" and isinstance(index, int):
            self._delta(payload.get("delta"), (run, index))
        elif kind == "content-block-finish" and isinstance(index, int):
            self._finished_block(payload.get("content"))
            self._blocks.pop((run, index), None)
        elif kind in ("message-finish", "error"):
            for key in [key for key in self._blocks if key[0] == run]:
                del self._blocks[key]

    def _delta(self, delta: Any, key: tuple[str, int]) -> None:
        if not isinstance(delta, dict):
            return
        field = _DELTA_FIELDS.get(delta.get("type", ""))
        if field is not None and isinstance(delta.get(field), str):
            text = self._blocks.get(key, "") + delta[field]
            delta[field] = self._released(self._blocks, key, text)
            return
        fields = delta.get("fields")
        if delta.get("type") != "block-delta" or not isinstance(fields, dict):
            return
        args = fields.get("args")
        if fields.get("type") in _CHUNK_TYPES and isinstance(args, str) and args:
            # These chunks carry the arguments so far, each replacing the last.
            fields["args"] = self._released(self._blocks, key, args)

    def _released(self, held: dict[Any, str], key: Any, text: str) -> str:
        """What of ``text`` (rewritten) may stream now; the last ``lookback`` characters wait."""
        text = self.rewrite(text)
        cut = max(0, len(text) - self._lookback)
        held[key] = text[cut:]
        return text[:cut]

    def _finished_block(self, content: Any) -> None:
        """The whole block, as the model wrote it, rewritten like the streamed part."""
        if not isinstance(content, dict):
            return
        kind = content.get("type")
        if kind in ("text", "reasoning") and isinstance(content.get(kind), str):
            content[kind] = self.rewrite(content[kind])
        elif kind in _CALL_BLOCKS and content.get("args") is not None:
            content["args"] = self.rewritten(content["args"])

    # -- the tools channel -------------------------------------------------------------------

    def _tool_event(self, data: dict[str, Any]) -> None:
        kind, call_id = data.get("event"), data.get("tool_call_id")
        key = call_id if isinstance(call_id, str) else ""
        if kind == "tool-started" and "input" in data:
            data["input"] = self.rewritten(data["input"])
        elif kind == "tool-output-delta":
            delta = data.get("delta")
            if isinstance(delta, str):
                text = self._tools.get(key, "") + delta
                data["delta"] = self._released(self._tools, key, text)
            elif isinstance(delta, dict | list):
                data["delta"] = self.rewritten(delta)
        elif kind in ("tool-finished", "tool-error"):
            field = "output" if kind == "tool-finished" else "message"
            if field in data:
                data[field] = self.rewritten(data[field])
            self._tools.pop(key, None)
