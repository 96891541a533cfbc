//! The four-wide contiguous form of a map (`elementwise_vec4.wgsl`): for 4-byte dtypes (F32, I32,
//! U32) over windows that start 16-byte aligned, each invocation loads one `vec4` per operand,
//! applies the variant's scalar expression to each lane and stores one `vec4`. Fewer, wider memory
//! operations are what lets a map run at copy speed; the expression is the same as in the scalar
//! form, so results are bit-identical.

use super::{expr, helpers, ElemKind};
use crate::{reg_type, render, tensor_binding, Access, ELEMENTWISE_VEC4};
use backend_api::DType;

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
    let mut loads = String::new();
    let mut args = Vec::new();
    let mut lanes: Vec<Vec<String>> = vec![Vec::new(); 4];
    for (k, (&d, &s)) in ins.iter().zip(scalar).enumerate() {
        let binding = 1 + k as u32;
        args.push(format!("{}: {}", names.get(k)?, reg_type(d)));
        if s {
            tensors += &tensor_binding(&format!("x{k}"), binding, d, Access::Read);
            loads += &format!("let v{k} = ld_x{k}(0u);\n    ");
        } else {
            tensors += &vec4_binding(&format!("x{k}"), binding, d);
            loads += &format!("let v{k} = x{k}[v];\n    ");
        }
        for (lane, l) in lanes.iter_mut().enumerate() {
            l.push(if s { format!("v{k}") } else { format!("v{k}[{lane}]") });
        }
    }
    tensors += &vec4_binding("out", 1 + ins.len() as u32, out);
    let r = reg_type(out);
    tensors += &format!("fn map_elem({}) -> {r} {{\n    return {e};\n}}\n", args.join(", "));
    let calls: Vec<String> = lanes.iter().map(|l| format!("map_elem({})", l.join(", "))).collect();
    let body = format!("{loads}out[v] = vec4<{r}>({});", calls.join(", "));
    let rendered = render(ELEMENTWISE_VEC4, &[("TENSORS", &tensors), ("BODY", &body)]);
    Some(rendered.map(|m| {
        let mut parts: Vec<&str> = helpers(kind, ins, out);
        parts.push(&m);
        crate::module(&parts)
    }))
}

/// A storage array of 4-vectors of `d`'s register type (inputs are `read_write` too: see
/// `tensor_binding`).
fn vec4_binding(name: &str, binding: u32, d: DType) -> String {
    format!("@group(0) @binding({binding}) var<storage, read_write> {name}: array<vec4<{}>>;\n", reg_type(d))
}
