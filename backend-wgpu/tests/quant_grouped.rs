//! QuantGroupedMatMul (§2.6.6) on wgpu against cpu-ref for every format of §2.6.7, with the (M)
//! tolerance `M = Σ_k |x|·|W_e|` (`W_e` decoded by cpu-ref from each expert's slice of the
//! weights). Weights drawn over the whole code space as in `quant.rs`; E = 3 experts routed by
//! ids that include negative (wrapping, §1.6) and out-of-range ones (zero rows); M = 6 (one
//! expert's rows in one partial tile of 4) and 21 (several tiles per expert, partial last
//! tiles); x F32, F16 and BF16 and F32 and F16 scales taken in turn; E = 0 and M = 0.

mod common;
use backend_api::op::QuantFormat;
use backend_api::{DType, GraphBuilder, Tensor};
use backend_cpu_ref as _;
use backend_wgpu as _;
use common::quant::{as_i8, decoded_t, weights};
use common::{approx, check, cpu, random, run, tensor, wgpu};

/// `QuantGroupedMatMul(x, ws, ids)` on `be`.
fn quant_grouped(
    be: &dyn backend_api::Backend,
    format: QuantFormat,
    x: &Tensor,
    ws: &[Tensor],
    ids: &Tensor,
) -> Tensor {
    let mut g = GraphBuilder::new();
    let xv = g.input("x", x.dtype(), x.shape().to_vec()).unwrap();
    let names: Vec<String> = (0..ws.len()).map(|i| format!("w{i}")).collect();
    let wv: Vec<_> = ws.iter().zip(&names).map(|(w, n)| g.input(n, w.dtype(), w.shape().to_vec()).unwrap()).collect();
    let iv = g.input("ids", ids.dtype(), ids.shape().to_vec()).unwrap();
    let y = g.quant_grouped_matmul(xv, &wv, iv, format).unwrap();
    g.output(y).unwrap();
    let graph = g.build().unwrap();
    let mut inputs = vec![("x", x), ("ids", ids)];
    inputs.extend(names.iter().map(|n| n.as_str()).zip(ws));
    run(be, &graph, &inputs).remove(0)
}

/// Expert `e`'s slice of a weight input `[E, …]`.
fn slice(w: &Tensor, e: usize) -> Tensor {
    let per = w.bytes().len() / w.shape()[0];
    Tensor::from_bytes(w.dtype(), &w.shape()[1..], w.bytes()[e * per..(e + 1) * per].to_vec()).unwrap()
}

/// Expert ids for `m` rows of `e` experts in dtype `d`: mostly in range, with negative ids
/// (U32: huge ones) and ids past E.
fn ids(d: DType, m: usize, e: usize) -> (Tensor, Vec<Option<usize>>) {
    let pattern: [i64; 10] = [0, 1, 2, 0, -1, 3, 0, -3, 1, -4];
    let raw: Vec<i64> = (0..m).map(|r| pattern[(r * 7 + r / 10) % pattern.len()]).collect();
    let raw: Vec<i64> = match d {
        DType::U32 => raw.iter().map(|&i| if i < 0 { u32::MAX as i64 + 1 + i } else { i }).collect(),
        _ => raw,
    };
    let e = e as i64;
    let resolved = raw.iter().map(|&i| {
        let r = if i < 0 && d != DType::U32 { i + e } else { i };
        (0..e).contains(&r).then_some(r as usize)
    });
    let vals: Vec<f64> = raw.iter().map(|&i| i as f64).collect();
    (tensor(d, &[m], &vals), resolved.collect())
}

/// `M[m, n] = Σ_k |x[m, k]|·|W_e[n, k]|` for the resolved expert of each row (0 where out of range).
fn magnitudes(
    format: QuantFormat,
    x: &Tensor,
    ws: &[Tensor],
    experts: &[Option<usize>],
    k: usize,
    n: usize,
) -> Vec<f64> {
    let e = ws[0].shape()[0];
    let wt: Vec<Vec<f64>> =
        (0..e).map(|i| decoded_t(format, &ws.iter().map(|w| slice(w, i)).collect::<Vec<_>>(), k).0).collect();
    let xs = x.view().to_f64_lossy();
    let mut out = vec![0.0; experts.len() * n];
    for (m, ex) in experts.iter().enumerate() {
        let Some(ex) = ex else { continue };
        for c in 0..n {
            out[m * n + c] = (0..k).map(|j| (xs[m * k + j] * wt[*ex][j * n + c]).abs()).sum();
        }
    }
    out
}

#[test]
fn every_format_matches_cpu_ref() {
    let formats = common::quant::EVERY_FORMAT;
    let (mut cases, mut turn) = (0, 0usize);
    for (fi, &format) in formats.iter().enumerate() {
        for (mi, m) in [6usize, 21].into_iter().enumerate() {
            turn += 1;
            let xd = [DType::F32, DType::F16, DType::BF16][turn % 3];
            let sd = [DType::F32, DType::F16][turn % 2];
            let id = [DType::I32, DType::I64, DType::U32][(turn / 2) % 3];
            let n = [5, 7][mi];
            let seed = (fi * 10 + mi) as u64 + 100;
            let (k, mut ws) = weights(format, &[3], n, sd, seed);
            if matches!(format, QuantFormat::Int8BlockAsym { .. }) && turn % 2 == 0 {
                ws[0] = as_i8(ws[0].clone());
            }
            let x = random(xd, &[m, k], -1.0, 1.0, seed + 7);
            let (ids, experts) = ids(id, m, 3);
            let name = format!("{} x {xd}[{m}, {k}] N = {n} scale {sd} ids {id} {experts:?}", format.name());
            let got = quant_grouped(wgpu(), format, &x, &ws, &ids);
            let want = quant_grouped(cpu(), format, &x, &ws, &ids);
            let mag = magnitudes(format, &x, &ws, &experts, k, n);
            check(&name, &got, &want, Some(approx(xd)), Some(&mag));
            // Rows of out-of-range experts are zeros.
            let g = got.view().to_f64_lossy();
            for (r, ex) in experts.iter().enumerate() {
                assert!(ex.is_some() || g[r * n..(r + 1) * n].iter().all(|&v| v == 0.0), "{name}: row {r}");
            }
            cases += 1;
        }
    }
    assert_eq!(cases, 34);
}

/// E = 0 gives zeros (every row out of range); M = 0 an empty output; K = 0 zeros.
#[test]
fn empty_dims() {
    let f = QuantFormat::Q4_0;
    let (_, ws) = weights(f, &[0], 3, DType::F32, 1);
    let (ids, _) = ids(DType::I32, 5, 3);
    let got = quant_grouped(wgpu(), f, &random(DType::F16, &[5, 96], -1.0, 1.0, 2), &ws, &ids);
    assert_eq!(got.shape(), [5, 3]);
    assert!(got.view().to_f64_lossy().iter().all(|&v| v == 0.0));
    let (_, ws) = weights(f, &[2], 3, DType::F32, 1);
    let none = tensor(DType::I64, &[0], &[]);
    assert_eq!(quant_grouped(wgpu(), f, &random(DType::F32, &[0, 96], -1.0, 1.0, 3), &ws, &none).shape(), [0, 3]);
    let b = QuantFormat::Int8Block { block_size: 4 };
    let zero_k = [as_i8(common::quant::bytes(&[2, 3, 0], 1)), random(DType::F32, &[2, 3, 0], -1.0, 1.0, 2)];
    let got = quant_grouped(wgpu(), b, &random(DType::BF16, &[5, 0], -1.0, 1.0, 3), &zero_k, &ids);
    assert_eq!(got.shape(), [5, 3]);
    assert!(got.view().to_f64_lossy().iter().all(|&v| v == 0.0));
}
