// Norm family, shared part: params, the float type F the op computes in (f32 for F32/F16/BF16,
// f64 for F64) with its special-value helpers, row addressing and workgroup tree reductions.
//
// One workgroup handles one row: `len` elements at stride `inner` (Softmax along any axis; the
// norms use inner = 1 and len = H). Rows beyond 65535 use a 2-D workgroup grid.

struct NormParams {
    rows: u32,
    len: u32,
    inner: u32,
    pad0: u32,
    eps: f32,
    pad1: u32,
    pad2: u32,
    pad3: u32,
}

@group(0) @binding(0) var<uniform> p: NormParams;
{{TENSORS}}

alias F = {{F}};

// NaN-propagating max (max(-0, +0) = +0).
fn fmax(a: F, b: F) -> F {
    return {{MAX}};
}

// e^x with exact special values (e^-inf = 0, e^NaN = NaN).
fn fexp(x: F) -> F {
    return {{EXP}};
}

// ln x for x >= 1 (the softmax denominator) and NaN.
fn flog(x: F) -> F {
    return {{LOG}};
}

fn fisnan(x: F) -> bool {
    return {{ISNAN}};
}

fn fisinf(x: F) -> bool {
    return {{ISINF}};
}

fn fnan() -> F {
    return {{NAN}};
}

// +inf (negate for -inf).
fn finf() -> F {
    return {{INF}};
}

// The workgroup's row (2-D grid) and the input offset of its element 0.
fn row_of(wid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return wid.x + wid.y * nwg.x;
}

fn row_base(w: u32) -> u32 {
    return (w / p.inner) * p.len * p.inner + w % p.inner;
}

var<workgroup> wred: array<F, 256>;

// Sum of every invocation's `v` as a binary tree (pairwise), returned to all invocations.
// Must be called in uniform control flow.
fn wg_sum(lid: u32, v: F) -> F {
    wred[lid] = v;
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        workgroupBarrier();
        if (lid < s) {
            wred[lid] = wred[lid] + wred[lid + s];
        }
    }
    workgroupBarrier();
    let r = wred[0];
    // nobody may overwrite wred before everyone has read the result
    workgroupBarrier();
    return r;
}

// NaN-propagating maximum of every invocation's `v`, returned to all invocations.
fn wg_max(lid: u32, v: F) -> F {
    wred[lid] = v;
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        workgroupBarrier();
        if (lid < s) {
            wred[lid] = fmax(wred[lid], wred[lid + s]);
        }
    }
    workgroupBarrier();
    let r = wred[0];
    workgroupBarrier();
    return r;
}
