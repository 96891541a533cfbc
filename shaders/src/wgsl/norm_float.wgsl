// Norm family, float part: the float type F the op computes in (f32 for F32/F16/BF16, f64 for
// F64) with its special-value helpers, and workgroup reductions of F (256 invocations). Shared by
// the row kernels (norm_common.wgsl) and the channel norms (norm_channel_common.wgsl).

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

var<workgroup> wpart: array<F, 16>;

// Sum of every invocation's `v` in two fixed-order levels (16 invocations each add 16 slots in
// order, then every invocation adds the 16 partials in order): deterministic like the tree, with 3
// barriers instead of 9. Must be called in uniform control flow.
fn wg_sum2(lid: u32, v: F) -> F {
    wred[lid] = v;
    workgroupBarrier();
    if (lid < 16u) {
        var s = wred[lid * 16u];
        for (var j = 1u; j < 16u; j = j + 1u) {
            s = s + wred[lid * 16u + j];
        }
        wpart[lid] = s;
    }
    workgroupBarrier();
    var r = wpart[0];
    for (var j = 1u; j < 16u; j = j + 1u) {
        r = r + wpart[j];
    }
    // nobody may overwrite wred or wpart before everyone has read them
    workgroupBarrier();
    return r;
}

// NaN-propagating maximum of every invocation's `v` in the two levels of `wg_sum2`.
fn wg_max2(lid: u32, v: F) -> F {
    wred[lid] = v;
    workgroupBarrier();
    if (lid < 16u) {
        var s = wred[lid * 16u];
        for (var j = 1u; j < 16u; j = j + 1u) {
            s = fmax(s, wred[lid * 16u + j]);
        }
        wpart[lid] = s;
    }
    workgroupBarrier();
    var r = wpart[0];
    for (var j = 1u; j < 16u; j = j + 1u) {
        r = fmax(r, wpart[j]);
    }
    workgroupBarrier();
    return r;
}
