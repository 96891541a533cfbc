#!/usr/bin/env python3
"""Writes Conv / ConvTranspose workloads as graph files (wgml-graph v1) for `wgml profile`.

    python3 bench/conv_graphs.py OUTDIR

writes OUTDIR/<name>.json: x and w as Params (uploaded once), one op, the output read back.
`wgml profile OUTDIR/<name>.json --random` then gives the kernel's GPU time and GB/s.
"""
import json
import sys


def node(op, inputs, dtype, shape):
    return {"op": op, "inputs": [{"node": i, "output": 0} for i in inputs],
            "outputs": [{"dtype": dtype, "shape": shape}]}


def param(name, shape, dtype):
    return node({"Param": {"name": name, "dtype": dtype, "shape": shape}}, [], dtype, shape)


def conv_graph(x, w, out, attrs, dtype="F32", transpose=False):
    op = {"ConvTranspose": {"conv": attrs, "output_padding": [0] * (len(x) - 2)}} if transpose else {"Conv": attrs}
    nodes = [param("x", x, dtype), param("w", w, dtype), node(op, [0, 1], dtype, out)]
    return {"format": "wgml-graph", "version": 1,
            "graph": {"nodes": nodes, "outputs": [{"node": 2, "output": 0}]}}


def one_op(op, x, out, extra=(), dtype="F32"):
    """x (and `extra` params) -> op -> out, a graph of one node."""
    nodes = [param("x", x, dtype)] + [param(n, sh, dtype) for n, sh in extra]
    nodes.append(node(op, list(range(len(nodes))), dtype, out))
    return {"format": "wgml-graph", "version": 1,
            "graph": {"nodes": nodes, "outputs": [{"node": len(nodes) - 1, "output": 0}]}}


def attrs(s, stride=1, pad=1, groups=1):
    return {"stride": [stride] * s, "dilation": [1] * s, "pads_begin": [pad] * s, "pads_end": [pad] * s,
            "groups": groups, "has_bias": False}


IMG = [8, 256, 56, 56]
MAXPOOL = {"Pool": {"kind": "Max", "kernel": [3, 3], "stride": [2, 2], "dilation": [1, 1], "pads_begin": [1, 1],
                    "pads_end": [1, 1], "ceil_mode": False, "count_include_pad": False}}

WORKLOADS = {
    # the convolution table of the benchmarks (names as in torch_layers.py)
    "conv3x3_n8c256hw56_f32": conv_graph(IMG, [256, 256, 3, 3], IMG, attrs(2)),
    "conv3x3_n8c256hw56_f16": conv_graph(IMG, [256, 256, 3, 3], IMG, attrs(2), dtype="F16"),
    "dwconv3x3_n8c256hw56_f32": conv_graph(IMG, [256, 1, 3, 3], IMG, attrs(2, groups=256)),
    "maxpool3x3s2_n8c256hw56_f32": one_op(MAXPOOL, IMG, [8, 256, 28, 28]),
    "groupnorm32_n8c256hw56_f32": one_op({"GroupNorm": {"num_groups": 32, "eps": 1e-5}}, IMG, IMG,
                                         [("g", [256]), ("b", [256])]),
    # depthwise 3x3, the MobileNet shape of the brief: 2 x 25.7 MB moved
    "dw3x3_n8_c256_56": conv_graph([8, 256, 56, 56], [256, 1, 3, 3], [8, 256, 56, 56], attrs(2, groups=256)),
    "dw3x3_n8_c256_56_f16": conv_graph([8, 256, 56, 56], [256, 1, 3, 3], [8, 256, 56, 56], attrs(2, groups=256),
                                       dtype="F16"),
    "conv3x3_n8_c64_56": conv_graph([8, 64, 56, 56], [64, 64, 3, 3], [8, 64, 56, 56], attrs(2)),
    "convT3x3_n8_c64_28_s2": conv_graph([8, 64, 28, 28], [64, 64, 3, 3], [8, 64, 55, 55],
                                        attrs(2, stride=2, pad=1), transpose=True),
}

if __name__ == "__main__":
    out = sys.argv[1]
    for name, g in WORKLOADS.items():
        with open(f"{out}/{name}.json", "w") as f:
            json.dump(g, f)
