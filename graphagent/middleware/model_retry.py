"""``ModelRetryMiddleware``: call the model again, with a growing wait, when the call fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.tools import BaseTool
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware._kit.retry import (
    Exhausted,
    OnFailure,
    RetryOn,
    RetryOptions,
    call_with_retries,
    failure_text,
    retry_by_default,
    retry_policy,
)
from graphagent.requests import ModelRequest, ModelResponse
from graphagent.state import AgentState, ResponseT

__all__ = ["ModelRetryMiddleware"]


@refuse_unknown_arguments
class ModelRetryMiddleware(RetryOptions, ModelCallCore[AgentState[Any], ContextT, ResponseT]):
    """Retry a failing model call with exponential backoff.

    The call is tried up to ``1 + max_retries`` times. Before retry ``n`` (counting from 0) it
    waits ``initial_delay * backoff_factor ** n`` seconds, at most ``max_delay``, varied by up to
    ±25% when ``jitter`` is on. Errors ``retry_on`` rejects propagate at once; LangGraph
    control-flow signals (interrupts) always pass through untouched.

    Args:
        max_retries: Retries after the first attempt; 0 disables retrying.
        retry_on: Which errors are retried: a tuple of exception classes, or a function taking
            the exception and returning True to retry. The default retries every exception
            except provider errors marked as not retryable.
        on_failure: What happens when every attempt failed: ``"continue"`` ends the call with
            an ``AIMessage`` describing the failure, so the run goes on; ``"error"`` re-raises
            the last error; a function ``f(exc) -> str`` writes the ``AIMessage`` text.
        backoff_factor: Each wait is this many times the previous one; 0 keeps every wait at
            ``initial_delay``.
        initial_delay: Seconds before the first retry; 0 retries at once.
        max_delay: The longest wait, in seconds (``math.inf`` for no cap).
        jitter: Vary each wait by up to ±25%, so clients that failed together do not retry
            together.

    Raises:
        MiddlewareError: An option of the wrong type or out of range.
    """

    def __init__(
        self,
        *,
        max_retries: int = 2,
        retry_on: RetryOn = retry_by_default,
        on_failure: OnFailure = "continue",
        backoff_factor: float = 2.0,
        initial_delay: float = 1.0,
        max_delay: float = 60.0,
        jitter: bool = True,
    ) -> None:
        self._policy = retry_policy(
            type(self).__name__,
            max_retries=max_retries,
            retry_on=retry_on,
            on_failure=on_failure,
            backoff_factor=backoff_factor,
            initial_delay=initial_delay,
            max_delay=max_delay,
            jitter=jitter,
        )
        self.tools: list[BaseTool] = []  # a list of its own, as LangChain's has: it adds no tools

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[ContextT], handler: Callable[..., Any]
    ) -> ModelResponse:
        """Call ``handler`` until it answers or the retries run out."""
        return self._settle(await call_with_retries(mode, self._policy, lambda: handler(request)))

    def _settle(self, outcome: ModelResponse | Exhausted) -> ModelResponse:
        if not isinstance(outcome, Exhausted):
            return outcome
        default = f"Model call failed after {outcome.describe()}"
        return ModelResponse(
            result=[AIMessage(content=failure_text(self._policy, outcome, default))]
        )
