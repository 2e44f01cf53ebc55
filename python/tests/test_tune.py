"""ck.tune on the emulator: the recorded call's tuner stores its winner in the tuning table
(CK_TUNING_FILE, a temporary file), the winner is one of the candidates it reported, the call
still computes the right result afterwards, and calls that cannot be tuned raise CkError with
a sentence. (Small problems: on the emulator every candidate is a compiled kernel.)"""
import numpy as np
import pytest

import ck_kernels as ck


@pytest.fixture
def table(tmp_path, monkeypatch):
    path = tmp_path / "tuning.tsv"
    monkeypatch.setenv("CK_TUNING_FILE", str(path))
    return path


def test_tune_reduce_stores_the_winner(table, rng, capsys):
    x = rng.standard_normal((3, 64)).astype(np.float32)
    r = ck.tune(ck.sum, x, -1, reps=1)
    assert r["op"] == "sum" and r["ms"] > 0
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(ln.startswith("ck tune reduce: ") for ln in lines)
    assert any(" " + r["instance"] + " " in ln for ln in lines)  # one of the candidates
    rows = [ln.split("\t") for ln in table.read_text().splitlines() if not ln.startswith("#")]
    assert [(c[0], c[3]) for c in rows] == [("reduce", r["instance"])]
    np.testing.assert_allclose(ck.sum(x, -1), x.sum(-1), rtol=1e-5, atol=1e-5)


def test_tune_refusals(table, rng):
    x = rng.standard_normal((2, 8)).astype(np.float32)
    with pytest.raises(ck.CkError) as e:  # a permutation that is not a tiled transpose
        ck.tune(ck.permute, x[None], (0, 1, 2), reps=1, progress=False)
    assert e.value.status == ck.Status.UNSUPPORTED and "no instances" in e.value.message
    with pytest.raises(ck.CkError) as e:  # reaches no tunable operation
        ck.tune(ck.topk_softmax, x, 2, reps=1)
    assert e.value.status == ck.Status.UNSUPPORTED and "tunable" in e.value.message
    with pytest.raises(ck.CkError) as e:
        ck.tune(ck.sum, x, -1, reps=0)
    assert e.value.status == ck.Status.INVALID_ARGUMENT
    assert not table.exists() or "reduce" not in table.read_text()
