//! Decompositions: the only place composites become primitives. A backend says which ops it lowers
//! natively; [`decompose_graph`] rewrites the rest (§3: DotGeneral → Transpose + Reshape + MatMul,
//! FusedMatMulBiasAct → MatMul + Binary + Unary, Fma → Mul + Add).

use crate::infer::linalg::free_axes;
use crate::op::{BinaryOp, DotGeneralAttrs, Op, UnaryOp};
use crate::shape::numel;
use crate::{bail, Graph, GraphBuilder, Result, Value};
use std::collections::HashMap;

/// `DotGeneral(lhs, rhs)` built from Transpose, Reshape and a batched MatMul.
pub fn dot_general(g: &mut GraphBuilder, lhs: Value, rhs: Value, a: &DotGeneralAttrs) -> Result<Value> {
    let (lt, rt) = (g.value_type(lhs)?.clone(), g.value_type(rhs)?.clone());
    let (ld, rd) = (lt.shape.static_dims("DotGeneral lhs")?, rt.shape.static_dims("DotGeneral rhs")?);
    let lfree: Vec<usize> = free_axes(ld.len(), &a.lhs_batch, &a.lhs_contract).collect();
    let rfree: Vec<usize> = free_axes(rd.len(), &a.rhs_batch, &a.rhs_contract).collect();
    let lperm: Vec<i64> = a.lhs_batch.iter().chain(&lfree).chain(&a.lhs_contract).map(|&x| x as i64).collect();
    let rperm: Vec<i64> = a.rhs_batch.iter().chain(&a.rhs_contract).chain(&rfree).map(|&x| x as i64).collect();
    let prod = |d: &[usize], axes: &[usize]| numel(&axes.iter().map(|&x| d[x]).collect::<Vec<_>>());
    let (b, m, k, n) = (prod(&ld, &a.lhs_batch), prod(&ld, &lfree), prod(&ld, &a.lhs_contract), prod(&rd, &rfree));
    let l = g.transpose(lhs, &lperm)?;
    let l = g.reshape(l, &[b as i64, m as i64, k as i64])?;
    let r = g.transpose(rhs, &rperm)?;
    let r = g.reshape(r, &[b as i64, k as i64, n as i64])?;
    let out = g.matmul(l, r)?;
    let dims: Vec<i64> = a
        .lhs_batch
        .iter()
        .map(|&x| ld[x])
        .chain(lfree.iter().map(|&x| ld[x]))
        .chain(rfree.iter().map(|&x| rd[x]))
        .map(|x| x as i64)
        .collect();
    g.reshape(out, &dims)
}

/// `act(MatMul(a, b) + bias)` from MatMul, Binary Add and Unary.
pub fn fused_matmul(g: &mut GraphBuilder, a: Value, b: Value, bias: Value, act: Option<UnaryOp>) -> Result<Value> {
    let mm = g.matmul(a, b)?;
    let s = g.binary(BinaryOp::Add, mm, bias)?;
    match act {
        Some(u) => g.unary(u, s),
        None => Ok(s),
    }
}

/// Rebuilds `graph`, decomposing every node whose op `native` rejects and that has a
/// decomposition; other nodes are copied unchanged.
pub fn decompose_graph(graph: &Graph, native: impl Fn(&Op) -> bool) -> Result<Graph> {
    let mut g = GraphBuilder::new();
    let mut map: HashMap<Value, Value> = HashMap::new();
    for (i, node) in graph.nodes().iter().enumerate() {
        let ins: Vec<Value> = node
            .inputs
            .iter()
            .map(|v| {
                map.get(v).copied().ok_or_else(|| crate::Error::new(crate::ErrorKind::Arity, format!("{v} undefined")))
            })
            .collect::<Result<_>>()?;
        let outs: Vec<Value> = if native(&node.op) {
            g.add(node.op.clone(), &ins)?
        } else {
            match &node.op {
                Op::DotGeneral(a) => vec![dot_general(&mut g, ins[0], ins[1], a)?],
                Op::FusedMatMulBiasAct { activation } => {
                    vec![fused_matmul(&mut g, ins[0], ins[1], ins[2], *activation)?]
                }
                Op::Fma => {
                    let p = g.binary(BinaryOp::Mul, ins[0], ins[1])?;
                    vec![g.binary(BinaryOp::Add, p, ins[2])?]
                }
                other => g.add(other.clone(), &ins)?,
            }
        };
        if outs.len() != node.outputs.len() {
            bail!(Arity, "decomposing node {i} changed its output count");
        }
        for (o, v) in outs.into_iter().enumerate() {
            map.insert(Value { node: crate::NodeId(i), output: o }, v);
        }
    }
    for v in graph.outputs() {
        match map.get(v) {
            Some(nv) => g.output(*nv)?,
            None => bail!(Arity, "graph output {v} undefined"),
        }
    }
    g.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::DType;

    #[test]
    fn dot_general_decomposes_to_the_inferred_shape() {
        let mut g = GraphBuilder::new();
        let l = g.input("l", DType::F32, [2, 5, 3, 4]).unwrap();
        let r = g.input("r", DType::F32, [4, 2, 7, 3]).unwrap();
        let d = g.dot_general(l, r, (&[0], &[1]), (&[2, 3], &[3, 0])).unwrap();
        g.output(d).unwrap();
        let graph = g.build().unwrap();
        let want = graph.value_type(graph.outputs()[0]).unwrap().clone();
        let dec = decompose_graph(&graph, |op| !matches!(op, Op::DotGeneral(_))).unwrap();
        assert_eq!(dec.value_type(dec.outputs()[0]).unwrap(), &want);
        assert!(dec.nodes().iter().any(|n| matches!(n.op, Op::MatMul)));
        assert!(!dec.nodes().iter().any(|n| matches!(n.op, Op::DotGeneral(_))));
    }
}
