// GroupedMatMul grouping, step 3: one invocation per padded row r marks it empty (src[r] = NONE,
// filled by step 4 for the rows in use) and, for r below the tile count T, finds the expert of
// tile r by binary search in tstart and stores the offset of that expert's weight matrix
// (boff[r] = e · K · N; QuantGroupedMatMul sets the unit to 1 and reads e itself). Tiles past
// tstart[E] hold only padding and read expert 0.

@group(0) @binding(1) var<storage, read_write> tstart: array<u32>;
@group(0) @binding(2) var<storage, read_write> boff: array<u32>;
@group(0) @binding(3) var<storage, read_write> src: array<u32>;

// The last expert e < E with tstart[e] <= t: the expert owning tile t when t < tstart[E]
// (experts without tiles share their start with the next one, and the last wins).
fn expert_of(t: u32) -> u32 {
    var lo = 0u;
    var hi = p.e;
    while (hi - lo > 1u) {
        let mid = lo + (hi - lo) / 2u;
        if (tstart[mid] <= t) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = linear_id(gid, nwg);
    if (r >= p.padded_rows) {
        return;
    }
    src[r] = NONE;
    if (r < p.tiles) {
        let used = r < tstart[p.e];
        boff[r] = select(0u, expert_of(r) * p.expert_elems, used);
    }
}
