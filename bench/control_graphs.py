#!/usr/bin/env python3
"""Writes the control-flow benchmark workloads as graph files (wgml-graph v1) for `wgml bench`.

Each loop is written twice, with T iterations and with 1, and timed end to end; the per-iteration
time is (median_T - median_1) / (T - 1): the per-run overheads (submit, wait, readback), which
both graphs share, cancel. Data are Params (uploaded once by `set_param`), and each graph
reads back the same few elements, so only the loop's length differs between the pair.

- while_<T>: a While whose body is one elementwise op on 256 floats plus the counter:
  (i, x) -> (i + 1, fma(x, 0.999, 0.001)) while i < T; max_iterations T. Outputs i (the trip
  count, a check) and x[:8].
- body_once: that body alone as a plain graph with host Inputs, so one `run` is one iteration
  driven from the host (upload, dispatch, readback): the cost a While saves per iteration.
- scan_<T>: a Scan over T steps of an Elman cell 256 wide: carry h [1, 256], broadcast W
  [256, 256], xs [T, 1, 256]; body h' = tanh(h W + x_t), per-step value h'. Outputs the final h
  and the first row of the stacked ys (so the stack is made but not read back whole). With
  `--random` data (W uniform in [-1, 1], a gain of about 9) the recurrence is chaotic: every step
  agrees across backends, but `wgml compare` finds final states apart after ~10 steps; check
  values with W scaled down (1/16) instead.

    python3 bench/control_graphs.py OUTDIR [--small]

writes the graphs and OUTDIR/workloads.tsv with one line per workload: name, graph with T
iterations, graph with 1 ("-" when the graph is timed whole), T. `--small` shortens the loops
(100 iterations, 64 steps) for a quick check on a software GPU or on cpu-ref.
"""
import json
import struct
import sys

WIDTH = 256


def ref(v):
    """A value: a node id (its output 0) or a (node, output) pair."""
    node_id, output = v if isinstance(v, tuple) else (v, 0)
    return {"node": node_id, "output": output}


def node(op, inputs, *types):
    """A node; `types` are its outputs' (dtype, shape) pairs."""
    return {"op": op, "inputs": [ref(i) for i in inputs],
            "outputs": [{"dtype": d, "shape": s} for d, s in types]}


def param(name, shape, dtype="F32"):
    return node({"Param": {"name": name, "dtype": dtype, "shape": shape}}, [], (dtype, shape))


def inp(name, shape, dtype="F32"):
    return node({"Input": {"name": name, "dtype": dtype, "shape": shape}}, [], (dtype, shape))


def scalar(value, dtype):
    """A rank-0 Constant (I32 or F32), its bytes little-endian hex."""
    data = struct.pack("<i" if dtype == "I32" else "<f", value).hex()
    return node({"Constant": {"dtype": dtype, "shape": [], "data": data}}, [], (dtype, []))


def body(nodes, outputs):
    """A graph as written inside an op (subgraphs have no envelope)."""
    return {"nodes": nodes, "outputs": [ref(o) for o in outputs]}


def envelope(nodes, outputs):
    return {"format": "wgml-graph", "version": 1, "graph": body(nodes, outputs)}


def add(nodes, n):
    """Appends `n` and returns its id."""
    nodes.append(n)
    return len(nodes) - 1


def step_nodes(make_leaf):
    """The While body's nodes: (i, x) -> (i + 1, fma(x, 0.999, 0.001)); `make_leaf` declares i and
    x (Inputs in a body: bound positionally to the loop values)."""
    x_type = ("F32", [WIDTH])
    nodes = [make_leaf("i", [], "I32"), make_leaf("x", [WIDTH], "F32")]
    one = add(nodes, scalar(1, "I32"))
    decay, floor = add(nodes, scalar(0.999, "F32")), add(nodes, scalar(0.001, "F32"))
    i1 = add(nodes, node({"Binary": "Add"}, [0, one], ("I32", [])))
    x1 = add(nodes, node("Fma", [1, decay, floor], x_type))
    return nodes, [i1, x1]


def while_loop(trips):
    """while i < trips: (i, x) = body(i, x); from i = 0 and x the Param `x`."""
    cond = [inp("i", [], "I32"), inp("x", [WIDTH]), scalar(trips, "I32")]
    lt = add(cond, node({"Compare": "Lt"}, [0, 2], ("Bool", [])))
    body_nodes, body_outs = step_nodes(inp)
    nodes = [scalar(0, "I32"), param("x", [WIDTH])]
    attrs = {"cond_graph": body(cond, [lt]), "body_graph": body(body_nodes, body_outs), "max_iterations": trips}
    w = add(nodes, node({"While": attrs}, [0, 1], ("I32", []), ("F32", [WIDTH])))
    head = add(nodes, node({"Narrow": {"axis": 0, "start": 0, "len": 8, "step": 1}}, [(w, 1)], ("F32", [8])))
    return envelope(nodes, [(w, 0), head])


def body_once():
    """One iteration as a plain graph: i and x come from the host, (i + 1, x') go back."""
    nodes, outs = step_nodes(inp)
    return envelope(nodes, outs)


def scan(length):
    """An Elman RNN over `length` steps: h' = tanh(h W + x_t), ys = h'."""
    row = [1, WIDTH]
    cell = [inp("h", row), inp("w", [WIDTH, WIDTH]), inp("x", row)]
    hw = add(cell, node("MatMul", [0, 1], ("F32", row)))
    pre = add(cell, node({"Binary": "Add"}, [hw, 2], ("F32", row)))
    h1 = add(cell, node({"Unary": "Tanh"}, [pre], ("F32", row)))
    attrs = {"body": body(cell, [h1, h1]), "length": length, "reverse": False, "num_carry": 1, "num_bcast": 1,
             "num_xs": 1, "save_trajectory": False}
    nodes = [param("h0", row), param("w", [WIDTH, WIDTH]), param("xs", [length] + row)]
    s = add(nodes, node({"Scan": attrs}, [0, 1, 2], ("F32", row), ("F32", [length] + row)))
    first = add(nodes, node({"Narrow": {"axis": 0, "start": 0, "len": 1, "step": 1}}, [(s, 1)],
                            ("F32", [1] + row)))
    return envelope(nodes, [(s, 0), first])


def count_name(n):
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else str(n)


def workloads(small):
    """(file name, graph) pairs and the workloads.tsv lines."""
    w, s = (100, 64) if small else (10000, 4096)
    files = {f"while_{count_name(w)}": while_loop(w), "while_1": while_loop(1), "body_once": body_once(),
             f"scan_{count_name(s)}": scan(s), "scan_1": scan(1)}
    lines = [f"while_iter\twhile_{count_name(w)}\twhile_1\t{w}",
             f"scan_step\tscan_{count_name(s)}\tscan_1\t{s}",
             "host_loop_iter\tbody_once\t-\t1"]
    return files, lines


def main():
    outdir = sys.argv[1]
    files, lines = workloads("--small" in sys.argv)
    for name, g in files.items():
        with open(f"{outdir}/{name}.json", "w") as f:
            json.dump(g, f)
    with open(f"{outdir}/workloads.tsv", "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
