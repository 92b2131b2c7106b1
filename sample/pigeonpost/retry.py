"""Retry policy: exponential backoff with full jitter, honouring Retry-After."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


@dataclass
class RetryPolicy:
    """How many times to try a request and how long to wait in between.

    The delay before attempt n (n >= 2) is a random value in
    [0, min(max_delay, base_delay * 2 ** (n - 2))]: "full jitter", which spreads
    clients out better than a fixed exponential schedule.
    """

    max_attempts: int = 3
    base_delay: float = 0.25
    max_delay: float = 8.0
    retry_unsafe: bool = False
    rng: random.Random = field(default_factory=random.Random)

    def should_retry(self, method: str, attempt: int, status: int | None = None,
                     error: Exception | None = None) -> bool:
        """True when attempt number `attempt` failed in a way worth another try."""
        if attempt >= self.max_attempts:
            return False
        if method.upper() not in IDEMPOTENT_METHODS and not self.retry_unsafe:
            return False
        if error is not None:
            return isinstance(error, (ConnectionResetError, TimeoutError))
        return status in RETRYABLE_STATUS

    def backoff_delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to sleep after failed attempt number `attempt`."""
        if retry_after:
            hinted = parse_retry_after(retry_after)
            if hinted is not None:
                return min(hinted, self.max_delay)
        ceiling = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return self.rng.uniform(0, ceiling)


def parse_retry_after(value: str, now: float | None = None) -> float | None:
    """Retry-After is either delay-seconds or an HTTP date; None when unparseable."""
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))
