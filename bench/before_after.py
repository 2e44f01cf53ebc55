#!/usr/bin/env python3
"""ck against ck: two builds' `ck prof` times of the same cases, interleaved, in one run.

The cases are those of bench/norm_ops.py (softmax, layernorm, RMSNorm) and bench/memory_ops.py
(copy, cast, elementwise, permute), plus a few variants neither covers (norm backward,
residual, quantized y, cluster rows; reduce). For every case the base build runs, then the
head build, on the same GPU, so clocks and temperature are alike. Prints a markdown table:
bench, case, base ms, head ms, head speed / base speed (> 1: head faster), % of the copy
bandwidth of each. Torch is not timed (see the two benches for that).

    python3 bench/before_after.py --base build-base --head build-head [--full] [--reps 50]
                                  [--head-env CK_NORM_WINDOW=1] [--only layernorm]

--head-env NAME=VALUE (repeatable) sets a developer switch for the head build's runs only, so a
variant behind a switch is timed against the base in the same run.

bench/before_after.sh builds the two trees and calls this.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memory_ops  # noqa: E402
import norm_ops  # noqa: E402


def extra_cases():
    """(op, shape, flags): what the two benches do not run (norm variants, reduce)."""
    return [
        ("layernorm", "16384x8192", ["--bwd"]),
        ("rmsnorm", "16384x8192", ["--bwd"]),
        ("layernorm", "16384x8192", ["--residual"]),
        ("layernorm", "16384x8192", ["--quant", "fp8e4m3"]),
        ("rmsnorm", "16384x8192", ["--quant", "int8", "--smooth"]),
        ("layernorm", "4096x100000", []),
        ("reduce", "16384x8192", ["--op", "sum"]),
        ("reduce", "16384x8192", ["--op", "argmax"]),
        ("reduce", "16384x8192", ["--op", "norm2"]),
        ("reduce", "16384x8192", ["--op", "sum", "--axes", "0"]),
        ("reduce", "64x256x56x56", ["--op", "mean", "--axes", "2,3"]),
        # issue 19's gap shapes and the shapes their new defaults touch
        ("softmax", "16384x1023", []),
        ("softmax", "4096x50257", []),
        ("softmax", "300x212993", []),
        ("layernorm", "131072x1024", ["--bwd"]),
        ("layernorm", "512x1048576", []),
        ("rmsnorm", "512x1048576", []),
        ("layernorm", "16384x8192", ["--quant", "int8"]),
        ("reduce", "64x1048576", ["--op", "norm2"]),
        ("permute", "16384x8192", ["--perm", "1,0", "--dtype", "f32"]),
    ]


def norm_case(build, op, rows, n, reps):
    r, err = norm_ops.run_ck(build, op, rows, n, reps)
    return r, err


def mem_case(build, op, shape, flags, reps, timeout):
    r, err, _ = memory_ops.run_ck(build, op, shape, flags, reps, timeout)
    return r, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="build directory of the base commit")
    ap.add_argument("--head", required=True, help="build directory of the new commit")
    ap.add_argument("--full", action="store_true", help="the benches' full sweeps (slower)")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--only", default=None, help="only cases whose text contains this")
    ap.add_argument("--head-env", action="append", default=[],
                    help="NAME=VALUE for the head build's runs only (repeatable)")
    a = ap.parse_args()
    quick = not a.full
    todo = []
    for op in ("softmax", "layernorm", "rmsnorm"):
        for rows, n in norm_ops.sweep(quick):
            todo.append(("norm_ops", "%s %dx%d" % (op, rows, n),
                         lambda b, op=op, rows=rows, n=n: norm_case(b, op, rows, n, a.reps)))
    for op, shape, flags, _ in memory_ops.cases(quick):
        todo.append(("memory_ops", "%s %s %s" % (op, shape, " ".join(flags)),
                     lambda b, op=op, shape=shape, flags=flags:
                     mem_case(b, op, shape, flags, a.reps, a.timeout)))
    for op, shape, flags in extra_cases():
        todo.append(("extra", "%s %s %s" % (op, shape, " ".join(flags)),
                     lambda b, op=op, shape=shape, flags=flags:
                     mem_case(b, op, shape, flags, a.reps, a.timeout)))
    if a.only:
        todo = [t for t in todo if a.only in t[1]]
    if a.head_env:
        print("head runs with %s" % " ".join(a.head_env))
    print("| bench | case | base ms | head ms | head/base speed | base % copy | head % copy |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for i, (bench, case, run) in enumerate(todo):
        res = []
        for build in (a.base, a.head):
            saved = {}
            if build == a.head:
                for kv in a.head_env:
                    k, _, v = kv.partition("=")
                    saved[k] = os.environ.get(k)
                    os.environ[k] = v
            try:
                r, err = run(build)
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            res.append((r, err))
        print("[%d/%d] %s" % (i + 1, len(todo), case), file=sys.stderr, flush=True)
        (rb, eb), (rh, eh) = res
        if rb is None or rh is None:
            print("| %s | %s | %s | %s | - | - | - |" % (
                bench, case, "%.4f" % rb["ms"] if rb else "n/a (%s)" % eb,
                "%.4f" % rh["ms"] if rh else "n/a (%s)" % eh))
            continue
        bad = [c for c in (rb.get("check"), rh.get("check")) if c not in (None, "ok", "unchecked")]
        print("| %s | %s | %.4f | %.4f | %.3f%s | %.1f | %.1f |" % (
            bench, case, rb["ms"], rh["ms"], rb["ms"] / rh["ms"],
            " (check %s)" % ",".join(bad) if bad else "",
            100.0 * rb.get("ratio_to_copy", 0.0), 100.0 * rh.get("ratio_to_copy", 0.0)))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
