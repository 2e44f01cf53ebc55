#!/usr/bin/env python3
"""Random convolution problems for the GPU scripts: prints one `ck prof conv` argument line per
problem (each run checks against the direct CPU reference and exits non-zero on a mismatch).

    python3 bench/conv_random.py N_ALL N_FWD90 [SEED] [--quant]

N_ALL problems of every direction (1-/2-/3-D, groups incl. depthwise, strides, dilations,
asymmetric padding, odd sizes; bf16 / f16 / f32), then N_FWD90 forward problems whose channels
per group are multiples of 8 in 16-bit types (the sm90 route). --quant adds e4m3 / i8 inputs to
a fifth of the first kind (8-bit convolutions; depthwise ones go through the implicit GEMM).
"""
import random
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quant = "--quant" in sys.argv
    nall, nfwd = int(args[0]), int(args[1])
    r = random.Random(int(args[2]) if len(args) > 2 else 18)
    for i in range(nall + nfwd):
        fwd90 = i >= nall
        nd = r.choice([1, 2, 2, 2, 3])
        g = r.choice([1, 1, 2, 4])
        dw = r.random() < 0.15
        c = g if dw else g * r.choice([3, 8, 16, 24, 64])
        if fwd90:
            dw, c = False, g * r.choice([8, 16, 24, 64, 128])
        k = g if dw else g * r.choice([5, 8, 16, 32, 64])
        sp = ([r.choice([1, 7, 13, 28]) for _ in range(nd)] if nd < 3
              else [r.choice([1, 5, 8]) for _ in range(3)])
        f = [min(r.choice([1, 3, 5, 7]), s + 2) for s in sp]
        st = [r.choice([1, 1, 2, 3]) for _ in range(nd)]
        dl = [r.choice([1, 1, 2]) for _ in range(nd)]
        ext = [d * (ff - 1) + 1 for d, ff in zip(dl, f)]
        pl = [r.randint(0, e - 1) for e in ext]
        pr = [r.randint(0, e - 1) for e in ext]
        if not all(s + a + b >= e for s, a, b, e in zip(sp, pl, pr, ext)):
            pl = pr = [e - 1 for e in ext]
        x = lambda v: "x".join(map(str, v))  # noqa: E731
        key = {1: ("--w", "--x"), 2: ("--hw", "--yx"), 3: ("--dhw", "--zyx")}[nd]
        d = "fwd" if fwd90 else r.choice(["fwd", "bwd-data", "bwd-weight"])
        t = r.choice(["bf16", "f16"]) if fwd90 else r.choice(["bf16", "f16", "f32"])
        if quant and not fwd90 and r.random() < 0.2:
            t = r.choice(["e4m3", "i8"])
        print(f"prof conv --device cuda --json --reps 3 --warmup 1 --dir {d} "
              f"--n {r.choice([1, 2, 4])} --g {g} --c {c} --k {k} {key[0]} {x(sp)} {key[1]} {x(f)} "
              f"--stride {x(st)} --dilation {x(dl)} --pad-left {x(pl)} --pad-right {x(pr)} "
              f"--dtype {t}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
