"""``BudgetMiddleware``: cap the tokens and wall-clock seconds an agent spends, per run and thread.

Tokens are the ``usage_metadata`` (input + output) of every model response that passes through
the middleware's ``wrap_model_call`` layer; seconds are measured with an injectable monotonic
clock while the agent runs: time between invocations is not counted, nor is the stretch from the
last model call before an interrupt to the first one after the resume. Caps are checked before
each model call, so the call that crosses a cap completes.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AIMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.runtime import Runtime
from langgraph.types import Command
from langgraph.typing import ContextT

from graphagent._core.bridge import Mode
from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import GraphAgentError, MiddlewareError
from graphagent.middleware._kit.cores import ModelCallCore
from graphagent.middleware.base import hook_config
from graphagent.requests import ExtendedModelResponse, ModelRequest, ModelResponse
from graphagent.state import AgentState, OmitFromInput, PrivateStateAttr, ResponseT

__all__ = [
    "BudgetAccount",
    "BudgetCaps",
    "BudgetExceededError",
    "BudgetExitBehavior",
    "BudgetLine",
    "BudgetMiddleware",
    "BudgetSpent",
    "BudgetState",
    "Spend",
    "SpendRecord",
]

BudgetExitBehavior = Literal["end", "error"]
Scope = Literal["run", "thread"]
Measure = Literal["tokens", "seconds"]
Clock = Callable[[], float]


class SpendRecord(TypedDict):
    """One scope's spending, as stored in the state (plain data, so checkpointers keep it)."""

    input_tokens: int
    output_tokens: int
    tokens: int
    seconds: float
    model_calls: int


class BudgetSpent(TypedDict):
    """The ``budget_spent`` state field: this run's spending and the whole thread's."""

    run: SpendRecord
    thread: SpendRecord


class BudgetState(AgentState[ResponseT]):
    """State of :class:`BudgetMiddleware`; ``budget_spent`` is returned with the output."""

    budget_spent: NotRequired[Annotated[BudgetSpent, OmitFromInput]]
    """The spending of this run and of the whole thread (output only)."""
    # A monotonic reading is meaningless in another process, so it is never checkpointed.
    budget_clock: NotRequired[Annotated[float, UntrackedValue, PrivateStateAttr]]
    """The clock reading the current run's seconds count from (private, never checkpointed)."""


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class Spend:
    """Tokens, seconds and model calls spent in one scope (a run or a thread)."""

    input_tokens: int = 0
    """Input tokens, as the model responses' ``usage_metadata`` report them."""
    output_tokens: int = 0
    """Output tokens, as the model responses' ``usage_metadata`` report them."""
    seconds: float = 0.0
    """Wall-clock seconds the agent ran (not the time between invocations)."""
    model_calls: int = 0
    """Model responses that reached the agent."""

    @property
    def tokens(self) -> int:
        """Input plus output tokens."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            seconds=self.seconds + other.seconds,
            model_calls=self.model_calls + other.model_calls,
        )

    def __str__(self) -> str:
        calls = "1 model call" if self.model_calls == 1 else f"{self.model_calls:,} model calls"
        return (
            f"{self.tokens:,} tokens ({self.input_tokens:,} input + {self.output_tokens:,} "
            f"output) in {calls} over {_seconds(self.seconds)}"
        )

    def record(self) -> SpendRecord:
        """This spending as plain state data."""
        return SpendRecord(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            tokens=self.tokens,
            seconds=self.seconds,
            model_calls=self.model_calls,
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any] | None) -> Spend:
        """Read a :class:`SpendRecord` back; a missing record is nothing spent."""
        if not record:
            return cls()
        return cls(
            input_tokens=record.get("input_tokens", 0),
            output_tokens=record.get("output_tokens", 0),
            seconds=record.get("seconds", 0.0),
            model_calls=record.get("model_calls", 0),
        )


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class BudgetLine:
    """One cap and what has been spent against it."""

    scope: Scope
    """``"run"`` or ``"thread"``."""
    measure: Measure
    """``"tokens"`` or ``"seconds"``."""
    spent: float
    """What has been spent in the scope."""
    cap: float
    """The cap the middleware was given."""

    @property
    def exceeded(self) -> bool:
        """Nothing is left: the next model call would start beyond the cap."""
        return self.spent >= self.cap

    def __str__(self) -> str:
        show = _seconds if self.measure == "seconds" else _tokens
        return f"{self.scope} {self.measure}: {show(self.spent)} spent, cap {show(self.cap)}"


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class BudgetAccount:
    """What was spent in this run and this thread, against every cap."""

    run: Spend
    """The current run's spending."""
    thread: Spend
    """The whole thread's spending, this run included."""
    lines: tuple[BudgetLine, ...]
    """One line per cap that is set."""

    @property
    def exceeded(self) -> tuple[BudgetLine, ...]:
        """The caps that are used up."""
        return tuple(line for line in self.lines if line.exceeded)

    def __str__(self) -> str:
        over = self.exceeded
        head = "Budget exceeded: " if over else "Within budget: "
        return (
            head
            + "; ".join(map(str, over or self.lines))
            + f". This run: {self.run}. This thread: {self.thread}."
        )


class BudgetExceededError(GraphAgentError):
    """A cap of :class:`BudgetMiddleware` (with ``exit_behavior="error"``) is used up.

    Args:
        account: The spending against every cap when the run stopped (also an attribute).
    """

    def __init__(self, account: BudgetAccount) -> None:
        self.account = account
        super().__init__(str(account))


@dataclass(frozen=True, slots=True)
class BudgetCaps:
    """The caps of one :class:`BudgetMiddleware`; ``None`` is no cap."""

    run_max_tokens: int | None
    thread_max_tokens: int | None
    run_max_seconds: float | None
    thread_max_seconds: float | None

    def lines(self, run: Spend, thread: Spend) -> tuple[BudgetLine, ...]:
        """One line per cap that is set, in the order run/thread tokens, run/thread seconds."""
        candidates: list[tuple[Scope, Measure, float, float | None]] = [
            ("run", "tokens", run.tokens, self.run_max_tokens),
            ("thread", "tokens", thread.tokens, self.thread_max_tokens),
            ("run", "seconds", run.seconds, self.run_max_seconds),
            ("thread", "seconds", thread.seconds, self.thread_max_seconds),
        ]
        return tuple(
            BudgetLine(s, m, spent, cap) for s, m, spent, cap in candidates if cap is not None
        )


@refuse_unknown_arguments
class BudgetMiddleware(ModelCallCore[BudgetState[ResponseT], ContextT, ResponseT]):
    """Stop an agent once it has spent a token or wall-clock budget.

    Caps apply per run (one ``invoke``/``ainvoke``/``stream``) or per thread (every run on one
    checkpointer thread; without a checkpointer a thread is a single run). Before each model
    call, a used-up cap ends the run with an AIMessage accounting for the spending
    (``exit_behavior="end"``) or raises :class:`BudgetExceededError` (``"error"``). The
    spending is returned in the ``budget_spent`` output field; :meth:`account` reads it back.

    Tokens are charged for each model response that reaches the agent; a response that another
    middleware discards and replaces (say, a retried refusal) is not counted, nor is a model
    that reports no ``usage_metadata``.

    Args:
        run_max_tokens: Tokens (input plus output) allowed per run; ``None``: no cap.
        thread_max_tokens: Tokens allowed per thread, across runs; ``None``: no cap.
        run_max_seconds: Wall-clock seconds allowed per run; ``None``: no cap.
        thread_max_seconds: Wall-clock seconds allowed per thread, counting only the time its
            runs ran; ``None``: no cap. At least one of the four caps must be set.
        exit_behavior: ``"end"`` ends the run with an AIMessage accounting for the spending;
            ``"error"`` raises ``BudgetExceededError``.
        clock: A function returning seconds, read to measure time (``time.monotonic`` by
            default; tests pass a fake one).

    Raises:
        MiddlewareError: No cap, a cap that is negative or not a number, an unknown
            ``exit_behavior``, or a ``clock`` that is not callable.
    """

    state_schema = BudgetState

    def __init__(
        self,
        *,
        run_max_tokens: int | None = None,
        thread_max_tokens: int | None = None,
        run_max_seconds: float | None = None,
        thread_max_seconds: float | None = None,
        exit_behavior: BudgetExitBehavior = "end",
        clock: Clock = time.monotonic,
    ) -> None:
        self.caps = BudgetCaps(
            run_max_tokens=_token_cap("run_max_tokens", run_max_tokens),
            thread_max_tokens=_token_cap("thread_max_tokens", thread_max_tokens),
            run_max_seconds=_seconds_cap("run_max_seconds", run_max_seconds),
            thread_max_seconds=_seconds_cap("thread_max_seconds", thread_max_seconds),
        )
        if not self.caps.lines(Spend(), Spend()):
            raise MiddlewareError(
                "BudgetMiddleware needs at least one cap; pass run_max_tokens, "
                "thread_max_tokens, run_max_seconds and/or thread_max_seconds."
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
        if self.exit_behavior == "error":
            raise BudgetExceededError(account)
        message = AIMessage(f"Stopped before the next model call. {account}")
        return {**update, "messages": [message], "jump_to": "end"}

    # Model-call layer: charges the tokens each model response reports.

    async def _wrap_model_call(
        self, mode: Mode, request: ModelRequest[Any], handler: Callable[..., Any]
    ) -> ExtendedModelResponse:
        """Call the model, then charge the tokens it reported."""
        return self._charged(request, await mode.call(handler, request))

    def _charged(
        self, request: ModelRequest[Any], response: ModelResponse
    ) -> ExtendedModelResponse:
        update, _ = self._charge(request.state, _usage(response))
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


def _usage(response: ModelResponse) -> Spend:
    total = Spend(model_calls=1)
    for message in response.result:
        usage = message.usage_metadata if isinstance(message, AIMessage) else None
        if usage:
            total += Spend(input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"])
    return total


def _spent(run: Spend, thread: Spend) -> BudgetSpent:
    return BudgetSpent(run=run.record(), thread=thread.record())


def _tokens(value: float) -> str:
    return f"{int(value):,}"


def _seconds(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") + " s"


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
    if value is None:
        return None
    valid = isinstance(value, int | float) and not isinstance(value, bool)
    if not valid or not math.isfinite(value) or value < 0:
        raise MiddlewareError(
            f"BudgetMiddleware({parameter}={value!r}) must be a finite number of seconds, 0 or "
            "more; pass e.g. 120, or leave it out for no cap."
        )
    return float(value)
