// Norm family, shared part of the row kernels: params and row addressing (the float type F, its
// helpers and the workgroup reductions are in norm_float.wgsl).
//
// One workgroup handles one row: `len` elements at stride `inner` (Softmax along any axis; the
// norms use inner = 1 and len = H). Rows beyond 65535 use a 2-D workgroup grid. The bias_* fields
// are read by the fused residual norms only (`norm_fused_bias.wgsl`).

struct NormParams {
    rows: u32,
    len: u32,
    inner: u32,
    pad0: u32,
    eps: f32,
    pad1: u32,
    pad2: u32,
    pad3: u32,
    bias_rank: u32,
    pad4: u32,
    pad5: u32,
    pad6: u32,
    bias_dims: array<vec4<u32>, 2>,
    bias_strides: array<vec4<u32>, 2>,
}

@group(0) @binding(0) var<uniform> p: NormParams;
{{TENSORS}}

// The workgroup's row (2-D grid) and the input offset of its element 0.
fn row_of(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}

fn row_base(w: u32) -> u32 {
    return (w / p.inner) * p.len * p.inner + w % p.inner;
}
