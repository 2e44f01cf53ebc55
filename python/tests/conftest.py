"""Tests of ck_kernels on the CPU emulator: NumPy inputs against NumPy references (every
element), error paths, the kernel cache; torch tests (custom ops, autograd, torch.compile) when
torch is installed. Seeded random data; the seed is printed in the header."""
import os

import numpy as np
import pytest

SEED = int(os.environ.get("CK_TEST_SEED", "1234"))


def pytest_report_header(config):
    import ck_kernels

    return (f"ck_kernels {ck_kernels.__version__} from {os.path.dirname(ck_kernels.__file__)}, "
            f"libck {ck_kernels.version()}, seed {SEED}")


@pytest.fixture
def rng(request):
    # one stream per test, reproducible from the seed and the test's name
    return np.random.default_rng([SEED, sum(map(ord, request.node.name))])
