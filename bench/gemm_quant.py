#!/usr/bin/env python3
"""Quantized GEMMs on the GPU, each against its peer in the same run (not a test):

  block-scaled fp8 (A 1x128, B 128x128)  ck --scale-a 1x128 --scale-b 128x128
      vs torch._scaled_mm with row-wise scales (scale_a [M, 1], scale_b [1, N]) -> bf16
  row-col fp8                          ck --scale-a row --scale-b col   vs the same
  SmoothQuant i8 x i8 row-col -> bf16  ck --dtype i8 --scale-a row --scale-b col
      vs torch._int_mm (i8 -> i32, no scaling: a lower bound on the peer's time)
  bf16 x int4 (groups of 128) decode   ck --b-dtype int4 --group-size 128
      vs torch.matmul bf16 of the same shape; GB/s of B's bytes (packed + scales) against
      the device's copy bandwidth (ANCHORS.md: 3.0 TB/s on the H100)

ck is timed by `ck prof gemm --json` (CUDA events, median, --flush); torch here the same way.
Prints a markdown table. usage: python3 bench/gemm_quant.py --build DIR [--quick]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_extra import ck, time_torch  # noqa: E402

COPY_TBS = 3.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--quick", action="store_true")
    o = ap.parse_args()
    import torch
    common = ["--flush", "--reps", "20", "--warmup", "3", "--no-check"]  # checked by test_gemm_quant
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
    decode = [(1, 4096, 4096), (16, 4096, 14336), (64, 14336, 4096)]
    if o.quick:
        decode = decode[1:2]
    for m, n, k in decode:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
        t = time_torch(lambda: torch.matmul(a, b))
        r = ck(o.build, dims(m, n, k) + ["--dtype", "bf16", "--b-dtype", "int4",
                                         "--group-size", "128"] + common)
        wbytes = n * k / 2 + n * (k // 128) * 4
        gbs = wbytes / (r["ms"] * 1e6) if r else 0
        line("bf16 x int4 g128 %dx%dx%d (time)" % (m, n, k), r, t / r["ms"] if r else 0, 1.0,
             "x", "bf16 torch.matmul = 1")
        print("|  ... B bytes | %.0f GB/s | %.0f GB/s (copy) | %.3f | |" % (
            gbs, COPY_TBS * 1000, gbs / (COPY_TBS * 1000)), flush=True)


if __name__ == "__main__":
    main()
