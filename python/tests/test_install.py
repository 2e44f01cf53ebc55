"""The package as installed (.ci/run installs it with pip into a fresh virtual environment
from the checkout and runs these tests there, with CK_KERNELS_EXPECT_INSTALLED=1)."""
import os

import pytest

import ck_kernels as ck

installed = os.environ.get("CK_KERNELS_EXPECT_INSTALLED") == "1"


@pytest.mark.skipif(not installed, reason="runs against a pip-installed package only")
def test_package_is_the_installed_wheel_with_its_libck():
    here = os.path.dirname(ck.__file__)
    assert "site-packages" in here, here
    assert os.path.isfile(os.path.join(here, "lib", "libck.so"))
    assert not os.environ.get("CK_KERNELS_LIB")
    assert ck.version() == ck.__version__


def test_version_and_exports():
    assert ck.version().count(".") == 2
    for name in ck.__all__:
        assert hasattr(ck, name), name


@pytest.mark.skipif(not installed, reason="runs against a pip-installed package only")
def test_the_wheel_has_the_call_template_extension():
    """pip install builds ck_kernels._ckfast where Python's headers are (as on CI)."""
    import sysconfig

    if not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")):
        pytest.skip("no Python.h: the package runs the call templates in Python")
    from ck_kernels import _ckfast

    assert os.path.dirname(_ckfast.__file__) == os.path.dirname(ck.__file__)
