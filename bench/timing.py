"""Interleaved timing: every side of a scenario sampled in turn, medians per side, ratios.

The sides alternate sample by sample in one process, and the order rotates every round (A B C D,
B C D A, ...), so drift and bursts of machine noise land on all of them and none always runs
first. Each sample is one call, timed with ``time.perf_counter`` after a ``gc.collect()`` so no
side pays for another's garbage.
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
Sampler = Callable[[], float]
"""Runs the workload once and returns the seconds it took."""


def sync_sampler(fn: Callable[[], object]) -> Sampler:
    def sample() -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    return sample


def prepared_sampler(fn: Callable[[T], object], prepare: Callable[[], T]) -> Sampler:
    """The CPU time of ``fn(prepare())``, with ``prepare()`` made before the clock starts: what
    the workload is given (a long input, built anew each time) is not what is measured. A
    collection after it moves the new objects out of the young generations, so the run's
    collections do not keep sweeping them either. CPU time of the process (its threads
    included), so that other work on a busy machine does not count."""

    def sample() -> float:
        given = prepare()
        gc.collect()
        start = time.process_time()
        fn(given)
        return time.process_time() - start

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
class Samples:
    """The seconds each side took, paired by round."""

    by_side: Mapping[str, list[float]]

    def median(self, side: str) -> float:
        return statistics.median(self.by_side[side])

    def ratio(self, a: str, b: str) -> float:
        """Median of ``a`` over median of ``b``."""
        return self.median(a) / self.median(b)

    def spread(self, a: str, b: str) -> tuple[float, float]:
        """Quartiles (25th, 75th percentile) of the per-round ratios a/b: the noise."""
        ratios = [x / y for x, y in zip(self.by_side[a], self.by_side[b], strict=True)]
        if len(ratios) < 2:
            return ratios[0], ratios[0]
        q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
        return q1, q3


def interleave(samplers: Mapping[str, Sampler], *, rounds: int, warmup: int) -> Samples:
    """Warm every side up, then take ``rounds`` samples of each, rotating the order.

    After the warm-up every live object is frozen out of the collector (``gc.freeze``): the
    per-sample ``gc.collect()`` then only sweeps the garbage of the previous sample (about 0.01 ms
    instead of ~30 ms for the whole heap of all the libraries), and any full collection that
    fires inside a sample costs every side the same.
    """
    sides = list(samplers)
    for _ in range(warmup):
        for side in sides:
            samplers[side]()
    samples: dict[str, list[float]] = {side: [] for side in sides}
    gc.collect()
    gc.freeze()
    try:
        for i in range(rounds):
            for side in sides[i % len(sides) :] + sides[: i % len(sides)]:
                gc.collect()
                samples[side].append(samplers[side]())
    finally:
        gc.unfreeze()
    return Samples(samples)
