#!/usr/bin/env python3
"""PyTorch (CUDA) counterparts of bench/quant_graphs.py's dense workloads, plus the copy
bandwidth that bounds a GEMV: median CUDA-event times over many repetitions of random data.

    python3 bench/torch_quant.py
prints name<TAB>GPU us<TAB>GB/s<TAB>TFLOP/s with the byte and FLOP rules of quant_graphs.py.
"""
import statistics

import torch

N, K = 14336, 4096


def median_us(fn, reps=200, warmup=20):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return statistics.median(times)


def row(name, us, nbytes, flops):
    print(f"{name}\t{us:.2f}\t{nbytes / us / 1e3:.0f}\t{flops / us / 1e6:.2f}", flush=True)


def main():
    dev = "cuda"
    print(f"# torch {torch.__version__} on {torch.cuda.get_device_name()}")
    print("workload\tGPU us\tGB/s\tTFLOP/s")
    n = 1 << 28
    src, dst = torch.randn(n, device=dev), torch.empty(n, device=dev)
    row("torch_copy_1GiB_f32", median_us(lambda: dst.copy_(src), reps=50), 8 * n, 0)
    del src, dst
    for dtype, size in ((torch.float32, 4), (torch.float16, 2)):
        tag = "f32" if dtype == torch.float32 else "f16"
        w = torch.randn(N, K, device=dev, dtype=dtype)
        for m in (1, 4, 8, 512):
            if m == 512 and dtype == torch.float32:
                continue
            x = torch.randn(m, K, device=dev, dtype=dtype)
            us = median_us(lambda: torch.nn.functional.linear(x, w))
            row(f"torch_linear_{tag}_m{m}", us, size * (N * K + m * K + m * N), 2 * m * N * K)


if __name__ == "__main__":
    main()
