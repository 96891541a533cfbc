// TopK long rows, last pass: one invocation per output element reads its sorted index and
// copies the value (exact bits) from x.

{{TENSORS}}
@group(0) @binding(2) var<storage, read_write> ti: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let id = linear_id(gid, nwg);
    if (id >= p.rows * p.k) {
        return;
    }
    let r = id / p.k;
    let m = id % p.k;
    let i = ti[r * p.pow2 + m];
    let o = (r / p.inner) * p.k * p.inner + r % p.inner + m * p.inner;
    st_val(o, ld_x((r / p.inner) * p.len * p.inner + r % p.inner + i * p.inner));
    st_idx(o, {{IDX}}(i));
}
