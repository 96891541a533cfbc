use super::*;
use crate::op::{BinaryOp, CompareOp, RegionInstr, RegionProgram, UnaryOp};
use crate::{DType, Signature};

fn everything(_: OpKind) -> bool {
    true
}

/// Native kinds of a backend that runs only primitives: nothing that has a decomposition.
fn primitives(k: OpKind) -> bool {
    decomposition_uses(k).is_none()
}

fn kinds(g: &Graph) -> Vec<OpKind> {
    g.nodes().iter().map(|n| n.op.kind()).collect()
}

/// A program over two inputs with every instruction kind, a dead instruction and a constant output.
fn program() -> RegionProgram {
    RegionProgram {
        num_inputs: 2,
        instrs: vec![
            RegionInstr::Input(0),
            RegionInstr::Input(1),
            RegionInstr::Const { dtype: DType::F32, bytes: 2.0f32.to_le_bytes().to_vec() },
            RegionInstr::Binary(BinaryOp::Mul, 0, 2),
            RegionInstr::Fma(0, 1, 3),
            RegionInstr::Compare(CompareOp::Gt, 4, 2),
            RegionInstr::Unary(UnaryOp::Exp, 4),
            RegionInstr::Where(5, 6, 2),
            RegionInstr::Cast(DType::I32, 7),
            RegionInstr::Unary(UnaryOp::Log, 0),
        ],
        outputs: vec![8, 7, 2],
    }
}

fn region_graph() -> Graph {
    let mut g = GraphBuilder::new();
    let a = g.input("a", DType::F32, [3, 1]).unwrap();
    let b = g.input("b", DType::F32, [4]).unwrap();
    let outs = g.elementwise_region(&[a, b], program()).unwrap();
    for o in outs {
        g.output(o).unwrap();
    }
    g.build().unwrap()
}

#[test]
fn the_uses_table_and_the_dispatch_agree() {
    for &k in OpKind::ALL {
        assert_eq!(has_decomposition(k), decomposition_uses(k).is_some(), "{k:?}");
    }
}

#[test]
fn decompositions_form_a_dag() {
    fn reaches(from: OpKind, to: OpKind, depth: usize) -> bool {
        assert!(depth < 16, "decomposition chain from {from:?} does not end");
        decomposition_uses(from).unwrap_or(&[]).iter().any(|&k| k == to || reaches(k, to, depth + 1))
    }
    for &k in OpKind::ALL {
        assert!(!reaches(k, k, 0), "{k:?} decomposes into itself");
    }
}

#[test]
fn reachability_follows_the_uses() {
    let no_fma = |k: OpKind| primitives(k) && k != OpKind::ResizeNearest;
    assert!(reachable(OpKind::ElementwiseRegion, &no_fma));
    assert!(reachable(OpKind::Fma, &no_fma));
    assert!(!reachable(OpKind::TransformRegion, &no_fma));
    assert!(!reachable(OpKind::FusedResidualLayerNorm, &|k| primitives(k) && k != OpKind::LayerNorm));
}

#[test]
fn nothing_to_do_returns_the_graph_unchanged() {
    let g = region_graph();
    let l = legalise(&g, &everything, false).unwrap();
    assert_eq!(l.graph, g);
    assert_eq!(l.origin, (0..g.nodes().len()).map(NodeId).collect::<Vec<_>>());
}

#[test]
fn a_region_becomes_its_live_instructions_with_the_same_signature() {
    let g = region_graph();
    let l = legalise(&g, &primitives, false).unwrap();
    assert_eq!(Signature::of(&l.graph), Signature::of(&g));
    let ks = kinds(&l.graph);
    for k in &ks {
        assert!([OpKind::Input].contains(k) || region::USES.contains(k), "{k:?} is not among the region's uses");
    }
    assert!(!ks.contains(&OpKind::ElementwiseRegion) && !ks.contains(&OpKind::Fma), "{ks:?}");
    // The dead Log is left out; every output has the broadcast shape [3, 4].
    assert!(!l.graph.nodes().iter().any(|n| n.op == Op::Unary(UnaryOp::Log)));
    for v in l.graph.outputs() {
        assert_eq!(l.graph.value_type(*v).unwrap().shape, crate::Shape::of(&[3, 4]));
    }
    // Every new node came from the region (node 2) or is a copied input.
    assert_eq!(l.origin.len(), l.graph.nodes().len());
    assert!(l.origin[..2] == [NodeId(0), NodeId(1)] && l.origin[2..].iter().all(|o| *o == NodeId(2)));
}

#[test]
fn all_decomposes_native_ops_too() {
    let g = region_graph();
    let l = legalise(&g, &everything, true).unwrap();
    assert!(!kinds(&l.graph).contains(&OpKind::ElementwiseRegion));
    assert!(!kinds(&l.graph).contains(&OpKind::Fma), "the region's Fma is decomposed in a second round");
}

#[test]
fn a_missing_primitive_is_unsupported_at_the_users_node() {
    let g = region_graph();
    let e = legalise(&g, &|k| primitives(k) && k != OpKind::Compare, false).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert_eq!(e.node_id(), Some(2));
    assert_eq!(e.node_op(), Some("ElementwiseRegion"));
    assert!(e.message().contains("Compare"), "{e}");
}

#[test]
fn dot_general_decomposes_to_the_inferred_shape() {
    let mut g = GraphBuilder::new();
    let l = g.input("l", DType::F32, [2, 5, 3, 4]).unwrap();
    let r = g.input("r", DType::F32, [4, 2, 7, 3]).unwrap();
    let d = g.dot_general(l, r, (&[0], &[1]), (&[2, 3], &[3, 0])).unwrap();
    g.output(d).unwrap();
    let graph = g.build().unwrap();
    let dec = legalise(&graph, &|k| k != OpKind::DotGeneral, false).unwrap();
    assert_eq!(Signature::of(&dec.graph), Signature::of(&graph));
    assert!(kinds(&dec.graph).contains(&OpKind::MatMul));
    for k in kinds(&dec.graph).iter().skip(2) {
        assert!(decomposition_uses(OpKind::DotGeneral).unwrap().contains(k), "{k:?}");
    }
}

#[test]
fn symbolic_dot_general_is_unsupported_not_a_panic() {
    let mut g = GraphBuilder::new();
    let l = g.input("l", DType::F32, crate::Shape(vec!["n".into(), 3.into()])).unwrap();
    let r = g.input("r", DType::F32, [3, 2]).unwrap();
    let d = g.dot_general(l, r, (&[], &[]), (&[1], &[0])).unwrap();
    g.output(d).unwrap();
    let e = legalise(&g.build().unwrap(), &|k| k != OpKind::DotGeneral, false).unwrap_err();
    assert_eq!((e.kind(), e.node_id()), (ErrorKind::Unsupported, Some(2)), "{e}");
}

#[test]
fn subgraphs_are_legalised() {
    let body = |name: &str| {
        let mut g = GraphBuilder::new();
        let a = g.input(name, DType::F32, [2]).unwrap();
        let f = g.fma(a, a, a).unwrap();
        g.output(f).unwrap();
        g.build().unwrap()
    };
    let mut g = GraphBuilder::new();
    let c = g.input("c", DType::Bool, [1]).unwrap();
    let x = g.input("x", DType::F32, [2]).unwrap();
    let outs = g.if_(c, &[x], body("t"), body("e")).unwrap();
    g.output(outs[0]).unwrap();
    let graph = g.build().unwrap();
    let l = legalise(&graph, &|k| k != OpKind::Fma, false).unwrap();
    let Op::If(a) = &l.graph.nodes()[2].op else { panic!("the If node moved") };
    for sub in [&a.then_graph, &a.else_graph] {
        assert!(!kinds(sub).contains(&OpKind::Fma) && kinds(sub).contains(&OpKind::Binary));
    }
    assert_eq!(Signature::of(&l.graph), Signature::of(&graph));
}

#[test]
fn fused_residual_norms_are_adds_then_the_norm_with_both_outputs() {
    for rms in [false, true] {
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::F16, [2, 3, 4]).unwrap();
        let r = g.input("r", DType::F16, [2, 3, 4]).unwrap();
        let b = g.param("b", DType::F16, &[4]).unwrap();
        let gamma = g.param("g", DType::F16, &[3, 4]).unwrap();
        let beta = g.param("be", DType::F16, &[3, 4]).unwrap();
        let (y, s) = if rms {
            g.fused_residual_rms_norm(x, (r, Some(b)), (gamma, Some(beta)), 1, 1e-6, true).unwrap()
        } else {
            g.fused_residual_layer_norm(x, (r, Some(b)), (gamma, Some(beta)), -2, 1e-5, true).unwrap()
        };
        g.output(s.unwrap()).unwrap();
        g.output(y).unwrap();
        let graph = g.build().unwrap();
        let l = legalise(&graph, &primitives, false).unwrap();
        assert_eq!(Signature::of(&l.graph), Signature::of(&graph));
        let norm = if rms { OpKind::RmsNorm } else { OpKind::LayerNorm };
        assert_eq!(&kinds(&l.graph)[5..], [OpKind::Binary, OpKind::Binary, norm]);
        assert_eq!(l.graph.nodes()[7].inputs.len(), 3, "beta is passed on");
    }
}

#[cfg(feature = "splat")]
#[test]
fn render_is_prepare_then_rasterize() {
    let mut g = GraphBuilder::new();
    let dims: [&[usize]; 6] = [&[5, 3], &[5, 3], &[5, 4], &[5], &[5, 16, 3], &[20]];
    let scene: Vec<Value> =
        dims.iter().enumerate().map(|(i, d)| g.input(&format!("s{i}"), DType::F32, *d).unwrap()).collect();
    let img = g.gaussian_splat_render(&scene, crate::op::SplatAttrs::new(8, 6, 1000)).unwrap();
    g.output(img).unwrap();
    let graph = g.build().unwrap();
    let l = legalise(&graph, &primitives, false).unwrap();
    assert_eq!(Signature::of(&l.graph), Signature::of(&graph));
    assert_eq!(&kinds(&l.graph)[6..], [OpKind::GaussianSplatPrepare, OpKind::GaussianSplatRasterize]);
    let e = legalise(&graph, &|k| primitives(k) && k != OpKind::GaussianSplatRasterize, false).unwrap_err();
    assert!(e.kind() == ErrorKind::Unsupported && e.message().contains("GaussianSplatRasterize"), "{e}");
    assert_eq!(e.node_op(), Some("GaussianSplatRender"));
}
