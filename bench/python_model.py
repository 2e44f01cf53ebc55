#!/usr/bin/env python3
"""End-to-end time of the issue's small model, RMSNorm -> matmul -> SiLU -> matmul -> softmax,
with ck's ops against pure PyTorch (eager and torch.compile), on one GPU. Prints a markdown
table: median milliseconds per forward (CUDA events around each call, after warm-up), and
the ratio to torch eager (> 1: faster than torch eager).

    PYTHONPATH=python/src CK_KERNELS_LIB=build/lib/libck.so python3 bench/python_model.py
        [--dtype bf16|f16|f32] [--reps 50] [--backward] [--config T,D,H,O ...]

Variants: torch eager; torch.compile (inductor); ck eager (ck.rms_norm, ck.matmul,
ck.elementwise silu, ck.matmul, ck.softmax); ck compiled (the same under torch.compile with
fullgraph=True: ck's ops stay custom ops, inductor fuses nothing into them); ck fused (SiLU in
the first GEMM's epilogue, ck.gemm(activation='silu'); inference only). --backward times
forward + backward (d loss / d weights) instead, without the fused variant. f32 runs ck's GEMMs
in TF32; torch is set to TF32 as well for that comparison (torch.backends.cuda.matmul).
Not a test."""
import argparse
import statistics

import torch
import torch.nn.functional as F

import ck_kernels as ck

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
# tokens, model width, hidden width, output width
CONFIGS = [(512, 1024, 4096, 1024), (4096, 4096, 11008, 4096), (16, 4096, 14336, 4096)]


def make(t, d, h, o, dtype, grad):
    g = torch.Generator(device="cuda").manual_seed(0)

    def rnd(*shape, scale=1.0):
        return (torch.randn(*shape, generator=g, device="cuda") * scale).to(dtype)

    x = rnd(t, d)
    w0 = (1 + 0.1 * rnd(d)).requires_grad_(grad)
    w1 = rnd(h, d, scale=d ** -0.5).requires_grad_(grad)  # nn.Linear layout [out, in]
    w2 = rnd(o, h, scale=h ** -0.5).requires_grad_(grad)
    return x, (w0, w1, w2)


def torch_model(x, w):
    w0, w1, w2 = w
    h = F.rms_norm(x, (x.shape[-1],), w0)
    return F.softmax(F.silu(h @ w1.t()) @ w2.t(), -1)


def ck_model(x, w):
    w0, w1, w2 = w
    h = ck.rms_norm(x, (x.shape[-1],), w0)
    h = ck.elementwise("silu(x0)", ck.matmul(h, w1.t()))
    return ck.softmax(ck.matmul(h, w2.t()))


def ck_fused(x, w):
    w0, w1, w2 = w
    h = ck.gemm(ck.rms_norm(x, (x.shape[-1],), w0), w1.t(), activation="silu")
    return ck.softmax(ck.matmul(h, w2.t()))


def median_ms(fn, reps, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(reps)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return statistics.median(a.elapsed_time(b) for a, b in ev)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", default="bf16", choices=DTYPES)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--backward", action="store_true")
    ap.add_argument("--config", nargs="*", help="T,D,H,O (tokens, width, hidden, output)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("python_model.py needs a CUDA GPU")
    dtype = DTYPES[args.dtype]
    if dtype == torch.float32:
        torch.backends.cuda.matmul.allow_tf32 = True  # ck's f32 GEMM is TF32
    configs = [tuple(int(v) for v in c.split(",")) for c in args.config] if args.config \
        else CONFIGS
    variants = [("torch eager", torch_model), ("torch.compile", torch.compile(torch_model)),
                ("ck eager", ck_model),
                ("ck compiled", torch.compile(ck_model, fullgraph=True))]
    if not args.backward:
        variants.append(("ck fused epilogue", ck_fused))
    what = "forward + backward" if args.backward else "forward"
    print(f"small model {what}, {args.dtype}, {torch.cuda.get_device_name()}, median of "
          f"{args.reps} (ms; in parentheses: torch eager / variant)\n")
    print("| T, D, H, O | " + " | ".join(n for n, _ in variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for t, d, h, o in configs:
        x, w = make(t, d, h, o, dtype, args.backward)
        row = []
        for name, f in variants:
            if args.backward:
                def run(f=f, x=x, w=w):
                    torch.autograd.grad(f(x, w).float().square().sum(), w)
            else:
                def run(f=f, x=x, w=w):
                    with torch.inference_mode():
                        f(x, w)
            row.append(median_ms(run, args.reps))
        base = row[0]
        cells = [f"{ms:.3f} ({base / ms:.2f}x)" for ms in row]
        print(f"| {t}, {d}, {h}, {o} | " + " | ".join(cells) + " |")
        del x, w, run
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
