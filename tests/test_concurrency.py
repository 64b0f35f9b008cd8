"""Concurrent workers on real databases: every job completed exactly once, none lost.

8 worker threads, each with its own connection, claim and complete 5,000 jobs of 5 types. In the second
run 10 % of first claims are abandoned, as by a worker that died: after their lease a sweeper's
`release_timed_out` hands them back and they complete. Duplicates and losses are counted in the completed
table, not in memory.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter

from queuetop.act.queue import Queue
from queuetop.db import LeaseLost, Timeout

from .helpers import completed_ids_with_repeats, completed_rows, queue_rows

JOBS = 5_000
TYPES = ["email", "report", "resize", "billing", "cleanup"]
WORKERS = 8


def run_workers(backend, ids: set[int], abandon: float, lease: float) -> dict:
    done_by_workers: list[int] = []
    lease_lost = Counter()
    abandoned: list[int] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    stop = threading.Event()

    def worker(n: int) -> None:
        rng = random.Random(n)
        db = backend.open()
        queue = Queue(db, backend.layout, max_attempts=10)
        try:
            while not stop.is_set():
                try:
                    jobs = queue.claim(f"w{n}", batch=rng.choice([1, 1, 5]), lease=lease)
                except Timeout:  # SQLite busy beyond its timeout: try again
                    continue
                if not jobs:
                    time.sleep(0.005)
                    continue
                for job in jobs:
                    if job.attempts == 1 and rng.random() < abandon:
                        with lock:
                            abandoned.append(job.id)
                        continue  # as if the worker died holding it
                    try:
                        queue.complete(job.id, job.token)
                    except LeaseLost:
                        lease_lost[n] += 1
                        continue
                    with lock:
                        done_by_workers.append(job.id)
        except BaseException as exc:  # surfaced by the test below
            errors.append(exc)
        finally:
            db.close()

    def sweeper() -> None:
        db = backend.open()
        queue = Queue(db, backend.layout, max_attempts=10)
        try:
            while not stop.is_set():
                time.sleep(lease / 2)
                queue.release_timed_out()
        except BaseException as exc:
            errors.append(exc)
        finally:
            db.close()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(WORKERS)]
    if abandon:
        threads.append(threading.Thread(target=sweeper))
    for thread in threads:
        thread.start()
    with backend.open() as watcher:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not errors:
            if len(completed_rows(watcher, backend.layout)) >= len(ids):
                break
            time.sleep(0.2)
    stop.set()
    for thread in threads:
        thread.join(30)
    assert not errors, errors
    return {"done": done_by_workers, "abandoned": abandoned, "lease_lost": sum(lease_lost.values())}


def enqueue_jobs(backend) -> set[int]:
    with backend.open() as db:
        queue = Queue(db, backend.layout)
        ids: set[int] = set()
        for i, job_type in enumerate(TYPES):
            ids.update(queue.enqueue_many(job_type, JOBS // len(TYPES), info=f"batch {i}"))
    assert len(ids) == JOBS
    return ids


def assert_each_completed_once(backend, ids: set[int], done_by_workers: list[int]) -> None:
    with backend.open() as db:
        completed = completed_ids_with_repeats(db, backend.layout)
        outcomes = completed_rows(db, backend.layout)
        left = queue_rows(db, backend.layout)
    assert len(completed) == len(set(completed)) == JOBS, "a job completed twice or went missing"
    assert set(completed) == ids, "the completed table is not the enqueued set"
    assert not left, f"{len(left)} jobs were left in the queue"
    assert Counter(done_by_workers) == Counter(ids), "a worker's completion was lost or doubled"
    assert {outcome for _, outcome, _ in outcomes.values()} == {"succeeded"}


def test_eight_workers_complete_every_job_exactly_once(backend):
    ids = enqueue_jobs(backend)
    result = run_workers(backend, ids, abandon=0.0, lease=60)
    assert_each_completed_once(backend, ids, result["done"])
    assert result["lease_lost"] == 0


def test_abandoned_claims_are_released_after_their_lease_and_then_completed(backend):
    ids = enqueue_jobs(backend)
    result = run_workers(backend, ids, abandon=0.10, lease=1.0)
    assert_each_completed_once(backend, ids, result["done"])
    assert 300 < len(result["abandoned"]) < 700  # about 10 % of 5,000 first claims
    with backend.open() as db:
        attempts = {job_id: row[2] for job_id, row in completed_rows(db, backend.layout).items()}
    assert all(attempts[job_id] >= 2 for job_id in result["abandoned"])
