#!/usr/bin/env python3
"""Writes the benchmark workloads as graph files (wgml-graph v1) for `wgml bench`.

Each kernel workload is written twice, as a chain of 1 and of T identical ops over Params
(uploaded once by `set_param`), whose graph output is one small row of the last op's result.
The per-op device time is (median_T - median_1) / (T - 1): the upload, submit, wait and readback
that both graphs share cancel. The MLP is written once, with a host Input, and timed end to end.
Workload names are those of torch_ref.py, so the two tables join on them.

    python3 bench/graphs.py OUTDIR [--small]

writes OUTDIR/<name>_c1.json, OUTDIR/<name>_c<T>.json, OUTDIR/<mlp>.json and OUTDIR/workloads.tsv
with one line per workload: name, unit (GB/s, TFLOP/s or us), bytes or flops per op, T.
"""
import json
import sys


def node(op, inputs, dtype, shape):
    return {"op": op, "inputs": [{"node": i, "output": 0} for i in inputs],
            "outputs": [{"dtype": dtype, "shape": shape}]}


def param(name, shape, dtype="F32"):
    return node({"Param": {"name": name, "dtype": dtype, "shape": shape}}, [], dtype, shape)


def inp(name, shape, dtype="F32"):
    return node({"Input": {"name": name, "dtype": dtype, "shape": shape}}, [], dtype, shape)


def graph(nodes, out):
    return {"format": "wgml-graph", "version": 1,
            "graph": {"nodes": nodes, "outputs": [{"node": out, "output": 0}]}}


def first_row(nodes, last, shape, dtype):
    """Narrows the last value to its first row (a small readback)."""
    out_shape = [1] + shape[1:]
    nodes.append(node({"Narrow": {"axis": 0, "start": 0, "len": 1, "step": 1}}, [last], dtype, out_shape))
    return len(nodes) - 1


def chain(op, shape, extra_params, t, dtype="F32", out_shape=None):
    """x -> op -> op ... (t times); each op takes the previous value plus the extra params."""
    nodes = [param("x", shape, dtype)]
    extra = []
    for name, pshape in extra_params:
        nodes.append(param(name, pshape, dtype))
        extra.append(len(nodes) - 1)
    last = 0
    out_shape = out_shape or shape
    for _ in range(t):
        nodes.append(node(op, [last] + extra, dtype, out_shape))
        last = len(nodes) - 1
    return graph(nodes, first_row(nodes, last, out_shape, dtype))


def mlp(width, batch, layers, fused):
    nodes = [inp("x", [batch, width])]
    last = 0
    for i in range(layers):
        nodes.append(param(f"w{i}", [width, width]))
        w = len(nodes) - 1
        nodes.append(param(f"b{i}", [width]))
        b = len(nodes) - 1
        if fused:
            nodes.append(node({"FusedMatMulBiasAct": {"activation": "Relu"}}, [last, w, b], "F32", [batch, width]))
        else:
            nodes.append(node("MatMul", [last, w], "F32", [batch, width]))
            nodes.append(node({"Binary": "Add"}, [len(nodes) - 1, b], "F32", [batch, width]))
            nodes.append(node({"Unary": "Relu"}, [len(nodes) - 1], "F32", [batch, width]))
        last = len(nodes) - 1
    return graph(nodes, last)


def workloads(small):
    big, mid, ragged, gemv_k, add_n, r, c = (
        (128, 64, 100, 256, 1 << 16, 64, 256) if small else (4096, 1024, 4000, 4096, 1 << 26, 16384, 4096))
    rows = []
    # (name, op, shape, extra params, dtype, out shape, unit, amount per op, T)
    for s, dt, label in [(big, "F32", "f32"), (big, "F16", "f16"), (mid, "F32", "f32"), (mid, "F16", "f16"),
                         (ragged, "F32", "f32")]:
        rows.append((f"matmul_{s}_{label}", "MatMul", [s, s], [("w", [s, s])], dt, None, "TFLOP/s",
                     2 * s * s * s, 5))
    for dt, label, size in [("F32", "f32", 4), ("F16", "f16", 2)]:
        k = gemv_k
        # bytes: the weights once, plus the vector in and out
        rows.append((f"gemv_1x{k}x{k}_{label}_bw", "MatMul", [1, k], [("w", [k, k])], dt, None, "GB/s",
                     size * (k * k + 2 * k), 9))
    n = add_n
    exp = n.bit_length() - 1
    rows.append((f"add_2p{exp}_f32", {"Binary": "Add"}, [n], [("b", [n])], "F32", None, "GB/s", 3 * 4 * n, 9))
    rc = 2 * 4 * r * c
    rows += [
        (f"softmax_{r}x{c}_f32", {"Softmax": {"axis": 1}}, [r, c], [], "F32", None, "GB/s", rc, 5),
        (f"logsoftmax_{r}x{c}_f32", {"LogSoftmax": {"axis": 1}}, [r, c], [], "F32", None, "GB/s", rc, 5),
        (f"layernorm_{r}x{c}_f32", {"LayerNorm": {"axis": 1, "eps": 1e-5}}, [r, c], [("g", [c]), ("b", [c])],
         "F32", None, "GB/s", rc, 5),
        (f"rmsnorm_{r}x{c}_f32", {"RmsNorm": {"axis": 1, "eps": 1e-6}}, [r, c], [("g", [c])], "F32", None,
         "GB/s", rc, 5),
        (f"gelu_{r}x{c}_f32", {"Unary": "Gelu"}, [r, c], [], "F32", None, "GB/s", rc, 5),
    ]
    # channel norms of a ResNet/UNet-sized activation [N, C, H, W]: bytes = read + write
    n, ch, hw = (2, 64, 16) if small else (8, 256, 56)
    img = [n, ch, hw, hw]
    ib = 2 * 4 * n * ch * hw * hw
    rows += [
        (f"groupnorm_{n}x{ch}x{hw}x{hw}_g32_f32", {"GroupNorm": {"num_groups": 32, "eps": 1e-5}}, img,
         [("g", [ch]), ("b", [ch])], "F32", None, "GB/s", ib, 9),
        (f"layernorm2d_{n}x{ch}x{hw}x{hw}_f32", {"LayerNorm2d": {"eps": 1e-6}}, img, [("g", [ch]), ("b", [ch])],
         "F32", None, "GB/s", ib, 9),
    ]
    return rows


def main():
    outdir = sys.argv[1]
    small = "--small" in sys.argv
    lines = []
    for name, op, shape, extra, dt, out_shape, unit, amount, t in workloads(small):
        for n in (1, t):
            with open(f"{outdir}/{name}_c{n}.json", "w") as f:
                json.dump(chain(op, shape, extra, n, dt, out_shape), f)
        lines.append(f"{name}\t{unit}\t{amount}\t{t}")
    for fused in (False, True):
        name = "mlp4_b1_w256" + ("_fused" if fused else "")
        with open(f"{outdir}/{name}.json", "w") as f:
            json.dump(mlp(256, 1, 4, fused), f)
        lines.append(f"{name}_us\tus\t0\t1")
    with open(f"{outdir}/workloads.tsv", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
