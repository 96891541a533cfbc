//! §2.13 control flow, §2.14 fused regions, §2.15 custom ops.

use crate::{dims, dt, fails, finish, inp};
use backend_api::custom::{custom_op, custom_ops};
use backend_api::op::{BinaryOp, CompareOp, RegionInstr as I, RegionProgram, UnaryOp};
use backend_api::{DType, ErrorKind, Graph, GraphBuilder, Result, TensorType};

fn branch(neg: bool) -> Graph {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[3]);
    let y = if neg { b.unary(UnaryOp::Neg, x).unwrap() } else { x };
    finish(b, &[y])
}

fn cast_branch(to: DType) -> Graph {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[3]);
    let y = b.cast(x, to).unwrap();
    finish(b, &[y])
}

fn param_branch(n: usize) -> Graph {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[3]);
    b.param("w", DType::F32, &[n]).unwrap();
    finish(b, &[x])
}

#[test]
fn if_and_errors() {
    let mut b = GraphBuilder::new();
    let cond = inp(&mut b, "cond", DType::Bool, &[1, 1]);
    let x = inp(&mut b, "x", DType::F32, &[3]);
    let outs = b.if_(cond, &[x], branch(true), branch(false)).unwrap();
    assert_eq!(outs.len(), 1);
    assert_eq!((dims(&b, outs[0]), dt(&b, outs[0])), (vec![3], DType::F32));
    let fcond = inp(&mut b, "fcond", DType::F32, &[]);
    fails(b.if_(fcond, &[x], branch(true), branch(false)), ErrorKind::DType);
    let cond2 = inp(&mut b, "cond2", DType::Bool, &[2]);
    fails(b.if_(cond2, &[x], branch(true), branch(false)), ErrorKind::Shape);
    fails(b.if_(cond, &[x], branch(true), cast_branch(DType::F16)), ErrorKind::Subgraph);
    fails(b.if_(cond, &[], branch(true), branch(false)), ErrorKind::Subgraph);
    fails(b.if_(cond, &[], Graph::default(), Graph::default()), ErrorKind::Subgraph);
    fails(b.if_(cond, &[x], param_branch(3), param_branch(4)), ErrorKind::Attribute);
    let w = b.if_(cond, &[x], param_branch(3), param_branch(3)).unwrap()[0];
    assert_eq!(dims(&b, w), [3]);
    let h = b.if_(cond, &[x], cast_branch(DType::F16), cast_branch(DType::F16)).unwrap()[0];
    assert_eq!(dt(&b, h), DType::F16);
    let g = finish(b, &outs);
    assert_eq!(g.node(outs[0].node).unwrap().op.subgraphs().len(), 2);
}

/// Loop values `(i: I32 [], x: F32 [3])`.
fn while_graphs(cond_out_bool: bool) -> (Graph, Graph) {
    let mut c = GraphBuilder::new();
    let i = inp(&mut c, "i", DType::I32, &[]);
    inp(&mut c, "x", DType::F32, &[3]);
    let out = if cond_out_bool { c.compare(CompareOp::Lt, i, i).unwrap() } else { i };
    let cond = finish(c, &[out]);
    let mut bb = GraphBuilder::new();
    let i = inp(&mut bb, "i", DType::I32, &[]);
    let x = inp(&mut bb, "x", DType::F32, &[3]);
    let i2 = bb.binary(BinaryOp::Add, i, i).unwrap();
    let body = finish(bb, &[i2, x]);
    (cond, body)
}

#[test]
fn while_and_errors() {
    let mut b = GraphBuilder::new();
    let i = inp(&mut b, "i", DType::I32, &[]);
    let x = inp(&mut b, "x", DType::F32, &[3]);
    let (cond, body) = while_graphs(true);
    let outs = b.while_(&[i, x], cond.clone(), body.clone(), 100).unwrap();
    assert_eq!(outs.iter().map(|&o| dt(&b, o)).collect::<Vec<_>>(), [DType::I32, DType::F32]);
    fails(b.while_(&[], cond.clone(), body.clone(), 100), ErrorKind::Arity);
    let (int_cond, _) = while_graphs(false);
    fails(b.while_(&[i, x], int_cond, body.clone(), 100), ErrorKind::Subgraph);
    fails(b.while_(&[i, x], cond.clone(), cond.clone(), 100), ErrorKind::Subgraph);
    let x4 = inp(&mut b, "x4", DType::F32, &[4]);
    fails(b.while_(&[i, x4], cond, body, 100), ErrorKind::Subgraph);
}

fn program(num_inputs: u32, instrs: Vec<I>, outputs: Vec<u32>) -> RegionProgram {
    RegionProgram { num_inputs, instrs, outputs }
}

#[test]
fn elementwise_region_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[2, 3]);
    let y = inp(&mut b, "y", DType::F32, &[3]);
    let c = inp(&mut b, "c", DType::Bool, &[2, 1]);
    let p = program(
        3,
        vec![
            I::Input(0),
            I::Input(1),
            I::Binary(BinaryOp::Add, 0, 1),
            I::Input(2),
            I::Where(3, 2, 0),
            I::Compare(CompareOp::Gt, 4, 0),
            I::Cast(DType::F16, 4),
            I::Const { dtype: DType::F32, bytes: 2.0f32.to_le_bytes().to_vec() },
            I::Fma(4, 7, 0),
        ],
        vec![8, 5, 6, 6],
    );
    assert_eq!(p.register_dtypes(&[DType::F32, DType::F32, DType::Bool]).unwrap()[5], DType::Bool);
    let outs = b.elementwise_region(&[x, y, c], p.clone()).unwrap();
    let got: Vec<(Vec<usize>, DType)> = outs.iter().map(|&o| (dims(&b, o), dt(&b, o))).collect();
    assert_eq!(
        got,
        [(vec![2, 3], DType::F32), (vec![2, 3], DType::Bool), (vec![2, 3], DType::F16), (vec![2, 3], DType::F16)]
    );

    let attr = |b: &mut GraphBuilder, instrs: Vec<I>, outputs: Vec<u32>| {
        b.elementwise_region(&[x], program(1, instrs, outputs))
    };
    fails(attr(&mut b, vec![I::Input(0), I::Unary(UnaryOp::Exp, 1)], vec![1]), ErrorKind::Attribute);
    fails(attr(&mut b, vec![I::Input(1)], vec![0]), ErrorKind::Attribute);
    fails(attr(&mut b, vec![I::Input(0)], vec![]), ErrorKind::Attribute);
    fails(attr(&mut b, vec![I::Input(0)], vec![1]), ErrorKind::Attribute);
    fails(attr(&mut b, vec![], vec![0]), ErrorKind::Attribute);
    fails(attr(&mut b, vec![I::Input(0); 257], vec![0]), ErrorKind::Attribute);
    fails(attr(&mut b, vec![I::Const { dtype: DType::F32, bytes: vec![0; 2] }], vec![0]), ErrorKind::Attribute);
    fails(attr(&mut b, vec![I::Const { dtype: DType::Bool, bytes: vec![2] }], vec![0]), ErrorKind::Attribute);
    fails(
        b.elementwise_region(&[], program(0, vec![I::Const { dtype: DType::U8, bytes: vec![1] }], vec![0])),
        ErrorKind::Attribute,
    );
    let many: Vec<_> = (0..17).map(|_| x).collect();
    fails(b.elementwise_region(&many, program(17, vec![I::Input(0)], vec![0])), ErrorKind::Attribute);
    // operand dtype rules
    let bool_const = I::Const { dtype: DType::Bool, bytes: vec![1] };
    fails(
        attr(&mut b, vec![I::Input(0), bool_const.clone(), I::Binary(BinaryOp::Add, 0, 1)], vec![2]),
        ErrorKind::DType,
    );
    fails(
        attr(&mut b, vec![I::Input(0), I::Cast(DType::I32, 0), I::Unary(UnaryOp::Exp, 1)], vec![2]),
        ErrorKind::DType,
    );
    fails(attr(&mut b, vec![I::Input(0), I::Cast(DType::I32, 0), I::Fma(1, 1, 1)], vec![2]), ErrorKind::DType);
    fails(attr(&mut b, vec![I::Input(0), I::Where(0, 0, 0)], vec![1]), ErrorKind::DType);
    fails(attr(&mut b, vec![bool_const, I::Compare(CompareOp::Lt, 0, 0)], vec![1]), ErrorKind::DType);
    // shapes and arity
    let z = inp(&mut b, "z", DType::F32, &[4]);
    fails(b.elementwise_region(&[x, z], program(2, vec![I::Input(0)], vec![0])), ErrorKind::Shape);
    fails(b.elementwise_region(&[x, y], p), ErrorKind::Arity);
}

#[test]
fn batch_and_transform_regions() {
    let mut b = GraphBuilder::new();
    let xs: Vec<_> = (0..3).map(|i| inp(&mut b, &format!("x{i}"), DType::F32, &[2, 5])).collect();
    let exp = program(1, vec![I::Input(0), I::Unary(UnaryOp::Exp, 0)], vec![1]);
    let y = b.batch_elementwise_region(&xs, exp.clone()).unwrap();
    assert_eq!(dims(&b, y), [6, 5]);
    fails(b.batch_elementwise_region(&xs, program(1, vec![I::Input(0)], vec![0, 0])), ErrorKind::Attribute);
    fails(b.batch_elementwise_region(&[], exp.clone()), ErrorKind::Arity);
    let other = inp(&mut b, "o", DType::F32, &[3, 5]);
    fails(b.batch_elementwise_region(&[xs[0], other], exp.clone()), ErrorKind::Shape);
    let f16 = inp(&mut b, "h", DType::F16, &[2, 5]);
    fails(b.batch_elementwise_region(&[xs[0], f16], exp.clone()), ErrorKind::DType);
    let s = inp(&mut b, "s", DType::F32, &[]);
    fails(b.batch_elementwise_region(&[s], exp), ErrorKind::Shape);

    let big = inp(&mut b, "big", DType::F32, &[1, 3, 8, 8]);
    let small = inp(&mut b, "small", DType::F32, &[1, 3, 4, 4]);
    let add = program(2, vec![I::Input(0), I::Input(1), I::Binary(BinaryOp::Add, 0, 1)], vec![2]);
    let t = b.transform_region(&[big, small], add.clone(), 1, &[2, 2]).unwrap();
    assert_eq!(dims(&b, t[0]), [1, 3, 8, 8]);
    fails(b.transform_region(&[big, small], add.clone(), 2, &[2, 2]), ErrorKind::Attribute);
    fails(b.transform_region(&[big, small], add.clone(), 1, &[]), ErrorKind::Attribute);
    fails(b.transform_region(&[big, small], add.clone(), 1, &[2, 0]), ErrorKind::Attribute);
    fails(b.transform_region(&[big, small], add.clone(), 1, &[2]), ErrorKind::Shape);
    fails(b.transform_region(&[big, small], add.clone(), 1, &[3, 3]), ErrorKind::Shape);
    fails(b.transform_region(&[big], add, 0, &[1, 1]), ErrorKind::Arity);
}

fn u32s(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn custom_umap_knn() {
    let mut b = GraphBuilder::new();
    let d = inp(&mut b, "d", DType::F32, &[10, 10]);
    let outs = b.custom("umap.knn", &u32s(&[5, 1]), &[d]).unwrap();
    assert_eq!((dims(&b, outs[0]), dt(&b, outs[0])), (vec![10, 5], DType::I32));
    assert_eq!((dims(&b, outs[1]), dt(&b, outs[1])), (vec![10, 5], DType::F32));
    b.custom("umap.knn", &u32s(&[10, 0]), &[d]).unwrap();
    fails(b.custom("umap.knn", &u32s(&[10, 1]), &[d]), ErrorKind::Attribute);
    fails(b.custom("umap.knn", &[0; 7], &[d]), ErrorKind::Attribute);
    fails(b.custom("umap.knn", &u32s(&[1, 2]), &[d]), ErrorKind::Attribute);
    let rect = inp(&mut b, "rect", DType::F32, &[10, 12]);
    fails(b.custom("umap.knn", &u32s(&[1, 1]), &[rect]), ErrorKind::Shape);
    let d64 = inp(&mut b, "d64", DType::F64, &[10, 10]);
    fails(b.custom("umap.knn", &u32s(&[1, 0]), &[d64]), ErrorKind::DType);
    fails(b.custom("umap.knn", &u32s(&[1, 0]), &[d, d]), ErrorKind::Arity);
    fails(b.custom("no.such.op", &[], &[d]), ErrorKind::UnknownCustom);
}

fn gate_attrs(n_group: u32, topk_group: u32, top_k: u32, scaling: f32) -> Vec<u8> {
    let mut v = u32s(&[n_group, topk_group, top_k]);
    v.extend(scaling.to_le_bytes());
    v
}

#[test]
fn custom_group_limited_gate() {
    let mut b = GraphBuilder::new();
    let s = inp(&mut b, "s", DType::F32, &[3, 256]);
    let outs = b.custom("llada2.group_limited_gate", &gate_attrs(8, 4, 8, 2.5), &[s, s]).unwrap();
    assert_eq!((dims(&b, outs[0]), dt(&b, outs[0])), (vec![3, 8], DType::I32));
    assert_eq!((dims(&b, outs[1]), dt(&b, outs[1])), (vec![3, 8], DType::F32));
    let gate = |b: &mut GraphBuilder, a: Vec<u8>| b.custom("llada2.group_limited_gate", &a, &[s, s]);
    fails(gate(&mut b, gate_attrs(7, 4, 8, 1.0)), ErrorKind::Attribute);
    fails(gate(&mut b, gate_attrs(0, 4, 8, 1.0)), ErrorKind::Attribute);
    fails(gate(&mut b, gate_attrs(8, 9, 8, 1.0)), ErrorKind::Attribute);
    fails(gate(&mut b, gate_attrs(8, 4, 129, 1.0)), ErrorKind::Attribute);
    fails(gate(&mut b, gate_attrs(8, 4, 0, 1.0)), ErrorKind::Attribute);
    fails(gate(&mut b, gate_attrs(8, 4, 8, f32::NAN)), ErrorKind::Attribute);
    fails(gate(&mut b, gate_attrs(8, 4, 8, 1.0)[..15].to_vec()), ErrorKind::Attribute);
    let r = inp(&mut b, "r", DType::F32, &[4, 256]);
    fails(b.custom("llada2.group_limited_gate", &gate_attrs(8, 4, 8, 1.0), &[s, r]), ErrorKind::Shape);
}

#[test]
fn custom_ms_deform_attn() {
    let mut b = GraphBuilder::new();
    let value = inp(&mut b, "value", DType::F32, &[2, 100, 8, 32]);
    let shapes = inp(&mut b, "shapes", DType::I64, &[4, 2]);
    let starts = inp(&mut b, "starts", DType::I32, &[4]);
    let locs = inp(&mut b, "locs", DType::F32, &[2, 50, 8, 4, 4, 2]);
    let w = inp(&mut b, "w", DType::F32, &[2, 50, 8, 4, 4]);
    let outs = b.custom("gdino.ms_deform_attn", &[], &[value, shapes, starts, locs, w]).unwrap();
    assert_eq!(dims(&b, outs[0]), [2, 50, 256]);
    fails(b.custom("gdino.ms_deform_attn", &[0], &[value, shapes, starts, locs, w]), ErrorKind::Attribute);
    let locs3 = inp(&mut b, "locs3", DType::F32, &[2, 50, 8, 4, 4, 3]);
    fails(b.custom("gdino.ms_deform_attn", &[], &[value, shapes, starts, locs3, w]), ErrorKind::Shape);
    let w_heads = inp(&mut b, "wh", DType::F32, &[2, 50, 4, 4, 4]);
    fails(b.custom("gdino.ms_deform_attn", &[], &[value, shapes, starts, locs, w_heads]), ErrorKind::Shape);
    let fshapes = inp(&mut b, "fs", DType::F32, &[4, 2]);
    fails(b.custom("gdino.ms_deform_attn", &[], &[value, fshapes, starts, locs, w]), ErrorKind::DType);
}

fn identity_infer(attrs: &[u8], ins: &[TensorType]) -> Result<Vec<TensorType>> {
    if !attrs.is_empty() {
        return Err(backend_api::Error::new(ErrorKind::Attribute, "no attrs"));
    }
    Ok(ins.to_vec())
}

backend_api::register_custom_op!("test.identity", "returns its inputs", identity_infer);

#[test]
fn custom_registry() {
    let names = custom_ops();
    for n in ["umap.knn", "llada2.group_limited_gate", "gdino.ms_deform_attn", "test.identity"] {
        assert!(names.contains(&n), "{n} missing from {names:?}");
    }
    assert!(custom_op("umap.knn").is_some());
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::U8, &[2]);
    let outs = b.custom("test.identity", &[], &[x, x]).unwrap();
    assert_eq!(outs.len(), 2);
    fails(b.custom("test.identity", &[1], &[x]), ErrorKind::Attribute);
}
