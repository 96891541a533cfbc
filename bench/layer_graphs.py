#!/usr/bin/env python3
"""Transformer-layer workloads as graph files (wgml-graph v1) for `bench/run_graphs.sh`, the
counterparts of bench/torch_layers.py (same shapes, same FLOP and byte rules):

- attention_b1h32s4096d128_causal_{f16,f32}: causal self-attention, Bhsd, 4 B H S^2 D / 2 FLOPs
  (the causal half); a chain feeds each output back as the next query;
- attention_decode_h32kv8sk8192d128_{f16,f32}: one query row per head, 32 query heads over 8
  key/value heads, 8192 keys: GB/s of K + V read (2 Hkv Sk D bytes-per-element);
- rope_s4096h32d128_f32: Rope (NeoX, whole head) of x [1, 4096, 32, 128] F32 along axis 1 with
  cos, sin [4096, 64] F32: GB/s of x read + y written + both tables read (4 (2 S H D + S D));
  the chain's output is narrowed to position 0;

    python3 bench/layer_graphs.py OUTDIR
writes OUTDIR/<workload>_c1.json, OUTDIR/<workload>_c<T>.json and OUTDIR/workloads.tsv. Per-op
time = (median_cT - median_c1) / (T - 1): K and V are Params (uploaded once) and the query is
one too, so the chain measures the kernels alone.
"""
import json
import sys

from graphs import first_row, graph, node, param


def attn_attrs(hq, hkv, causal):
    return {"Attention": {"layout": "Bhsd", "num_heads": hq, "num_kv_heads": hkv,
                          "mask": "Causal" if causal else "None", "mask_align": "End", "scale": None,
                          "softcap": None, "has_keep_mask": False, "has_bias": False}}


def attention_chain(hq, hkv, sq, sk, d, dtype, causal, t):
    qs, kvs = [1, hq, sq, d], [1, hkv, sk, d]
    nodes = [param("q", qs, dtype), param("k", kvs, dtype), param("v", kvs, dtype)]
    last = 0
    for _ in range(t):
        nodes.append(node(attn_attrs(hq, hkv, causal), [last, 1, 2], dtype, qs))
        last = len(nodes) - 1
    return graph(nodes, first_row(nodes, last, qs, dtype))


def rope_chain(s, h, d, t):
    shape = [1, s, h, d]
    nodes = [param("x", shape), param("cos", [s, d // 2]), param("sin", [s, d // 2])]
    attrs = {"Rope": {"head_dim": d, "rotary_dim": d, "style": "NeoX", "seq_axis": 1}}
    last = 0
    for _ in range(t):
        nodes.append(node(attrs, [last, 1, 2], "F32", shape))
        last = len(nodes) - 1
    nodes.append(node({"Narrow": {"axis": 1, "start": 0, "len": 1, "step": 1}}, [last], "F32", [1, 1, h, d]))
    return graph(nodes, len(nodes) - 1)


def main():
    out = sys.argv[1]
    rows = []
    for dtype, size in (("F16", 2), ("F32", 4)):
        tag = dtype.lower()
        h, s, d = 32, 4096, 128
        name = f"attention_b1h{h}s{s}d{d}_causal_{tag}"
        for t in (1, 4):
            with open(f"{out}/{name}_c{t}.json", "w") as f:
                json.dump(attention_chain(h, h, s, s, d, dtype, True, t), f)
        rows.append((name, "TFLOP/s", 4 * h * s * s * d // 2, 4))
        hq, hkv, sk = 32, 8, 8192
        name = f"attention_decode_h{hq}kv{hkv}sk{sk}d{d}_{tag}"
        for t in (1, 9):
            with open(f"{out}/{name}_c{t}.json", "w") as f:
                json.dump(attention_chain(hq, hkv, 1, sk, d, dtype, False, t), f)
        rows.append((name, "GB/s", 2 * hkv * sk * d * size, 9))
    s, h, d = 4096, 32, 128
    name = f"rope_s{s}h{h}d{d}_f32"
    for t in (1, 9):
        with open(f"{out}/{name}_c{t}.json", "w") as f:
            json.dump(rope_chain(s, h, d, t), f)
    rows.append((name, "GB/s", 4 * (2 * s * h * d + s * d), 9))
    with open(f"{out}/workloads.tsv", "w") as f:
        for r in rows:
            f.write("\t".join(map(str, r)) + "\n")


if __name__ == "__main__":
    main()
