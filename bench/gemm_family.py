#!/usr/bin/env python3
"""Grouped GEMM and split-K / stream-K on the GPU, each against its peer in the same run:

  grouped   MoE-like lists (8 .. 64 experts, tokens routed unevenly, Mixtral / DeepSeek-MoE
            expert shapes): `ck prof gemm --groups LIST` (the policy's kernel, sm90 on an
            H100, and the sm80 one forced with --instance) vs a loop of torch.matmul (and
            torch._grouped_mm where the image has it)
  stream-K  skinny and long-K shapes, and tile counts just past a wave of 132 SMs: ck's policy,
            --stream-k, --split-k N (deterministic) and --split-k N --atomic vs torch.matmul
            (cuBLAS)

ck is timed by `ck prof gemm --json` (CUDA events, median, --flush); torch the same way here.
Prints a markdown table. Builds nothing: pass --build DIR.
usage: python3 bench/gemm_family.py --build DIR [--quick]
"""
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_extra import time_torch  # noqa: E402  (CUDA events, L2 overwritten before each run)


def ck(build, args):
    exe = os.path.join(build, "bin", "ck")
    p = subprocess.run([exe, "prof", "gemm", "--json", "--device", "cuda", "--flush"] + args,
                       capture_output=True, text=True, env=dict(os.environ, CK_DEVICE="cuda"))
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    sys.stderr.write(" ".join(args) + ": " + p.stdout + p.stderr)
    return None


def ck_list(build, args):
    """The ids of `ck prof gemm ARGS --list` (grouped candidates, best first) by family."""
    exe = os.path.join(build, "bin", "ck")
    p = subprocess.run([exe, "prof", "gemm", "--device", "cuda", "--list"] + args,
                       capture_output=True, text=True, env=dict(os.environ, CK_DEVICE="cuda"))
    ids = {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0] == "id":
            ids.setdefault(int(f[2][2:4]), f[1])
    return ids


def moe_groups(experts, tokens, n, k, seed):
    """Tokens routed to experts unevenly (some experts empty): groups tokens_e x n x k."""
    rnd = random.Random(seed)
    w = [rnd.random() ** 2 for _ in range(experts)]
    s = sum(w)
    counts = [int(tokens * x / s) for x in w]
    return [(c, n, k) for c in counts]


def torch_grouped(groups):
    try:
        import torch
    except ImportError:
        return None, None
    a = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, n, k in groups]
    b = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t() for m, n, k in groups]
    loop = time_torch(lambda: [x @ y for x, y in zip(a, b)])
    gm = None
    if hasattr(torch, "_grouped_mm"):
        try:
            aa = torch.cat(a)
            bb = torch.stack([y.t().contiguous() for y in b]).transpose(-2, -1)
            offs = torch.cumsum(torch.tensor([m for m, _, _ in groups], device="cuda",
                                             dtype=torch.int32), 0).to(torch.int32)
            gm = time_torch(lambda: torch._grouped_mm(aa, bb, offs=offs))
        except Exception as e:  # shapes or the build without it
            sys.stderr.write(f"torch._grouped_mm: {e}\n")
    return loop, gm


def torch_mm(m, n, k):
    try:
        import torch
    except ImportError:
        return None
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
    return time_torch(lambda: a @ b)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--quick", action="store_true")
    o = ap.parse_args()
    print("## Grouped GEMM (bf16, A row-major, B column-major)\n")
    print("| list | groups | GFLOP | ck ms | ck TFLOP/s | ck instance | ck sm80 kernel ms "
          "| torch loop ms | torch._grouped_mm ms | vs loop | vs grouped_mm |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    lists = [("mixtral 8x(tok 4096) up", 8, 4096, 14336, 4096),
             ("mixtral 8x(tok 4096) down", 8, 4096, 4096, 14336),
             ("deepseek-moe 64x(tok 8192) up", 64, 8192, 1408, 2048),
             ("deepseek-moe 64x(tok 8192) down", 64, 8192, 2048, 1408),
             ("32 experts, tok 2048", 32, 2048, 4096, 2048)]
    if o.quick:
        lists = lists[:2]
    for name, e, tok, n, k in lists:
        groups = moe_groups(e, tok, n, k, 1)
        text = ",".join(f"{m}x{n}x{k}" for m, n, k in groups)
        r = ck(o.build, ["--groups", text])
        # the policy's kernel (sm90 on an H100) and the sm80 one, forced, to compare
        id80 = ck_list(o.build, ["--groups", text]).get(80)
        r80 = ck(o.build, ["--groups", text, "--instance", id80]) if id80 else None
        loop, gm = torch_grouped(groups)
        gflop = sum(2.0 * m * n * k for m, n, k in groups) / 1e9
        if r is None:
            print(f"| {name} | {e} | {gflop:.1f} | failed | | | | | | | |")
            continue
        f = lambda x: f"{x:.4f}" if x else "-"
        ratio = lambda x: f"{x / r['ms']:.2f}x" if x else "-"
        print(f"| {name} | {e} | {gflop:.1f} | {r['ms']:.4f} | {r['tflops']:.1f} | "
              f"{r['instance']} | {f(r80['ms'] if r80 else None)} | {f(loop)} | {f(gm)} | "
              f"{ratio(loop)} | {ratio(gm)} |")
    print("\n## Split-K and stream-K (bf16 -> bf16, NT)\n")
    print("| shape | policy (instance) ms | stream-K ms | split-K ms (N) | atomic ms | cuBLAS ms "
          "| best ck vs cuBLAS |")
    print("|---|---|---|---|---|---|---|")
    shapes = [(256, 1024, 65536), (128, 256, 65536), (1024, 1024, 16384),
              (13 * 128, 11 * 128, 8192), (133 * 128, 256, 4096), (4096, 4096, 4096)]
    if o.quick:
        shapes = shapes[:3]
    for m, n, k in shapes:
        dims = ["--m", str(m), "--n", str(n), "--k", str(k)]
        pol = ck(o.build, dims)
        sk = ck(o.build, dims + ["--stream-k"])
        best_split = None
        for s in (2, 4, 8, 16):
            r = ck(o.build, dims + ["--split-k", str(s)])
            if r and (best_split is None or r["ms"] < best_split[1]["ms"]):
                best_split = (s, r)
        at = ck(o.build, dims + ["--split-k", str(best_split[0] if best_split else 4),
                                 "--atomic"])
        cub = torch_mm(m, n, k)
        ms = [x["ms"] for x in (pol, sk, at, best_split[1] if best_split else None) if x]
        f = lambda r: f"{r['ms']:.4f}" if r else "failed"
        print(f"| {m}x{n}x{k} | {f(pol)} ({pol['instance'] if pol else '-'}) | {f(sk)} | "
              f"{f(best_split[1]) if best_split else '-'} ({best_split[0] if best_split else '-'}) "
              f"| {f(at)} | {cub:.4f} | {cub / min(ms):.2f}x |" if cub and ms else
              f"| {m}x{n}x{k} | {f(pol)} | {f(sk)} | - | {f(at)} | - | - |")


if __name__ == "__main__":
    main()
