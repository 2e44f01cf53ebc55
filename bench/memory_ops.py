#!/usr/bin/env python3
"""Memory-bound ops of ck against torch on the same GPU, in one process.

For each case: runs `ck prof OP ... --json` (ck's own timing: median of CUDA-event-timed runs)
and times the torch equivalent here with CUDA events (median of --reps runs after warm-up).
Prints a markdown table: op, problem, ck ms, ck TB/s, % of the measured copy bandwidth (ck's
own device-to-device copy measurement), torch TB/s, ck/torch (speed ratio, > 1: ck faster).
Bytes = each input byte read once + each output byte written once (same count for both).

    python3 bench/memory_ops.py --build build [--quick] [--reps 20] [--only bias]

Progress goes to stderr (flushed) as each case finishes, so a run cut short still shows what
finished; the table is printed at the end. CK_EW_INSTANCE etc. in the environment reach `ck`.

Works without torch (ck columns only). A case whose `ck prof` fails (e.g. 'not implemented')
is recorded with the reason instead of numbers.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

try:
    import torch  # noqa: F401
    HAVE_TORCH = torch.cuda.is_available()
except Exception:  # torch missing or broken
    torch = None
    HAVE_TORCH = False

SIZES = {"f32": 4, "bf16": 2, "f16": 2}
TORCH_DT = {}
if torch is not None:
    TORCH_DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def cases(quick):
    big = "16384x8192"
    out = [
        ("copy", big, ["--dtype", "bf16"], ("copy", "bf16", "bf16", 1, None)),
        ("copy", big, ["--dtype", "f32"], ("copy", "f32", "f32", 1, None)),
        ("cast", big, ["--from", "f32", "--to", "bf16"], ("cast", "f32", "bf16", 1, None)),
        ("cast", big, ["--from", "bf16", "--to", "f32"], ("cast", "bf16", "f32", 1, None)),
        ("elementwise", big, ["--expr", "relu(x0 * x1 + x2)", "--dtype", "bf16"],
         ("ew", "bf16", "bf16", 3, lambda x: torch.relu(x[0] * x[1] + x[2]))),
        ("elementwise", big, ["--expr", "silu(x0)", "--dtype", "bf16"],
         ("ew", "bf16", "bf16", 1, lambda x: torch.nn.functional.silu(x[0]))),
        ("elementwise", big, ["--expr", "gelu(x0)", "--dtype", "bf16"],
         ("ew", "bf16", "bf16", 1,
          lambda x: torch.nn.functional.gelu(x[0], approximate="tanh"))),
        ("permute", big, ["--perm", "1,0", "--dtype", "bf16"],
         ("permute", "bf16", "bf16", 1, (1, 0))),
        ("permute", "64x256x56x56", ["--perm", "0,2,3,1", "--dtype", "bf16"],
         ("permute", "bf16", "bf16", 1, (0, 2, 3, 1))),
    ]
    if not quick:
        out += [
            ("copy", "4096x4096", ["--dtype", "bf16"], ("copy", "bf16", "bf16", 1, None)),
            ("copy", "65536x8192", ["--dtype", "bf16"], ("copy", "bf16", "bf16", 1, None)),
            ("cast", "65536x8192", ["--from", "f32", "--to", "bf16"],
             ("cast", "f32", "bf16", 1, None)),
            ("elementwise", big, ["--expr", "gelu_erf(x0)", "--dtype", "f32"],
             ("ew", "f32", "f32", 1, lambda x: torch.nn.functional.gelu(x[0]))),
            ("elementwise", big, ["--expr", "x0 + x1", "--dtype", "bf16", "--bias"],
             ("bias", "bf16", "bf16", 2, lambda x: x[0] + x[1])),
        ]
    return out


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run_ck(build, op, shape, extra, reps, timeout):
    exe = os.path.join(build, "bin", "ck")
    cmd = [exe, "prof", op, "--shape", shape] + extra + ["--json", "--reps", str(reps),
                                                          "--device", "cuda"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except Exception as e:  # noqa: BLE001
        return None, "failed to run: %s" % e, cmd
    line = next((l for l in p.stdout.splitlines() if l.startswith("{")), None)
    if p.returncode != 0 or line is None:
        why = (p.stderr.strip() or p.stdout.strip() or "exit %d" % p.returncode).splitlines()
        return None, why[0] if why else "exit %d" % p.returncode, cmd
    return json.loads(line), None, cmd


def time_torch(fn, reps, warmup=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def torch_case(shape, spec, reps):
    kind, tin, tout, nin, fn = spec
    dims = [int(d) for d in shape.split("x")]
    dt_in, dt_out = TORCH_DT[tin], TORCH_DT[tout]
    n = 1
    for d in dims:
        n *= d
    g = torch.Generator(device="cuda").manual_seed(1)
    if kind == "bias":
        xs = [torch.randn(dims, device="cuda", dtype=dt_in, generator=g),
              torch.randn(dims[-1:], device="cuda", dtype=dt_in, generator=g)]
        nbytes = (n + dims[-1]) * SIZES[tin] + n * SIZES[tout]
    else:
        xs = [torch.randn(dims, device="cuda", dtype=dt_in, generator=g) for _ in range(nin)]
        nbytes = n * (nin * SIZES[tin] + SIZES[tout])
    if kind == "copy":
        out = torch.empty_like(xs[0])
        f = lambda: out.copy_(xs[0])  # noqa: E731
    elif kind == "cast":
        out = torch.empty(dims, device="cuda", dtype=dt_out)
        f = lambda: out.copy_(xs[0])  # noqa: E731
    elif kind == "permute":
        f = lambda: xs[0].permute(*fn).contiguous()  # noqa: E731
    else:
        f = lambda: fn(xs)  # noqa: E731
    ms = time_torch(f, reps)
    del xs
    torch.cuda.empty_cache()
    return ms, nbytes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build", help="ck build directory (default build)")
    ap.add_argument("--quick", action="store_true", help="the main cases only")
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--only", default=None,
                    help="run only the cases whose 'op shape flags' text contains this")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per ck prof run")
    args = ap.parse_args()
    if not HAVE_TORCH:
        log("torch with CUDA not available: ck columns only")
    rows = []
    copy_gbps = None
    todo = [c for c in cases(args.quick)
            if not args.only or args.only in "%s %s %s" % (c[0], c[1], " ".join(c[2]))]
    if os.environ.get("CK_EW_INSTANCE"):
        log("CK_EW_INSTANCE=%s" % os.environ["CK_EW_INSTANCE"])
    for i, (op, shape, extra, spec) in enumerate(todo):
        problem = "%s %s" % (shape, " ".join(extra))
        log("[%d/%d] %s %s ..." % (i + 1, len(todo), op, problem))
        r, why, cmd = run_ck(args.build, op, shape, extra, args.reps, args.timeout)
        t_tbs = None
        if HAVE_TORCH:
            try:
                t_ms, t_bytes = torch_case(shape, spec, args.reps)
                t_tbs = t_bytes / (t_ms * 1e-3) / 1e12
            except Exception as e:  # noqa: BLE001
                print("torch %s %s: %s" % (op, problem, e), file=sys.stderr)
        t_txt = "%.3f" % t_tbs if t_tbs else "-"
        if r is None:
            rows.append((op, problem, None, None, None, t_tbs, why))
            log("[%d/%d] %s %s: ck failed (%s), torch %s TB/s" % (i + 1, len(todo), op, problem,
                                                                   why, t_txt))
            continue
        copy_gbps = r.get("copy_gbps") or copy_gbps
        ck_tbs = r["gbps"] / 1e3
        rows.append((op, problem, r["ms"], ck_tbs, 100.0 * r["ratio_to_copy"], t_tbs,
                     None if r.get("check") in ("ok", "unchecked") else "check " + r["check"]))
        log("[%d/%d] %s %s: ck %.3f TB/s (%.1f%% of copy, check %s), torch %s TB/s   # %s" % (
            i + 1, len(todo), op, problem, ck_tbs, 100.0 * r["ratio_to_copy"], r.get("check"),
            t_txt, " ".join(cmd)))
    if copy_gbps:
        print("measured device-to-device copy bandwidth: %.1f GB/s\n" % copy_gbps)
    print("| op | problem | ck ms | ck TB/s | % of copy BW | torch TB/s | ck/torch |")
    print("|---|---|---|---|---|---|---|")
    for op, problem, ms, tbs, pct, t_tbs, note in rows:
        if ms is None:
            print("| %s | %s | - | - | - | %s | %s |" % (
                op, problem, "%.3f" % t_tbs if t_tbs else "-", "ck: " + str(note)))
            continue
        ratio = "%.2f" % (tbs / t_tbs) if t_tbs else "-"
        print("| %s | %s | %.4f | %.3f | %.1f%% | %s | %s%s |" % (
            op, problem, ms, tbs, pct, "%.3f" % t_tbs if t_tbs else "-", ratio,
            " (%s)" % note if note else ""))


if __name__ == "__main__":
    main()
