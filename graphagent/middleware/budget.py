"""``BudgetMiddleware``: cap the tokens, seconds and dollars an agent spends, per run and thread.

Tokens are the ``usage_metadata`` (input + output) of every model response that passes through
the middleware's ``wrap_model_call`` layer; dollars are those tokens at the model's prices
(cache reads and writes at theirs), plus the declared cost of the tools called; seconds are
measured with an injectable monotonic clock while the agent runs: time between invocations is
not counted, nor is the stretch from the last model call before an interrupt to the first one
after the resume. Caps are checked before each model call, so the call that crosses a token or
time cap completes; a dollar cap is also checked against the most the next call could cost, so
the call that would cross it is not made, and against the cost of each batch of tool calls.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, NotRequired

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.runtime import Runtime
from langgraph.types import Command
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.cache_health import COST_KEY
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import MiddlewareError
from graphagent.middleware._budget.prices import (
    DEFAULT_PRICES,
    ModelPrice,
    call_cost,
    model_name,
    output_cap,
    price_for,
    projected_cost,
)
from graphagent.middleware._budget.records import (
    BudgetAccount,
    BudgetCaps,
    BudgetExceededError,
    BudgetLine,
    BudgetSpent,
    Spend,
    SpendRecord,
    dollars as _dollars,
)
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware.base import hook_config, running_agent
from graphagent.requests import ExtendedModelResponse, ModelRequest, ModelResponse
from graphagent.state import AgentState, OmitFromInput, PrivateStateAttr, ResponseT

__all__ = [
    "DEFAULT_PRICES",
    "BudgetAccount",
    "BudgetCaps",
    "BudgetExceededError",
    "BudgetExitBehavior",
    "BudgetLine",
    "BudgetMiddleware",
    "BudgetSpent",
    "BudgetState",
    "ModelPrice",
    "Spend",
    "SpendRecord",
]

BudgetExitBehavior = Literal["end", "error"]
Clock = Callable[[], float]
TOOL_COST = "cost"
"""The key of a tool's ``metadata`` declaring what one call of it costs, in dollars."""


class BudgetState(AgentState[ResponseT]):
    """State of :class:`BudgetMiddleware`; ``budget_spent`` is returned with the output."""

    budget_spent: NotRequired[Annotated[BudgetSpent, OmitFromInput]]
    """The spending of this run and of the whole thread (output only)."""
    # A monotonic reading is meaningless in another process, so it is never checkpointed.
    budget_clock: NotRequired[Annotated[float, UntrackedValue, PrivateStateAttr]]
    """The clock reading the current run's seconds count from (private, never checkpointed)."""


@refuse_unknown_arguments
class BudgetMiddleware(ModelCallCore[BudgetState[ResponseT], ContextT, ResponseT]):
    """Stop an agent once it has spent a token, wall-clock or dollar budget.

    Caps apply per run (one ``invoke``/``ainvoke``/``stream``) or per thread (every run on one
    checkpointer thread; without a checkpointer a thread is a single run). Before each model
    call, a used-up cap ends the run with an AIMessage accounting for the spending
    (``exit_behavior="end"``) or raises :class:`BudgetExceededError` (``"error"``). The
    spending is returned in the ``budget_spent`` output field; :meth:`account` reads it back.

    Tokens are charged for each model response that reaches the agent; a response that another
    middleware discards and replaces (say, a retried refusal) is not counted, nor is a model
    that reports no ``usage_metadata``. Dollars are charged for the same responses at their
    model's price (``prices``, then :data:`DEFAULT_PRICES`), and for each call of a tool whose
    ``metadata`` declares a ``"cost"`` in dollars.

    A dollar cap is enforced before the money is spent: a model call is not made when what it
    could cost (its input, counted at about four characters a token, at the input price, and its
    output cap at the output price) would take the spending past the cap, and a batch of tool
    calls is not run when the tools' declared costs would.

    Args:
        run_max_tokens: Tokens (input plus output) allowed per run; ``None``: no cap.
        thread_max_tokens: Tokens allowed per thread, across runs; ``None``: no cap.
        run_max_seconds: Wall-clock seconds allowed per run; ``None``: no cap.
        thread_max_seconds: Wall-clock seconds allowed per thread, counting only the time its
            runs ran; ``None``: no cap.
        run_max_cost: Dollars allowed per run; ``None``: no cap.
        thread_max_cost: Dollars allowed per thread, across runs; ``None``: no cap. At least
            one of the six caps must be set.
        prices: Your own prices per model name (``ModelPrice``, dollars per million tokens),
            looked up before the default table, by the longest name a model's name contains.
        exit_behavior: ``"end"`` ends the run with an AIMessage accounting for the spending;
            ``"error"`` raises ``BudgetExceededError``.
        clock: A function returning seconds, read to measure time (``time.monotonic`` by
            default; tests pass a fake one).

    Raises:
        MiddlewareError: No cap, a cap that is negative or not a number, an unknown
            ``exit_behavior``, a ``clock`` that is not callable, ``prices`` that are not
            ``ModelPrice`` values by name; with a dollar cap, a model call to a model of no
            known price.
    """

    state_schema = BudgetState

    def __init__(
        self,
        *,
        run_max_tokens: int | None = None,
        thread_max_tokens: int | None = None,
        run_max_seconds: float | None = None,
        thread_max_seconds: float | None = None,
        run_max_cost: float | None = None,
        thread_max_cost: float | None = None,
        prices: Mapping[str, ModelPrice] | None = None,
        exit_behavior: BudgetExitBehavior = "end",
        clock: Clock = time.monotonic,
    ) -> None:
        self.caps = BudgetCaps(
            run_max_tokens=_token_cap("run_max_tokens", run_max_tokens),
            thread_max_tokens=_token_cap("thread_max_tokens", thread_max_tokens),
            run_max_seconds=_seconds_cap("run_max_seconds", run_max_seconds),
            thread_max_seconds=_seconds_cap("thread_max_seconds", thread_max_seconds),
            run_max_cost=_cost_cap("run_max_cost", run_max_cost),
            thread_max_cost=_cost_cap("thread_max_cost", thread_max_cost),
        )
        if not self.caps.lines(Spend(), Spend()):
            raise MiddlewareError(
                "BudgetMiddleware needs at least one cap; pass run_max_tokens, "
                "thread_max_tokens, run_max_seconds, thread_max_seconds, run_max_cost and/or "
                "thread_max_cost."
            )
        if exit_behavior not in ("end", "error"):
            raise MiddlewareError(
                f"BudgetMiddleware(exit_behavior={exit_behavior!r}) is not supported; use 'end' "
                "(stop with an AIMessage accounting for the spending) or 'error' (raise "
                "BudgetExceededError). There is no 'continue': model calls are what spend it."
            )
        if not callable(clock):
            raise MiddlewareError(
                f"BudgetMiddleware(clock=...) got {clock!r}, which is not callable; pass a "
                "function returning seconds, such as time.monotonic (the default)."
            )
        self.prices = _checked_prices(prices)
        self.exit_behavior = exit_behavior
        self.clock = clock

    def account(self, state: Mapping[str, Any]) -> BudgetAccount:
        """The account of a state or an agent's output: spending in each scope against the caps."""
        spent = state.get("budget_spent") or {}
        run, thread = Spend.from_record(spent.get("run")), Spend.from_record(spent.get("thread"))
        return BudgetAccount(run=run, thread=thread, lines=self.caps.lines(run, thread))

    # Node hooks: they do no I/O, so async runs call them as they are.

    def before_agent(self, state: BudgetState[Any], runtime: Runtime[Any]) -> dict[str, Any]:
        """Start this run's account at zero; the thread's carries over."""
        thread = self.account(state).thread
        return {"budget_spent": _spent(Spend(), thread), "budget_clock": self.clock()}

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: BudgetState[Any], runtime: Runtime[Any]) -> dict[str, Any]:
        """Bring the clock up to date; end or raise if a cap is used up."""
        update, account = self._charge(state, Spend())
        if not account.exceeded:
            return update
        return {**update, **self._stop(account, "Stopped before the next model call.")}

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: BudgetState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Charge the declared cost of the tools the model just called; when it would cross a
        dollar cap, end (or raise) before they run."""
        batch = _tool_costs(state)
        if not batch:
            return None
        update, account = self._charge(state, Spend(cost=batch))
        over = [
            line for line in account.exceeded if line.measure == "cost" and line.spent > line.cap
        ]
        if not over:
            return update
        before = self.account(state)
        why = f"Stopped before running tools that cost {_dollars(batch)} (counted as spent):"
        message = self._stop(BudgetAccount(before.run, before.thread, account.lines), why)
        return {**message, "messages": [*_answered(state), *message["messages"]]}

    # Model-call layer: refuses a call that could cross a dollar cap; charges what it reported.

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[Any], handler: Callable[..., Any]
    ) -> Any:
        """Call the model unless it could cross a dollar cap, then charge what it reported."""
        price = self._price(request)
        refused = self._refused(request, price)
        if refused is not None:
            return refused
        return self._charged(request, await mode.call(handler, request), price)

    def _price(self, request: ModelRequest[Any]) -> ModelPrice | None:
        price = price_for(model_name(request.model), self.prices)
        if price is None and (
            self.caps.run_max_cost is not None or self.caps.thread_max_cost is not None
        ):
            raise MiddlewareError(
                f"{self.name}: no price for the model {model_name(request.model)!r} "
                f"({type(request.model).__name__}), so its dollar cap cannot be kept; pass "
                "BudgetMiddleware(prices={name: ModelPrice(input=..., output=...)})."
            )
        return price

    def _refused(
        self, request: ModelRequest[Any], price: ModelPrice | None
    ) -> ModelResponse | None:
        if price is None:
            return None
        messages = [
            *([request.system_message] if request.system_message else []),
            *request.messages,
        ]
        cap = output_cap(request.model, request.model_settings)
        most = projected_cost(price, messages, request.tools, cap)
        account = self.account(request.state)
        run, thread = account.run + Spend(cost=most), account.thread + Spend(cost=most)
        lines = self.caps.lines(run, thread)
        if not any(line.measure == "cost" and line.spent > line.cap for line in lines):
            return None
        why = (
            f"Stopped before a model call that could cost up to {_dollars(most)} "
            "(counted as spent):"
        )
        stop = self._stop(BudgetAccount(account.run, account.thread, lines), why)
        return ModelResponse(result=stop["messages"])

    def _stop(self, account: BudgetAccount, why: str) -> dict[str, Any]:
        if self.exit_behavior == "error":
            raise BudgetExceededError(account)
        return {"messages": [AIMessage(f"{why} {account}")], "jump_to": "end"}

    def _charged(
        self, request: ModelRequest[Any], response: ModelResponse, price: ModelPrice | None
    ) -> ExtendedModelResponse:
        update, _ = self._charge(request.state, _usage(response, price, self.prices))
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def _charge(
        self, state: Mapping[str, Any], spend: Spend
    ) -> tuple[dict[str, Any], BudgetAccount]:
        """Add ``spend`` and the time since the last reading to both scopes."""
        now = self.clock()
        last = state.get("budget_clock")
        elapsed = Spend(seconds=max(0.0, now - last)) if last is not None else Spend()
        before = self.account(state)
        run, thread = before.run + spend + elapsed, before.thread + spend + elapsed
        account = BudgetAccount(run, thread, self.caps.lines(run, thread))
        return {"budget_spent": _spent(run, thread), "budget_clock": now}, account


def _usage(
    response: ModelResponse, price: ModelPrice | None, prices: Mapping[str, ModelPrice]
) -> Spend:
    total = Spend(model_calls=1)
    for message in response.result:
        usage = message.usage_metadata if isinstance(message, AIMessage) else None
        if usage and isinstance(message, AIMessage):
            # A fallback or router may have called another model than the request's.
            called = price_for(message.response_metadata.get("model_name"), prices) or price
            cost = call_cost(message, called) if called is not None else 0.0
            if called is not None:
                message.response_metadata[COST_KEY] = cost  # for the tracing span
            tokens = Spend(input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"])
            total += tokens + Spend(cost=cost)
    return total


def _tool_costs(state: Mapping[str, Any]) -> float:
    """The declared cost of the tool calls of the last model reply."""
    messages = state.get("messages") or []
    last = messages[-1] if messages else None
    agent = running_agent()
    if not isinstance(last, AIMessage) or not last.tool_calls or agent is None:
        return 0.0
    costs = {tool.name: (tool.metadata or {}).get(TOOL_COST) for tool in agent.tools}
    total = 0.0
    for call in last.tool_calls:
        cost = costs.get(call["name"])
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost > 0:
            total += float(cost)
    return total


def _answered(state: Mapping[str, Any]) -> list[Any]:
    """An answer to each tool call of the last reply, so the thread stays well formed."""

    last = state["messages"][-1]
    return [
        ToolMessage(
            "Not run: the budget does not cover this batch of tool calls.",
            tool_call_id=call["id"],
            name=call["name"],
            status="error",
        )
        for call in last.tool_calls
    ]


def _spent(run: Spend, thread: Spend) -> BudgetSpent:
    return BudgetSpent(run=run.record(), thread=thread.record())


def _token_cap(parameter: str, value: int | None) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MiddlewareError(
            f"BudgetMiddleware({parameter}={value!r}) must be a whole number of tokens (input "
            "plus output), 0 or more; pass e.g. 50_000, or leave it out for no cap."
        )
    return value


def _seconds_cap(parameter: str, value: float | None) -> float | None:
    return _finite_cap(parameter, value, "seconds", "120")


def _cost_cap(parameter: str, value: float | None) -> float | None:
    return _finite_cap(parameter, value, "dollars", "0.50")


def _finite_cap(parameter: str, value: float | None, unit: str, example: str) -> float | None:
    if value is None:
        return None
    valid = isinstance(value, int | float) and not isinstance(value, bool)
    if not valid or not math.isfinite(value) or value < 0:
        raise MiddlewareError(
            f"BudgetMiddleware({parameter}={value!r}) must be a finite number of {unit}, 0 or "
            f"more; pass e.g. {example}, or leave it out for no cap."
        )
    return float(value)


def _checked_prices(prices: Mapping[str, ModelPrice] | None) -> dict[str, ModelPrice]:
    if prices is None:
        return {}
    if not isinstance(prices, Mapping) or not all(
        isinstance(k, str) and isinstance(v, ModelPrice) for k, v in prices.items()
    ):
        raise MiddlewareError(
            f"BudgetMiddleware(prices={prices!r}) must map model names to ModelPrice values; "
            'pass e.g. {"my-model": ModelPrice(input=1.0, output=4.0)}.'
        )
    return dict(prices)
