//! §2.6.4–2.6.7 grouped and quantised matrix products.

use crate::{dims, dt, fails, inp};
use backend_api::op::QuantFormat;
use backend_api::{DType, ErrorKind, GraphBuilder, Value};

#[test]
fn grouped_matmul_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[5, 8]);
    let w = inp(&mut b, "w", DType::F32, &[4, 8, 3]);
    let e = inp(&mut b, "e", DType::I32, &[5]);
    let y = b.grouped_matmul(x, w, e).unwrap();
    assert_eq!(dims(&b, y), [5, 3]);
    let w_bad = inp(&mut b, "wb", DType::F32, &[4, 7, 3]);
    fails(b.grouped_matmul(x, w_bad, e), ErrorKind::Shape);
    let e_bad = inp(&mut b, "eb", DType::I32, &[4]);
    fails(b.grouped_matmul(x, w, e_bad), ErrorKind::Shape);
    let e_f = inp(&mut b, "ef", DType::F32, &[5]);
    fails(b.grouped_matmul(x, w, e_f), ErrorKind::DType);
    let w16 = inp(&mut b, "w16", DType::F16, &[4, 8, 3]);
    fails(b.grouped_matmul(x, w16, e), ErrorKind::DType);
}

/// Weight inputs (dtype, dims) of every format for `N = 6`, `K = 256`.
fn weights(f: QuantFormat) -> Vec<(DType, Vec<usize>)> {
    let (n, k) = (6usize, 256usize);
    match f {
        QuantFormat::Int8Block { .. } => vec![(DType::I8, vec![n, k]), (DType::F32, vec![n, 8])],
        QuantFormat::Int8BlockAsym { .. } => {
            vec![(DType::U8, vec![n, k]), (DType::F16, vec![n, 8]), (DType::F16, vec![n, 8])]
        }
        QuantFormat::Int4Block { .. } => vec![(DType::U8, vec![n, k / 2]), (DType::F16, vec![n, 8])],
        QuantFormat::Fp8E4m3 => vec![(DType::U8, vec![n, k]), (DType::F32, vec![])],
        QuantFormat::Fp8E5m2 => vec![(DType::U8, vec![n, k]), (DType::F32, vec![n])],
        QuantFormat::Nvfp4 => vec![(DType::U8, vec![n, 128]), (DType::U8, vec![n, 16]), (DType::F32, vec![])],
        other => {
            let (qk, bb) = other.ggml_block().unwrap();
            vec![(DType::U8, vec![n, k / qk * bb])]
        }
    }
}

fn weight_inputs(b: &mut GraphBuilder, ws: &[(DType, Vec<usize>)], lead: Option<usize>, tag: &str) -> Vec<Value> {
    ws.iter()
        .enumerate()
        .map(|(i, (d, s))| {
            let s: Vec<usize> = lead.into_iter().chain(s.iter().copied()).collect();
            inp(b, &format!("{tag}{i}"), *d, &s)
        })
        .collect()
}

#[test]
fn quant_matmul_every_format() {
    assert_eq!(QuantFormat::ALL.len(), 17);
    for f in QuantFormat::ALL {
        let mut b = GraphBuilder::new();
        let x = inp(&mut b, "x", DType::BF16, &[2, 3, 256]);
        let ws = weight_inputs(&mut b, &weights(f), None, "w");
        let y = b.quant_matmul(x, &ws, f).unwrap_or_else(|e| panic!("{}: {e}", f.name()));
        assert_eq!((dims(&b, y), dt(&b, y)), (vec![2, 3, 6], DType::BF16), "{}", f.name());
        // one weight input too few
        fails(b.quant_matmul(x, &ws[..ws.len() - 1], f), ErrorKind::Arity);
        // K of x not matching the weights
        let x2 = inp(&mut b, "x2", DType::F32, &[512]);
        fails(b.quant_matmul(x2, &ws, f), ErrorKind::Shape);
    }
}

#[test]
fn quant_matmul_errors() {
    let mut b = GraphBuilder::new();
    // Int4Block with odd K: w is [N, ceil(K/2)] and scale [N, ceil(K/B)].
    let x = inp(&mut b, "x", DType::F32, &[5]);
    let w = inp(&mut b, "w", DType::U8, &[2, 3]);
    let s = inp(&mut b, "s", DType::F32, &[2, 3]);
    let y = b.quant_matmul(x, &[w, s], QuantFormat::Int4Block { block_size: 2 }).unwrap();
    assert_eq!(dims(&b, y), [2]);
    fails(b.quant_matmul(x, &[w, s], QuantFormat::Int4Block { block_size: 0 }), ErrorKind::Attribute);
    let x64 = inp(&mut b, "x64", DType::F64, &[5]);
    fails(b.quant_matmul(x64, &[w, s], QuantFormat::Int4Block { block_size: 2 }), ErrorKind::DType);
    let s_i = inp(&mut b, "si", DType::I32, &[2, 3]);
    fails(b.quant_matmul(x, &[w, s_i], QuantFormat::Int4Block { block_size: 2 }), ErrorKind::DType);
    // GGML formats need K a multiple of QK.
    let x40 = inp(&mut b, "x40", DType::F32, &[40]);
    let q = inp(&mut b, "q", DType::U8, &[2, 18]);
    fails(b.quant_matmul(x40, &[q], QuantFormat::Q4_0), ErrorKind::Shape);
    // Nvfp4 needs K a multiple of 16.
    let x8 = inp(&mut b, "x8", DType::F32, &[8]);
    let (w4, bs, gs) = (
        inp(&mut b, "w4", DType::U8, &[2, 4]),
        inp(&mut b, "bs", DType::U8, &[2, 0]),
        inp(&mut b, "gs", DType::F32, &[]),
    );
    fails(b.quant_matmul(x8, &[w4, bs, gs], QuantFormat::Nvfp4), ErrorKind::Shape);
    let rank0 = inp(&mut b, "r0", DType::F32, &[]);
    fails(b.quant_matmul(rank0, &[q], QuantFormat::Q8_0), ErrorKind::Shape);
}

#[test]
fn quant_grouped_matmul_every_format() {
    for f in QuantFormat::ALL {
        let mut b = GraphBuilder::new();
        let x = inp(&mut b, "x", DType::F16, &[7, 256]);
        let e = inp(&mut b, "e", DType::I64, &[7]);
        let ws = weight_inputs(&mut b, &weights(f), Some(3), "w");
        let y = b.quant_grouped_matmul(x, &ws, e, f).unwrap_or_else(|err| panic!("{}: {err}", f.name()));
        assert_eq!((dims(&b, y), dt(&b, y)), (vec![7, 6], DType::F16), "{}", f.name());
        let e_bad = inp(&mut b, "eb", DType::I64, &[6]);
        fails(b.quant_grouped_matmul(x, &ws, e_bad, f), ErrorKind::Shape);
        let e_f = inp(&mut b, "ef", DType::F32, &[7]);
        fails(b.quant_grouped_matmul(x, &ws, e_f, f), ErrorKind::DType);
    }
    // leading expert dims must agree
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::F32, &[7, 256]);
    let e = inp(&mut b, "e", DType::I32, &[7]);
    let w = inp(&mut b, "w", DType::I8, &[3, 6, 256]);
    let s = inp(&mut b, "s", DType::F32, &[4, 6, 8]);
    fails(b.quant_grouped_matmul(x, &[w, s], e, QuantFormat::Int8Block { block_size: 32 }), ErrorKind::Shape);
    fails(b.quant_grouped_matmul(x, &[w], e, QuantFormat::Int8Block { block_size: 32 }), ErrorKind::Arity);
}

#[test]
fn quant_format_tables() {
    assert_eq!(QuantFormat::Q4_K.ggml_block(), Some((256, 144)));
    assert_eq!(QuantFormat::Q8_0.ggml_block(), Some((32, 34)));
    assert_eq!(QuantFormat::Nvfp4.ggml_block(), None);
    assert_eq!(QuantFormat::Int8BlockAsym { block_size: 4 }.num_weight_inputs(), 3);
    assert_eq!(QuantFormat::Q6_K.name(), "Q6_K");
    let names: std::collections::HashSet<&str> = QuantFormat::ALL.iter().map(|f| f.name()).collect();
    assert_eq!(names.len(), 17);
}
