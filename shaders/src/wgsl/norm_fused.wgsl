// Fused residual norms (FusedResidualLayerNorm / FusedResidualRmsNorm), scalar form: the element
// the LayerNorm or RmsNorm body reads (`ld_x`) is the residual sum s = (x + residual) + bias,
// each `+` rounded to the tensor dtype (ROUND) as the unfused Binary Adds would store it, so the
// norm sees exactly the sum a separate Add kernel would have written. The body's first pass reads
// through `ld_x1`, which also stores s as the second output when the op emits it (each element
// is read exactly once in that pass, so each is stored once); later passes recompute s from the
// inputs rather than reading the stored sum back.

fn rnd(v: F) -> F {
    return {{ROUND}};
}

fn ld_x(i: u32) -> F {
    return {{SUM}};
}

fn ld_x1(i: u32) -> F {
    let v = ld_x(i);
    {{EMIT}}
    return v;
}
