#!/usr/bin/env python3
"""Writes the mixture-of-experts GEMM workload as graph files (wgml-graph v1): GroupedMatMul of
8 experts x 1024 tokens (M = 8192 rows, 1024 per expert), K = 4096 -> N = 14336, f16, next to
the dense f16 MatMul [8192, 4096] x [4096, 14336] of the same FLOPs, for `bench/run_graphs.sh`.

    python3 bench/grouped_graphs.py OUTDIR [--small]
    bench/run_graphs.sh WGML OUTDIR

writes OUTDIR/<name>_c1.json, OUTDIR/<name>_c3.json and OUTDIR/workloads.tsv. Each graph is a
chain of 1 or 3 products over Params x and w (`wgml bench --random` fills them); between two
products the output's first K columns (a Narrow, the same in both workloads) feed the next, so
that every product is live. The expert ids are a Constant routing token m to expert m % 8 (each
expert gets 1024 rows, interleaved, so the device-side grouping has real work). FLOPs per op:
2·M·K·N for both, the rule of bench/torch_layers.py (`grouped_matmul_e8t4096k4096n14336_f16`,
the same name, and `matmul_8192x4096x14336_f16`).
"""
import json
import struct
import sys

from graphs import first_row, graph, node, param


def narrow_cols(nodes, last, rows, k, dtype):
    nodes.append(node({"Narrow": {"axis": 1, "start": 0, "len": k, "step": 1}}, [last], dtype, [rows, k]))
    return len(nodes) - 1


def product_chain(grouped, e, m, k, n, t, dtype="F16"):
    nodes = [param("x", [m, k], dtype)]
    if grouped:
        nodes.append(param("w", [e, k, n], dtype))
        ids = b"".join(struct.pack("<i", r % e) for r in range(m))
        nodes.append(node({"Constant": {"dtype": "I32", "shape": [m], "data": ids.hex()}}, [], "I32", [m]))
        extra = [1, 2]
        op = {"GroupedMatMul": {}}
    else:
        nodes.append(param("w", [k, n], dtype))
        extra = [1]
        op = "MatMul"
    last = 0
    for i in range(t):
        if i > 0:
            last = narrow_cols(nodes, last, m, k, dtype)
        nodes.append(node(op, [last] + extra, dtype, [m, n]))
        last = len(nodes) - 1
    return graph(nodes, first_row(nodes, last, [m, n], dtype))


def main():
    outdir = sys.argv[1]
    small = "--small" in sys.argv
    e, tokens, k, n = (8, 32, 128, 256) if small else (8, 1024, 4096, 14336)
    m = e * tokens
    t = 3
    flops = 2 * m * k * n
    rows = [(f"grouped_matmul_e{e}t{m // 2}k{k}n{n}_f16", True), (f"matmul_{m}x{k}x{n}_f16", False)]
    lines = []
    for name, grouped in rows:
        for c in (1, t):
            with open(f"{outdir}/{name}_c{c}.json", "w") as f:
                json.dump(product_chain(grouped, e, m, k, n, c), f)
        lines.append(f"{name}\tTFLOP/s\t{flops}\t{t}")
    with open(f"{outdir}/workloads.tsv", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
