#!/usr/bin/env python3
"""Every candidate instance of ck's GEMM policy for some shapes, timed on the GPU, next to the
policy's own choice: how good the ranking is, where the heuristic should change.

For each shape: `ck prof gemm --list` (ranked candidates), then `ck prof gemm --instance ID
--json --flush` for each candidate whose name starts with --family (default: all). bf16,
A row-major, B column-major, D bf16. Prints a markdown table per shape, the policy's pick first.

usage: python3 bench/gemm_instances.py --build DIR [--family sm90] [--shapes M,N,K;...]
"""
import argparse
import json
import os
import subprocess
import sys

DEFAULT = "1024,1024,1024;2048,2048,2048;128,4096,4096;512,4096,14336;256,1024,65536;127,4097,1023"


def ck(build, args):
    p = subprocess.run([os.path.join(build, "bin", "ck"), "prof", "gemm", "--device", "cuda"] + args,
                       capture_output=True, text=True, env=dict(os.environ, CK_DEVICE="cuda"))
    return p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--family", default="")
    ap.add_argument("--shapes", default=DEFAULT)
    ap.add_argument("--reps", default="20")
    o = ap.parse_args()
    for shape in o.shapes.split(";"):
        m, n, k = shape.split(",")
        dims = ["--m", m, "--n", n, "--k", k]
        out, err = ck(o.build, dims + ["--list"])
        cands = []
        for line in out.splitlines()[1:]:
            f = line.split()
            if len(f) >= 4 and f[0].isdigit() and f[1].startswith(o.family):
                cands.append((f[0], f[1], f[3]))
        print("\n%sx%sx%s\n\n| rank | instance | score | TFLOP/s |\n| --- | --- | --- | --- |" %
              (m, n, k))
        for rank, (cid, name, score) in enumerate(cands):
            out, err = ck(o.build, dims + ["--instance", cid, "--json", "--flush", "--reps", o.reps,
                                           "--warmup", "5", "--no-check"])
            t = "failed"
            for line in out.splitlines():
                if line.startswith("{"):
                    t = "%.1f" % json.loads(line)["tflops"]
            if t == "failed":
                sys.stderr.write(err[-500:])
            print("| %d | %s | %s | %s |" % (rank, name, score, t))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
