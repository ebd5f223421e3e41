"""The wheel's package list names every package of the source tree (a subpackage missing there is absent from a
``pip install .``, though an editable install finds it: irax.scipy.sparse was missing so), and modules that import
each other import in any order."""
import os
import subprocess
import sys

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_every_package_directory_is_listed_in_pyproject():
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        setuptools = tomllib.load(f)["tool"]["setuptools"]
    found = set()
    for package, directory in setuptools["package-dir"].items():
        for path, dirs, files in os.walk(os.path.join(ROOT, directory)):
            dirs[:] = [d for d in dirs if d != "__pycache__"]
            if "__init__.py" in files:
                relative = os.path.relpath(path, os.path.join(ROOT, directory))
                found.add(package if relative == "." else f"{package}.{relative.replace(os.sep, '.')}")
    assert found - set(setuptools["packages"]) == set()


@pytest.mark.parametrize("module", ["irax.passes", "irax.backends.numpy_linalg", "irax.backends.numpy_sort",
                                    "irax.backends.numpy_decompositions"])
def test_module_imports_first_in_a_fresh_interpreter(module):
    """Each of these, imported before the rest, once met a half-initialized module of an import cycle."""
    run = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
