#!/usr/bin/env python3
"""Quantised-matmul workloads as single-op graph files (wgml-graph v1), timed by `wgml profile`
(the kernel's GPU time from timestamp queries; bench/run_quant.sh), next to the dense GEMVs and
GEMM of the same shapes:

- quant_<fmt>_m<M>: x [M, 4096] (F32; F16 for the GEMM) times W[14336, 4096] stored in <fmt>,
  M = 1, 4, 8 (decode) and 512 (prefill: Q4_K with F16 and F32 x, Q8_0 with F16 x); GB/s of the quantised weight bytes plus x
  read and out written, and TFLOP/s (2 M N K);
- dense_<dtype>_m<M>: the same product with a dense W [4096, 14336] (MatMul), F32 and F16.

    python3 bench/quant_graphs.py OUTDIR
writes OUTDIR/<name>.json and OUTDIR/workloads.tsv (name, bytes, flops).
"""
import json
import sys

from graphs import graph, node, param

N, K = 14336, 4096
# format attribute, weight inputs as (dtype, shape) for W[N, K].
FORMATS = {
    "q4_0": ("Q4_0", [("U8", [N, K // 32 * 18])]),
    "q4_k": ("Q4_K", [("U8", [N, K // 256 * 144])]),
    "q6_k": ("Q6_K", [("U8", [N, K // 256 * 210])]),
    "q8_0": ("Q8_0", [("U8", [N, K // 32 * 34])]),
    "int4b32": ({"Int4Block": {"block_size": 32}}, [("U8", [N, K // 2]), ("F16", [N, K // 32])]),
    "fp8e4m3": ("Fp8E4m3", [("U8", [N, K]), ("F32", [N])]),
    "nvfp4": ("Nvfp4", [("U8", [N, K // 2]), ("U8", [N, K // 16]), ("F32", [])]),
}
SIZE = {"U8": 1, "F16": 2, "F32": 4}


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def quant(fmt, m, dtype):
    attr, ws = FORMATS[fmt]
    nodes = [param("x", [m, K], dtype)]
    for i, (d, s) in enumerate(ws):
        nodes.append(param(f"w{i}", s, d))
    nodes.append(node({"QuantMatMul": {"format": attr}}, list(range(len(nodes))), dtype, [m, N]))
    wbytes = sum(SIZE[d] * numel(s) for d, s in ws)
    return graph(nodes, len(nodes) - 1), wbytes + SIZE[dtype] * (m * K + m * N)


def dense(m, dtype):
    nodes = [param("x", [m, K], dtype), param("w", [K, N], dtype)]
    nodes.append(node("MatMul", [0, 1], dtype, [m, N]))
    return graph(nodes, 2), SIZE[dtype] * (N * K + m * K + m * N)


def main():
    out = sys.argv[1]
    rows = []
    jobs = [(f"quant_{f}_m{m}", lambda f=f, m=m: quant(f, m, "F32"), m) for f in FORMATS for m in (1, 4, 8)]
    jobs += [("quant_q4_k_m512_f16", lambda: quant("q4_k", 512, "F16"), 512)]
    jobs += [("quant_q4_k_m512_f32", lambda: quant("q4_k", 512, "F32"), 512)]
    jobs += [("quant_q8_0_m512_f16", lambda: quant("q8_0", 512, "F16"), 512)]
    jobs += [(f"dense_{d.lower()}_m{m}", lambda d=d, m=m: dense(m, d), m) for d in ("F32", "F16") for m in (1, 4, 8)]
    jobs += [("dense_f16_m512", lambda: dense(512, "F16"), 512)]
    jobs += [("dense_f32_m512", lambda: dense(512, "F32"), 512)]
    for name, make, m in jobs:
        g, nbytes = make()
        with open(f"{out}/{name}.json", "w") as f:
            json.dump(g, f)
        rows.append(f"{name}\t{nbytes}\t{2 * m * N * K}")
    with open(f"{out}/workloads.tsv", "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
