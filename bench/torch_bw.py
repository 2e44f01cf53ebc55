#!/usr/bin/env python3
"""PyTorch reference bandwidths on the GPU (bf16 16384x8192): copy, the bf16->f32 cast, write-only
fill and read-only sum, timed with CUDA events (median of 50 after 20 warm-up runs). The limits
that the widening cast is compared with in bench/RESULTS.md.  usage: python3 bench/torch_bw.py"""
import torch, statistics
def t(fn, reps=50):
    for _ in range(20): fn()
    torch.cuda.synchronize(); ts=[]
    for _ in range(reps):
        a=torch.cuda.Event(enable_timing=True); b=torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)
n=16384*8192
x=torch.randn(n,device='cuda',dtype=torch.bfloat16); y=torch.empty(n,device='cuda',dtype=torch.float32)
z=torch.empty(n,device='cuda',dtype=torch.bfloat16)
big=torch.empty(n*3,device='cuda',dtype=torch.bfloat16)
rows=[]
ms=t(lambda: z.copy_(x)); rows.append(("torch copy bf16 16384x8192 (read+write)", 2*n*2/ms/1e9))
ms=t(lambda: y.copy_(x)); rows.append(("torch cast bf16->f32 (2 B read + 4 B written)", 6*n/ms/1e9))
ms=t(lambda: big.fill_(1.5)); rows.append(("torch fill bf16 3n (write only, 6 B/elem of n)", 6*n/ms/1e9))
ms=t(lambda: y.fill_(1.5)); rows.append(("torch fill f32 n (write only)", 4*n/ms/1e9))
ms=t(lambda: torch.sum(big)); rows.append(("torch sum bf16 3n (read only)", 6*n/ms/1e9))
for r in rows: print("| %s | %.3f TB/s |" % r)
