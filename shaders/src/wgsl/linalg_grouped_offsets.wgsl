// The batch offsets of the grouped GEMM (`linalg_grouped_*`): the dense GEMM kernel runs over
// the T row tiles of the sorted, padded rows as a batch of T matrices of P rows, and the weight
// offset of batch β is the offset of its tile's expert, found on the device (`boff`, written by
// `linalg_grouped_tiles.wgsl`: always e · K · N for some e < E, so every weight read stays in
// the matrix). The index into `boff` is clamped to its length (β < T by construction).

@group(0) @binding({{BINDING}}) var<storage, read_write> boff: array<u32>;

fn batch_offsets(zb: u32) -> vec3<u32> {
    let off = dense_batch_offsets(zb);
    return vec3<u32>(off.x, boff[min(zb, arrayLength(&boff) - 1u)], off.z);
}
