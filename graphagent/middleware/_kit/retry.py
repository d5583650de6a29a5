"""What the retry middleware share: option checks, the retry decision, the delay and the loop.

``wait`` is looked up at call time, so tests can replace it to record delays.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from graphagent._core.deprecated import warn_deprecated
from graphagent._core.langgraph_internals import is_control_flow
from graphagent.errors import MiddlewareError, MiddlewareTypeError

if TYPE_CHECKING:
    from graphagent._core.bridge import Mode

try:  # langchain-core >= 1.3 classifies provider errors as retryable or not
    from langchain_core.exceptions import ModelError
except ImportError:  # pragma: no cover - older langchain-core
    ModelError = None  # type: ignore[assignment,misc]

RetryOn: TypeAlias = tuple[type[Exception], ...] | Callable[[Exception], bool]
"""Which failures are retried: a tuple of exception classes, or a predicate on the exception."""

OnFailure: TypeAlias = Literal["continue", "error"] | Callable[[Exception], str]
"""What happens when the retries run out: answer with a message, re-raise, or build the text."""

JITTER = 0.25
_ON_FAILURE_ACTIONS = ("continue", "error")
_RENAMED_ACTIONS = {"raise": "error", "return_message": "continue"}
_CHECKED_BY_LANGCHAIN = frozenset({"max_retries", "initial_delay", "max_delay", "backoff_factor"})


def retry_by_default(exc: Exception) -> bool:
    """The default ``retry_on``: every exception, except provider errors marked non-retryable."""
    if ModelError is not None and isinstance(exc, ModelError):
        return bool(exc.is_retryable)
    return True


async def wait(mode: Mode, seconds: float) -> None:
    """Wait between attempts, without blocking the event loop of an async run."""
    await mode.sleep(seconds)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Validated retry options; build one with :func:`retry_policy`."""

    max_retries: int
    retry_on: RetryOn
    on_failure: OnFailure
    backoff_factor: float
    initial_delay: float
    max_delay: float
    jitter: bool

    def should_retry(self, exc: Exception) -> bool:
        """Whether ``exc`` earns another attempt; control-flow signals never do."""
        if is_control_flow(exc):
            return False
        if isinstance(self.retry_on, tuple):
            return isinstance(exc, self.retry_on)
        return bool(self.retry_on(exc))

    def delay(self, retry_number: int) -> float:
        """Seconds to wait before retry ``retry_number`` (0 for the first retry)."""
        if self.initial_delay == 0:
            return 0.0
        # A backoff factor of 0 means a constant delay, not "no wait after the first retry".
        factor = self.backoff_factor or 1.0
        try:
            delay = self.initial_delay * factor**retry_number
        except OverflowError:
            delay = math.inf
        if self.jitter:
            delay *= random.uniform(1 - JITTER, 1 + JITTER)
        # Capped after the jitter, so max_delay really is the longest wait.
        return min(delay, self.max_delay)


class RetryOptions:
    """The options of a retry middleware, readable under their constructor names."""

    _policy: RetryPolicy

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt."""
        return self._policy.max_retries

    @property
    def retry_on(self) -> RetryOn:
        """Which failures are retried."""
        return self._policy.retry_on

    @property
    def on_failure(self) -> OnFailure:
        """What happens when the retries run out."""
        return self._policy.on_failure

    @property
    def backoff_factor(self) -> float:
        """Each wait is this many times the previous one (0: a constant wait)."""
        return self._policy.backoff_factor

    @property
    def initial_delay(self) -> float:
        """Seconds before the first retry."""
        return self._policy.initial_delay

    @property
    def max_delay(self) -> float:
        """The longest wait, in seconds."""
        return self._policy.max_delay

    @property
    def jitter(self) -> bool:
        """Whether each wait is randomised by up to ±25%."""
        return self._policy.jitter


@dataclass(frozen=True, slots=True)
class Exhausted:
    """Every attempt failed with a retryable error and ``on_failure`` does not re-raise."""

    error: Exception
    attempts: int

    def describe(self) -> str:
        """``'3 attempts with ConnectionError: service down'``."""
        noun = "attempt" if self.attempts == 1 else "attempts"
        return f"{self.attempts} {noun} with {type(self.error).__name__}: {self.error}"


async def call_with_retries(mode: Mode, policy: RetryPolicy, attempt: Callable[[], Any]) -> Any:
    """Call ``attempt`` through ``mode`` until it succeeds, fails for good, or the retries run
    out: its result, or :class:`Exhausted`."""
    failures = 0
    while True:
        try:
            return await mode.call(attempt)
        except Exception as exc:
            if _propagates(policy, exc, failures):
                raise
            if failures == policy.max_retries:
                return Exhausted(exc, failures + 1)
        pause = policy.delay(failures)
        failures += 1
        if pause > 0:
            await wait(mode, pause)


def _propagates(policy: RetryPolicy, exc: Exception, failures: int) -> bool:
    """Not retryable, or the last attempt failed and ``on_failure="error"``: re-raise as is."""
    if not policy.should_retry(exc):
        return True
    return failures == policy.max_retries and policy.on_failure == "error"


def failure_text(policy: RetryPolicy, exhausted: Exhausted, default: str) -> str:
    """The text of the message that replaces a call whose retries ran out."""
    if callable(policy.on_failure):
        return policy.on_failure(exhausted.error)
    return default


# -- construction -----------------------------------------------------------------------------


def retry_policy(
    owner: str,
    *,
    max_retries: Any,
    retry_on: Any,
    on_failure: Any,
    backoff_factor: Any,
    initial_delay: Any,
    max_delay: Any,
    jitter: Any,
) -> RetryPolicy:
    """Check every option, naming ``owner`` (the middleware class) in the error."""
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise _invalid(
            owner,
            "max_retries",
            max_retries,
            "must be a whole number >= 0 (retries after the first attempt; 0 disables retrying)",
            wrong_type=not _is_number(max_retries),
        )
    return RetryPolicy(
        max_retries=max_retries,
        retry_on=_check_retry_on(owner, retry_on),
        on_failure=_check_on_failure(owner, on_failure),
        backoff_factor=_check_number(owner, "backoff_factor", backoff_factor),
        initial_delay=_check_number(owner, "initial_delay", initial_delay),
        max_delay=_check_number(owner, "max_delay", max_delay, allow_infinity=True),
        jitter=_check_jitter(owner, jitter),
    )


def _check_retry_on(owner: str, retry_on: Any) -> RetryOn:
    if _is_exception_class(retry_on):
        return (retry_on,)
    if isinstance(retry_on, tuple):
        wrong = [item for item in retry_on if not _is_exception_class(item)]
        if wrong:
            raise _invalid(
                owner,
                "retry_on",
                retry_on,
                f"holds {wrong[0]!r}, which is not an Exception subclass; "
                "list exception classes such as (ConnectionError, TimeoutError)",
                wrong_type=True,
            )
        return retry_on
    if callable(retry_on):
        return retry_on  # type: ignore[no-any-return]
    raise _invalid(
        owner,
        "retry_on",
        retry_on,
        "must be a tuple of exception classes, e.g. (ConnectionError,), "
        "or a function taking the exception and returning True to retry",
        wrong_type=True,
    )


def _is_exception_class(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, Exception)


def _check_on_failure(owner: str, on_failure: Any) -> OnFailure:
    if isinstance(on_failure, str) and on_failure in _RENAMED_ACTIONS:
        renamed = _RENAMED_ACTIONS[on_failure]
        warn_deprecated(owner, f"on_failure={on_failure!r}", f"on_failure={renamed!r}")
        return renamed  # type: ignore[return-value]
    if on_failure in _ON_FAILURE_ACTIONS or callable(on_failure):
        return on_failure  # type: ignore[no-any-return]
    raise _invalid(
        owner,
        "on_failure",
        on_failure,
        "must be 'continue', 'error', or a function taking the exception and returning "
        "the message text",
        wrong_type=not isinstance(on_failure, str),
    )


def _check_number(owner: str, param: str, value: Any, *, allow_infinity: bool = False) -> float:
    number_ok = _is_number(value)
    if number_ok and value >= 0 and (math.isfinite(value) or (allow_infinity and value > 0)):
        return float(value)
    kind = "a number >= 0 (float('inf') for no cap)" if allow_infinity else "a finite number >= 0"
    raise _invalid(owner, param, value, f"must be {kind}", wrong_type=not number_ok)


def _check_jitter(owner: str, jitter: Any) -> bool:
    if isinstance(jitter, bool):
        return jitter
    raise _invalid(owner, "jitter", jitter, "must be True or False", wrong_type=True)


def _invalid(
    owner: str, param: str, value: Any, problem: str, *, wrong_type: bool
) -> MiddlewareError:
    """The error for a bad option: also a ``TypeError`` when the value is of the wrong type, as
    LangChain's comparisons and calls raise for it."""
    message = f"{owner}({param}={value!r}): {param} {problem}."
    if param in _CHECKED_BY_LANGCHAIN and _is_number(value) and value < 0:  # LangChain's words
        message = f"{param} must be >= 0: {message}"
    return MiddlewareTypeError(message) if wrong_type else MiddlewareError(message)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
