"""How a run's time grows with the history before it: one ``invoke`` with no middleware and no
checkpointer, after 10 and after 1,000 earlier messages, on every side.

The two lengths of every side are sampled in one interleaved measurement, so the ratio of a
side's long run over its short one sees the same machine noise. Each run gets an input of its own
(langgraph gives its messages ids in place), built before the clock starts: the 1,000 messages
the bench makes are not the framework's work. Times are CPU time, as the storage thread's are:
the ratios of a few milliseconds are otherwise what other work on the machine makes them. A side
whose per-step work reads the whole history grows faster than one whose steps read what they add.
"""

from __future__ import annotations

from collections.abc import Mapping

from bench.timing import Sampler, Samples, interleave, prepared_sampler
from bench.workloads import EXPECTED_MESSAGES, FINAL_ANSWER, Side, agent_input

SHORT, LONG = 10, 1000
"""The earlier messages before the question, in the short and the long run."""


def key(side: str, history: int) -> str:
    return f"{side}@{history}"


def _sampler(side: Side, history: int) -> Sampler:
    agent = side.agent()
    result = agent.invoke(agent_input(history))
    messages = result["messages"]
    if len(messages) != history + EXPECTED_MESSAGES or messages[-1].content != FINAL_ANSWER:
        raise RuntimeError(
            f"{side.name} with {history} earlier messages ended with {len(messages)} messages"
        )
    return prepared_sampler(agent.invoke, lambda: agent_input(history))


def history_samples(sides: Mapping[str, Side], *, rounds: int, warmup: int) -> Samples:
    samplers = {
        key(name, history): _sampler(side, history)
        for name, side in sides.items()
        for history in (SHORT, LONG)
    }
    return interleave(samplers, rounds=rounds, warmup=warmup)


def growth(samples: Samples, side: str) -> tuple[float, float]:
    """The median time of ``side``'s long run over its short one, and the favourable quartile
    of the per-round ratios."""
    long, short = key(side, LONG), key(side, SHORT)
    return samples.ratio(long, short), samples.spread(long, short)[0]


def print_history(samples: Samples, sides: Mapping[str, Side]) -> None:
    title = f"invoke, 0 mw, no checkpointer: earlier messages {SHORT} / {LONG:,}"
    print(f"{title:<60}{'ms':>9}{'ms':>9}{'ratio':>21}")
    for side in sides:
        long, short = key(side, LONG), key(side, SHORT)
        low, high = samples.spread(long, short)
        ratio = f"{samples.ratio(long, short):>5.2f} ({low:.2f}-{high:.2f})"
        print(
            f"  {side:<58}{samples.median(short) * 1e3:>9.2f}{samples.median(long) * 1e3:>9.2f}"
            f"{ratio:>21}"
        )
    print()
