// Control family: writes the workgroup counts of a branch's dispatches on the GPU. Count triple j
// is the dispatch's compile-time grid when the condition holds (or, with `negate`, when it does
// not) and zeros otherwise, so a branch not taken dispatches nothing and no value goes back to
// the host. The condition is element 0 of `cond`, true when non-zero (NaN is true).

struct ControlGateParams {
    // Dispatches gated (at most 16).
    count: u32,
    // 1: the dispatches run when the condition is false (an else branch).
    negate: u32,
    pad0: u32,
    pad1: u32,
    // Grid of dispatch j in its xyz.
    grids: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<uniform> p: ControlGateParams;
{{TENSORS}}
@group(0) @binding(2) var<storage, read_write> args: array<u32>;

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x;
    if (j >= p.count) {
        return;
    }
    let run = ({{COND}}) != (p.negate != 0u);
    let g = select(vec4<u32>(0u), p.grids[j], run);
    args[3u * j] = g.x;
    args[3u * j + 1u] = g.y;
    args[3u * j + 2u] = g.z;
}
