// Control family: writes the workgroup counts of a branch's dispatches on the GPU. The condition
// holds when one of the first `cond_len` elements of `cond` is non-zero (NaN is non-zero; a
// tensor condition passes 1). Count triple j is the dispatch's compile-time grid when the
// condition holds (or, for a dispatch marked negated, when it does not) and zeros otherwise, so
// a branch not taken dispatches nothing and no value goes back to the host.

struct ControlGateParams {
    // Dispatches gated (at most 16).
    count: u32,
    // Elements of `cond` whose OR is the condition.
    cond_len: u32,
    pad0: u32,
    pad1: u32,
    // Grid of dispatch j in its xyz; w: 1 when the dispatch runs while the condition fails (an
    // else branch).
    grids: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<uniform> p: ControlGateParams;
{{TENSORS}}
@group(0) @binding(2) var<storage, read_write> args: array<u32>;

// Whether element i of `cond` is non-zero.
fn nonzero(i: u32) -> bool {
    return {{COND}};
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x;
    if (j >= p.count) {
        return;
    }
    var holds = false;
    for (var i = 0u; i < p.cond_len; i = i + 1u) {
        holds = holds || nonzero(i);
    }
    let g = p.grids[min(j, 15u)];
    let run = holds != (g.w != 0u);
    let c = select(vec3<u32>(0u), g.xyz, run);
    args[3u * j] = c.x;
    args[3u * j + 1u] = c.y;
    args[3u * j + 2u] = c.z;
}
