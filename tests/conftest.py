import fcntl
import os
import pickle
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


def shared_root(tmp_path_factory):
    """A directory of this run that every xdist worker sees (the workers' basetemps are its subdirectories)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


_memo: dict = {}


@pytest.fixture(scope="session")
def shared(tmp_path_factory):
    """``shared(key, compute)``: ``compute()`` once per run, even across xdist workers (pickled in a locked file),
    for a result many tests read that costs seconds (one compile of every case, a child process): the second
    worker waits for the first instead of doing the same work beside it."""
    root = shared_root(tmp_path_factory)

    def get(key, compute):
        if key not in _memo:
            path = root / f"shared-{key}.pickle"
            with open(root / f"shared-{key}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if path.exists():
                    _memo[key] = pickle.loads(path.read_bytes())
                else:
                    _memo[key] = compute()
                    path.write_bytes(pickle.dumps(_memo[key]))
        return _memo[key]
    return get


@pytest.fixture(autouse=True)
def _gpu_devices_released():
    """After a test that used a GPU device, its jitted calls and the device go: IREE's Vulkan driver on lavapipe
    polls with two threads while a device lives, which took more than half of CI's two cores for the rest of the
    run once the first Vulkan test had run."""
    yield
    from irax.runtime import device
    gpu_drivers = [d for d in device._DEVICES if d not in device.CPU_DRIVERS]
    if gpu_drivers:
        import gc

        import irax
        irax.clear_caches()
        for driver in gpu_drivers:
            device.release_device(driver)
        gc.collect()
