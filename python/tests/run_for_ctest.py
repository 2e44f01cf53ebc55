"""ctest's entry to the Python tests: runs pytest on python/tests with this build's libck
(CK_KERNELS_LIB) when the Python at hand has NumPy and pytest, else reports the test skipped
(exit 77). CK_PYTHON_CTEST=0 skips it too: CI (.ci/run) runs the same tests once, against the
package installed into a fresh virtual environment."""
import os
import sys

if os.environ.get("CK_PYTHON_CTEST") == "0":
    print("skipped: CK_PYTHON_CTEST=0 (the Python tests run elsewhere, e.g. CI's fresh venv)")
    sys.exit(77)
try:
    import numpy  # noqa: F401
    import pytest
except ImportError as e:
    print(f"skipped: {e.name} is not installed for {sys.executable} (pip install numpy pytest)")
    sys.exit(77)
code = pytest.main(["-q", "-p", "no:cacheprovider", os.path.dirname(os.path.abspath(__file__))])
sys.exit(0 if code == 0 else 1)
