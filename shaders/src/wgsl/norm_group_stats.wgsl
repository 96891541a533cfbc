// GroupNorm split over several workgroups per group, pass 1 of 2 (norm_group_apply.wgsl is the
// second): workgroup w = r chunks + j takes elements [j span, min((j + 1) span, len)) of group r,
// shifted by the group's first element x0, in tiles of TILE = K WG held in registers. Each tile's
// count, mean and M2 = sum((v - mean)^2) are exact two-pass moments of the registers; tiles are
// merged with Chan's parallel formula (M2 = M2a + M2b + d^2 na nb / n, d = mean_b - mean_a),
// never E[x^2] - mu^2. Writes (mean, M2) of the chunk to part[2 w], part[2 w + 1].

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
    let end = min((w % p.chunks) * p.span + p.span, p.len);
    var n = F(0);
    var mean = F(0);
    var m2 = F(0);
    for (var at = (w % p.chunks) * p.span; at < end; at = at + TILE) {
        let cnt = min(TILE, end - at);
        var s = F(0);
        {{LOAD}}
        let nb = F(cnt);
        let mb = wg_sum2(lid, s) / nb;
        var q = F(0);
        {{SUM}}
        let m2b = wg_sum2(lid, q);
        let nt = n + nb;
        let d = mb - mean;
        mean = mean + d * (nb / nt);
        m2 = m2 + m2b + d * d * (n * (nb / nt));
        n = nt;
    }
    if (lid == 0u) {
        part[2u * w] = mean;
        part[2u * w + 1u] = m2;
    }
}
