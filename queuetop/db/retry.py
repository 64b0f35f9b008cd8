"""Running an operation again when the database gave up on it for a reason that passes (a deadlock, a
serialization conflict, a lock or busy timeout): the one retry loop of queuetop.

The database rolled back what it refused, so running the operation again is safe when the operation is one
statement or one whole transaction. Queue operations are also compare-and-set on the claim token, so even an
operation that succeeded but whose answer was lost cannot act twice: a retried complete raises LeaseLost, a
retried claim takes other jobs and the first claim's jobs come back when their lease times out.

Never retry one statement of a longer transaction: the whole transaction was rolled back, so retry the
function that runs all of it.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

from queuetop.core.errors import TransientError

T = TypeVar("T")

ATTEMPTS = 6  # the first try and five more
BASE_DELAY_S = 0.02
MAX_DELAY_S = 1.0


def backoff_s(retry: int, rng: Callable[[], float] = random.random) -> float:
    """The pause before the `retry`-th retry (1, 2, ...): "full jitter", uniform in (0, min(cap, base·2^n)], so
    workers that collided once do not collide again in step."""
    ceiling = min(MAX_DELAY_S, BASE_DELAY_S * 2 ** (retry - 1))
    return ceiling * max(rng(), 0.05)


def retry_transient(operation: Callable[[], T], *, attempts: int = ATTEMPTS,
                    on_retry: Callable[[TransientError], None] | None = None,
                    sleep: Callable[[float], None] = time.sleep) -> T:  # fmt: skip
    """Run `operation`; on a TransientError run it again, at most `attempts` times in all, with jittered
    exponential back-off. `on_retry` hears of each retried error (a load run counts them). The last error is
    raised as it is; any other error at once."""
    for retry in range(1, attempts):
        try:
            return operation()
        except TransientError as exc:
            if on_retry is not None:
                on_retry(exc)
            sleep(backoff_s(retry))
    return operation()
