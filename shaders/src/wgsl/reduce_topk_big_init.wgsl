// TopK long rows, pass 1: one invocation per slot writes its (key, index) pair.

{{TENSORS}}
@group(0) @binding(2) var<storage, read_write> tk: array<K>;
@group(0) @binding(3) var<storage, read_write> ti: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let id = linear_id(gid, nwg);
    if (id >= p.rows * p.pow2) {
        return;
    }
    let r = id / p.pow2;
    let i = id % p.pow2;
    if (i < p.len) {
        let kv = key(ld_x((r / p.inner) * p.len * p.inner + r % p.inner + i * p.inner));
        tk[id] = select(kv, ~kv, p.largest != 0u);
        ti[id] = i;
    } else {
        tk[id] = KMAX;
        ti[id] = NONE;
    }
}
