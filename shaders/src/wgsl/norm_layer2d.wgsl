// LayerNorm2d, one invocation per (n, s) column: the C channels at stride S, so neighbouring
// invocations read neighbouring spatial positions (coalesced). Pass 1 reads the column in blocks
// of B channels held in registers, each block's mean and M2 exact two-pass moments, merged with
// Chan's parallel formula; all shifted by the column's first element x0 (as LayerNorm). Pass 2
// reads it again and writes y = (x - x0 - m) * inv * gamma[c] + beta[c].

const B: u32 = {{B}}u;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let col = linear_id(gid, nwg);
    if (col >= p.rows) {
        return;
    }
    let base = (col / p.spatial) * p.len * p.spatial + col % p.spatial;
    let x0 = ld_x(base);
    var n = F(0);
    var mean = F(0);
    var m2 = F(0);
    for (var c = 0u; c < p.len; c = c + B) {
        var s = F(0);
        {{LOAD}}
        let nb = F(min(B, p.len - c));
        let mb = s / nb;
        var q = F(0);
        {{SUM}}
        let nt = n + nb;
        let d = mb - mean;
        mean = mean + d * (nb / nt);
        m2 = m2 + q + d * d * (n * (nb / nt));
        n = nt;
    }
    let inv = inv_std(m2 / F(p.len) + F(p.eps));
    for (var c = 0u; c < p.len; c = c + B) {
        {{RELOAD}}
        {{STORE}}
    }
}
