"""pytest set-up for the Python module's tests. ctest python_tests runs them on the module in
build/python (PYTHONPATH); after `pip install .` they run on the installed one. The independent
reference is tests/numpy_reference.py (docs/SPEC.md's reshape/transpose definitions)."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def pytest_collection_modifyitems(config, items):
    """TensorFlow's tests run last: with TensorFlow 2.21 loaded, importing triton (which
    torch.compile and opcheck do) aborts the process in triton's module set-up."""
    items.sort(key=lambda item: "tensorflow" in item.nodeid)
