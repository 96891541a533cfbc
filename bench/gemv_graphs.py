#!/usr/bin/env python3
"""Writes GEMV workloads over both weight layouts as graph files (wgml-graph v1), for sweeping
the `gemv.*` tuning keys with `wgml profile` / `wgml bench`.

    python3 bench/gemv_graphs.py OUTDIR [K]

writes OUTDIR/gemv_1xKxK_<dtype>_<layout>_c<T>.json for dtype f32, f16, bf16, layout `kn`
(MatMul x · W, W stored [K, N], N-contiguous) and `nk` (DotGeneral x · Wᵀ, W stored [N, K],
K-contiguous, as LLM decode layers keep it), and T = 1 and 9 (a chain of T equal ops over one
weight param, output narrowed to one row). Per-op time = (median_9 - median_1) / 8; bytes per op
= size * (K * K + 2 * K), as bench/graphs.py counts them.
"""
import json
import sys

from graphs import first_row, graph, node, param

NK = {"DotGeneral": {"lhs_batch": [], "rhs_batch": [], "lhs_contract": [1], "rhs_contract": [1]}}


def gemv_chain(k, dtype, layout, t):
    nodes = [param("x", [1, k], dtype), param("w", [k, k], dtype)]
    last = 0
    for _ in range(t):
        op = "MatMul" if layout == "kn" else NK
        nodes.append(node(op, [last, 1], dtype, [1, k]))
        last = len(nodes) - 1
    return graph(nodes, first_row(nodes, last, [1, k], dtype))


def main():
    outdir = sys.argv[1]
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    for dtype in ("F32", "F16", "BF16"):
        for layout in ("kn", "nk"):
            for t in (1, 9):
                name = f"{outdir}/gemv_1x{k}x{k}_{dtype.lower()}_{layout}_c{t}.json"
                with open(name, "w") as f:
                    json.dump(gemv_chain(k, dtype, layout, t), f)


if __name__ == "__main__":
    main()
