"""Calls into IREE's multi-threaded CPU driver, made from a helper thread of lower priority.

``local-task`` runs a program on one worker thread per core while the calling thread waits on the program's fence.
That wait ends in a spin: the waiter, woken by the worker that signalled, spins (``pause``) until that worker has
finished signalling. The wake-up often hands the worker's core to the waiter, so the waiter spins on the core of
the very worker it waits for, until the scheduler's time slice ends: measured on two cores, a third of the
convnet bench's calls took 1.5, 3 or 4.5 ms longer than the 2.4 ms of the others (the spin shows in ``perf``, in
IREE's runtime after a ``FUTEX_WAKE``). The helper thread waiting at niceness 10 never takes a worker's core, and
those calls all take the 2.4 ms (p90 2.7 ms instead of 5-7 ms). The handoff costs tens of microseconds, which
programs big enough for ``local-task`` do not notice.

Each calling thread has its own helper (threads do not wait on each other's calls); a helper ends with its thread.
"""
from __future__ import annotations

import os
import queue
import threading
import weakref

NICENESS = 10
_helpers = threading.local()


def from_low_priority_thread(invoke):
    """``invoke``, called from the calling thread's helper."""
    def call(*args):
        helper = getattr(_helpers, "helper", None)
        if helper is None:
            helper = _helpers.helper = _Helper()
        helper.run(invoke, args)
    return call


class _Helper:
    def __init__(self):
        self._jobs, self._outcomes = queue.SimpleQueue(), queue.SimpleQueue()
        threading.Thread(target=_serve, args=(self._jobs, self._outcomes), name="irax-task-wait", daemon=True).start()
        weakref.finalize(self, self._jobs.put, None)

    def run(self, invoke, args):
        self._jobs.put((invoke, args))
        try:
            error = self._outcomes.get()
        except BaseException:
            # interrupted while its call runs on: the next call gets a new helper, not this call's outcome
            _helpers.__dict__.pop("helper", None)
            raise
        if error is not None:
            raise error


def _serve(jobs, outcomes):
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)
    except (AttributeError, OSError):  # per-thread niceness is Linux's
        pass
    for invoke, args in iter(jobs.get, None):
        try:
            invoke(*args)
            outcomes.put(None)
        except BaseException as e:
            outcomes.put(e)
        del invoke, args


if hasattr(os, "register_at_fork"):  # a forked child has none of its parent's helper threads
    os.register_at_fork(after_in_child=_helpers.__dict__.clear)
