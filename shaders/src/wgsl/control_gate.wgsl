// Control family: writes the workgroup counts of a branch's dispatches on the GPU. The condition
// holds when one of the first `cond_len` elements of `cond` is non-zero (NaN is non-zero; a
// tensor condition passes 1). Count triple j is the dispatch's compile-time grid when the
// condition holds (or, for a dispatch marked negated, when it does not) and zeros otherwise, so
// a branch not taken dispatches nothing and no value goes back to the host.
//
// A gate inside a gated body (a branch in a branch, a loop in a loop) is not itself gated: it
// runs every time and reads the enclosing gate's predicate from `up`, so that its counts are
// zeros whenever the enclosing body does not run (its condition may then be stale). After the
// count triples it writes its own predicates, for the gates nested in it: word 3·count whether
// the condition's body runs, word 3·count + 1 whether the negated one does; word 3·count + 2 is
// the condition itself, which the gates of a long body's later chunks read (the body may
// rewrite the condition tensor, a loop's, before they run).

struct ControlGateParams {
    // Dispatches gated (at most 16).
    count: u32,
    // Elements of `cond` whose OR is the condition.
    cond_len: u32,
    // Word of `up` holding the enclosing gate's predicate; 0xffffffff when there is none.
    parent: u32,
    // First element of `cond` read.
    cond_at: u32,
    // Grid of dispatch j in its xyz; w: 1 when the dispatch runs while the condition fails (an
    // else branch).
    grids: array<vec4<u32>, 16>,
}

@group(0) @binding(0) var<uniform> p: ControlGateParams;
{{TENSORS}}
@group(0) @binding(2) var<storage, read_write> up: array<u32>;
@group(0) @binding(3) var<storage, read_write> args: array<u32>;

// Whether element i of `cond` is non-zero.
fn nonzero(i: u32) -> bool {
    return {{COND}};
}

@compute @workgroup_size(16)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x;
    var holds = false;
    for (var i = 0u; i < p.cond_len; i = i + 1u) {
        holds = holds || nonzero(p.cond_at + i);
    }
    var live = true;
    if (p.parent != 0xffffffffu) {
        live = up[p.parent] != 0u;
    }
    if (j == 0u) {
        args[3u * p.count] = select(0u, 1u, live && holds);
        args[3u * p.count + 1u] = select(0u, 1u, live && !holds);
        args[3u * p.count + 2u] = select(0u, 1u, holds);
    }
    if (j >= p.count) {
        return;
    }
    let g = p.grids[min(j, 15u)];
    let run = live && (holds != (g.w != 0u));
    let c = select(vec3<u32>(0u), g.xyz, run);
    args[3u * j] = c.x;
    args[3u * j + 1u] = c.y;
    args[3u * j + 2u] = c.z;
}
