#!/usr/bin/env python3
"""PyTorch (CUDA) reference figures for the control-flow benchmark of bench/control_graphs.py.

- while_iter: 10,000 iterations of x <- lerp(x, 1, 0.001) on 256 floats (x·0.999 + 0.001, one
  kernel), per iteration: eager with the trip count known on the host (no sync), eager with a
  data-dependent stop read back every iteration (`.item()`, what a While saves), and replayed
  from one CUDA graph.
- scan_step: 4096 steps of h <- tanh(x_t + h W) 256 wide (addmm + tanh), per step, eager and
  replayed from one CUDA graph.

    python3 bench/torch_control.py
prints name<TAB>variant<TAB>microseconds per iteration (medians of timed repeats).
"""
import statistics
import time

import torch


def median_s(fn, reps=7, warm=2):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    dev = "cuda"
    torch.manual_seed(0)
    T = 10_000
    x0 = torch.rand(256, device=dev)
    one = torch.ones(256, device=dev)
    i0 = torch.zeros((), dtype=torch.int32, device=dev)

    def eager():
        x = x0.clone()
        for _ in range(T):
            x = torch.lerp(x, one, 0.001)
        return x

    def synced():
        x, i = x0.clone(), i0.clone()
        while (i < T).item():
            x = torch.lerp(x, one, 0.001)
            i = i + 1
        return x

    static_x = x0.clone()
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        static_x.lerp_(one, 0.001)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g):
        for _ in range(T):
            static_x.lerp_(one, 0.001)

    for name, fn in [("eager", eager), ("eager_item_sync", synced), ("cuda_graph", g.replay)]:
        print(f"while_iter\t{name}\t{median_s(fn) / T * 1e6:.3f}")

    S, W = 4096, 256
    w = torch.randn(W, W, device=dev) / W ** 0.5
    xs = torch.randn(S, 1, W, device=dev)
    h0 = torch.zeros(1, W, device=dev)

    def scan_eager():
        h = h0.clone()
        for t in range(S):
            h = torch.tanh(torch.addmm(xs[t], h, w))
        return h

    hs = h0.clone()
    sg = torch.cuda.CUDAGraph()
    with torch.cuda.stream(s):
        hs.copy_(torch.tanh(torch.addmm(xs[0], hs, w)))
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(sg):
        for t in range(S):
            hs.copy_(torch.tanh(torch.addmm(xs[t], hs, w)))
    for name, fn in [("eager", scan_eager), ("cuda_graph", sg.replay)]:
        print(f"scan_step\t{name}\t{median_s(fn) / S * 1e6:.3f}")


if __name__ == "__main__":
    main()
