#!/usr/bin/env python3
"""GEMM bf16 on the GPU: ck (the policy's instance, through `ck prof gemm --json`) against
torch.matmul (cuBLAS), in one run.

Both are timed the same way: CUDA events, L2 overwritten before each run, median of 30 after
warm-up. ck's run is checked by `ck prof gemm` against the CPU reference (64 sampled rows) where
M * N * K <= 2^31 ("-": timed only; scripts/gpu-gemm checks 2,000 random problems up to 4096). Layout: A row-major (K-major); B K-major (torch: b.t() of an N x K tensor) unless --b n
(B row-major, N contiguous). D bf16 row-major. Prints a markdown table of TFLOP/s, ck / cuBLAS
and the instance, then the geometric mean and the lowest ratio; --plot writes a PNG of TFLOP/s
per shape (ck and cuBLAS). --ab VAR=VALUE[,VAR=VALUE...] also runs ck with those environment
variables (e.g. CK_GEMM_SKINNY=0: the policy without its small-M instances) and adds its
columns, so two policies meet cuBLAS in one run. Builds nothing: pass --build DIR.

usage: python3 bench/gemm.py [--build DIR] [--b k|n] [--quick] [--shapes M,N,K;...] [--plot F]
                             [--ab VAR=VALUE,...]
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
    for m in (1, 16, 128, 512, 2048, 4096, 8192, 16384):  # decode (1, 16) to prefill
        for n, k in ((4096, 4096), (14336, 4096), (4096, 14336), (6144, 4096)):
            shapes.append((m, n, k))
    return shapes


def run_ck(build, shape, b, extra_env=None):
    """(TFLOP/s, check, instance) of ck prof gemm for one shape (with extra_env), or None."""
    import json
    m, n, k = shape
    args = [os.path.join(build, "bin", "ck"), "prof", "gemm", "--device", "cuda", "--json",
            "--m", str(m), "--n", str(n), "--k", str(k), "--flush", "--reps", "30",
            "--warmup", "10", "--a-order", "row", "--b-order", "col" if b == "k" else "row"]
    if m * n * k > (1 << 31):  # the CPU check would take seconds (49 s at 2^32.8)
        args.append("--no-check")
    env = dict(os.environ, CK_DEVICE="cuda")
    env.update(extra_env or {})
    p = subprocess.run(args, capture_output=True, text=True, env=env)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            chk = "-" if "--no-check" in args else "ok" if r.get("ok") else "FAILED"
            return r["tflops"], chk, r.get("instance", "?")
    sys.stderr.write(p.stdout[-2000:] + p.stderr[-2000:])
    return None


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


def plot(path, shapes, rows):
    """Bars of TFLOP/s per shape for ck and cuBLAS (matplotlib; else bench/pngplot.py)."""
    labels = ["%dx%dx%d" % s for s in shapes]
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import pngplot
        pts = lambda j: [(2 ** (i / 4 + 1), r[j]) for i, r in enumerate(rows) if r[j] == r[j]]
        legend = pngplot.plot(path, [("ck", pts(0)), ("cuBLAS", pts(1))])
        with open(path + ".legend.txt", "w") as f:
            f.write("x: the shapes in order (%s); y: TFLOP/s bf16\n" % ", ".join(labels))
            for label, colour in legend:
                f.write("%s: %s\n" % (label, colour))
        return
    fig, ax = plt.subplots(figsize=(max(8, 0.38 * len(shapes)), 5))
    xs = range(len(shapes))
    ax.bar([x - 0.2 for x in xs], [r[0] for r in rows], 0.4, label="ck")
    ax.bar([x + 0.2 for x in xs], [r[1] for r in rows], 0.4, label="cuBLAS (torch.matmul)")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=70, ha="right", fontsize=7)
    ax.set_ylabel("TFLOP/s (bf16)")
    ax.set_title("GEMM bf16 on the H100: ck vs cuBLAS (M x N x K)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print("plot written to %s" % path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--b", default="k", choices=("k", "n"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--shapes", default=None)
    ap.add_argument("--plot", default=None)
    ap.add_argument("--ab", default=None)
    o = ap.parse_args()
    ab = dict(kv.split("=", 1) for kv in o.ab.split(",")) if o.ab else None
    shapes = sweep(o.quick)
    if o.shapes:
        shapes = [tuple(int(x) for x in s.split(",")) for s in o.shapes.split(";")]
    head = "| M | N | K | B | ck TFLOP/s | cuBLAS TFLOP/s | ck / cuBLAS | check | ck instance |"
    if ab:
        head += " ck (%s) | / cuBLAS | instance |" % o.ab
    print(head)
    print("| --- " * (head.count("|") - 1) + "|")
    logs, logs_ab, rows = [], [], []
    import time
    for s in shapes:
        w0 = time.time()
        t = time_torch(*s, o.b)
        w1 = time.time()
        res = run_ck(o.build, s, o.b)
        sys.stderr.write("%s: torch %.1f s, ck prof %.1f s\n" % (s, w1 - w0, time.time() - w1))
        c, chk, inst = res if res else (float("nan"), "failed", "-")
        r = c / t if c == c else float("nan")
        if r == r:
            logs.append(math.log(r))
        rows.append((c, t))
        line = "| %d | %d | %d | %s | %.1f | %.1f | %.3f | %s | %s |" % (s + (o.b, c, t, r, chk, inst))
        if ab:
            res = run_ck(o.build, s, o.b, ab)
            c2, _, inst2 = res if res else (float("nan"), "failed", "-")
            r2 = c2 / t if c2 == c2 else float("nan")
            if r2 == r2:
                logs_ab.append(math.log(r2))
            line += " %.1f | %.3f | %s |" % (c2, r2, inst2)
        print(line)
        sys.stdout.flush()
    if logs:
        print("\ngeometric mean ck / cuBLAS over %d shapes: %.3f; lowest %.3f" %
              (len(logs), math.exp(sum(logs) / len(logs)), math.exp(min(logs))))
    if logs_ab:
        print("with %s: geometric mean %.3f over %d shapes; lowest %.3f" %
              (o.ab, math.exp(sum(logs_ab) / len(logs_ab)), len(logs_ab), math.exp(min(logs_ab))))
    if o.plot:
        plot(o.plot, shapes, rows)


if __name__ == "__main__":
    main()
