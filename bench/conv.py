#!/usr/bin/env python3
"""Convolution on the GPU: ck (`ck prof conv --json`, implicit GEMM over the im2col descriptor)
against torch.nn.functional.conv2d / conv3d (cuDNN, channels_last) in one run.

Both timed with CUDA events after warm-up (ck: its own `ck prof` timing, median of 30). ck's run
is checked by `ck prof conv` against the direct CPU reference (4096 sampled elements; "-": timed
only for the largest shapes). Forward, backward data (--dir bwd-data: torch's conv2d_input) and
backward weight (--dir bwd-weight: torch's conv2d_weight). Prints a markdown table of TFLOP/s and ck / cuDNN, then the geometric mean.
Builds nothing: pass --build DIR.

--set resnet50 times the ResNet-50 forward layer set (every distinct 3x3 / 1x1 / 7x7 layer at
batch 128) instead of the issue's shapes; --set all the issue's 3x3 target, depthwise and 3-D
shapes then the ResNet-50 set (the issue's other shapes are ResNet-50 layers). --jobs J first runs every shape's `ck prof conv` once,
J at a time (NVRTC compiles into the kernel cache, and the check runs), so that the timed runs
that follow, one at a time, only load the cached kernels.

--route sm80 keeps ck on its sm80 route (CK_CONV_ROUTE=sm80), to measure the sm90 route against
it; --route gemm keeps depthwise problems on the implicit GEMM (CK_CONV_ROUTE=gemm), to measure
the direct depthwise route against it. --set depthwise times depthwise shapes (G = C = K:
MobileNet / EfficientNet / ConvNeXt-like), memory-bound: the GB/s columns (every tensor moved
once) and ck / copy (3.0 TB/s on the H100, ANCHORS.md) are the measure there.

usage: python3 bench/conv.py [--build DIR] [--dir fwd|bwd-data|bwd-weight] [--quick]
                             [--dtype bf16|f16] [--set issue|resnet50|depthwise|all]
                             [--jobs J] [--route sm80|gemm]
"""
import argparse
import json
import math
import os
import subprocess
import sys

# (n, c, k, spatial (h, w) or (d, h, w), filter, stride, pad, groups)
SHAPES = [
    (32, 256, 256, (56, 56), 3, 1, 1, 1),     # the 3x3 target
    (128, 64, 64, (56, 56), 3, 1, 1, 1),      # ResNet-50 layer1 3x3
    (128, 256, 64, (56, 56), 1, 1, 0, 1),     # ResNet-50 1x1 reduce
    (128, 256, 256, (14, 14), 3, 1, 1, 1),
    (128, 1024, 2048, (14, 14), 1, 2, 0, 1),  # strided 1x1 projection
    (64, 256, 256, (56, 56), 3, 1, 1, 256),   # depthwise 3x3
    (8, 64, 64, (16, 56, 56), 3, 1, 1, 1),    # 3-D video
]

# depthwise (G = C = K), the direct route: the shapes, MobileNetV2-like 3x3 layers at
# batch 64 (stride 1 and 2), EfficientNet-like 5x5, ConvNeXt-like 7x7
DEPTHWISE = [
    (32, 256, 256, (56, 56), 3, 1, 1, 256),
    (64, 256, 256, (56, 56), 3, 1, 1, 256),
    (64, 32, 32, (112, 112), 3, 1, 1, 32),
    (64, 96, 96, (112, 112), 3, 2, 1, 96),
    (64, 144, 144, (56, 56), 3, 1, 1, 144),
    (64, 192, 192, (28, 28), 3, 1, 1, 192),
    (64, 512, 512, (14, 14), 3, 1, 1, 512),
    (64, 512, 512, (14, 14), 3, 2, 1, 512),
    (64, 960, 960, (7, 7), 3, 1, 1, 960),
    (64, 240, 240, (28, 28), 5, 1, 2, 240),
    (32, 384, 384, (14, 14), 7, 1, 3, 384),
]

# ResNet-50 (v1.5: the stride on the 3x3) forward, batch 128: every distinct layer once
RESNET50 = [
    (128, 3, 64, (224, 224), 7, 2, 3, 1),     # stem
    (128, 64, 64, (56, 56), 1, 1, 0, 1),
    (128, 64, 64, (56, 56), 3, 1, 1, 1),
    (128, 64, 256, (56, 56), 1, 1, 0, 1),
    (128, 256, 64, (56, 56), 1, 1, 0, 1),
    (128, 256, 128, (56, 56), 1, 1, 0, 1),
    (128, 128, 128, (56, 56), 3, 2, 1, 1),
    (128, 128, 512, (28, 28), 1, 1, 0, 1),
    (128, 256, 512, (56, 56), 1, 2, 0, 1),    # downsample
    (128, 512, 128, (28, 28), 1, 1, 0, 1),
    (128, 128, 128, (28, 28), 3, 1, 1, 1),
    (128, 512, 256, (28, 28), 1, 1, 0, 1),
    (128, 256, 256, (28, 28), 3, 2, 1, 1),
    (128, 256, 1024, (14, 14), 1, 1, 0, 1),
    (128, 512, 1024, (28, 28), 1, 2, 0, 1),   # downsample
    (128, 1024, 256, (14, 14), 1, 1, 0, 1),
    (128, 256, 256, (14, 14), 3, 1, 1, 1),
    (128, 1024, 512, (14, 14), 1, 1, 0, 1),
    (128, 512, 512, (14, 14), 3, 2, 1, 1),
    (128, 512, 2048, (7, 7), 1, 1, 0, 1),
    (128, 1024, 2048, (14, 14), 1, 2, 0, 1),  # downsample
    (128, 2048, 512, (7, 7), 1, 1, 0, 1),
    (128, 512, 512, (7, 7), 3, 1, 1, 1),
]


COPY_GBS = 3000.0  # the H100's device-to-device copy, bytes read + written (ANCHORS.md)


def ck_args(build, s, direction, dtype, reps=30, warmup=10):
    n, c, k, sp, f, st, pd, g = s
    key = {2: ("--hw", "--yx"), 3: ("--dhw", "--zyx")}[len(sp)]
    return [os.path.join(build, "bin", "ck"), "prof", "conv", "--device", "cuda", "--json",
            "--dir", direction, "--n", str(n), "--g", str(g), "--c", str(c), "--k", str(k),
            key[0], "x".join(map(str, sp)), key[1], "x".join([str(f)] * len(sp)),
            "--stride", str(st), "--pad", str(pd), "--dtype", dtype, "--reps", str(reps),
            "--warmup", str(warmup)]


def ck_warm(build, shapes, direction, dtype, jobs):
    """Every shape once, `jobs` at a time: kernels compiled into the cache, checks run."""
    from concurrent.futures import ThreadPoolExecutor
    def one(s):
        p = subprocess.run(ck_args(build, s, direction, dtype, 1, 0), capture_output=True,
                           text=True)
        return p.returncode
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        list(ex.map(one, shapes))


def ck_run(build, s, direction, dtype):
    p = subprocess.run(ck_args(build, s, direction, dtype), capture_output=True, text=True)
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            return r["tflops"], r["check"], r["kernel"], r.get("gbs", 0.0)
    sys.stderr.write(p.stdout[-1500:] + p.stderr[-1500:])
    return None


def torch_run(s, direction, dtype):
    import torch
    import torch.nn.functional as F
    n, c, k, sp, f, st, pd, g = s
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    mf = torch.channels_last if len(sp) == 2 else torch.channels_last_3d
    x = torch.randn(n, c, *sp, device="cuda", dtype=dt).to(memory_format=mf)
    w = torch.randn(k, c // g, *([f] * len(sp)), device="cuda", dtype=dt).to(memory_format=mf)
    conv = F.conv2d if len(sp) == 2 else F.conv3d
    y = conv(x, w, stride=st, padding=pd, groups=g)
    if direction == "fwd":
        fn = lambda: conv(x, w, stride=st, padding=pd, groups=g)
    elif direction == "bwd-data":
        gy = torch.randn_like(y)
        grad = torch.nn.grad.conv2d_input if len(sp) == 2 else torch.nn.grad.conv3d_input
        fn = lambda: grad(x.shape, w, gy, stride=st, padding=pd, groups=g)
    else:
        gy = torch.randn_like(y)
        grad = torch.nn.grad.conv2d_weight if len(sp) == 2 else torch.nn.grad.conv3d_weight
        fn = lambda: grad(x, w.shape, gy, stride=st, padding=pd, groups=g)
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
    flops = 2.0 * y.numel() * (c // g) * f ** len(sp)
    moved = (x.numel() + w.numel() + y.numel()) * x.element_size()
    return flops / (ms * 1e-3) / 1e12, moved / (ms * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--dir", default="fwd", choices=["fwd", "bwd-data", "bwd-weight"])
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--set", default="issue", choices=["issue", "resnet50", "depthwise", "all"])
    ap.add_argument("--jobs", type=int, default=0)
    ap.add_argument("--route", choices=["sm80", "gemm"])
    a = ap.parse_args()
    if a.route:
        os.environ["CK_CONV_ROUTE"] = a.route
    shapes = {"issue": SHAPES, "resnet50": RESNET50, "depthwise": DEPTHWISE,
              "all": [SHAPES[0], SHAPES[5], SHAPES[6]] + RESNET50}[a.set]
    shapes = shapes[:3] if a.quick else shapes
    if a.jobs > 0:
        ck_warm(a.build, shapes, a.dir, a.dtype, a.jobs)
    print(f"| conv {a.dir} {a.dtype}{' (' + a.route + ')' if a.route else ''} | ck TFLOP/s | cuDNN TFLOP/s | ck / cuDNN | ck GB/s | cuDNN GB/s | ck / copy | check | kernel |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for s in shapes:
        ck = ck_run(a.build, s, a.dir, a.dtype)
        ref, ref_gbs = torch_run(s, a.dir, a.dtype)
        n, c, k, sp, f, st, pd, g = s
        name = f"n{n} c{c}->k{k} {'x'.join(map(str, sp))} {f}x{f} s{st} p{pd} g{g}"
        if ck is None:
            print(f"| {name} | failed | {ref:.1f} | - | - | {ref_gbs:.0f} | - | - | - |")
            continue
        r = ck[0] / ref
        ratios.append(r)
        print(f"| {name} | {ck[0]:.2f} | {ref:.2f} | {r:.2f} | {ck[3]:.0f} | {ref_gbs:.0f} | "
              f"{ck[3] / COPY_GBS:.2f} | {ck[1]} | {ck[2]} |")
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f"\ngeometric mean ck / cuDNN: {gm:.3f}; lowest {min(ratios):.3f}")


if __name__ == "__main__":
    main()
