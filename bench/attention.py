#!/usr/bin/env python3
"""Fused attention forward on the GPU: ck (`ck prof attention --json`) against
torch.nn.functional.scaled_dot_product_attention with the cuDNN and the flash backends, each
named, in one run; and a correctness sweep of random configurations.

Timing: both sides with CUDA events, median over the runs after warm-up, L2 overwritten before
each run (ck: --flush). TFLOP/s count 2 s_q s_k (d + d_v) per head (4 s_q s_k d when d_v = d),
halved for causal masks (FlashAttention's convention). Layout BSHD for both (torch gets the
[b, s, h, d] tensors transposed to [b, h, s, d] views, as FlashAttention reads them). ck's run
is checked against the f64 CPU reference by `ck prof attention` (64 sampled rows of O and LSE).
Prints a markdown table of TFLOP/s and ck / best peer; --plot writes a PNG.

Decode (issue 17's shape: b 64, h_q 32, h_k 8, s_q 1, s_k 8192, d 128, K / V paged in pages of
64 rows for ck): GB/s on the K / V bytes (b h_k s_k (d + d_v) 2) against the measured
device-to-device copy bandwidth (bytes read + written, 1 GiB) and against every torch SDPA
backend that takes the problem (contiguous K / V, enable_gqa), each named. --decode runs only
this table.

--check N: N random configurations (b, heads and GQA ratio, s_q, s_k from 1 to 700, every
head dim and d_v 128 with d 192, both types, every mask and alignment, both layouts, LSE; and
the variants: a bias of random broadcast dims and type, ALiBi, paged K / V, dropout, and for
s_q <= 16 split-KV), each checked against the reference (every row; 64 sampled rows for the
largest); prints the failures and a count. Builds nothing: pass --build DIR.

--ab VAR=VAL[,VAR=VAL] (repeatable): after each shape's row, a row of ck with those developer
switches (e.g. CK_ATTN_SM90_ORDER=linear), against the same cuDNN and flash figures.
--variants adds a table of ck's decode kernel under its developer switches (DECODE_VARIANTS:
CK_ATTN_DECODE_SPLITS / _STAGES / _INSTANCE) in the same run; --check gives random decode
shapes a random CK_ATTN_DECODE_STAGES (the ring's cp.async waits only a GPU can check).

--fp8 runs only the fp8 table: ck with e4m3 Q, K, V (`--dtype e4m3`: the sm90 kernel, descales,
bf16 O; the time includes the plan's V^T pre-pass) against ck's bf16 kernel on the same shape in
the same run (issue 17: >= 1.3x at d 128 s 4096); the full run prints it after the decode table.

usage: python3 bench/attention.py [--build DIR] [--quick] [--instance MxNxW] [--plot F] [--ab S]
       python3 bench/attention.py [--build DIR] --fp8 [--ab S]
       python3 bench/attention.py [--build DIR] --decode [--variants]
       python3 bench/attention.py [--build DIR] --check N [--seed S]
"""
import argparse
import json
import math
import os
import random
import subprocess
import sys

# (b, h, hk, s_q, s_k, d, d_v, mask)
CONFIGS = [
    (4, 16, 16, 4096, 4096, 128, 128, "none"),
    (4, 16, 16, 4096, 4096, 128, 128, "causal"),
    (8, 16, 16, 2048, 2048, 64, 64, "none"),
    (8, 16, 16, 2048, 2048, 64, 64, "causal"),
    (2, 8, 8, 8192, 8192, 256, 256, "none"),
    (4, 32, 8, 4096, 4096, 128, 128, "causal"),
    (4, 16, 16, 4096, 4096, 192, 128, "causal"),
    (16, 16, 16, 1024, 1024, 128, 128, "none"),
]


# the fp8 table: (b, h, hk, s_q, s_k, d, d_v, mask)
FP8_CONFIGS = [
    (4, 16, 16, 4096, 4096, 128, 128, "none"),
    (4, 16, 16, 4096, 4096, 128, 128, "causal"),
    (8, 16, 16, 2048, 2048, 64, 64, "none"),
    (2, 8, 8, 8192, 8192, 256, 256, "none"),
]

DEVICE = "cuda"

# --variants: ck's decode kernel under its developer switches (SPLITS=1: the policy before the
# wave model; STAGES: the K / V ring; INSTANCE: keys per warp x warps, 16x4 the earlier policy)
DECODE_VARIANTS = [
    {},
    {"CK_ATTN_DECODE_SPLITS": "1"},
    {"CK_ATTN_DECODE_SPLITS": "2"},
    {"CK_ATTN_DECODE_SPLITS": "6"},
    {"CK_ATTN_DECODE_STAGES": "3"},
    {"CK_ATTN_DECODE_STAGES": "4"},
    {"CK_ATTN_DECODE_INSTANCE": "16x1"},
    {"CK_ATTN_DECODE_INSTANCE": "32x2"},
    {"CK_ATTN_DECODE_INSTANCE": "16x4"},  # the policy before the seventh session
    {"CK_ATTN_DECODE_INSTANCE": "16x4", "CK_ATTN_DECODE_SPLITS": "1"},
]


def ck_cmd(build, cfg, dtype="bf16", extra=()):
    b, h, hk, sq, sk, d, dv, mask = cfg
    return [os.path.join(build, "bin", "ck"), "prof", "attention", "--device", DEVICE, "--json",
            "--b", str(b), "--h", str(h), "--hk", str(hk), "--sq", str(sq), "--sk", str(sk),
            "--d", str(d), "--dv", str(dv), "--dtype", dtype, "--mask", mask] + list(extra)


def run_ck(cmd, env=None):
    e = dict(os.environ, CK_DEVICE=DEVICE)
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line), p.stderr
    return None, p.stdout[-2000:] + p.stderr[-2000:]


def flops(cfg):
    b, h, hk, sq, sk, d, dv, mask = cfg
    f = 2.0 * b * h * sq * sk * (d + dv)
    return f / 2 if mask.startswith("causal") else f


def time_torch(cfg, backend, reps=20, ms=False):
    """TFLOP/s (ms: the median milliseconds) of torch SDPA with one backend, or None when it
    refuses the problem."""
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
        import torch.nn.functional as F
    except ImportError as ex:
        sys.stderr.write("torch unavailable (%s): no peer timings\n" % ex)
        return None
    b, h, hk, sq, sk, d, dv, mask = cfg
    q = torch.randn(b, sq, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    k = torch.randn(b, sk, hk, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    v = torch.randn(b, sk, hk, dv, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    kw = {"is_causal": mask == "causal"}
    if hk != h:
        kw["enable_gqa"] = True
    which = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
             "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}[backend]
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    try:
        with sdpa_kernel(which):
            for _ in range(5):
                F.scaled_dot_product_attention(q, k, v, **kw)
            times = []
            for _ in range(reps):
                flush.zero_()
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                F.scaled_dot_product_attention(q, k, v, **kw)
                e.record()
                e.synchronize()
                times.append(s.elapsed_time(e))
    except Exception as ex:  # the backend does not take this problem
        sys.stderr.write("torch %s refused %s: %s\n" % (backend, cfg, str(ex).splitlines()[0]))
        return None
    times.sort()
    if ms:
        return times[len(times) // 2]
    return flops(cfg) / (times[len(times) // 2] * 1e-3) / 1e12


DECODE = (64, 32, 8, 1, 8192, 128, 128, "none")
DECODE_PAGE = 64


def copy_gbps(reps=20):
    """Device-to-device copy bandwidth of 1 GiB (bytes read + written), GB/s."""
    import torch
    src = torch.empty(1 << 30, dtype=torch.int8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        dst.copy_(src)
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e))
    times.sort()
    return 2 * (1 << 30) / (times[len(times) // 2] * 1e-3) / 1e9


def bench_decode(o):
    b, h, hk, sq, sk, d, dv, mask = DECODE
    kv = 2.0 * b * hk * sk * (d + dv)
    try:
        copy = copy_gbps()
    except Exception as ex:  # noqa: BLE001
        sys.stderr.write("no copy bandwidth (%s)\n" % ex)
        copy = None
    extra = ["--paged", str(DECODE_PAGE), "--flush", "--reps", "50", "--warmup", "10"]
    r, err = run_ck(ck_cmd(o.build, DECODE, extra=extra))
    if not r:
        sys.stderr.write(err)
    ck_gbps = kv / (r["ms"] * 1e-3) / 1e9 if r else None
    peers = {}
    for backend in ("cudnn", "flash", "efficient", "math"):
        t = time_torch(DECODE, backend, reps=50, ms=True)
        if t:
            peers[backend] = kv / (t * 1e-3) / 1e9
    best = max(peers.items(), key=lambda x: x[1]) if peers else None
    fmt = lambda x: "%.0f" % x if x else "-"
    print("\nDecode: b %d, h_q %d, h_k %d, s_q %d, s_k %d, d %d, K / V %.2f GB (ck: paged, page "
          "%d); copy bandwidth %s GB/s\n" % (b, h, hk, sq, sk, d, kv / 1e9, DECODE_PAGE,
                                            fmt(copy)))
    print("| ck ms | ck GB/s (K/V) | %% of copy | %s | ck / best torch | check | ck instance |" %
          " | ".join("torch %s GB/s" % k for k in ("cudnn", "flash", "efficient", "math")))
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("| %s | %s | %s | %s | %s | %s | %s |" % (
        "%.4f" % r["ms"] if r else "-", fmt(ck_gbps),
        "%.1f%%" % (100 * ck_gbps / copy) if ck_gbps and copy else "-",
        " | ".join(fmt(peers.get(k)) for k in ("cudnn", "flash", "efficient", "math")),
        "%.3f (%s)" % (ck_gbps / best[1], best[0]) if ck_gbps and best else "-",
        ("ok" if r["ok"] else "FAILED") if r else "failed", r["instance"] if r else "-"))
    sys.stdout.flush()
    if not o.variants:
        return
    print("\nck's decode variants in the same run (developer switches, src/ops/attention/decode.c)"
          "\n\n| switches | ck ms | GB/s (K/V) | % of copy | ck / best torch | check | instance |"
          "\n| --- | --- | --- | --- | --- | --- | --- |")
    for env in DECODE_VARIANTS:
        r, err = run_ck(ck_cmd(o.build, DECODE, extra=extra), env)
        g = kv / (r["ms"] * 1e-3) / 1e9 if r else None
        print("| %s | %s | %s | %s | %s | %s | %s |" % (
            " ".join("%s=%s" % kv_ for kv_ in env.items()) or "(policy)",
            "%.4f" % r["ms"] if r else "-", fmt(g),
            "%.1f%%" % (100 * g / copy) if g and copy else "-",
            "%.3f" % (g / best[1]) if g and best else "-",
            ("ok" if r["ok"] else "FAILED") if r else "failed", r["instance"] if r else "-"))
        if not r:
            sys.stderr.write(err)
        sys.stdout.flush()


def bench(o):
    configs = CONFIGS[:2] if o.quick else CONFIGS
    print("| b | h | hk | s_q | s_k | d | d_v | mask | ck TFLOP/s | cuDNN | flash | ck / best "
          "| check | ck instance |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for cfg in configs:
        cu = time_torch(cfg, "cudnn")
        fl = time_torch(cfg, "flash")
        extra = ["--flush", "--reps", "20", "--warmup", "5"]
        if o.instance:
            extra += ["--instance", o.instance]
        r, err = run_ck(ck_cmd(o.build, cfg, extra=extra))
        c = r["tflops"] if r else float("nan")
        best = max([x for x in (cu, fl) if x] or [float("nan")])
        fmt = lambda x: "%.1f" % x if x else "-"
        print("| %d | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s | %.3f | %s | %s |" %
              (cfg + (fmt(c), fmt(cu), fmt(fl), c / best if best == best else float("nan"),
                      ("ok" if r["ok"] else "FAILED") if r else "failed",
                      r["instance"] if r else "-")))
        if not r:
            sys.stderr.write(err)
        sys.stdout.flush()
        rows.append((cfg, c, cu, fl))
        for setting in o.ab:  # the same shape with developer switches, against the same peers
            env = dict(x.split("=", 1) for x in setting.split(","))
            r, err = run_ck(ck_cmd(o.build, cfg, extra=extra), env)
            c = r["tflops"] if r else float("nan")
            print("| %d | %d | %d | %d | %d | %d | %d | %s | %s | %s | %s | %.3f | %s | %s |" %
                  (cfg + (fmt(c), fmt(cu), fmt(fl), c / best if best == best else float("nan"),
                          ("ok" if r["ok"] else "FAILED") if r else "failed",
                          "%s (%s)" % (r["instance"] if r else "-", setting))))
            if not r:
                sys.stderr.write(err)
            sys.stdout.flush()
    if o.plot:
        plot(o.plot, rows)
    bench_decode(o)
    bench_fp8(o)


def bench_fp8(o):
    """ck's fp8 e4m3 kernel against ck's bf16 kernel, same shapes, same run."""
    print()
    print("| b | h | hk | s_q | s_k | d | d_v | mask | ck fp8 TFLOP/s | ck bf16 TFLOP/s | "
          "fp8 / bf16 | check | fp8 instance |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    extra = ["--flush", "--reps", "20", "--warmup", "5"]
    for cfg in FP8_CONFIGS[:2] if o.quick else FP8_CONFIGS:
        rb, eb = run_ck(ck_cmd(o.build, cfg, "bf16", extra))
        for setting in [""] + o.ab:
            env = dict(x.split("=", 1) for x in setting.split(",")) if setting else {}
            r8, e8 = run_ck(ck_cmd(o.build, cfg, "e4m3", extra), env)
            t8 = r8["tflops"] if r8 else float("nan")
            tb = rb["tflops"] if rb else float("nan")
            print("| %d | %d | %d | %d | %d | %d | %d | %s | %.1f | %.1f | %.3f | %s | %s |" %
                  (cfg + (t8, tb, t8 / tb if tb else float("nan"),
                          ("ok" if r8["ok"] else "FAILED") if r8 else "failed",
                          (r8["instance"] if r8 else "-") + (" (%s)" % setting if setting
                                                              else ""))))
            for r, e in ((r8, e8), (rb, eb)):
                if not r:
                    sys.stderr.write(e)
            sys.stdout.flush()


def plot(path, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        sys.stderr.write("matplotlib missing: no plot\n")
        return
    labels = ["b%d h%d/%d s%d/%d d%d/%d %s" % cfg for cfg, *_ in rows]
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(rows)), 5))
    xs = range(len(rows))
    for j, (name, off) in enumerate((("ck", -0.27), ("cuDNN (SDPA)", 0), ("flash (SDPA)", 0.27))):
        ax.bar([x + off for x in xs], [r[1 + j] or 0 for r in rows], 0.27, label=name)
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("TFLOP/s (bf16)")
    ax.set_title("Attention forward on the H100: ck vs torch SDPA")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def check(o):
    rng = random.Random(o.seed)
    dims = [32, 64, 96, 128, 192, 256]
    bad = 0
    for n in range(o.check):
        hk = rng.choice([1, 2, 4])
        h = hk * rng.choice([1, 2, 8])
        d = rng.choice(dims)  # d_v = d, or MLA's 192 / 128 (fewer kernels to compile)
        dv = 128 if d == 192 and rng.random() < 0.5 else d
        mask = rng.choice(["none", "causal", "causal-br",
                           "window:%d,%d" % (rng.randint(-1, 80), rng.randint(-1, 80)),
                           "window-br:%d,%d" % (rng.randint(-1, 80), rng.randint(-1, 80))])
        cfg = (rng.randint(1, 3), h, hk, rng.randint(1, 700), rng.randint(0, 700), d, dv, mask)
        if rng.random() < 0.3:  # decode shapes: the decode kernel, split-KV
            cfg = cfg[:3] + (rng.randint(1, 16),) + cfg[4:]
        extra = ["--reps", "1", "--warmup", "0", "--seed", str(n + 1),
                 "--layout", rng.choice(["bshd", "bhsd"])]
        if rng.random() < 0.5:
            extra.append("--lse")
        if rng.random() < 0.25:
            extra += ["--bias", "".join(x for x in "bhqk" if rng.random() < 0.5) +
                      ":" + rng.choice(["f32", "bf16", "f16"])]
        if rng.random() < 0.2:
            extra.append("--alibi")
        if rng.random() < 0.25:
            extra += ["--paged", str(rng.choice([16, 24, 32, 40, 48, 64, 128, 256]))]
        if rng.random() < 0.15:
            extra += ["--dropout", "%.2f" % rng.uniform(0.05, 0.6)]
        if cfg[3] <= 16 and rng.random() < 0.5:
            extra += ["--splitkv", str(rng.randint(1, 12))]
        env = {}
        if cfg[3] <= 16 and rng.random() < 0.5:  # the decode kernel's deeper rings
            env["CK_ATTN_DECODE_STAGES"] = str(rng.randint(2, 4))
        cmd = ck_cmd(o.build, cfg, rng.choice(["bf16", "f16"]), extra)
        r, err = run_ck(cmd, env)
        if not r or not r["ok"]:
            bad += 1
            print("FAILED: %s%s\n%s" % ("".join("%s=%s " % x for x in env.items()),
                                         " ".join(cmd), err if not r else ""))
            sys.stdout.flush()
    print("%d random configurations, %d failed" % (o.check, bad))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--check", type=int, default=0)
    ap.add_argument("--decode", action="store_true", help="only the decode table")
    ap.add_argument("--variants", action="store_true",
                    help="the decode table also times ck under its developer switches")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plot", default=None)
    ap.add_argument("--instance", default=None, help="MxNxW for ck instead of the policy's")
    ap.add_argument("--ab", action="append", default=[],
                    help="VAR=VAL[,VAR=VAL]: also time ck with these CK_* switches (a row each, "
                         "against the same peers); repeatable")
    ap.add_argument("--device", default="cuda", help="host: the emulator (--check only)")
    ap.add_argument("--fp8", action="store_true", help="only the fp8 / bf16 table")
    o = ap.parse_args()
    global DEVICE
    DEVICE = o.device
    if o.check:
        sys.exit(1 if check(o) else 0)
    if o.decode:
        bench_decode(o)
        return
    if o.fp8:
        bench_fp8(o)
        return
    bench(o)


if __name__ == "__main__":
    main()
