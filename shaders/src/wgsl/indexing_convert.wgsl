// Elementwise copy through the register type: out[e] = x[e] for e < n. Used to copy data into
// the output word by word (U32 -> U32) and to widen F16/BF16 to the F32 accumulator and round it
// back once (F32 -> F16/BF16, into zeroed packed memory).

struct IndexingConvertParams {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> p: IndexingConvertParams;
{{TENSORS}}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let e = linear_id(gid, nwg);
    if (e < p.n) {
        st_out(e, ld_x(e));
    }
}
