// Cumsum pass 2: one workgroup per row turns the row's block totals into exclusive block
// prefixes, in place: each invocation sums a run of ceil(nb / WG) totals, a workgroup scan
// combines the runs, and each invocation writes its run's prefixes.

@group(0) @binding(1) var<storage, read_write> bs: array<A>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = wid.x + wid.y * nwg.x;
    if (r >= p.rows) {
        return;
    }
    let per = (p.nb + WG - 1u) / WG;
    let lo = min(lid * per, p.nb);
    let hi = min(lo + per, p.nb);
    var t = A(0);
    for (var b = lo; b < hi; b = b + 1u) {
        t = t + bs[r * p.nb + b];
    }
    _ = wg_scan(lid, t);
    var run = select(A(0), ws[max(lid, 1u) - 1u], lid > 0u);
    for (var b = lo; b < hi; b = b + 1u) {
        let i = r * p.nb + b;
        let v = bs[i];
        bs[i] = run;
        run = run + v;
    }
}
