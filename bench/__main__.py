"""graphagent vs LangChain 1.5: the same agents, timed interleaved in one process.

Run from the repository root (``make bench`` does it in its own venv)::

    python -m bench                  # full run
    python -m bench --quick          # a few-second smoke run
    python -m bench --only ainvoke-20mw --rounds 100

Prints one row per scenario: median milliseconds of each side, the ratio graphagent/langchain
(with the quartiles of the per-round ratios, a measure of the noise), the target ratio and
PASS/MISS. It reports; the exit code is 0 whatever the verdicts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata

from bench.otel import OTEL_SCENARIOS
from bench.timing import Comparison, Sampler, async_sampler, compare, sync_sampler
from bench.workloads import (
    TOOL_ROUNDS,
    Library,
    LoopModel,
    agent_input,
    build_agent,
    check_run,
    graphagent_library,
    langchain_library,
    make_middleware,
    make_tool,
    reset_counts,
)

DEFAULT_ROUNDS = 150
QUICK_ROUNDS = 3
LANGCHAIN_VERSION = "1.5.0"


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    target: float
    prepare: Callable[[Library, asyncio.Runner], Sampler]
    """Build the side's agent (untimed), check one run, return the sampler to time."""
    report_only: bool = False


def compile_scenario(n: int) -> Scenario:
    def prepare(lib: Library, runner: asyncio.Runner) -> Sampler:
        model, tools = LoopModel(), [make_tool()]
        middleware = make_middleware(lib.middleware_base, n)
        lib.create_agent(model, tools, middleware=middleware)  # fails here, not mid-timing
        return sync_sampler(lambda: lib.create_agent(model, tools, middleware=middleware))

    return Scenario(f"compile-{n}", f"create_agent, {n} middleware", 1.0, prepare, report_only=True)


def invoke_scenario(n: int, target: float, *, is_async: bool) -> Scenario:
    def prepare(lib: Library, runner: asyncio.Runner) -> Sampler:
        middleware = make_middleware(lib.middleware_base, n)
        agent = build_agent(lib, middleware)
        reset_counts(middleware)
        if is_async:
            result = runner.run(agent.ainvoke(agent_input()))
        else:
            result = agent.invoke(agent_input())
        check_run(lib, result, middleware, is_async=is_async)
        if is_async:
            return async_sampler(lambda: agent.ainvoke(agent_input()), runner)
        return sync_sampler(lambda: agent.invoke(agent_input()))

    verb = "ainvoke" if is_async else "invoke"
    title = f"{verb}, {n} middleware, {TOOL_ROUNDS} tool rounds"
    return Scenario(f"{verb}-{n}mw", title, target, prepare)


SCENARIOS = (
    compile_scenario(0),
    compile_scenario(3),
    compile_scenario(20),
    invoke_scenario(0, 1.0, is_async=False),
    invoke_scenario(20, 0.8, is_async=False),
    invoke_scenario(20, 0.6, is_async=True),
    *OTEL_SCENARIOS,
)
GROUPS = {"compile": [s for s in SCENARIOS if s.name.startswith("compile-")]}


def select(only: Sequence[str] | None) -> list[Scenario]:
    if not only:
        return list(SCENARIOS)
    by_name = {s.name: [s] for s in SCENARIOS} | GROUPS
    wanted = {s.name for name in only for s in by_name[name]}
    return [s for s in SCENARIOS if s.name in wanted]


# -- output -------------------------------------------------------------------

HEADER = (
    f"{'scenario':<38} {'graphagent ms':>13} {'langchain ms':>13} {'ratio':>6} "
    f"{'ratio IQR':>11} {'target':>8}  verdict"
)


def row(scenario: Scenario, result: Comparison) -> str:
    low, high = result.ratio_spread()
    verdict = "PASS" if result.ratio <= scenario.target else "MISS"
    target = f"<={scenario.target:.2f}" + ("*" if scenario.report_only else " ")
    return (
        f"{scenario.title:<38} {result.median_a * 1e3:>13.2f} {result.median_b * 1e3:>13.2f} "
        f"{result.ratio:>6.2f} {f'{low:.2f}-{high:.2f}':>11} {target:>8}  {verdict}"
    )


def versions() -> str:
    found = []
    for dist in ("graphagent", "langchain", "langchain-core", "langgraph"):
        try:
            found.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            found.append(f"{dist} ?")
    python = f"Python {platform.python_version()}"
    return ", ".join([python, *found, f"{os.cpu_count()} CPUs"])


# -- main ---------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description="Time the same agents on graphagent and on LangChain 1.5, interleaved.",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=None,
        help=f"samples per side and scenario (default {DEFAULT_ROUNDS}, or {QUICK_ROUNDS} "
        "with --quick)",
    )
    parser.add_argument("--warmup", type=int, default=None, help="untimed runs per side first")
    parser.add_argument("--quick", action="store_true", help="a few-second smoke run")
    parser.add_argument(
        "--only",
        action="append",
        choices=[s.name for s in SCENARIOS] + list(GROUPS),
        metavar="SCENARIO",
        help="run only this scenario (repeatable): "
        + ", ".join([s.name for s in SCENARIOS] + list(GROUPS)),
    )
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = QUICK_ROUNDS if args.quick else DEFAULT_ROUNDS
    if args.warmup is None:
        args.warmup = 1 if args.quick else 5
    if args.rounds < 1 or args.warmup < 0:
        parser.error("--rounds must be at least 1 and --warmup at least 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        ours, theirs = graphagent_library(), langchain_library()
    except ImportError as exc:
        print(
            f"bench needs graphagent and langchain==1.5 installed ({exc}); "
            "run `make bench`, or `pip install -e '.[bench]'`.",
            file=sys.stderr,
        )
        return 2

    started = time.perf_counter()
    print(f"graphagent vs langchain -- {versions()}")
    if metadata.version("langchain") != LANGCHAIN_VERSION:
        print(f"warning: the targets are set against langchain {LANGCHAIN_VERSION}")
    print(
        f"{args.rounds} interleaved rounds per scenario after {args.warmup} warm-up runs per "
        "side; times are medians; ratio = graphagent / langchain (lower is better)."
    )
    if args.quick:
        print("--quick: a smoke run; too few rounds for the numbers to mean much.")
    print()
    print(HEADER)
    print("-" * len(HEADER), flush=True)
    with asyncio.Runner() as runner:
        for scenario in select(args.only):
            sample_ours = scenario.prepare(ours, runner)
            sample_theirs = scenario.prepare(theirs, runner)
            result = compare(sample_ours, sample_theirs, rounds=args.rounds, warmup=args.warmup)
            print(row(scenario, result), flush=True)
    print()
    print("* report only. Verdicts are informational: the exit code is 0 either way.")
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
