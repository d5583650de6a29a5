"""What ``OtelTracingMiddleware`` costs when tracing is off: the same graphagent agent, with it
(under OpenTelemetry's default global no-op provider) and without it.

Both sides of these scenarios are graphagent: in ``python -m bench``'s table the "graphagent"
column is the agent with the middleware, the other column the agent without any middleware.
``python -m bench.otel`` runs them alone. Needs the ``otel`` extra next to ``bench``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.timing import Sampler, async_sampler, compare, sync_sampler
from bench.workloads import Library, agent_input, build_agent, check_run, graphagent_library


@dataclass(frozen=True)
class OtelScenario:
    """Shaped like ``bench.__main__.Scenario``, so the main table can run it."""

    name: str
    title: str
    target: float
    prepare: Callable[[Library, asyncio.Runner], Sampler]
    report_only: bool = True


def _traced_middleware() -> list[Any]:
    from opentelemetry import trace

    from graphagent.middleware.otel import OtelTracingMiddleware

    provider = trace.get_tracer_provider()
    if not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        raise RuntimeError(
            f"a global tracer provider is configured ({type(provider).__name__}); this "
            "benchmark measures the no-op path and needs none."
        )
    return [OtelTracingMiddleware()]


def noop_scenario(*, is_async: bool) -> OtelScenario:
    def prepare(lib: Library, runner: asyncio.Runner) -> Sampler:
        # Side A ("graphagent") has the middleware; side B is the same agent without it.
        traced = lib.name == "graphagent"
        agent = build_agent(graphagent_library(), _traced_middleware() if traced else [])
        if is_async:
            result = runner.run(agent.ainvoke(agent_input()))
            check_run(lib, result, [], is_async=True)
            return async_sampler(lambda: agent.ainvoke(agent_input()), runner)
        check_run(lib, agent.invoke(agent_input()), [], is_async=False)
        return sync_sampler(lambda: agent.invoke(agent_input()))

    verb = "ainvoke" if is_async else "invoke"
    return OtelScenario(
        f"otel-noop-{verb}", f"{verb} +otel no-op vs bare graphagent", 1.05, prepare
    )


OTEL_SCENARIOS = (noop_scenario(is_async=False), noop_scenario(is_async=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.otel", description=__doc__)
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args(argv)
    with_it = graphagent_library()
    without = dataclasses.replace(with_it, name="graphagent without otel")
    print(f"{'scenario':<40} {'with ms':>8} {'without ms':>10} {'ratio':>6}  target")
    with asyncio.Runner() as runner:
        for scenario in OTEL_SCENARIOS:
            result = compare(
                scenario.prepare(with_it, runner),
                scenario.prepare(without, runner),
                rounds=args.rounds,
                warmup=args.warmup,
            )
            print(
                f"{scenario.title:<40} {result.median_a * 1e3:>8.3f} "
                f"{result.median_b * 1e3:>10.3f} {result.ratio:>6.3f}  <={scenario.target}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
