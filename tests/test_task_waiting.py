"""Calls on the multi-threaded CPU driver wait on a helper thread of lower priority (runtime/waiting.py): their
answers, their errors, one helper per calling thread, and helpers ending with their threads."""
import gc
import os
import threading
import time

import numpy as np
import pytest

import irax
from irax.runtime import waiting

BIG = 1 << 19  # elements from which a program runs on local-task (frontend/compiled.py)


def _helper_threads():
    return [t for t in threading.enumerate() if t.name == "irax-task-wait"]


def test_the_call_runs_on_a_helper_of_lower_priority_and_its_errors_reach_the_caller():
    seen = []

    def invoke(value):
        seen.append((threading.get_ident(), os.getpriority(os.PRIO_PROCESS, threading.get_native_id())))
        if value < 0:
            raise ValueError(f"negative: {value}")

    call = waiting.from_low_priority_thread(invoke)
    call(1)
    with pytest.raises(ValueError, match="negative: -1"):
        call(-1)
    call(2)
    (helper, niceness), = set(seen)
    assert helper != threading.get_ident() and niceness == os.getpriority(os.PRIO_PROCESS, 0) + waiting.NICENESS


def test_task_driver_programs_answer_from_every_calling_thread():
    f = irax.jit(lambda x: x * 2.0 + 1.0)
    x = np.arange(BIG, dtype=np.float32)
    np.testing.assert_array_equal(f(x), x * 2.0 + 1.0)  # traced here: irax traces on one thread at a time
    answers, helpers = {}, {"main": waiting._helpers.helper}

    def work(k):
        answers[k] = np.asarray(f(x + k))
        helpers[k] = waiting._helpers.helper

    threads = [threading.Thread(target=work, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(3):
        np.testing.assert_array_equal(answers[k], (x + k) * 2.0 + 1.0)
    assert len({id(h) for h in helpers.values()}) == 4


def test_a_helper_ends_with_its_thread():
    before = len(_helper_threads())
    t = threading.Thread(target=waiting.from_low_priority_thread(lambda: None))
    t.start()
    t.join()
    gc.collect()
    deadline = time.monotonic() + 5
    while len(_helper_threads()) > before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(_helper_threads()) == before
