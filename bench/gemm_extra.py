#!/usr/bin/env python3
"""GEMM beyond the bf16 sweep, on the GPU, each against its peer in the same run:

  tf32 4096^3             ck (--dtype tf32)            vs torch.matmul f32 with allow_tf32
  fp8 e4m3 8192^3         ck (e4m3 x e4m3 -> bf16)     vs torch._scaled_mm
  sm80 family on the GPU  ck (best sm80 instance)      vs torch.matmul bf16 (cuBLAS)
  cold / warm JIT         plan creation with an empty kernel cache, then in a new process

ck is timed by `ck prof gemm --json` (CUDA events, median; --flush overwrites L2 before each
run); torch the same way here. Prints a markdown table. Builds nothing: pass --build DIR.
usage: python3 bench/gemm_extra.py --build DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def ck(build, args, env=None):
    exe = os.path.join(build, "bin", "ck")
    e = dict(os.environ, CK_DEVICE="cuda")
    e.update(env or {})
    p = subprocess.run([exe, "prof", "gemm", "--json", "--device", "cuda"] + args,
                       capture_output=True, text=True, env=e)
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr)
        return None
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    sys.stderr.write(p.stdout + p.stderr)
    return None


def ck_list(build, args):
    exe = os.path.join(build, "bin", "ck")
    p = subprocess.run([exe, "prof", "gemm", "--device", "cuda", "--list"] + args,
                       capture_output=True, text=True, env=dict(os.environ, CK_DEVICE="cuda"))
    rows = []
    for line in p.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            rows.append((int(f[0]), f[1]))
    return rows


def time_torch(fn, reps=30):
    import torch
    flush = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    for _ in range(5):
        fn()
    ts = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    o = ap.parse_args()
    import torch
    rows = []

    def row(name, m, n, k, res, peer_ms, peer_name):
        fl = 2.0 * m * n * k
        peer = fl / (peer_ms * 1e9)
        if res is None:
            rows.append("| %s | failed | %.1f (%s) | | |" % (name, peer, peer_name))
            return
        rows.append("| %s | %.1f | %.1f (%s) | %.3f | %s |" % (
            name, res["tflops"], peer, peer_name, res["tflops"] / peer,
            "ok" if res["ok"] else "FAILED"))
        print(rows[-1], flush=True)

    common = ["--flush", "--reps", "30", "--warmup", "5"]
    # tf32
    m = n = k = 4096
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(n, k, device="cuda").t()
    torch.backends.cuda.matmul.allow_tf32 = True
    t = time_torch(lambda: torch.matmul(a, b))
    dims = ["--m", "4096", "--n", "4096", "--k", "4096", "--dtype", "tf32"]
    res = ck(o.build, dims + common)
    row("tf32 4096^3 (A row, B col; %s)" % (res["instance"] if res else "-"), m, n, k, res, t,
        "cuBLAS tf32")
    for cid, name in ck_list(o.build, dims)[1:4]:  # the policy's next candidates
        row("tf32 4096^3 candidate %s" % name, m, n, k,
            ck(o.build, dims + ["--instance", str(cid), "--no-check"] + common), t, "cuBLAS tf32")
    torch.backends.cuda.matmul.allow_tf32 = False
    # fp8 e4m3
    m = n = k = 8192
    a8 = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device="cuda")
    t = time_torch(lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one,
                                            out_dtype=torch.bfloat16))
    row("fp8 e4m3 8192^3 -> bf16", m, n, k,
        ck(o.build, ["--m", "8192", "--n", "8192", "--k", "8192", "--dtype", "e4m3",
                     "--no-check"] + common), t, "torch._scaled_mm")
    # a fused epilogue: D = silu(A B + bias per column), bf16, against torch's silu(addmm)
    for (m, n, k) in ((4096, 4096, 4096), (4096, 11008, 4096)):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
        bias = torch.randn(n, device="cuda", dtype=torch.float32)
        F = torch.nn.functional
        t = time_torch(lambda: F.silu(torch.addmm(bias.to(torch.bfloat16), a, b)))
        res = ck(o.build, ["--m", str(m), "--n", str(n), "--k", str(k), "--bias", "col",
                           "--act", "silu", "--no-check"] + common)
        row("bf16 %dx%dx%d + bias + silu (%s)" % (m, n, k, res["instance"] if res else "-"),
            m, n, k, res, t, "torch silu(addmm)")
    # sm80 family on this GPU, bf16 4096^3 and 8192^3
    for s in (4096, 8192):
        a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(s, s, device="cuda", dtype=torch.bfloat16).t()
        t = time_torch(lambda: torch.matmul(a, b))
        dims = ["--m", str(s), "--n", str(s), "--k", str(s)]
        sm80 = [r for r in ck_list(o.build, dims) if r[1].startswith("sm80")]
        best = None
        for cid, name in sm80[:4]:
            r = ck(o.build, dims + ["--instance", str(cid), "--no-check"] + common)
            if r and (best is None or r["tflops"] > best["tflops"]):
                best = r
        row("sm80 family bf16 %d^3 (%s)" % (s, best["instance"] if best else "-"), s, s, s,
            best, t, "cuBLAS")
    print()
    print("| work | ck TFLOP/s | peer TFLOP/s | ck / peer | check |")
    print("| --- | --- | --- | --- | --- |")
    for r in rows:
        print(r)
    # JIT: an empty cache, then a new process with the disk cache
    with tempfile.TemporaryDirectory() as cache:
        env = {"CK_CACHE_DIR": cache}
        args = ["--m", "4096", "--n", "4096", "--k", "4096", "--no-check", "--reps", "1",
                "--warmup", "0"]
        cold = ck(o.build, args, env)
        warm = ck(o.build, args, env)
        print("\nJIT of the bf16 4096^3 instance (%s): cold (NVRTC + load, empty cache) %.1f ms, "
              "warm (disk cache, new process) %.2f ms" %
              (cold and cold["instance"], cold["plan_ms"] if cold else -1,
               warm["plan_ms"] if warm else -1))


if __name__ == "__main__":
    main()
