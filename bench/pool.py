#!/usr/bin/env python3
"""Pooling and im2col on the GPU: ck (`ck prof pool|im2col --json`, checked against the CPU
reference on every element) against torch.nn.functional.max_pool2d / avg_pool2d /
max_pool2d's backward (channels_last) and F.unfold (torch's im2col, NCHW) in one run.

Both timed with CUDA events after warm-up (ck: its own `ck prof` timing, median of 30; torch:
median of 30). GB/s counts each input byte read once and each output byte written once (max
pool: x, y and the int64 indices when asked; backward: dy, indices, dx); the copy bandwidth is
the one `ck prof` measures. Prints a markdown table: GB/s of both, ck / torch, ck / copy.
Builds nothing: pass --build DIR.

usage: python3 bench/pool.py [--build DIR] [--quick]
"""
import argparse
import json
import os
import subprocess
import sys

# (name, ck prof arguments, torch case)
CASES = [
    ("max 3x3 s2 p1 n32 c64 112x112 (ResNet)", ["pool", "--n", "32", "--c", "64", "--hw",
     "112x112", "--kernel", "3", "--stride", "2", "--pad", "1"], ("max", 32, 64, 112, 3, 2, 1)),
    ("max+indices 3x3 s2 p1 n32 c64 112x112", ["pool", "--n", "32", "--c", "64", "--hw",
     "112x112", "--kernel", "3", "--stride", "2", "--pad", "1", "--indices", "i64"],
     ("maxi", 32, 64, 112, 3, 2, 1)),
    ("max backward 3x3 s2 p1 n32 c64 112x112", ["pool", "--backward", "--n", "32", "--c", "64",
     "--hw", "112x112", "--kernel", "3", "--stride", "2", "--pad", "1"],
     ("maxb", 32, 64, 112, 3, 2, 1)),
    ("avg 2x2 s2 n32 c256 56x56", ["pool", "--mode", "avg", "--n", "32", "--c", "256", "--hw",
     "56x56", "--kernel", "2"], ("avg", 32, 256, 56, 2, 2, 0)),
    ("avg 7x7 n128 c2048 7x7 (global)", ["pool", "--mode", "avg", "--n", "128", "--c", "2048",
     "--hw", "7x7", "--kernel", "7"], ("avg", 128, 2048, 7, 7, 7, 0)),
    ("im2col 3x3 p1 n8 c64 56x56", ["im2col", "--n", "8", "--c", "64", "--k", "64", "--hw",
     "56x56", "--yx", "3x3", "--pad", "1"], ("unfold", 8, 64, 56, 3, 1, 1)),
]


def ck_run(build, args):
    cmd = [os.path.join(build, "bin", "ck"), "prof", *args, "--device", "cuda", "--json",
           "--dtype", "bf16", "--reps", "30", "--warmup", "10"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            return r["gbps"], r["copy_gbps"], r["check"]
    sys.stderr.write(" ".join(cmd) + "\n" + p.stdout[-1500:] + p.stderr[-1500:])
    return None


def torch_run(case):
    import torch
    import torch.nn.functional as F
    kind, n, c, hw, k, s, p = case
    dt = torch.bfloat16
    x = torch.randn(n, c, hw, hw, device="cuda", dtype=dt)
    if kind != "unfold":
        x = x.to(memory_format=torch.channels_last)
    if kind == "max":
        fn = lambda: F.max_pool2d(x, k, s, p)  # noqa: E731
    elif kind == "maxi":
        fn = lambda: F.max_pool2d(x, k, s, p, return_indices=True)  # noqa: E731
    elif kind == "maxb":
        xg = x.clone().requires_grad_(True)
        y, ind = F.max_pool2d(xg, k, s, p, return_indices=True)
        dy = torch.randn_like(y)
        fn = lambda: torch.ops.aten.max_pool2d_with_indices_backward(  # noqa: E731
            dy, xg, [k, k], [s, s], [p, p], [1, 1], False, ind)
    elif kind == "avg":
        fn = lambda: F.avg_pool2d(x, k, s, p)  # noqa: E731
    else:
        fn = lambda: F.unfold(x, k, padding=p, stride=s)  # noqa: E731
    out = fn()
    outs = out if isinstance(out, tuple) else (out,)
    nbytes = x.numel() * x.element_size() + sum(o.numel() * o.element_size() for o in outs)
    if kind == "maxb":  # dy and the indices read, dx written
        nbytes = dy.numel() * 2 + ind.numel() * 8 + x.numel() * 2
    for _ in range(10):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    ms = sorted(times)[len(times) // 2]
    return nbytes / (ms * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    ap.add_argument("--quick", action="store_true", help="the first three cases only")
    a = ap.parse_args()
    cases = CASES[:3] if a.quick else CASES
    print("| case | ck GB/s | check | torch GB/s | ck / torch | ck / copy |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, args, tcase in cases:
        r = ck_run(a.build, args)
        try:
            t = torch_run(tcase)
        except Exception as e:  # torch missing or failing: ck's numbers alone
            sys.stderr.write(f"torch: {e}\n")
            t = None
        if r is None:
            print(f"| {name} | failed | - | {t or '-'} | - | - |")
            continue
        gb, copy, chk = r
        ratio = f"{gb / t:.2f}" if t else "-"
        tt = f"{t:.0f}" if t else "-"
        print(f"| {name} | {gb:.0f} | {chk} | {tt} | {ratio} | {gb / copy:.2f} |", flush=True)


if __name__ == "__main__":
    main()
