#!/usr/bin/env python3
"""Quantized GEMMs on the GPU, each against its peer in the same run (not a test):

  block-scaled fp8 (A 1x128, B 128x128)  ck --scale-a 1x128 --scale-b 128x128
      vs torch._scaled_mm with row-wise scales (scale_a [M, 1], scale_b [1, N]) -> bf16
  row-col fp8                          ck --scale-a row --scale-b col   vs the same
  SmoothQuant i8 x i8 row-col -> bf16  ck --dtype i8 --scale-a row --scale-b col
      vs torch._int_mm (i8 -> i32, no scaling: a lower bound on the peer's time)
  bf16 x int4 (groups of 128) decode   ck --b-dtype int4 --group-size 128, M = 1, 16, 64 x
      (N, K) = (4096, 4096), (14336, 4096), (4096, 14336) vs torch.matmul bf16 of the same
      shape; GB/s of the bytes read (weights, scales, activations) against the copy bandwidth
      measured in the same run (torch clone of 1 GiB); --ab adds the tile pipeline
      (CK_GEMM_QSKINNY=0), --decode-only prints only this table

ck is timed by `ck prof gemm --json` (CUDA events, median, --flush); torch here the same way.
Prints a markdown table. usage: python3 bench/gemm_quant.py --build DIR [--quick] [--ab] [--decode-only]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_extra import ck, time_torch  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--ab", action="store_true", help="also time the tile pipeline on the decode "
                    "shapes (CK_GEMM_QSKINNY=0)")
    ap.add_argument("--decode-only", action="store_true", help="only the int4 decode table")
    o = ap.parse_args()
    import torch
    common = ["--flush", "--reps", "20", "--warmup", "3", "--no-check"]  # checked by test_gemm_quant
    if o.decode_only:
        decode_table(o, torch, common)
        return
    print("| work | ck | peer | ck / peer | check |")
    print("| --- | --- | --- | --- | --- |")

    def dims(m, n, k):
        return ["--m", str(m), "--n", str(n), "--k", str(k)]

    def line(name, res, ck_val, peer_val, unit, peer_name):
        if res is None:
            print("| %s | failed | %.1f %s (%s) | | |" % (name, peer_val, unit, peer_name), flush=True)
            return
        print("| %s | %.1f %s | %.1f %s (%s) | %.3f | %s |" % (
            name, ck_val, unit, peer_val, unit, peer_name, ck_val / peer_val,
            "not checked"), flush=True)

    fp8_shapes = [(4096, 7168, 16384), (4096, 2112, 7168)] if not o.quick else [(4096, 7168, 16384)]
    for m, n, k in fp8_shapes:
        a8 = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
        b8 = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
        sa = torch.rand(m, 1, device="cuda") + 0.5
        sb = torch.rand(1, n, device="cuda") + 0.5
        t = time_torch(lambda: torch._scaled_mm(a8, b8, scale_a=sa, scale_b=sb,
                                                out_dtype=torch.bfloat16))
        peer = 2.0 * m * n * k / (t * 1e9)
        for mode, args in (("block 1x128/128x128", ["--scale-a", "1x128", "--scale-b", "128x128"]),
                           ("row-col", ["--scale-a", "row", "--scale-b", "col"])):
            r = ck(o.build, dims(m, n, k) + ["--dtype", "e4m3", "--d-dtype", "bf16"] + args + common)
            line("fp8 e4m3 %s %dx%dx%d" % (mode, m, n, k), r, r["tflops"] if r else 0, peer,
                 "TFLOP/s", "torch._scaled_mm row-wise")
    m = n = k = 4096
    ai = torch.randint(-8, 8, (m, k), device="cuda", dtype=torch.int8)
    bi = torch.randint(-8, 8, (n, k), device="cuda", dtype=torch.int8).t()
    t = time_torch(lambda: torch._int_mm(ai, bi))
    r = ck(o.build, dims(m, n, k) + ["--dtype", "i8", "--scale-a", "row", "--scale-b", "col",
                                     "--d-dtype", "bf16"] + common)
    line("i8 SmoothQuant 4096^3 -> bf16", r, r["tflops"] if r else 0, 2.0 * m * n * k / (t * 1e9),
         "TOP/s", "torch._int_mm, unscaled")
    decode_table(o, torch, common)


def copy_gbs(torch):
    """Device copy bandwidth measured here (bytes read + written per second of a 1 GiB clone)."""
    x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    t = time_torch(lambda: x.clone())
    return 2 * x.numel() / (t * 1e6)


def decode_table(o, torch, common):
    """Mixed int4 x bf16 decode shapes: M in 1, 16, 64 x (N, K) in (4096, 4096), (14336, 4096),
    (4096, 14336), groups of 128. GB/s of the bytes read (packed weights, f32 group scales, bf16
    activations; D's M x N bf16 is left out), their share of the copy bandwidth measured in
    this run, and the speed-up over a bf16 torch.matmul of the same shape (issue 16's targets:
    >= 80% of copy and >= 2x). --ab adds the tile pipeline (CK_GEMM_QSKINNY=0) beside it."""
    copy = copy_gbs(torch)
    print()
    print("copy bandwidth (torch clone of 1 GiB, this run): %.0f GB/s" % copy)
    print()
    print("| M x N x K int4 g128 | instance | ck ms | GB/s read | % of copy | bf16 matmul ms | "
          "speed-up | tile pipeline ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    shapes = [(m, n, k) for m in (1, 16, 64) for n, k in ((4096, 4096), (14336, 4096), (4096, 14336))]
    if o.quick:
        shapes = [(16, 14336, 4096)]
    for m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
        t = time_torch(lambda: torch.matmul(a, b))
        args = ["--m", str(m), "--n", str(n), "--k", str(k), "--dtype", "bf16", "--b-dtype", "int4",
                "--group-size", "128"] + common
        r = ck(o.build, args)
        tile = ck(o.build, args, env={"CK_GEMM_QSKINNY": "0"}) if o.ab else None
        rbytes = n * k / 2 + n * (k // 128) * 4 + m * k * 2
        if r is None:
            print("| %dx%dx%d | failed | | | | %.4f | | |" % (m, n, k, t), flush=True)
            continue
        gbs = rbytes / (r["ms"] * 1e6)
        print("| %dx%dx%d | %s | %.4f | %.0f | %.1f%% | %.4f | %.2fx | %s |" % (
            m, n, k, r["instance"], r["ms"], gbs, 100 * gbs / copy, t, t / r["ms"],
            "%.4f" % tile["ms"] if tile else ""), flush=True)

if __name__ == "__main__":
    main()
