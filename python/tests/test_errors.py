"""Refusals raise ck_kernels.CkError with ck's status and sentence; nothing crashes."""
import numpy as np
import pytest

import ck_kernels as ck
from ck_kernels import CkError, Status


def test_wrong_dtype_is_refused_by_ck_with_its_sentence():
    x = np.ones((2, 8), np.float64)
    with pytest.raises(CkError) as e:
        ck.softmax(x)
    assert e.value.status in (Status.UNSUPPORTED, Status.INVALID_ARGUMENT)
    assert "f64" in e.value.message and e.value.message.endswith(".")
    assert str(e.value).startswith("CK_ERROR_")


def test_unrepresentable_dtype_is_refused():
    with pytest.raises(CkError) as e:
        ck.softmax(np.ones((2, 4), np.complex64))
    assert e.value.status == Status.UNSUPPORTED and "complex64" in e.value.message


def test_non_contiguous_last_dimension_is_refused():
    x = np.ones((4, 16), np.float32)[:, ::2]
    with pytest.raises(CkError) as e:
        ck.softmax(x)
    assert e.value.status in (Status.UNSUPPORTED, Status.INVALID_ARGUMENT)


def test_softmax_over_a_leading_dimension_is_refused():
    with pytest.raises(CkError) as e:
        ck.softmax(np.ones((3, 4), np.float32), dim=0)
    assert e.value.status == Status.UNSUPPORTED and "dim" in e.value.message


def test_expression_parse_error_names_the_position():
    with pytest.raises(CkError) as e:
        ck.elementwise("relu(x0 *", np.ones(4, np.float32))
    assert e.value.status == Status.PARSE


def test_bad_arguments():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(CkError, match="permutation"):
        ck.permute(x, (0, 0))
    with pytest.raises(CkError, match="NumPy arrays"):
        ck.softmax([[1.0, 2.0]])
    with pytest.raises(CkError) as e:
        ck.argmax(np.ones((2, 0), np.float32), 1)
    assert e.value.status == Status.INVALID_ARGUMENT
    with pytest.raises(CkError, match="normalized_shape"):
        ck.layer_norm(x, (2,))
    with pytest.raises(CkError) as e:
        ck.elementwise("x0 + x1", x, np.ones((4,), np.float32))
    assert "broadcast" in e.value.message
    with pytest.raises(CkError):
        ck.cast(x, np.float16, rounding="up")


def test_output_overlapping_input_is_refused():
    x = np.ones((4, 8), np.float32)
    with pytest.raises(CkError) as e:
        ck.permute(x, (1, 0), out=x.reshape(8, 4))
    assert e.value.status == Status.INVALID_ARGUMENT
