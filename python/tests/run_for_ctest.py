"""ctest's entry to the Python tests: runs pytest on python/tests with this build's libck
(CK_KERNELS_LIB) when the Python at hand has NumPy and pytest, else reports the test skipped
(exit 77)."""
import os
import sys

try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e.name} is not installed for {sys.executable} (pip install numpy pytest)")
    sys.exit(77)
code = pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))])
sys.exit(0 if code == 0 else 1)
