// Shared by the linalg kernels (tiled, skinny, split-K reduction): the params, batch addressing
// and the epilogue.
//
// Operands are addressed by strides: a[β, i, k] = a[off_a(β) + i·a_rs + k·a_cs] (same for b and
// bias), where off_x(β) decomposes the flat batch index β < nbatch over the batch dims with
// per-operand strides (0 on broadcast dims). The output is contiguous [nsplit, nbatch, M, N]:
// flat z = split·nbatch + β. With split-K (nsplit > 1) the product kernels write f32/f64 partial
// sums over K range [split·kc, min(K, (split+1)·kc)) and the reduction kernel adds them up and
// applies the epilogue; otherwise nsplit = 1 and kc = K.
//
// The kernels are built without runtime checks (docs/WGPU-KERNELS.md, "Trusted kernels"), so
// every access is in bounds by construction, for every params value the lowering produces:
// - operand reads form an element index only for (row, k) or (k, column) inside the matrix and
//   the split's K range; otherwise they read element or word 0 (the lowering binds a non-empty
//   range even for K = 0) and discard it;
// - stores and bias reads happen only for (row, column) inside the matrix (store4, store1);
// - workgroup indices are sums of coordinates below the tile sizes;
// - batch dims are at most 8 (the lowering refuses more), and the index into them is clamped;
// - K + one split + one K step fits 32 bits (the lowering checks it), so no loop counter wraps.

// PARAMS names the params struct: GemmParams, or a struct extended by PARAMS_EXT with the members
// of another formulation of an operand (the implicit im2col of a convolution, `conv_gemm.wgsl`).
alias R = {{REG}};
// Index of an element outside the operand (reads as zero).
const NONE: u32 = 0xffffffffu;
alias R4 = vec4<{{REG}}>;

struct {{PARAMS}} {
    m: u32,
    n: u32,
    k: u32,
    batch_rank: u32,
    tile_m0: u32,
    tile_n0: u32,
    batch0: u32,
    // 1: consecutive threads load consecutive k of A (A is K-contiguous); 0: consecutive rows.
    a_kfast: u32,
    a_rs: u32,
    a_cs: u32,
    b_rs: u32,
    b_cs: u32,
    bias_rs: u32,
    bias_cs: u32,
    // 1: consecutive threads load consecutive columns of B (B is N-contiguous); 0: consecutive k.
    b_nfast: u32,
    nbatch: u32,
    kc: u32,
    nsplit: u32,
    pad0: u32,
    pad1: u32,
    bdims: array<vec4<u32>, 2>,
    a_bs: array<vec4<u32>, 2>,
    b_bs: array<vec4<u32>, 2>,
    bias_bs: array<vec4<u32>, 2>,{{PARAMS_EXT}}
}

@group(0) @binding(0) var<uniform> p: {{PARAMS}};
{{TENSORS}}

// The value stored for dot product v at bias index bi (bias and activation of fused variants).
fn finish(bi: u32, v: R) -> R {
    {{FINISH}}
}

// Stores finished values x, y at output indices o (even) and o + 1, which share one storage
// word when the dtype is packed.
fn store_pair(o: u32, x: R, y: R) {
    {{STORE_PAIR}}
}

// Batch offsets (a, b, bias) of flat batch index zb < nbatch.
fn batch_offsets(zb: u32) -> vec3<u32> {
    var rem = zb;
    var off = vec3<u32>(0u, 0u, 0u);
    for (var d = i32(p.batch_rank) - 1; d >= 0; d = d - 1) {
        let q = min(u32(d) >> 2u, 1u);
        let r = u32(d) & 3u;
        let dim = p.bdims[q][r];
        let c = rem % dim;
        rem = rem / dim;
        off = off + c * vec3<u32>(p.a_bs[q][r], p.b_bs[q][r], p.bias_bs[q][r]);
    }
    return off;
}

// Stores the 4 dot products of output row gi, columns gj .. gj+3 that lie in the matrix.
// obase: output offset of the (split, batch) matrix; bbase: its bias offset.
fn store4(obase: u32, bbase: u32, gi: u32, gj: u32, v: R4) {
    if (gi >= p.m) {
        return;
    }
    let o = obase + gi * p.n + gj;
    let bi = bbase + gi * p.bias_rs + gj * p.bias_cs;
    let bc = p.bias_cs;
    if (gj + 3u < p.n && (o & 1u) == 0u) {
        store_pair(o, finish(bi, v.x), finish(bi + bc, v.y));
        store_pair(o + 2u, finish(bi + 2u * bc, v.z), finish(bi + 3u * bc, v.w));
        return;
    }
    if (gj < p.n) {
        st_out(o, finish(bi, v.x));
    }
    if (gj + 1u < p.n) {
        st_out(o + 1u, finish(bi + bc, v.y));
    }
    if (gj + 2u < p.n) {
        st_out(o + 2u, finish(bi + 2u * bc, v.z));
    }
    if (gj + 3u < p.n) {
        st_out(o + 3u, finish(bi + 3u * bc, v.w));
    }
}
