// Fused residual norms, four-wide form (F32 rows of a multiple of 4 elements, 16-byte aligned):
// vector j of the row's sum, (x + residual) + bias per lane (f32 adds: no rounding step), with
// the bias gathered per lane through its broadcast index. `ld_x` (LayerNorm's pivot element)
// takes one lane of it; `ld4_x1` also stores the vector as the second output when the op emits it.

fn ld4_x(j: u32) -> vec4<F> {
    return {{SUM}};
}

fn ld_x(i: u32) -> F {
    return ld4_x(i / 4u)[i % 4u];
}

fn ld4_x1(j: u32) -> vec4<F> {
    let v = ld4_x(j);
    {{EMIT}}
    return v;
}
