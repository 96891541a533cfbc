// Softmax / LogSoftmax of one row per workgroup, single pass: the row (K elements per invocation,
// element lid + k WG in register v<k>, straight-line code generated per k so that nothing is an
// indexed array the driver could spill) is read once from memory, and the max, the sum and the
// outputs are computed from the registers. Same formulas and special values as norm_softmax.wgsl
// (m NaN-propagating; a row with a NaN or infinite max or a NaN sum is NaN).

// The output from d = x - m, e = e^d (computed once, for the sum) and the row's value c.
fn row_out(d: F, e: F, c: F) -> F {
    return {{OUT}};
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32, ids: RowIds) {
    let w = row_of(wid, nwg);
    if (w >= p.rows) {
        return;
    }
    let base = row_base(w);
    var m = -finf();
    {{LOAD}}
    m = row_max(ids, lid, m);
    var s = F(0);
    {{SUM}}
    s = row_sum(ids, lid, s);
    let bad = fisnan(m) || fisinf(m) || fisnan(s);
    let c = {{ROW}};
    {{STORE}}
}
