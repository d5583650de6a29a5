"""The parts of ``LLMToolSelectorMiddleware``: the selection model's question and how its answer
is read (``selection``). The middleware itself is in ``graphagent.middleware.tool_selection``."""
