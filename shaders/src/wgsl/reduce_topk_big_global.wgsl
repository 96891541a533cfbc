// TopK long rows: one bitonic step (stage kk_hi, distance j >= SORT_N) over global memory, one
// invocation per compared pair.

@group(0) @binding(1) var<storage, read_write> tk: array<K>;
@group(0) @binding(2) var<storage, read_write> ti: array<u32>;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let id = linear_id(gid, nwg);
    let hp = p.pow2 / 2u;
    if (id >= p.rows * hp) {
        return;
    }
    let t = id % hp;
    let a = 2u * t - (t & (p.j - 1u));
    let base = (id / hp) * p.pow2;
    let ea = base + a;
    let eb = ea + p.j;
    let ka = tk[ea];
    let kb = tk[eb];
    let ia = ti[ea];
    let ib = ti[eb];
    if (after(ka, ia, kb, ib) == ((a & p.kk_hi) == 0u)) {
        tk[ea] = kb;
        tk[eb] = ka;
        ti[ea] = ib;
        ti[eb] = ia;
    }
}
