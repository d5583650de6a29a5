"""Interleaved A/B timing: medians per side, and the ratio A/B.

The two sides alternate sample by sample in one process (A B, B A, A B, ...), so drift and
bursts of machine noise land on both, and neither always runs first. Each sample is one call,
timed with ``time.perf_counter`` after a ``gc.collect()`` so no side pays for the other's
garbage.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Sampler = Callable[[], float]
"""Runs the workload once and returns the seconds it took."""


def sync_sampler(fn: Callable[[], object]) -> Sampler:
    def sample() -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    return sample


def async_sampler(fn: Callable[[], Awaitable[object]], runner: asyncio.Runner) -> Sampler:
    """Time ``await fn()`` inside the loop, so loop start-up and teardown are not counted."""

    async def timed() -> float:
        start = time.perf_counter()
        await fn()
        return time.perf_counter() - start

    def sample() -> float:
        return runner.run(timed())

    return sample


@dataclass(frozen=True)
class Comparison:
    """The samples of both sides, in seconds, paired by round."""

    a: list[float]
    b: list[float]

    @property
    def median_a(self) -> float:
        return statistics.median(self.a)

    @property
    def median_b(self) -> float:
        return statistics.median(self.b)

    @property
    def ratio(self) -> float:
        """Median of A over median of B."""
        return self.median_a / self.median_b

    def ratio_spread(self) -> tuple[float, float]:
        """Quartiles (25th, 75th percentile) of the per-round ratios A/B: the noise."""
        ratios = [a / b for a, b in zip(self.a, self.b, strict=True)]
        if len(ratios) < 2:
            return ratios[0], ratios[0]
        q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        return q1, q3


def compare(a: Sampler, b: Sampler, *, rounds: int, warmup: int) -> Comparison:
    """Warm both sides up, then take ``rounds`` samples of each, alternating the order.

    After the warm-up every live object is frozen out of the collector (``gc.freeze``): the
    per-sample ``gc.collect()`` then only sweeps the garbage of the previous sample (about 0.01 ms
    instead of ~30 ms for the whole heap of both libraries), and any full collection that fires
    inside a sample costs both sides the same.
    """
    for _ in range(warmup):
        a()
        b()
    samples_a: list[float] = []
    samples_b: list[float] = []
    gc.collect()
    gc.freeze()
    try:
        for i in range(rounds):
            order = ((a, samples_a), (b, samples_b))
            for sampler, into in order if i % 2 == 0 else reversed(order):
                gc.collect()
                into.append(sampler())
    finally:
        gc.unfreeze()
    return Comparison(samples_a, samples_b)
