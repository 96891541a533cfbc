//! The four-wide contiguous form of a map (`elementwise_vec4.wgsl`): for 4-byte dtypes (F32, I32,
//! U32) over windows that start 16-byte aligned, each invocation loads `vec4`s of each operand,
//! applies the variant's scalar expression to each lane and stores one `vec4`. Fewer, wider memory
//! operations are what lets a map run at copy speed; the expression is the same as in the scalar
//! form, so results are bit-identical. Each invocation maps [`UNROLL`] vectors (more bytes in
//! flight per invocation), and the kernels whose expression [`trusted_map`] allows are trusted
//! (built without runtime checks; the argument is at the top of `elementwise_vec4.wgsl`).

use super::{expr, helpers, ElemKind};
use crate::{reg_type, render, tensor_binding, trusted, Access, ELEMENTWISE_VEC4};
use backend_api::op::UnaryOp;
use backend_api::DType;

/// Vectors each invocation maps: workgroup `g` covers vectors `g · UNROLL · 256 ..` (so a
/// dispatch of `Grid::Threads(ceil(n / 4 / UNROLL))` covers the `n / 4` vectors).
pub const UNROLL: u32 = 4;

/// Whether the four-wide kernel of `kind` is built trusted: its expression's helpers (all of
/// `math.wgsl` and `math_int.wgsl`, which the word dtypes use) have no arrays indexed by a
/// computed value and only bounded loops (`fmod_f32`: at most 300 steps; integer `pow`: one
/// step per exponent bit; the compensated sums of `math_int.wgsl`: constant bounds). The
/// trigonometric reductions (`math_trig.wgsl`, table lookups by a computed index) and casts
/// (`CAST` helpers) are not reviewed and keep the runtime checks.
pub fn trusted_map(kind: ElemKind) -> bool {
    match kind {
        ElemKind::Unary(UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan) | ElemKind::Cast => false,
        ElemKind::Unary(_) | ElemKind::Binary(_) | ElemKind::Compare(_) | ElemKind::Where | ElemKind::Fma => true,
    }
}

/// Whether `d`'s elements are 4-byte words the four-wide form loads as vectors.
pub fn is_word_dtype(d: DType) -> bool {
    match d {
        DType::F32 | DType::I32 | DType::U32 => true,
        DType::F16 | DType::BF16 | DType::F64 | DType::I64 | DType::I8 | DType::U8 | DType::Bool | DType::C64 => false,
    }
}

/// Renders the four-wide module of a variant; input `k` is a broadcast scalar (read once, at
/// element 0) when `scalar[k]`, otherwise contiguous like the output. `None` when [`expr`] has no
/// expression or an operand's dtype is not a 4-byte word (`is_word_dtype`).
pub fn module_vec4(kind: ElemKind, ins: &[DType], out: DType, scalar: &[bool]) -> Option<Result<String, String>> {
    if scalar.len() != ins.len() || !ins.iter().chain([&out]).all(|&d| is_word_dtype(d)) {
        return None;
    }
    let e = expr(kind, ins, out)?;
    let names = ["a", "b", "c"];
    let mut tensors = String::new();
    let mut args = Vec::new();
    for (k, (&d, &s)) in ins.iter().zip(scalar).enumerate() {
        let binding = 1 + k as u32;
        args.push(format!("{}: {}", names.get(k)?, reg_type(d)));
        if s {
            tensors += &tensor_binding(&format!("x{k}"), binding, d, Access::Read);
        } else {
            tensors += &vec4_binding(&format!("x{k}"), binding, d);
        }
    }
    tensors += &vec4_binding("out", 1 + ins.len() as u32, out);
    let r = reg_type(out);
    tensors += &format!("fn map_elem({}) -> {r} {{\n    return {e};\n}}\n", args.join(", "));
    // A broadcast scalar is read once; vector j of this invocation is `first + j WG`.
    let scalars: String = scalar
        .iter()
        .enumerate()
        .filter(|(_, &s)| s)
        .map(|(k, _)| format!("let v{k} = ld_x{k}(0u);"))
        .collect::<Vec<_>>()
        .join("\n        ");
    // Vector j of this invocation is `i<j> = first + j WG`: (index, loads, store).
    let vector = |j: u32| -> (String, String, String) {
        let index = format!("let i{j} = first + {j}u * WG;");
        let loads: Vec<String> = scalar
            .iter()
            .enumerate()
            .filter(|(_, &s)| !s)
            .map(|(k, _)| format!("let v{k}_{j} = x{k}[i{j}];"))
            .collect();
        let lane = |l: usize| -> String {
            let a: Vec<String> = scalar
                .iter()
                .enumerate()
                .map(|(k, &s)| if s { format!("v{k}") } else { format!("v{k}_{j}[{l}]") })
                .collect();
            format!("map_elem({})", a.join(", "))
        };
        let store = format!("out[i{j}] = vec4<{r}>({}, {}, {}, {});", lane(0), lane(1), lane(2), lane(3));
        (index, loads.join("\n        "), store)
    };
    let parts: Vec<(String, String, String)> = (0..UNROLL).map(vector).collect();
    // Straight line: every load first, then every store.
    let mut full: Vec<String> = vec![scalars.clone()];
    full.extend(parts.iter().map(|(i, l, _)| format!("{i}\n        {l}")));
    full.extend(parts.iter().map(|(_, _, st)| st.clone()));
    let mut tail: Vec<String> = vec![scalars];
    tail.extend(parts.iter().enumerate().map(|(j, (i, l, st))| {
        format!("{i}\n        if (i{j} < q) {{\n            {l}\n            {st}\n        }}")
    }));
    let (full, tail) = (full.join("\n        "), tail.join("\n        "));
    let unroll = UNROLL.to_string();
    let rendered =
        render(ELEMENTWISE_VEC4, &[("TENSORS", &tensors), ("UNROLL", &unroll), ("FULL", &full), ("TAIL", &tail)]);
    Some(rendered.map(|m| {
        let mut parts: Vec<&str> = helpers(kind, ins, out);
        parts.push(&m);
        let m = crate::module(&parts);
        if trusted_map(kind) {
            trusted(&m)
        } else {
            m
        }
    }))
}

/// A storage array of 4-vectors of `d`'s register type (inputs are `read_write` too: see
/// `tensor_binding`).
fn vec4_binding(name: &str, binding: u32, d: DType) -> String {
    format!("@group(0) @binding({binding}) var<storage, read_write> {name}: array<vec4<{}>>;\n", reg_type(d))
}
