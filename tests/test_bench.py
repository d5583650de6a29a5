"""The benchmark's own logic, without timing anything: every side runs the same workload, the
sides take turns, and a verdict flags only a miss beyond the noise."""

from __future__ import annotations

import asyncio

import pytest

from bench import history, storage
from bench.__main__ import verdict
from bench.checkpoints import Saver
from bench.timing import interleave
from bench.workloads import (
    Side,
    agent_input,
    check_run,
    graphagent_side,
    langgraph_side,
    make_middleware,
)


@pytest.mark.parametrize(
    "side", [langgraph_side(), graphagent_side(fused=True)], ids=["langgraph", "fused"]
)
@pytest.mark.parametrize(
    ("kind", "is_async"), [("none", False), ("none", True), ("memory", True), ("sqlite", False)]
)
def test_a_side_runs_the_workload(side: Side, kind: str, is_async: bool) -> None:
    middleware = make_middleware(side.middleware_base, 3)
    saver = Saver(kind)
    agent = side.agent(middleware, saver.checkpointer)
    if is_async:
        result = asyncio.run(agent.ainvoke(agent_input(), saver.config()))
    else:
        result = agent.invoke(agent_input(), saver.config())
    saver.close()
    check_run(side, result, middleware, is_async=is_async)


def test_the_sides_take_turns_starting_each_round_with_the_next() -> None:
    order: list[str] = []

    def sampler(name: str) -> object:
        return lambda: order.append(name) or 1.0

    samples = interleave({n: sampler(n) for n in "abc"}, rounds=3, warmup=0)  # type: ignore[misc]

    assert "".join(order) == "abcbcacab"
    assert samples.ratio("a", "b") == 1.0


def test_only_a_miss_beyond_the_noise_is_a_regression() -> None:
    assert verdict((0.9, 0.8), 1.0, rounds=20) == "ok"
    assert verdict((1.1, 0.95), 1.0, rounds=20) == "noise"
    assert verdict((1.1, 1.05), 1.0, rounds=20) == "REGRESSION"
    assert verdict((1.1, 1.05), 1.0, rounds=2) == "unsure (2 rounds)"
    assert verdict((2.1, None), 2.0, rounds=2) == "REGRESSION", "a count is exact"


def test_a_storage_thread_is_measured_as_it_grows() -> None:
    default, _, full = storage.graphagent_variants()

    threads = [
        storage.run_thread(v, storage.QUICK_TURNS, progress=lambda _: None) for v in (default, full)
    ]

    for thread in threads:
        assert len(thread.turn_seconds) == storage.QUICK_TURNS
        assert set(thread.file_bytes) == {10, storage.QUICK_TURNS}
        assert thread.multiple_of_floor(10) > 1
        assert thread.get_state_ms(10) is not None
        assert thread.read_growth() is not None
        assert thread.over_decoding() is not None
    deltas, whole = threads
    assert deltas.file_bytes[10] < whole.file_bytes[10], "deltas take less room"
    assert deltas.floor_bytes == whole.floor_bytes, "the same history"


def test_a_snapshot_frequency_is_a_state_schema() -> None:
    (variant,) = storage.graphagent_variants([7])

    agent = variant.build(None)

    assert agent.builder.channels["messages"].snapshot_frequency == 7


def test_the_history_part_times_each_side_after_a_short_and_a_long_history() -> None:
    sides = {"langgraph": langgraph_side(), "fused": graphagent_side(fused=True)}

    samples = history.history_samples(sides, rounds=1, warmup=0)

    assert set(samples.by_side) == {
        history.key(side, length) for side in sides for length in (history.SHORT, history.LONG)
    }
    assert history.growth(samples, "fused")[0] > 0


@pytest.mark.timeout(120)
@pytest.mark.parametrize("route", ["openai", "anthropic"])
def test_the_cost_scenario_runs_its_thread_through_the_real_clients(route: str) -> None:
    from bench import cost

    [side] = [s for s in cost.SIDES if s.route == route and s.name.startswith("graphagent")]
    ledger = cost.run_side(side, turns=3)
    assert ledger.requests == 6  # a tool call and an answer per turn
    assert ledger.per_call[0] == 0
    assert all(read > 3000 for read in ledger.per_call[1:])  # the prefix, read from cache
    assert 0 < ledger.cost < 0.1
