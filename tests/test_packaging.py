"""The wheel's package list names every package of the source tree (a subpackage missing there is absent from a
``pip install .``, though an editable install finds it: irax.scipy.sparse was missing so)."""
import os

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
