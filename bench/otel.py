"""What ``OtelTracingMiddleware`` costs when tracing is off: the same graphagent agent, with it
(under OpenTelemetry's default global no-op provider) and without it.

Both sides are graphagent: "otel" is the agent with the middleware, "bare" the agent without any
middleware. ``python -m bench`` reports them with its targets; ``python -m bench.otel`` runs them
alone. Needs the ``otel`` extra next to ``bench``.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bench.timing import Sampler, async_sampler, interleave, sync_sampler
from bench.workloads import agent_input, check_run, graphagent_side


@dataclass(frozen=True)
class OtelScenario:
    name: str
    title: str
    target: float
    prepare: Callable[[str, asyncio.Runner], Sampler]
    """``prepare("otel" or "bare", runner)``: build that side's agent, check a run, return the
    sampler to time."""


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
    def prepare(side_name: str, runner: asyncio.Runner) -> Sampler:
        side = graphagent_side(fused=False)
        agent = side.agent(_traced_middleware() if side_name == "otel" else [])
        if is_async:
            result = runner.run(agent.ainvoke(agent_input()))
            check_run(side, result, [], is_async=True)
            return async_sampler(lambda: agent.ainvoke(agent_input()), runner)
        check_run(side, agent.invoke(agent_input()), [], is_async=False)
        return sync_sampler(lambda: agent.invoke(agent_input()))

    verb = "ainvoke" if is_async else "invoke"
    title = f"{verb}, OtelTracingMiddleware, no provider"
    return OtelScenario(f"otel-noop-{verb}", title, 1.05, prepare)


OTEL_SCENARIOS = (noop_scenario(is_async=False), noop_scenario(is_async=True))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.otel", description=__doc__)
    parser.add_argument("--rounds", type=int, default=150)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args(argv)
    print(f"{'scenario':<40} {'with ms':>8} {'without ms':>10} {'ratio':>6}  target")
    with asyncio.Runner() as runner:
        for scenario in OTEL_SCENARIOS:
            samplers = {side: scenario.prepare(side, runner) for side in ("otel", "bare")}
            result = interleave(samplers, rounds=args.rounds, warmup=args.warmup)
            print(
                f"{scenario.title:<40} {result.median('otel') * 1e3:>8.3f} "
                f"{result.median('bare') * 1e3:>10.3f} {result.ratio('otel', 'bare'):>6.3f}  "
                f"<={scenario.target}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
