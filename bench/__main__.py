"""graphagent (one node per hook, and fused) vs LangChain 1.5 vs a hand-written langgraph graph:
the same agent, measured side by side in one process.

Run from the repository root (``make bench`` does it in its own venv)::

    python -m bench                  # full run
    python -m bench --quick          # a smoke run
    python -m bench --only runs --rounds 50

It prints what each side does per run (graph steps, checkpoints, SQLite bytes), the time per run
of every scenario, interleaved, with the ratios that matter, and then the targets: each with
the measured value and a verdict. Only a target missed beyond the noise is flagged. The exit
code is 0 whatever the verdicts: the numbers depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from bench import cost, history, limits, storage
from bench.checkpoints import SAVERS, Saver
from bench.otel import OTEL_SCENARIOS, OtelScenario
from bench.timing import Sampler, Samples, async_sampler, interleave, sync_sampler
from bench.workloads import (
    TOOL_ROUNDS,
    Side,
    agent_input,
    check_run,
    graphagent_side,
    langchain_side,
    langgraph_side,
    make_middleware,
    reset_counts,
)

DEFAULT_ROUNDS = 20
QUICK_ROUNDS = 2
LANGCHAIN_VERSION = "1.5.2"
COUNTS = (0, 5, 20)
LONG_HISTORY = 2000
"""Messages before the question in the long-history footprint (20 middleware)."""
CONCURRENT_RUNS = 200
GROUPS = (
    "footprint",
    "runs",
    "compile",
    "concurrency",
    "otel",
    "history",
    "storage",
    "cost",
    "limits",
)
OPT_IN = ("snapshots",)
"""Parts run only when named with --only."""


# -- scenarios ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    prepare: Callable[[Side, asyncio.Runner, list[Callable[[], Any]]], Sampler]
    """Build the side's agent (untimed), check one run, return the sampler to time; cleanups of
    what it opened go to the list."""
    sides: tuple[str, ...] = ("default", "fused", "langchain", "langgraph")


def run_scenario(verb: str, n: int, saver_kind: str) -> Scenario:
    is_async = verb == "ainvoke"

    def prepare(side: Side, runner: asyncio.Runner, cleanups: list[Callable[[], Any]]) -> Sampler:
        middleware = make_middleware(side.middleware_base, n)
        saver = Saver(saver_kind)
        cleanups.append(saver.close)
        agent = side.agent(middleware, saver.checkpointer)
        reset_counts(middleware)
        if is_async:
            result = runner.run(agent.ainvoke(agent_input(), saver.config()))
        else:
            result = agent.invoke(agent_input(), saver.config())
        check_run(side, result, middleware, is_async=is_async)
        if is_async:
            return async_sampler(lambda: agent.ainvoke(agent_input(), saver.config()), runner)
        return sync_sampler(lambda: agent.invoke(agent_input(), saver.config()))

    title = f"{verb}, {n} mw, {SAVERS[saver_kind]}"
    return Scenario(f"{verb}-{n}mw-{saver_kind}", title, prepare)


def compile_scenario(n: int) -> Scenario:
    def prepare(side: Side, runner: asyncio.Runner, cleanups: list[Callable[[], Any]]) -> Sampler:
        middleware = make_middleware(side.middleware_base, n)
        side.agent(middleware)  # fails here, not mid-timing
        return sync_sampler(lambda: side.agent(middleware))

    return Scenario(f"compile-{n}mw", f"build the agent, {n} mw", prepare)


def concurrency_scenario() -> Scenario:
    def prepare(side: Side, runner: asyncio.Runner, cleanups: list[Callable[[], Any]]) -> Sampler:
        agent = side.agent()
        check_run(side, runner.run(agent.ainvoke(agent_input())), [], is_async=True)

        async def many() -> list[Any]:
            runs = [agent.ainvoke(agent_input()) for _ in range(CONCURRENT_RUNS)]
            return await asyncio.gather(*runs)

        return async_sampler(many, runner)

    title = f"{CONCURRENT_RUNS} concurrent ainvoke, 0 mw"
    return Scenario("concurrent-0mw", title, prepare, ("default", "langchain", "langgraph"))


RUNS = tuple(
    [run_scenario("invoke", n, kind) for kind in SAVERS for n in COUNTS]
    + [run_scenario("ainvoke", n, kind) for kind in ("none", "memory") for n in COUNTS]
)
COMPILES = tuple(compile_scenario(n) for n in COUNTS)
CONCURRENCY = concurrency_scenario()


# -- per-run footprint: steps, checkpoints, bytes ------------------------------------------------


@dataclass(frozen=True)
class Footprint:
    steps: int
    checkpoints: int
    sqlite_bytes: int
    long_history_bytes: int | None = None
    """The SQLite file after one invoke with LONG_HISTORY earlier messages (20 mw only)."""


def footprint(side: Side, n: int) -> Footprint:
    """What one ``invoke`` does on ``side`` with ``n`` middleware (exact, not timed)."""
    memory = Saver("memory")
    agent = side.agent(make_middleware(side.middleware_base, n), memory.checkpointer)
    config = {"configurable": {"thread_id": "footprint"}}
    events = agent.stream(agent_input(), config, stream_mode="debug")
    steps = {event["step"] for event in events if event["type"] == "task"}
    checkpoints = memory.checkpoints(config)
    memory.close()
    long_history = sqlite_bytes(side, n, LONG_HISTORY) if n == max(COUNTS) else None
    return Footprint(len(steps), checkpoints, sqlite_bytes(side, n, 0), long_history)


def sqlite_bytes(side: Side, n: int, history: int) -> int:
    """The size of a fresh SQLite checkpoint file after one invoke."""
    saver = Saver("sqlite")
    agent = side.agent(make_middleware(side.middleware_base, n), saver.checkpointer)
    agent.invoke(agent_input(history), saver.config())
    return saver.close()


# -- results and targets -------------------------------------------------------------------------


@dataclass
class Results:
    timings: dict[str, Samples] = field(default_factory=dict)
    footprints: dict[tuple[str, int], Footprint] = field(default_factory=dict)
    history: Samples | None = None
    storage: dict[str, storage.Thread] = field(default_factory=dict)


Measure = tuple[float, float | None]
"""A measured ratio, and the per-round ratio at the favourable quartile (None: exact)."""


@dataclass(frozen=True)
class Target:
    title: str
    measure: Callable[[Results], Measure | None]
    limit: float


def time_target(scenario: str, a: str, b: str, limit: float) -> Target:
    """Side ``a``'s time over side ``b``'s in ``scenario``, at most ``limit``."""

    def measure(results: Results) -> Measure | None:
        samples = results.timings.get(scenario)
        if samples is None:
            return None
        return samples.ratio(a, b), samples.spread(a, b)[0]

    return Target(f"{a} / {b}: {TITLES[scenario]}", measure, limit)


def count_target(what: str, a: tuple[str, int], b: tuple[str, int], limit: float) -> Target:
    """``what`` (a :class:`Footprint` field) of ``a`` over ``b``, each (side, middleware count)."""

    def measure(results: Results) -> Measure | None:
        if a not in results.footprints or b not in results.footprints:
            return None
        return getattr(results.footprints[a], what) / getattr(results.footprints[b], what), None

    shown = {
        "checkpoints": "checkpoints per invoke",
        "sqlite_bytes": "SQLite file after an invoke",
        "long_history_bytes": f"SQLite, {LONG_HISTORY:,}-message history",
    }[what]
    return Target(f"{a[0]} {a[1]} mw / {b[0]} {b[1]} mw: {shown}", measure, limit)


def history_target(side: str, limit: float) -> Target:
    """``side``'s run after 1,000 earlier messages over its run after 10, at most ``limit``."""

    def measure(results: Results) -> Measure | None:
        return None if results.history is None else history.growth(results.history, side)

    title = f"{side}: time after {history.LONG:,} / {history.SHORT} earlier messages"
    return Target(title, measure, limit)


def storage_target(
    title: str, measure: Callable[[dict[str, storage.Thread]], Measure | None], limit: float
) -> Target:
    def of(results: Results) -> Measure | None:
        try:
            return measure(results.storage)
        except KeyError:  # a variant not run
            return None

    return Target(title, of, limit)


def bytes_over(a: str, b: str, turns: int) -> Callable[[dict[str, storage.Thread]], Measure]:
    """``a``'s stored bytes (checkpoints + writes) over ``b``'s, at ``turns`` turns."""
    return lambda threads: (threads[a].stored_bytes[turns] / threads[b].stored_bytes[turns], None)


def history_over(a: str, b: str, turns: int) -> Callable[[dict[str, storage.Thread]], Measure]:
    return lambda threads: (
        threads[a].history_seconds[turns] / threads[b].history_seconds[turns],
        None,
    )


def _over_decoding(thread: storage.Thread) -> Measure | None:
    ratio = thread.over_decoding()
    return None if ratio is None else (ratio, None)


def storage_targets() -> tuple[Target, ...]:
    turns, longest = storage.FULL_LAYOUT_TURNS, max(storage.TURNS)
    targets = [
        storage_target(
            f"default / langchain: stored bytes, {turns}-turn thread",
            bytes_over("default", "langchain", turns),
            0.03,
        ),
        storage_target(
            f"default / langchain-delta: stored bytes, {turns}-turn thread",
            bytes_over("default", "langchain-delta", turns),
            0.8,
        ),
        storage_target(
            f"fused / langchain-delta: stored bytes, {turns}-turn thread",
            bytes_over("fused", "langchain-delta", turns),
            0.3,
        ),
    ]
    for side in ("default", "fused"):
        targets.append(
            storage_target(
                f"{side} / full: get_state_history CPU, {turns}-turn thread",
                history_over(side, "full", turns),
                1.2,
            )
        )
    for side in ("default", "fused"):
        targets += [
            storage_target(
                f"{side}: turn {turns} / turn 1 of a thread (medians of {storage.TIMED_TURNS})",
                lambda threads, side=side: threads[side].turn_growth(turns),
                1.3,
            ),
            storage_target(
                f"{side}: turn {longest} / turn 1 of a thread (medians of {storage.TIMED_TURNS})",
                lambda threads, side=side: threads[side].turn_growth(longest),
                1.5,
            ),
            storage_target(
                f"{side}: get_state at {longest} turns / deserialising its messages once",
                lambda threads, side=side: _over_decoding(threads[side]),
                1.3,
            ),
        ]
    return tuple(targets)


TITLES = {s.name: s.title for s in (*RUNS, *COMPILES, CONCURRENCY)} | {
    s.name: s.title for s in OTEL_SCENARIOS
}
TARGETS = (
    time_target("invoke-20mw-none", "fused", "langchain", 0.3),
    time_target("ainvoke-20mw-none", "fused", "langchain", 0.3),
    count_target("checkpoints", ("fused", 20), ("fused", 0), 2.0),
    time_target("invoke-20mw-sqlite", "fused", "langchain", 0.25),
    count_target("sqlite_bytes", ("fused", 20), ("langchain", 20), 0.25),
    count_target("long_history_bytes", ("fused", 20), ("langchain", 20), 0.25),
    time_target("invoke-20mw-none", "default", "langgraph", 1.1),
    time_target("ainvoke-20mw-none", "default", "langgraph", 1.1),
    time_target("compile-20mw", "default", "langgraph", 1.1),
    time_target("concurrent-0mw", "default", "langchain", 1.0),
    *(time_target(s.name, "otel", "bare", s.target) for s in OTEL_SCENARIOS),
    history_target("default", 1.9),
    history_target("fused", 1.9),
    *storage_targets(),
)
MIN_ROUNDS = 10
"""Fewer rounds than this leave a missed time target undecided."""


def verdict(measure: Measure, limit: float, rounds: int) -> str:
    """``ok``; for a time that misses, ``noise`` when a quarter of the rounds or more still meet
    the target (or ``unsure`` after too few rounds); otherwise ``REGRESSION``."""
    value, favourable = measure
    if value <= limit:
        return "ok"
    if favourable is None:
        return "REGRESSION"
    if rounds < MIN_ROUNDS:
        return f"unsure ({rounds} rounds)"
    return "noise" if favourable <= limit else "REGRESSION"


# -- output ---------------------------------------------------------------------------------------

SIDE_NOTES = {
    "default": "graphagent, one node per hook",
    "fused": "graphagent, create_agent(..., fuse_hooks=True)",
    "langchain": f"LangChain {LANGCHAIN_VERSION} create_agent",
    "langgraph": "a hand-written langgraph graph, every hook a node (bench/handwritten.py)",
}
SIDES = tuple(SIDE_NOTES)
RATIOS = (("default", "langgraph"), ("fused", "langchain"), ("default", "langchain"))


def versions() -> str:
    found = []
    for dist in ("graphagent", "langchain", "langchain-core", "langgraph"):
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            found.append(f"{dist} ?")
    return ", ".join([f"Python {platform.python_version()}", *found, f"{os.cpu_count()} CPUs"])


def print_intro(args: argparse.Namespace) -> None:
    print(f"graphagent vs LangChain vs langgraph -- {versions()}")
    if metadata.version("langchain") != LANGCHAIN_VERSION:
        print(f"warning: the targets are set against langchain {LANGCHAIN_VERSION}")
    for side, note in SIDE_NOTES.items():
        print(f"  {side:<10} {note}")
    print(
        f"The agent: a model with no latency, {TOOL_ROUNDS} tool rounds, n middleware (mw) with "
        "counting before_model, after_model, wrap_model_call and wrap_tool_call hooks."
    )
    print(
        f"{args.rounds} interleaved rounds per scenario after {args.warmup} warm-up runs per "
        "side; times are medians, ratios a/b of medians (per-round quartiles in brackets)."
    )
    if args.quick:
        print("--quick: a smoke run; too few rounds for the numbers to mean much.")
    print(flush=True)


def print_footprints(results: Results) -> None:
    print("Per invoke (exact): graph steps | checkpoints (InMemorySaver) | SQLite file, KiB")
    cells = " ".join(f"{side:>9}" for side in SIDES)
    print(f"{'middleware':<12}{cells} | {cells} | {cells}")
    for n in COUNTS:
        found = [results.footprints.get((side, n)) for side in SIDES]
        columns = [
            " ".join(f"{getattr(f, what) / scale if f else 0:>9.0f}" for f in found)
            for what, scale in (("steps", 1), ("checkpoints", 1), ("sqlite_bytes", 1024))
        ]
        print(f"{n:<12}" + " | ".join(columns))
    long = [results.footprints.get((side, max(COUNTS))) for side in SIDES]
    sizes = ", ".join(
        f"{side} {f.long_history_bytes / 2**20:.1f}"
        for side, f in zip(SIDES, long, strict=True)
        if f and f.long_history_bytes is not None
    )
    print(f"SQLite file, MiB, {max(COUNTS)} mw, {LONG_HISTORY:,}-message history: {sizes}")
    print()


def timing_header() -> str:
    sides = " ".join(f"{side:>9}" for side in SIDES)
    ratios = " ".join(f"{f'{a[:7]}/{b[:9]}':>21}" for a, b in RATIOS)
    return f"{'median ms per run':<36}{sides} {ratios}"


def timing_row(scenario: Scenario, samples: Samples) -> str:
    sides = " ".join(
        f"{samples.median(side) * 1e3:>9.2f}" if side in samples.by_side else f"{'-':>9}"
        for side in SIDES
    )
    ratios = []
    for a, b in RATIOS:
        if a in samples.by_side and b in samples.by_side:
            low, high = samples.spread(a, b)
            ratios.append(f"{samples.ratio(a, b):>5.2f} ({low:.2f}-{high:.2f})".rjust(21))
        else:
            ratios.append(f"{'-':>21}")
    return f"{scenario.title:<36}{sides} {' '.join(ratios)}"


def print_targets(results: Results, rounds: int) -> None:
    print("Targets: ratios (times: of the medians above; counts: exact)")
    print(f"{'':<64}{'measured':>9} {'target':>8}  verdict")
    for target in TARGETS:
        measure = target.measure(results)
        limit = f"<={target.limit:.2f}"
        if measure is None:
            print(f"{target.title:<64}{'-':>9} {limit:>8}  not run")
            continue
        found = verdict(measure, target.limit, rounds)
        print(f"{target.title:<64}{measure[0]:>9.2f} {limit:>8}  {found}")


# -- main -----------------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Measure the same agent on graphagent (default and fused), LangChain 1.5 "
        "and a hand-written langgraph graph, interleaved.",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help=f"samples per side and scenario (default {DEFAULT_ROUNDS}, or {QUICK_ROUNDS} "
        "with --quick)",
    )
    parser.add_argument("--warmup", type=int, default=None, help="untimed runs per side first")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--verbose", action="store_true", help="report the progress of long parts")
    parser.add_argument(
        "--only",
        action="append",
        choices=GROUPS + OPT_IN,
        metavar="PART",
        help="run only this part (repeatable): "
        + ", ".join(GROUPS)
        + "; and, only when named, snapshots (the storage thread of graphagent's default at "
        "several snapshot frequencies)",
    )
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = QUICK_ROUNDS if args.quick else DEFAULT_ROUNDS
    if args.warmup is None:
        args.warmup = 1 if args.quick else 3
    if args.rounds < 1 or args.warmup < 0:
        parser.error("--rounds must be at least 1 and --warmup at least 0")
    args.only = args.only or list(GROUPS)
    return args


@contextmanager
def cleaning_up() -> Iterator[list[Callable[[], Any]]]:
    cleanups: list[Callable[[], Any]] = []
    try:
        yield cleanups
    finally:
        for cleanup in cleanups:
            cleanup()


def measure(
    scenario: Scenario, sides: dict[str, Side], runner: asyncio.Runner, args: argparse.Namespace
) -> Samples:
    with cleaning_up() as cleanups:
        samplers = {
            name: scenario.prepare(sides[name], runner, cleanups) for name in scenario.sides
        }
        return interleave(samplers, rounds=args.rounds, warmup=args.warmup)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        sides = {
            s.name: s
            for s in (
                graphagent_side(fused=False),
                graphagent_side(fused=True),
                langchain_side(),
                langgraph_side(),
            )
        }
    except ImportError as exc:
        print(
            f"bench needs graphagent and langchain==1.5 installed ({exc}); "
            "run `make bench`, or `pip install -e '.[bench]'`.",
            file=sys.stderr,
        )
        return 2

    started = time.perf_counter()
    print_intro(args)
    results = Results()
    if "footprint" in args.only:
        for n in COUNTS:
            for name, side in sides.items():
                results.footprints[(name, n)] = footprint(side, n)
        print_footprints(results)

    timed_parts = [
        ("runs", RUNS),
        ("compile", COMPILES),
        ("concurrency", (CONCURRENCY,)),
    ]
    with asyncio.Runner() as runner:
        if any(part in args.only for part, _ in timed_parts):
            header = timing_header()
            print(header)
            print("-" * len(header), flush=True)
        for part, scenarios in timed_parts:
            if part not in args.only:
                continue
            for scenario in scenarios:
                results.timings[scenario.name] = samples = measure(scenario, sides, runner, args)
                print(timing_row(scenario, samples), flush=True)
        if "otel" in args.only:
            print()
            print_otel(results, runner, args)
    print()
    if "history" in args.only:
        results.history = history.history_samples(sides, rounds=args.rounds, warmup=args.warmup)
        history.print_history(results.history, sides)
    if "storage" in args.only:
        results.storage = run_storage(args)
    if "cost" in args.only:
        turns = cost.QUICK_TURNS if args.quick else cost.TURNS
        cost.print_cost(cost.measure_all(turns), turns)
        print()
    if "snapshots" in args.only:
        storage.print_sweep(storage.sweep(progress=progress if args.verbose else _quiet))
    if "limits" in args.only:
        limits.main()
    print_targets(results, args.rounds)
    print()
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


def progress(text: str) -> None:
    print(f"  ... {text}", flush=True)


def _quiet(text: str) -> None:
    return None


def run_storage(args: argparse.Namespace) -> dict[str, storage.Thread]:
    variants = [*storage.langchain_variants(), *storage.graphagent_variants()]
    turns = storage.QUICK_TURNS if args.quick else max(storage.TURNS)
    threads = {
        v.name: storage.run_thread(v, turns, progress=progress if args.verbose else _quiet)
        for v in variants
    }
    storage.print_report(list(threads.values()), {v.name: v.note for v in variants})
    storage.print_stored(list(threads.values()))
    return threads


def print_otel(results: Results, runner: asyncio.Runner, args: argparse.Namespace) -> None:
    """OtelTracingMiddleware under OpenTelemetry's no-op provider, against the bare agent."""
    print(f"{'graphagent with and without otel':<44}{'otel ms':>9} {'bare ms':>9} {'ratio':>21}")
    for scenario in OTEL_SCENARIOS:
        samples = otel_samples(scenario, runner, args)
        results.timings[scenario.name] = samples
        low, high = samples.spread("otel", "bare")
        ratio = f"{samples.ratio('otel', 'bare'):>5.2f} ({low:.2f}-{high:.2f})"
        print(
            f"{scenario.title:<44}{samples.median('otel') * 1e3:>9.2f} "
            f"{samples.median('bare') * 1e3:>9.2f} {ratio:>21}",
            flush=True,
        )


def otel_samples(
    scenario: OtelScenario, runner: asyncio.Runner, args: argparse.Namespace
) -> Samples:
    samplers = {side: scenario.prepare(side, runner) for side in ("otel", "bare")}
    return interleave(samplers, rounds=args.rounds, warmup=args.warmup)


if __name__ == "__main__":
    sys.exit(main())
