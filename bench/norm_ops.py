#!/usr/bin/env python3
"""Softmax, layernorm and RMSNorm: ck (through `ck prof OP --json`) against PyTorch on the GPU.

Sweep (bf16): 16384x8192; row lengths 1024 ... 1048576 at 1 GiB of input (rows = 2^29 / N);
small cases (rows 1, 8, 64 with N 1024 ... 8192). PyTorch is timed in this process with CUDA
events (median of the repetitions); ck's time is its own median. Bandwidth counts each input
byte read once and each output byte written once (same count for both). Prints a markdown
table (op, shape, ck TB/s, % of copy, torch TB/s, ck/torch); --plot FILE.png draws TB/s versus
row length (needs matplotlib).

usage: python3 bench/norm_ops.py [--build DIR] [--ops softmax,layernorm,rmsnorm] [--quick]
                                 [--plot FILE.png] [--reps N]
"""
import argparse
import json
import os
import subprocess
import sys


def sweep(quick):
    cases = [(16384, 8192)]
    lengths = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072, 262144, 1048576]
    if quick:
        lengths = [1024, 8192, 65536, 262144, 1048576]
    cases += [((1 << 29) // n, n) for n in lengths]
    for rows in (1, 8, 64):
        for n in ((1024, 8192) if quick else (1024, 2048, 4096, 8192)):
            cases.append((rows, n))
    return cases


def run_ck(build, op, rows, n, reps):
    exe = os.path.join(build, "bin", "ck")
    if not os.path.exists(exe):
        exe = os.path.join(build, "ck")
    cmd = [exe, "prof", op, "--shape", "%dx%d" % (rows, n), "--dtype", "bf16", "--json",
           "--reps", str(reps)]
    if rows * n > (1 << 27):
        cmd.append("--no-check")  # the CPU reference of 1 GiB takes long; smaller ones are checked
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        return None, msg[-1] if msg else "exit %d" % p.returncode
    try:
        return json.loads(p.stdout.strip().splitlines()[-1]), None
    except (ValueError, IndexError):
        return None, "unparsable output: %r" % p.stdout[:200]


def time_torch(torch, op, rows, n, reps):
    F = torch.nn.functional
    x = torch.randn(rows, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    if op == "softmax":
        fn = lambda: torch.softmax(x, dim=-1)
    elif op == "layernorm":
        fn = lambda: F.layer_norm(x, (n,), w, b, 1e-5)
    else:
        if hasattr(F, "rms_norm"):
            fn = lambda: F.rms_norm(x, (n,), w, 1e-6)
        else:
            fn = lambda: (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6)
                          ).to(x.dtype) * w
    for _ in range(20):  # as ck prof: the clocks settle under sustained work
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    ms = times[len(times) // 2]
    nbytes = rows * n * 2 * 2  # bf16 in + bf16 out
    return nbytes / (ms * 1e-3) / 1e12


def plot(path, ops, rows_out):
    """TB/s versus row length (the 1 GiB sweep points) for ck and PyTorch, written to path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # bench/pngplot.py: no text but the tick values; legend in a file
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import pngplot
        series = []
        for op in ops:
            pts = sorted((n, c, t) for o, rows, n, c, t in rows_out
                         if o == op and rows * n == (1 << 29))
            if pts:
                series.append(("ck " + op, [(n, c) for n, c, _ in pts]))
                series.append(("torch " + op, [(n, t) for n, _, t in pts]))
        legend = pngplot.plot(path, series)
        with open(path + ".legend.txt", "w") as f:
            f.write("x: row length N (bf16, 1 GiB of input), log scale; y: TB/s (input read "
                    "once + output written once)\n")
            for label, colour in legend:
                f.write("%s: %s (%s line)\n" % (label, colour,
                                                 "thick" if label.startswith("ck") else "thin"))
        print("plot written to %s (legend in %s.legend.txt)" % (path, path), file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for op in ops:
        pts = sorted((n, c, t) for o, rows, n, c, t in rows_out if o == op and rows * n == (1 << 29))
        if not pts:
            continue
        if any(c is not None for _, c, _ in pts):
            ax.plot([p[0] for p in pts if p[1] is not None],
                    [p[1] for p in pts if p[1] is not None], "o-", label="ck " + op)
        if any(t is not None for _, _, t in pts):
            ax.plot([p[0] for p in pts if p[2] is not None],
                    [p[2] for p in pts if p[2] is not None], "x--", label="torch " + op)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("row length N (bf16, 1 GiB of input)")
    ax.set_ylabel("TB/s (input read once + output written once)")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    print("plot written to %s" % path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--ops", default="softmax,layernorm,rmsnorm")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--plot")
    ap.add_argument("--reps", type=int, default=100)
    a = ap.parse_args()
    try:
        import torch
        have_torch = torch.cuda.is_available()
    except ImportError:
        torch, have_torch = None, False
    if not have_torch:
        print("PyTorch with CUDA is not available: ck only.", file=sys.stderr)
    rows_out = []
    print("| op | shape | ck TB/s | % copy | torch TB/s | ck/torch |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for op in a.ops.split(","):
        for rows, n in sweep(a.quick):
            r, err = run_ck(a.build, op, rows, n, a.reps)
            tt = time_torch(torch, op, rows, n, a.reps) if have_torch else None
            shape = "%dx%d" % (rows, n)
            if r is None:
                print("| %s | %s | %s | | %s | |" % (op, shape, "n/a (%s)" % err,
                                                      "%.3f" % tt if tt else "-"))
                rows_out.append((op, rows, n, None, tt))
                sys.stdout.flush()
                continue
            ck_tbs = r["gbps"] / 1e3
            pct = 100.0 * r["ratio_to_copy"]
            check = "" if r.get("check") in ("ok", "unchecked") else " (%s)" % r.get("check")
            print("| %s | %s | %.3f%s | %.1f | %s | %s |" % (
                op, shape, ck_tbs, check, pct, "%.3f" % tt if tt else "-",
                "%.2f" % (ck_tbs / tt) if tt else "-"))
            rows_out.append((op, rows, n, ck_tbs, tt))
            sys.stdout.flush()
        if a.plot:  # after every operation, so a run cut short still leaves a plot
            plot(a.plot, a.ops.split(","), rows_out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
