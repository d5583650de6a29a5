"""How a long thread is stored: one conversation of many turns on SQLite, side by side.

Each variant holds one thread of up to 500 user turns. A turn is a question, two tool calls in
turn (each answered with about 800 characters) and an answer: six messages. Three middleware
with no-op hooks run around it, as in the rest of the bench. Measured on the same thread as it
grows: the SQLite file after 10, 100 and 500 turns, as a multiple of the floor (the thread's
messages serialised once, by the checkpointer's own serializer); the time of the last turns over
the first ones; and the time of ``get_state`` on the thread after 10 turns and at its longest.
Times are the CPU time of the process (its threads included: the saver writes in one), so that
other work on the machine does not count; what a run waits for (a disk flush) is not counted
either, and that is the same at every turn.

The variants that store the whole history in every checkpoint stop at 100 turns: at 500 they
would write some 10 GiB.
"""

from __future__ import annotations

import gc
import sqlite3
import statistics
import tempfile
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from bench.timing import Samples
from bench.workloads import make_middleware

TURNS = (10, 100, 500)
"""The thread lengths at which the file is measured."""
FULL_LAYOUT_TURNS = 100
"""The longest thread of a variant storing the whole history in each checkpoint."""
MIDDLEWARE = 3
CALLS_PER_TURN = 2
RESULT_CHARS = 800
TIMED_TURNS = 10
"""The first and the last turns compared are the medians of this many turns."""
GET_STATE_ROUNDS = 15
QUICK_TURNS = 12
"""The thread of a smoke run (``--quick``)."""
SWEEP = (25, 50, 100, 200, 400)
"""The snapshot frequencies ``--only snapshots`` compares."""


# -- the workload -----------------------------------------------------------------------------


class TurnModel(BaseChatModel):
    """Zero-latency model: in each turn, two ``lookup`` calls one after the other, then text.

    It reads only the messages since the last question, so it is the same work at every turn
    whatever the thread holds; tool call ids are unique in the thread (they carry the turn)."""

    @property
    def _llm_type(self) -> str:
        return "bench-turns"

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        turn = sum(isinstance(m, HumanMessage) for m in messages)
        since = 0
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                break
            since += isinstance(message, ToolMessage)
        if since < CALLS_PER_TURN:
            call_id, query = f"c{turn}_{since}", f"t{turn}q{since}"
            call = {"name": "lookup", "args": {"query": query}, "id": call_id}
            message = AIMessage(content="", tool_calls=[{**call, "type": "tool_call"}])
        else:
            message = AIMessage(content=f"answer {turn}")
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)


def _lookup(query: str) -> str:
    head = f"result for {query}: "
    return head + "x" * (RESULT_CHARS - len(head))


def make_tool() -> BaseTool:
    return StructuredTool.from_function(func=_lookup, name="lookup", description="Look it up.")


def question(turn: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"Question {turn}: look it up twice, please.")]}


# -- the variants -----------------------------------------------------------------------------

Build = Callable[[Any], Any]
"""``build(checkpointer)``: the variant's agent."""


@dataclass(frozen=True)
class Variant:
    name: str
    note: str
    build: Build
    max_turns: int = max(TURNS)
    long_history: bool = False
    """Whether ``get_state_history`` is timed at the thread's longest too (the variants that
    finish it: graphagent's delta layouts)."""


def graphagent_variants(frequencies: Sequence[int] = ()) -> list[Variant]:
    """graphagent's default, fused and full-history variants; or, given ``frequencies``, the
    default with a snapshot of the messages every that many updates, one variant each."""
    from graphagent import create_agent
    from graphagent.middleware import AgentMiddleware
    from graphagent.state import FullHistoryState

    def maker(*, fused: bool = False, state_schema: Any = None) -> Build:
        def build(checkpointer: Any) -> Any:
            return create_agent(
                TurnModel(),
                [make_tool()],
                middleware=make_middleware(AgentMiddleware, MIDDLEWARE),
                checkpointer=checkpointer,
                fuse_hooks=fused,
                state_schema=state_schema,
            )

        return build

    if frequencies:
        return [
            Variant(f"every {n}", f"snapshot every {n} updates", maker(state_schema=every(n)))
            for n in frequencies
        ]
    return [
        Variant(
            "default", "graphagent, messages as deltas (the default)", maker(), long_history=True
        ),
        Variant("fused", "graphagent, fuse_hooks=True", maker(fused=True), long_history=True),
        Variant(
            "full",
            "graphagent, state_schema=FullHistoryState",
            maker(state_schema=FullHistoryState),
            FULL_LAYOUT_TURNS,
        ),
    ]


def every(frequency: int) -> type[Any]:
    """``AgentState`` with a snapshot of the messages every ``frequency`` updates."""
    from typing import Annotated, Required

    from langchain_core.messages import AnyMessage
    from langgraph.channels.delta import DeltaChannel

    from graphagent.state import AgentState, add_message_batches

    channel = DeltaChannel(add_message_batches, snapshot_frequency=frequency)
    annotation = Required[Annotated[list[AnyMessage], channel]]
    return types.new_class(
        f"Every{frequency}",
        (AgentState,),
        exec_body=lambda namespace: namespace.update({"__annotations__": {"messages": annotation}}),
    )


def langchain_variants() -> list[Variant]:
    # Only the bench venv has langchain.
    from langchain.agents import create_agent
    from langchain.agents.middleware import AgentMiddleware

    from bench.delta_state import DeltaState

    def maker(state_schema: Any = None) -> Build:
        def build(checkpointer: Any) -> Any:
            return create_agent(
                TurnModel(),
                [make_tool()],
                middleware=make_middleware(AgentMiddleware, MIDDLEWARE),
                checkpointer=checkpointer,
                state_schema=state_schema,
            )

        return build

    return [
        Variant("langchain", "LangChain create_agent, default state", maker(), FULL_LAYOUT_TURNS),
        Variant(
            "langchain-delta",
            "LangChain, state_schema with messages on DeltaChannel (as deepagents)",
            maker(DeltaState),
        ),
    ]


# -- one thread -------------------------------------------------------------------------------


@dataclass
class Thread:
    """What one variant's thread measured."""

    variant: str
    turns: int = 0
    turn_seconds: list[float] = field(default_factory=list)
    file_bytes: dict[int, int] = field(default_factory=dict)
    stored_bytes: dict[int, int] = field(default_factory=dict)
    """What the thread stores: its checkpoints and their metadata, and its writes."""
    history_seconds: dict[int, float] = field(default_factory=dict)
    """The CPU time of reading the whole ``get_state_history`` of the thread once."""
    floor_bytes: dict[int, int] = field(default_factory=dict)
    get_state_seconds: dict[int, list[float]] = field(default_factory=dict)
    decode_seconds: dict[int, list[float]] = field(default_factory=dict)
    """The time to deserialise the thread's messages once, stored as one value: what any read
    that returns them pays, whatever the layout."""
    walks: list[int] = field(default_factory=list)
    """After each turn: the checkpoints a read of the thread walks back to find the messages
    (since their last snapshot; 0 for a layout that stores them whole)."""

    def mean_walk(self) -> float:
        return statistics.mean(self.walks) if self.walks else 0.0

    def multiple_of_floor(self, turns: int) -> float | None:
        if turns not in self.file_bytes:
            return None
        return self.file_bytes[turns] / self.floor_bytes[turns]

    def turn_growth(self, turns: int) -> tuple[float, float] | None:
        """The median of the last ``TIMED_TURNS`` turns up to ``turns`` over that of the first
        ones, and the favourable quartile of the ratios of the turns taken pairwise."""
        if len(self.turn_seconds) < turns or turns < 2 * TIMED_TURNS:
            return None
        return _ratio(
            self.turn_seconds[turns - TIMED_TURNS : turns], self.turn_seconds[:TIMED_TURNS]
        )

    def read_growth(self) -> tuple[float, float] | None:
        """``get_state`` on the thread at its longest over after ``TURNS[0]`` turns, likewise."""
        if self.turns not in self.get_state_seconds or min(TURNS) not in self.get_state_seconds:
            return None
        return _ratio(self.get_state_seconds[self.turns], self.get_state_seconds[min(TURNS)])

    def get_state_ms(self, turns: int) -> float | None:
        seconds = self.get_state_seconds.get(turns)
        return statistics.median(seconds) * 1e3 if seconds else None

    def over_decoding(self) -> float | None:
        """``get_state`` at the thread's longest over deserialising its messages once."""
        reads, decoding = (
            self.get_state_seconds.get(self.turns),
            self.decode_seconds.get(self.turns),
        )
        if not reads or not decoding:
            return None
        return statistics.median(reads) / statistics.median(decoding)


def _ratio(late: list[float], early: list[float]) -> tuple[float, float]:
    samples = Samples({"late": late, "early": early})
    return samples.ratio("late", "early"), samples.spread("late", "early")[0]


class SqliteFile:
    """A SQLite checkpoint file of its own, and its size with the write-ahead log folded in."""

    def __init__(self) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self._directory = tempfile.TemporaryDirectory(prefix="graphagent-bench-storage-")
        self.path = Path(self._directory.name) / "checkpoints.sqlite"
        self._connection = sqlite3.connect(self.path, check_same_thread=False)
        self.saver = SqliteSaver(self._connection)

    def size(self) -> int:
        self._connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(p.stat().st_size for p in self.path.parent.iterdir())

    def stored(self) -> int:
        """The bytes of the checkpoints (with their metadata) and of the writes: what the saver
        stores, whatever the file's pages and indexes add."""
        checkpoints = "SELECT SUM(LENGTH(checkpoint) + LENGTH(metadata)) FROM checkpoints"
        writes = "SELECT SUM(LENGTH(value)) FROM writes"
        return sum(
            self._connection.execute(sql).fetchone()[0] or 0 for sql in (checkpoints, writes)
        )

    def close(self) -> None:
        self._connection.close()
        self._directory.cleanup()


def run_thread(variant: Variant, turns: int, *, progress: Callable[[str], None]) -> Thread:
    """Hold ``turns`` turns (at most the variant's longest) on one thread, measuring as it goes."""
    turns = min(turns, variant.max_turns)
    _warm_up(variant)
    file = SqliteFile()
    result = Thread(variant.name)
    try:
        agent = variant.build(file.saver)
        config = {"configurable": {"thread_id": f"storage-{variant.name}"}}
        marks = {n for n in TURNS if n <= turns} | {turns}
        for turn in range(1, turns + 1):
            gc.collect()
            started = time.process_time()
            agent.invoke(question(turn), config)
            result.turn_seconds.append(time.process_time() - started)
            result.walks.append(_walk(file.saver, config))
            if turn in marks:
                _measure(result, agent, config, file, turn, time_reads=turn in (min(TURNS), turns))
                if turn == FULL_LAYOUT_TURNS or (turn == turns and variant.long_history):
                    result.history_seconds[turn] = _time_history(agent, config)
                progress(f"{variant.name}: {turn} turns")
        result.turns = turns
        _check(agent, config, turns)
    finally:
        file.close()
    return result


def _walk(saver: Any, config: Any) -> int:
    """How many checkpoints since the last snapshot of ``messages`` (langgraph counts them)."""
    latest = saver.get_tuple(config)
    counters = (latest.metadata or {}).get("counters_since_delta_snapshot") or {}
    return int(counters.get("messages", (0, 0))[1])


def _warm_up(variant: Variant) -> None:
    """A few turns on a throwaway agent first, so the first measured turns pay no first-time
    costs of the process (imports, caches)."""
    from langgraph.checkpoint.memory import InMemorySaver

    agent = variant.build(InMemorySaver())
    for turn in range(1, TIMED_TURNS + 1):
        agent.invoke(question(turn), {"configurable": {"thread_id": "warm-up"}})


def _measure(
    result: Thread, agent: Any, config: Any, file: SqliteFile, turn: int, *, time_reads: bool
) -> None:
    result.file_bytes[turn] = file.size()
    result.stored_bytes[turn] = file.stored()
    messages = agent.get_state(config).values["messages"]
    result.floor_bytes[turn] = floor_bytes(messages, file.saver)
    if time_reads:
        result.get_state_seconds[turn] = _time_get_state(agent, config)
        result.decode_seconds[turn] = _time_decoding(messages, file.saver)


def floor_bytes(messages: list[Any], saver: Any) -> int:
    """The history serialised once, as the checkpointer serialises a value."""
    return len(saver.serde.dumps_typed(messages)[1])


def _time_get_state(agent: Any, config: Any) -> list[float]:
    seconds = []
    for _ in range(GET_STATE_ROUNDS):
        gc.collect()
        started = time.process_time()
        agent.get_state(config)
        seconds.append(time.process_time() - started)
    return seconds


def _time_history(agent: Any, config: Any) -> float:
    gc.collect()
    started = time.process_time()
    snapshots = list(agent.get_state_history(config))
    seconds = time.process_time() - started
    if not snapshots:
        raise RuntimeError("get_state_history listed no checkpoint")
    return seconds


def _time_decoding(messages: list[Any], saver: Any) -> list[float]:
    stored = saver.serde.dumps_typed(messages)
    seconds = []
    for _ in range(GET_STATE_ROUNDS):
        gc.collect()
        started = time.process_time()
        saver.serde.loads_typed(stored)
        seconds.append(time.process_time() - started)
    return seconds


def _check(agent: Any, config: Any, turns: int) -> None:
    messages = agent.get_state(config).values["messages"]
    expected = turns * (2 + 2 * CALLS_PER_TURN)
    if len(messages) != expected or messages[-1].content != f"answer {turns}":
        raise RuntimeError(
            f"the thread holds {len(messages)} messages ending in {messages[-1].content!r}; "
            f"expected {expected} ending in 'answer {turns}'"
        )


# -- the report -------------------------------------------------------------------------------


def print_report(threads: Sequence[Thread], notes: dict[str, str]) -> None:
    print(
        "Storage: one thread on SqliteSaver; a turn is a question, 2 tool calls in turn and an "
        f"answer, with {MIDDLEWARE} mw"
    )
    for thread in threads:
        print(f"  {thread.variant:<16}{notes[thread.variant]}")
    head = "".join(f"{f'{n} turns':>20}" for n in TURNS)
    print(f"{'SQLite file, MiB (x floor)':<28}{head}")
    for thread in threads:
        cells = []
        for n in TURNS:
            multiple = thread.multiple_of_floor(n)
            if multiple is None:
                cells.append(f"{'-':>20}")
            else:
                cells.append(f"{thread.file_bytes[n] / 2**20:>10.2f} ({multiple:>6.1f}x)")
        print(f"{thread.variant:<28}" + "".join(cells))
    floors = max(threads, key=lambda t: t.turns).floor_bytes if threads else {}
    shown = ", ".join(f"{n} turns {floors[n] / 2**20:.2f}" for n in TURNS if n in floors)
    print(f"floor (the history serialised once), MiB: {shown}")
    titles = f"{'last/first turns':>18}{'get_state ms:':>16}{f'{min(TURNS)} turns':>10}"
    print(f"{'':<28}{titles}{'longest':>10}{'ratio':>8}{'/ decode':>10}{'mean walk':>11}")
    for thread in threads:
        growth = thread.turn_growth(FULL_LAYOUT_TURNS)
        reads = thread.read_growth()
        print(
            f"{thread.variant:<28}{_cell(growth and growth[0], 18)}{'':>16}"
            f"{_cell(thread.get_state_ms(min(TURNS)), 10)}"
            f"{_cell(thread.get_state_ms(thread.turns), 10)}{_cell(reads and reads[0], 8)}"
            f"{_cell(thread.over_decoding(), 10)}"
            f"{thread.mean_walk():>11.0f}  (longest: {thread.turns} turns)"
        )
    print(
        f"(turns: the median of turns {FULL_LAYOUT_TURNS - TIMED_TURNS + 1}-{FULL_LAYOUT_TURNS} "
        f"over that of turns 1-{TIMED_TURNS}; get_state: medians of {GET_STATE_ROUNDS} calls; "
        "/ decode: get_state at the longest over deserialising its messages once;\n"
        " mean walk: the checkpoints a read walks back to the last snapshot, after each turn)"
    )
    print()


def _cell(value: float | None, width: int) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.2f}"


def sweep(*, progress: Callable[[str], None]) -> list[Thread]:
    """graphagent's default at each snapshot frequency of ``SWEEP``, on one thread each."""
    return [
        run_thread(variant, max(TURNS), progress=progress) for variant in graphagent_variants(SWEEP)
    ]


def print_sweep(threads: Sequence[Thread]) -> None:
    """What the snapshot frequency trades: bytes against the time to read the thread back."""
    longest = max(TURNS)
    print(f"Snapshot frequency of graphagent's default, {longest}-turn thread on SqliteSaver")
    print(
        f"{'snapshot every':<16}{'MiB, 100 turns':>16}{'x floor':>9}{f'MiB, {longest}':>10}"
        f"{'x floor':>9}{'mean walk':>11}{'get_state ms':>14}{'last/first turns':>18}"
    )
    for thread in threads:
        growth = thread.turn_growth(FULL_LAYOUT_TURNS)
        print(
            f"{thread.variant.removeprefix('every '):<16}"
            f"{thread.file_bytes[FULL_LAYOUT_TURNS] / 2**20:>16.2f}"
            f"{_cell(thread.multiple_of_floor(FULL_LAYOUT_TURNS), 9)}"
            f"{thread.file_bytes[longest] / 2**20:>10.2f}"
            f"{_cell(thread.multiple_of_floor(longest), 9)}{thread.mean_walk():>11.0f}"
            f"{_cell(thread.get_state_ms(longest), 14)}{_cell(growth and growth[0], 18)}"
        )
    print()


def print_stored(threads: Sequence[Thread]) -> None:
    """What each thread stores, by the saver's own rows, and the time to read its history."""
    head = "".join(f"{f'{n} turns':>14}" for n in TURNS)
    print(f"{'stored bytes (checkpoints + writes), MiB':<44}{head}")
    for thread in threads:
        cells = [
            f"{thread.stored_bytes[n] / 2**20:>14.2f}" if n in thread.stored_bytes else f"{'-':>14}"
            for n in TURNS
        ]
        print(f"  {thread.variant:<42}" + "".join(cells))
    print(f"{'get_state_history, CPU s':<44}{f'{FULL_LAYOUT_TURNS} turns':>14}{'longest':>14}")
    for thread in threads:
        at_full = thread.history_seconds.get(FULL_LAYOUT_TURNS)
        longest = (
            thread.history_seconds.get(thread.turns) if thread.turns != FULL_LAYOUT_TURNS else None
        )
        print(f"  {thread.variant:<42}{_cell(at_full, 14)}{_cell(longest, 14)}")
    print()
