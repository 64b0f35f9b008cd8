"""A release racing a completion of the same timed-out job never loses or duplicates it.

Each round: a job's claim has timed out; one thread completes it while another releases timed-out claims,
both let go at the same instant. Whoever wins, the job must end up in exactly one place: completed once
(the release found nothing), or back in pending with the late completion refused as LeaseLost.
"""

from __future__ import annotations

import threading
import time

from queuetop.act.queue import Queue
from queuetop.db import LeaseLost

from .helpers import completed_ids_with_repeats, queue_rows

ROUNDS = 60


def test_release_racing_completion(backend):
    worker_db, sweeper_db, check_db = backend.open(), backend.open(), backend.open()
    worker, sweeper = Queue(worker_db, backend.layout), Queue(sweeper_db, backend.layout)
    outcomes = {"completed": 0, "released": 0}
    for _ in range(ROUNDS):
        job_id = worker.enqueue("race")
        job = worker.claim("w", lease=0.02)[0]
        time.sleep(0.03)  # the lease is over: both moves are allowed to try
        start = threading.Barrier(2)
        result: dict[str, object] = {}

        def complete(job=job, start=start, result=result) -> None:
            start.wait()
            try:
                worker.complete(job.id, job.token)
                result["completed"] = True
            except LeaseLost:
                result["completed"] = False

        def release(start=start, result=result) -> None:
            start.wait()
            result["release"] = sweeper.release_timed_out()

        threads = [threading.Thread(target=complete), threading.Thread(target=release)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        in_completed = completed_ids_with_repeats(check_db, backend.layout).count(job_id)
        pending = queue_rows(check_db, backend.layout).get(job_id)
        if result["completed"]:
            assert (in_completed, pending, result["release"].released) == (1, None, 0)
            outcomes["completed"] += 1
        else:
            assert in_completed == 0 and pending is not None and pending[1] is None  # back to pending
            assert result["release"].released == 1
            outcomes["released"] += 1
            retry = worker.claim("w", lease=30)[0]  # and it can still be finished, once
            worker.complete(retry.id, retry.token)
    assert sum(outcomes.values()) == ROUNDS
    assert len(set(completed_ids_with_repeats(check_db, backend.layout))) == ROUNDS
    for db in (worker_db, sweeper_db, check_db):
        db.close()
