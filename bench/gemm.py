#!/usr/bin/env python3
"""GEMM bf16 on the GPU: ck's sm90 family against torch.matmul (cuBLAS), in one run.

ck is timed by its own driver (until `ck prof gemm` exists: tests/test_gemm_sm90 with
CK_GEMM_SM90_BENCH, median of 30 runs with an L2 flush before each, 1000 sampled elements
checked against a CPU reference); torch.matmul is timed here the same way (CUDA events, L2
flushed, median of 30). Layout: A row-major (K-major); B K-major (torch: b.t() of an N x K
tensor) unless --b n (B row-major, N contiguous). D bf16 row-major. Prints a markdown table of
TFLOP/s and ck / cuBLAS, then the geometric mean. Builds nothing: pass --build DIR.

usage: python3 bench/gemm.py [--build DIR] [--b k|n] [--quick] [--shapes M,N,K;...]
"""
import argparse
import math
import os
import subprocess
import sys


def sweep(quick):
    shapes = [(4096, 4096, 4096), (8192, 8192, 8192)]
    if quick:
        return shapes
    shapes += [(1024, 1024, 1024), (2048, 2048, 2048), (16384, 1024, 4096), (256, 65536, 1024),
               (256, 1024, 65536), (127, 4097, 1023), (1000, 1000, 1000), (3000, 5000, 2000)]
    for m in (128, 512, 2048, 4096, 8192, 16384):
        for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (6144, 4096)):
            shapes.append((m, n, k))
    return shapes


def run_ck(build, shapes, b):
    exe = os.path.join(build, "bin", "test_gemm_sm90")
    env = dict(os.environ, CK_DEVICE="cuda", CK_GEMM_SM90_B=b,
               CK_GEMM_SM90_BENCH=";".join("%d,%d,%d" % s for s in shapes))
    p = subprocess.run([exe], capture_output=True, text=True, env=env)
    sys.stderr.write(p.stderr[-4000:])
    out = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if f and f[0] == "bench":
            out[(int(f[1]), int(f[2]), int(f[3]))] = (float(f[7]), f[-1])
    return out


def time_torch(m, n, k, b, reps=30):
    import torch
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    if b == "k":
        bt = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
    else:
        bt = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(10):
        torch.matmul(a, bt)
    times = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(a, bt)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return 2e-9 * m * n * k / times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--b", default="k", choices=("k", "n"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--shapes", default=None)
    o = ap.parse_args()
    shapes = sweep(o.quick)
    if o.shapes:
        shapes = [tuple(int(x) for x in s.split(",")) for s in o.shapes.split(";")]
    ck = run_ck(o.build, shapes, o.b)
    print("| M | N | K | B | ck TFLOP/s | cuBLAS TFLOP/s | ck / cuBLAS | check |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    logs = []
    for s in shapes:
        t = time_torch(*s, o.b)
        c, chk = ck.get(s, (float("nan"), "missing"))
        r = c / t if c == c else float("nan")
        if r == r:
            logs.append(math.log(r))
        print("| %d | %d | %d | %s | %.1f | %.1f | %.3f | %s |" % (s + (o.b, c, t, r, chk)))
        sys.stdout.flush()
    if logs:
        print("\ngeometric mean ck / cuBLAS over %d shapes: %.3f" %
              (len(logs), math.exp(sum(logs) / len(logs))))


if __name__ == "__main__":
    main()
