// GroupNorm split over several workgroups per group, pass 2 of 2 (after norm_group_stats.wgsl):
// every workgroup of group r first merges the group's `chunks` partial (mean, M2) pairs, one per
// invocation (chunks <= 256), by the law of total variance in two fixed-order reductions:
// m = sum(n_j mean_j) / len, then M2 = sum(M2_j + n_j (mean_j - m)^2) (no cancellation: every
// term is >= 0). Then it normalises its own chunk [j span, min((j + 1) span, len)), K elements
// per invocation in flight: y = (x - x0 - m) * inv * gamma[c] + beta[c].

const TILE: u32 = {{TILE}}u;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let w = wid.x + wid.y * nwg.x;
    if (w >= p.rows * p.chunks) {
        return;
    }
    let r = w / p.chunks;
    let base = r * p.len;
    let x0 = ld_x(base);
    let h = F(p.len);
    var nj = F(0);
    var mj = F(0);
    var qj = F(0);
    let mine = lid < p.chunks;
    if (mine) {
        let k = r * p.chunks + lid;
        nj = F(min(p.span, p.len - lid * p.span));
        mj = part[2u * k];
        qj = part[2u * k + 1u];
    }
    let m = wg_sum2(lid, nj * mj) / h;
    let dm = mj - m;
    let inv = inv_std(wg_sum2(lid, select(F(0), qj + nj * dm * dm, mine)) / h + F(p.eps));
    let c0 = (r % p.groups) * (p.len / p.spatial);
    let end = min((w % p.chunks) * p.span + p.span, p.len);
    for (var at = (w % p.chunks) * p.span; at < end; at = at + TILE) {
        {{LOAD}}
        {{STORE}}
    }
}
