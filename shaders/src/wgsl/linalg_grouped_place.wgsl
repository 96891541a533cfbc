// GroupedMatMul grouping, step 4: one invocation per row m of an in-range expert e places it at
// padded row r = tstart[e] · P + slot[m] (pos[m] = r, src[r] = m); rows of an out-of-range
// expert get pos[m] = NONE, which the final gather reads as a zero row (§1.6).

@group(0) @binding(2) var<storage, read_write> tstart: array<u32>;
@group(0) @binding(3) var<storage, read_write> slot: array<u32>;
@group(0) @binding(4) var<storage, read_write> pos: array<u32>;
@group(0) @binding(5) var<storage, read_write> src: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let m = linear_id(gid, nwg);
    if (m >= p.m) {
        return;
    }
    let e = index_at(m, p.e);
    let s = slot[m];
    if (e == OUT_OF_RANGE || s == NONE) {
        pos[m] = NONE;
        return;
    }
    let r = tstart[e] * p.rows_per_tile + s;
    if (r >= p.padded_rows) {
        pos[m] = NONE;
        return;
    }
    pos[m] = r;
    src[r] = m;
}
