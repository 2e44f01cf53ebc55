#!/usr/bin/env python3
"""Issue 19's speed gaps: each case's % of the copy bandwidth against its target, in one run.

For every case `ck prof OP ... --json` gives the median time and the ratio to ck's own measured
device-to-device copy bandwidth; top-k softmax is also timed against torch.topk(torch.softmax(x))
here with CUDA events. With --ncu, each case is then profiled once under ncu (one line per kernel:
duration, DRAM % of peak, SM %, achieved occupancy, registers, block and grid) so that a case
below its target shows where its time goes.

    python3 bench/gaps.py --build build-gpu [--reps 50] [--only norm] [--ncu] [--ab CK_X=0]

The table is printed last; progress goes to stderr as each case finishes.
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys

# name, ck prof arguments, target (% of copy, or for top-k the speed-up over torch)
CASES = [
    ("softmax odd N", ["softmax", "--shape", "300x212993"], 85),
    ("softmax odd N f32", ["softmax", "--shape", "300x212993", "--dtype", "f32"], 85),
    ("layernorm bwd", ["layernorm", "--bwd", "--shape", "16384x8192"], 85),
    ("rmsnorm bwd", ["rmsnorm", "--bwd", "--shape", "16384x8192"], 85),
    ("layernorm bwd n1024", ["layernorm", "--bwd", "--shape", "131072x1024"], 85),
    ("layernorm + fp8", ["layernorm", "--quant", "fp8e4m3", "--shape", "16384x8192"], 85),
    ("layernorm + int8", ["layernorm", "--quant", "int8", "--shape", "16384x8192"], 85),
    ("rmsnorm + res + int8 smooth", ["rmsnorm", "--residual", "--quant", "int8", "--smooth",
                                     "--shape", "16384x8192"], 85),
    ("reduce argmax", ["reduce", "--op", "argmax", "--shape", "16384x8192"], 85),
    ("reduce norm2", ["reduce", "--op", "norm2", "--shape", "64x1048576"], 85),
    ("layernorm 1M", ["layernorm", "--shape", "512x1048576"], 85),
    ("rmsnorm 1M", ["rmsnorm", "--shape", "512x1048576"], 85),
    ("layernorm 256K", ["layernorm", "--shape", "2048x262144"], 85),
    ("topk-softmax k8", ["topk-softmax", "--shape", "16384x256", "--k", "8"], 2.0),
]

NCU_METRICS = ["gpu__time_duration.sum", "dram__throughput.avg.pct_of_peak_sustained_elapsed",
               "sm__throughput.avg.pct_of_peak_sustained_elapsed",
               "sm__warps_active.avg.pct_of_peak_sustained_active",
               "launch__registers_per_thread", "launch__block_size", "launch__grid_size",
               "launch__shared_mem_per_block_dynamic"]


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def ck(build, args, extra, timeout=180, env=None):
    cmd = [os.path.join(build, "bin", "ck"), "prof"] + args + extra
    full = dict(os.environ)
    if env:
        k, _, v = env.partition("=")
        full[k] = v
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full)
    except Exception as e:  # noqa: BLE001
        return None, "failed to run: %s" % e
    line = next((l for l in p.stdout.splitlines() if l.startswith("{")), None)
    if p.returncode != 0 or line is None:
        why = (p.stderr.strip() or p.stdout.strip() or "exit %d" % p.returncode).splitlines()
        return None, why[-1] if why else "exit %d" % p.returncode
    return json.loads(line), None


def torch_topk_ms(reps):
    import torch
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import memory_ops  # noqa: E402 (its CUDA-event timing)
    x = torch.randn(16384, 256, device="cuda", dtype=torch.bfloat16)
    return memory_ops.time_torch(lambda: torch.topk(torch.softmax(x.float(), -1), 8, -1), reps)


def ncu_lines(build, args):
    cmd = ["ncu", "--clock-control", "none", "--csv", "--metrics", ",".join(NCU_METRICS),
           os.path.join(build, "bin", "ck"), "prof"] + args + [
               "--device", "cuda", "--no-check", "--warmup", "0", "--reps", "1"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    except Exception as e:  # noqa: BLE001
        return ["ncu failed: %s" % e]
    body = p.stdout[p.stdout.find('"ID"'):] if '"ID"' in p.stdout else ""
    kernels = {}
    for row in csv.DictReader(io.StringIO(body)):
        k = kernels.setdefault(row["ID"], {"name": row["Kernel Name"][:48]})
        k[row["Metric Name"]] = row["Metric Value"]
    out = []
    for kid in sorted(kernels, key=int):
        k = kernels[kid]
        if "copy" in k["name"].lower() and len(kernels) > 1:
            continue
        g = lambda m: k.get(m, "?")  # noqa: E731
        out.append("    %-48s %9s ns dram %5s%% sm %5s%% occ %5s%% regs %s block %s grid %s smem %s" % (
            k["name"], g(NCU_METRICS[0]), g(NCU_METRICS[1]), g(NCU_METRICS[2]), g(NCU_METRICS[3]),
            g(NCU_METRICS[4]), g(NCU_METRICS[5]), g(NCU_METRICS[6]), g(NCU_METRICS[7])))
    return out[:8] or ["ncu gave no kernel (exit %d): %s" % (p.returncode, p.stderr.strip()[-200:])]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--only", default=None, help="cases whose name contains this (comma-separated: any of these)")
    ap.add_argument("--ncu", action="store_true", help="profile each case once under ncu")
    ap.add_argument("--ab", action="append", default=[], metavar="NAME=VALUE",
                    help="also time each case with this developer switch set (repeatable): "
                         "the notes give its %% of copy and its speed against the default")
    args = ap.parse_args()
    rows, ncu = [], []
    todo = [c for c in CASES if not args.only or any(o in c[0] for o in args.only.split(","))]
    for i, (name, cargs, target) in enumerate(todo):
        r, why = ck(args.build, cargs, ["--json", "--reps", str(args.reps), "--device", "cuda"])
        if r is None:
            rows.append("| %s | `%s` | - | - | - | %s | failed: %s |" % (name, " ".join(cargs), target, why))
            log("[%d/%d] %s failed: %s" % (i + 1, len(todo), name, why))
            continue
        pct = 100.0 * r["ratio_to_copy"]
        note = "check %s" % r.get("check")
        if name.startswith("topk"):
            try:
                t = torch_topk_ms(args.reps)
                note += "; torch topk(softmax) %.4f ms = %.2fx" % (t, t / r["ms"])
                met = t / r["ms"] >= target
            except Exception as e:  # noqa: BLE001
                note += "; torch failed: %s" % e
                met = False
        else:
            met = pct >= target
        for env in args.ab:
            a, awhy = ck(args.build, cargs, ["--json", "--reps", str(args.reps), "--device", "cuda"],
                         env=env)
            note += ("; %s: failed (%s)" % (env, awhy) if a is None else
                     "; %s: %.1f%% (default %.3fx it)" % (env, 100.0 * a["ratio_to_copy"],
                                                          a["ms"] / r["ms"]))
        rows.append("| %s | `%s` | %.4f | %.0f | %.1f%% | %s | %s%s |" % (
            name, " ".join(cargs), r["ms"], r["gbps"], pct, target, note, "" if met else " **below**"))
        log(rows[-1])
        if args.ncu:
            ncu.append("%s:" % name)
            ncu += ncu_lines(args.build, cargs)
            log("\n".join(ncu[-3:]))
    if ncu:
        print("ncu, one run per case (kernels other than ck's copy):")
        print("\n".join(ncu))
        print()
    print("| case | ck prof | ms | GB/s | % of copy | target | notes |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
