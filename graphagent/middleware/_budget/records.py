"""The records of ``BudgetMiddleware``: what was spent, in each scope, against each cap."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from graphagent._core.options import refuse_unknown_arguments
from graphagent.errors import GraphAgentError

Scope = Literal["run", "thread"]
Measure = Literal["tokens", "seconds", "cost"]


class SpendRecord(TypedDict):
    """One scope's spending, as stored in the state (plain data, so checkpointers keep it)."""

    input_tokens: int
    output_tokens: int
    tokens: int
    seconds: float
    model_calls: int
    cost: NotRequired[float]
    """Dollars, at the middleware's prices (absent in states saved before costs were kept)."""


class BudgetSpent(TypedDict):
    """The ``budget_spent`` state field: this run's spending and the whole thread's."""

    run: SpendRecord
    thread: SpendRecord


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
    cost: float = 0.0
    """Dollars spent on model calls (at the middleware's prices) and on tools that declare a
    cost."""

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
            cost=self.cost + other.cost,
        )

    def __str__(self) -> str:
        calls = "1 model call" if self.model_calls == 1 else f"{self.model_calls:,} model calls"
        return (
            f"{self.tokens:,} tokens ({self.input_tokens:,} input + {self.output_tokens:,} "
            f"output) in {calls} over {_seconds(self.seconds)}"
            + (f", {dollars(self.cost)}" if self.cost else "")
        )

    def record(self) -> SpendRecord:
        """This spending as plain state data."""
        return SpendRecord(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            tokens=self.tokens,
            seconds=self.seconds,
            model_calls=self.model_calls,
            cost=self.cost,
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
            cost=record.get("cost", 0.0),
        )


@refuse_unknown_arguments
@dataclass(frozen=True, slots=True)
class BudgetLine:
    """One cap and what has been spent against it."""

    scope: Scope
    """``"run"`` or ``"thread"``."""
    measure: Measure
    """``"tokens"``, ``"seconds"`` or ``"cost"`` (dollars)."""
    spent: float
    """What has been spent in the scope."""
    cap: float
    """The cap the middleware was given."""

    @property
    def exceeded(self) -> bool:
        """Nothing is left: the next model call would start beyond the cap."""
        return self.spent >= self.cap

    def __str__(self) -> str:
        show = {"seconds": _seconds, "cost": dollars}.get(self.measure, _tokens)
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
    run_max_cost: float | None = None
    thread_max_cost: float | None = None

    def lines(self, run: Spend, thread: Spend) -> tuple[BudgetLine, ...]:
        """One line per cap that is set, in the order run/thread tokens, seconds, cost."""
        candidates: list[tuple[Scope, Measure, float, float | None]] = [
            ("run", "tokens", run.tokens, self.run_max_tokens),
            ("thread", "tokens", thread.tokens, self.thread_max_tokens),
            ("run", "seconds", run.seconds, self.run_max_seconds),
            ("thread", "seconds", thread.seconds, self.thread_max_seconds),
            ("run", "cost", run.cost, self.run_max_cost),
            ("thread", "cost", thread.cost, self.thread_max_cost),
        ]
        return tuple(
            BudgetLine(s, m, spent, cap) for s, m, spent, cap in candidates if cap is not None
        )


def _tokens(value: float) -> str:
    return f"{int(value):,}"


def _seconds(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") + " s"


def dollars(value: float) -> str:
    return f"${value:,.4f}".rstrip("0").rstrip(".") if value else "$0"
