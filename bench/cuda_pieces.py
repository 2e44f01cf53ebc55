"""What a repeated eager call on torch CUDA tensors spends outside ck (microseconds per call):
torch's allocation, the stream lookup, attribute reads. Context for bench/python_binding.py."""
import statistics
import timeit

import torch

x = torch.randn(64, 1024, device="cuda")
raw = torch._C._cuda_getCurrentRawStream
g = {"torch": torch, "x": x, "raw": raw}
rows = ["torch.empty_like(x)", "torch.empty((64, 1024), dtype=torch.float32, device=x.device)",
        "raw(0)", "x.device", "x.shape", "x.stride()", "x.data_ptr()", "x.is_cuda",
        "x.get_device()", "torch.softmax(x, -1)", "torch.empty_like(x); torch.empty_like(x)"]
with torch.no_grad():
    for s in rows:
        n = 20000
        t = statistics.median(timeit.repeat(s, globals=g, number=n, repeat=5)) / n * 1e6
        print(f"{s:70s} {t:7.2f}")
