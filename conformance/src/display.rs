//! Human-readable dumps of graphs and tensors for failure messages, truncated so that a 70,000
//! element case still prints a readable report.

use backend_api::{DType, Graph, Op, TensorView};
use std::fmt::Write;

/// How many elements of a tensor a dump shows.
pub const SHOWN_ELEMENTS: usize = 24;

/// One element as text: exact integers, shortest round-trip floats (with `-0`, `NaN`, `inf`),
/// `true`/`false`, `(re, im)`.
pub fn element(dtype: DType, b: &[u8]) -> String {
    let le = |n: usize| -> [u8; 8] {
        let mut a = [0u8; 8];
        for (d, s) in a.iter_mut().zip(b.iter().take(n)) {
            *d = *s;
        }
        a
    };
    match dtype {
        DType::I64 => i64::from_le_bytes(le(8)).to_string(),
        DType::I32 => (u32::from_le_bytes(first4(&le(4))) as i32).to_string(),
        DType::I8 => (b.first().copied().unwrap_or(0) as i8).to_string(),
        DType::U32 => u32::from_le_bytes(first4(&le(4))).to_string(),
        DType::U8 => b.first().copied().unwrap_or(0).to_string(),
        DType::Bool => match b.first() {
            Some(0) => "false".into(),
            Some(1) => "true".into(),
            other => format!("bool byte {other:?}"),
        },
        DType::C64 => {
            let a = le(8);
            let re = f32::from_le_bytes([a[0], a[1], a[2], a[3]]);
            let im = f32::from_le_bytes([a[4], a[5], a[6], a[7]]);
            format!("({re:?}, {im:?})")
        }
        // Half and single values print as f32 (exact for them, and the shortest round trip).
        DType::F32 | DType::F16 | DType::BF16 => format!("{:?}", backend_api::element_to_f64(dtype, b) as f32),
        DType::F64 => format!("{:?}", backend_api::element_to_f64(dtype, b)),
    }
}

fn first4(a: &[u8; 8]) -> [u8; 4] {
    [a[0], a[1], a[2], a[3]]
}

/// `F32[3, 5] [1.0, -2.5, …] (15 values)`.
pub fn tensor(t: &TensorView<'_>) -> String {
    let size = t.dtype().size();
    let n = t.numel();
    let shown: Vec<String> = t.bytes().chunks_exact(size).take(SHOWN_ELEMENTS).map(|b| element(t.dtype(), b)).collect();
    let more = if n > SHOWN_ELEMENTS { ", …" } else { "" };
    format!("{}{:?} [{}{more}] ({n} values)", t.dtype(), t.shape(), shown.join(", "))
}

/// One line per node: `%3 = Unary(Exp)(%0.0) -> F32[3, 5]`, constants with their values, the
/// bodies of control ops indented under their node, then the outputs.
pub fn graph(g: &Graph) -> String {
    let mut s = String::new();
    write_graph(&mut s, g, 1);
    s
}

fn write_graph(s: &mut String, g: &Graph, depth: usize) {
    let pad = "  ".repeat(depth);
    for (i, n) in g.nodes().iter().enumerate() {
        let ins: Vec<String> = n.inputs.iter().map(|v| v.to_string()).collect();
        let outs: Vec<String> = n.outputs.iter().map(|t| t.to_string()).collect();
        let op = match &n.op {
            Op::Constant(c) => match TensorView::new(c.dtype, &c.shape, &c.data) {
                Ok(v) => format!("Constant {}", tensor(&v)),
                Err(e) => format!("Constant (invalid: {e})"),
            },
            other => control_label(other).unwrap_or_else(|| format!("{other:?}")),
        };
        let _ = writeln!(s, "{pad}%{i} = {op}({}) -> {}", ins.join(", "), outs.join(", "));
        for (name, body) in bodies(&n.op) {
            let _ = writeln!(s, "{pad}  {name}:");
            write_graph(s, body, depth + 2);
        }
    }
    let outs: Vec<String> = g.outputs().iter().map(|v| v.to_string()).collect();
    let _ = writeln!(s, "{pad}outputs: [{}]", outs.join(", "));
}

/// A control op without its bodies (they are printed under the node).
fn control_label(op: &Op) -> Option<String> {
    match op {
        Op::If(_) => Some("If".into()),
        Op::While(a) => Some(format!("While {{ max_iterations: {} }}", a.max_iterations)),
        Op::Scan(a) => Some(format!(
            "Scan {{ length: {}, reverse: {}, num_carry: {}, num_bcast: {}, num_xs: {}, save_trajectory: {} }}",
            a.length, a.reverse, a.num_carry, a.num_bcast, a.num_xs, a.save_trajectory
        )),
        _ => None,
    }
}

/// The named bodies of a control op.
fn bodies(op: &Op) -> Vec<(&'static str, &Graph)> {
    match op {
        Op::If(a) => vec![("then_graph", &a.then_graph), ("else_graph", &a.else_graph)],
        Op::While(a) => vec![("cond_graph", &a.cond_graph), ("body_graph", &a.body_graph)],
        Op::Scan(a) => vec![("body", &a.body)],
        _ => Vec::new(),
    }
}

/// Row-major coordinates of flat index `i` in `shape`.
pub fn coords(shape: &[usize], mut i: usize) -> Vec<usize> {
    let mut c = vec![0; shape.len()];
    for (a, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            c[a] = i % d;
            i /= d;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use backend_api::Tensor;

    #[test]
    fn elements_print_exactly() {
        let t = Tensor::from_slice(&[3], &[-0.0f32, f32::NAN, f32::INFINITY]).unwrap();
        assert_eq!(tensor(&t.view()), "F32[3] [-0.0, NaN, inf] (3 values)");
        let t = Tensor::from_slice(&[1], &[i64::MIN]).unwrap();
        assert!(tensor(&t.view()).contains("-9223372036854775808"));
        assert_eq!(coords(&[2, 3], 4), vec![1, 1]);
    }
}
