//! Indexing, arg-reductions, TopK, scans, cross-entropy and random ops through the public `Backend` API:
//! build a graph, compile it on cpu-ref, run it.

use backend_api::op::SampleAttrs;
use backend_api::{Backend, CompileOptions, DType, Executable, GraphBuilder, Tensor, Value};
use backend_cpu_ref::CpuRefBackend;

fn compile(b: GraphBuilder) -> Box<dyn Executable> {
    CpuRefBackend::new().compile(&b.build().unwrap(), &CompileOptions::default()).unwrap()
}

fn input(b: &mut GraphBuilder, name: &str, t: &Tensor) -> Value {
    b.input(name, t.dtype(), t.shape()).unwrap()
}

fn run(exe: &mut Box<dyn Executable>, ins: &[(&str, &Tensor)]) -> Vec<Tensor> {
    let views: Vec<(&str, backend_api::TensorView<'_>)> = ins.iter().map(|(n, t)| (*n, t.view())).collect();
    exe.run(&views).unwrap()
}

/// A one-op graph `f(x, idx)` run on concrete tensors.
fn gather(data: &Tensor, idx: &Tensor, axis: i64) -> Tensor {
    let mut b = GraphBuilder::new();
    let (d, i) = (input(&mut b, "d", data), input(&mut b, "i", idx));
    let y = b.gather(d, i, axis).unwrap();
    b.output(y).unwrap();
    run(&mut compile(b), &[("d", data), ("i", idx)]).remove(0)
}

const BIG: usize = (1 << 24) + 3;

fn big_data() -> Tensor {
    let v: Vec<u8> = (0..BIG).map(|i| (i % 251) as u8).collect();
    Tensor::from_slice(&[BIG], &v).unwrap()
}

#[test]
fn capabilities_list_the_indexing_scan_loss_and_random_ops() {
    let caps = CpuRefBackend::new().capabilities();
    for name in ["Gather", "ScatterAdd", "GatherBackward", "ArgMax", "ArgMin", "TopK", "Cumsum"] {
        assert!(caps.ops.iter().any(|o| o == name), "{name}");
    }
    for name in ["CumsumBackward", "SoftmaxCrossEntropy", "SoftmaxCrossEntropyBackward", "RngBits"] {
        assert!(caps.ops.iter().any(|o| o == name), "{name}");
    }
    for name in ["RngUniform", "RngNormal", "Sample"] {
        assert!(caps.ops.iter().any(|o| o == name), "{name}");
    }
}

#[test]
fn gather_indices_above_2_pow_24_every_index_dtype() {
    // 2^24 + 1 is not an f32 value: an index that went through f32 would read 2^24 instead.
    let data = big_data();
    let b24 = 1i64 << 24;
    let val = |i: i64| (i as usize % 251) as u8;
    // The last two indices are out of range and read as 0.
    let want = [val(b24 + 1), val(b24 + 2), val(b24), val(0), val(b24 + 2), 0, 0];
    let i64s = [b24 + 1, -1, -3, -(BIG as i64), b24 + 2, BIG as i64, -(BIG as i64) - 1];
    let y = gather(&data, &Tensor::from_slice(&[7], &i64s).unwrap(), 0);
    assert_eq!(y.to_vec::<u8>().unwrap(), want);
    let i32s: Vec<i32> = i64s.iter().map(|&v| v as i32).collect();
    let y = gather(&data, &Tensor::from_slice(&[7], &i32s).unwrap(), 0);
    assert_eq!(y.to_vec::<u8>().unwrap(), want);
    // U32 is never negative: u32::MAX and the wrapped negatives are all out of range.
    let u = [(b24 + 1) as u32, u32::MAX, (b24 + 2) as u32, BIG as u32, 0];
    let y = gather(&data, &Tensor::from_slice(&[5], &u).unwrap(), 0);
    assert_eq!(y.to_vec::<u8>().unwrap(), [want[0], 0, want[1], 0, 0]);
    // I64 values far outside the i32 range never alias a valid row.
    let far = [(1i64 << 40) + 1, i64::MIN, i64::MAX, -(1i64 << 40)];
    let y = gather(&data, &Tensor::from_slice(&[4], &far).unwrap(), 0);
    assert_eq!(y.to_vec::<u8>().unwrap(), [0, 0, 0, 0]);
}

#[test]
fn scatter_add_above_2_pow_24_with_collisions() {
    let data = big_data();
    let b24 = 1i64 << 24;
    let idx = Tensor::from_slice(&[6], &[b24 + 1, b24 + 1, -2, b24 + 9, -(BIG as i64) - 5, b24]).unwrap();
    let upd = Tensor::from_slice(&[6], &[3u8, 4, 5, 100, 100, 1]).unwrap();
    let mut b = GraphBuilder::new();
    let (d, i, u) = (input(&mut b, "d", &data), input(&mut b, "i", &idx), input(&mut b, "u", &upd));
    let y = b.scatter_add(d, i, u, 0).unwrap();
    b.output(y).unwrap();
    let y = run(&mut compile(b), &[("d", &data), ("i", &idx), ("u", &upd)]).remove(0);
    let y = y.to_vec::<u8>().unwrap();
    let d = data.to_vec::<u8>().unwrap();
    let at = |i: i64| i as usize;
    // (2^24 + 1) gets 3 + 4 + 5 (−2 is 2^24 + 1 too, since BIG = 2^24 + 3), 2^24 gets 1.
    assert_eq!(y[at(b24 + 1)], d[at(b24 + 1)].wrapping_add(12));
    assert_eq!(y[at(b24)], d[at(b24)].wrapping_add(1));
    let changed = y.iter().zip(&d).filter(|(a, b)| a != b).count();
    assert_eq!(changed, 2);
}

#[test]
fn gather_backward_above_2_pow_24() {
    let b24 = 1i64 << 24;
    let idx = Tensor::from_slice(&[4], &[(b24 + 1) as u32, (b24 + 1) as u32, 5, BIG as u32]).unwrap();
    let dy = Tensor::from_slice(&[4], &[0.5f32, 0.25, 2.0, 9.0]).unwrap();
    let mut b = GraphBuilder::new();
    let (g, i) = (input(&mut b, "g", &dy), input(&mut b, "i", &idx));
    let y = b.gather_backward(g, i, 0, vec![BIG]).unwrap();
    b.output(y).unwrap();
    let y = run(&mut compile(b), &[("g", &dy), ("i", &idx)]).remove(0);
    let y = y.to_vec::<f32>().unwrap();
    assert_eq!(y.len(), BIG);
    assert_eq!((y[(b24 + 1) as usize], y[5], y[b24 as usize]), (0.75, 2.0, 0.0));
    assert_eq!(y.iter().filter(|&&v| v != 0.0).count(), 2);
}

/// GatherBackward is the exact derivative of Gather: for every data element `e`, the central
/// difference of `Σ dy · Gather(data)` equals `GatherBackward(dy)[e]` (f64, several axes,
/// colliding, negative and out-of-range indices).
#[test]
fn gather_backward_equals_finite_differences_of_gather() {
    let dims = [3usize, 4, 2];
    let data: Vec<f64> = (0..24).map(|i| (i as f64 * 0.37).sin()).collect();
    let idx = Tensor::from_slice(&[2, 3], &[1i32, -1, 1, 7, 0, -5]).unwrap();
    for axis in 0..3usize {
        let a = dims[axis] as i32;
        let idx =
            Tensor::from_slice(&[2, 3], &idx.to_vec::<i32>().unwrap().iter().map(|&v| v % (a + 2)).collect::<Vec<_>>())
                .unwrap();
        let mut ydims = dims[..axis].to_vec();
        ydims.extend([2, 3]);
        ydims.extend(&dims[axis + 1..]);
        let n: usize = ydims.iter().product();
        let dy: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64 * 0.5).collect();
        let dyt = Tensor::from_slice(&ydims, &dy).unwrap();
        let mut b = GraphBuilder::new();
        let (g, i) = (input(&mut b, "g", &dyt), input(&mut b, "i", &idx));
        let y = b.gather_backward(g, i, axis as i64, dims.to_vec()).unwrap();
        b.output(y).unwrap();
        let grad = run(&mut compile(b), &[("g", &dyt), ("i", &idx)]).remove(0).to_vec::<f64>().unwrap();
        let f = |v: &[f64]| -> f64 {
            let y = gather(&Tensor::from_slice(&dims, v).unwrap(), &idx, axis as i64);
            y.to_vec::<f64>().unwrap().iter().zip(&dy).map(|(a, b)| a * b).sum()
        };
        for e in 0..24 {
            let h = 1e-3;
            let (mut p, mut m) = (data.clone(), data.clone());
            p[e] += h;
            m[e] -= h;
            let fd = (f(&p) - f(&m)) / (2.0 * h);
            assert!((fd - grad[e]).abs() < 1e-9, "axis {axis} e {e}: {fd} vs {}", grad[e]);
        }
    }
}

#[test]
fn top_k_through_a_graph() {
    let nan = f32::NAN;
    let x = Tensor::from_slice(&[2, 4], &[3.0f32, nan, 3.0, -1.0, 0.0, -0.0, 7.0, 0.0]).unwrap();
    for (k, largest, want_i) in
        [(4usize, true, vec![1i32, 0, 2, 3, 2, 0, 1, 3]), (2, false, vec![3, 0, 0, 1]), (0, true, vec![])]
    {
        let mut b = GraphBuilder::new();
        let xi = input(&mut b, "x", &x);
        let (v, i) = b.top_k(xi, k, -1, largest, DType::I32).unwrap();
        b.output(v).unwrap();
        b.output(i).unwrap();
        let out = run(&mut compile(b), &[("x", &x)]);
        assert_eq!(out[0].shape(), &[2, k]);
        assert_eq!(out[1].to_vec::<i32>().unwrap(), want_i, "k {k} largest {largest}");
    }
}

#[test]
fn arg_ops_and_cumsum_through_a_graph() {
    let x = Tensor::from_slice(&[2, 3], &[4i64, -2, 4, 0, 9, -9]).unwrap();
    let mut b = GraphBuilder::new();
    let xi = input(&mut b, "x", &x);
    let mx = b.arg_max(xi, 1, false, DType::I64).unwrap();
    let mn = b.arg_min(xi, 0, true, DType::I32).unwrap();
    let cs = b.cumsum(xi, 1, true, true).unwrap();
    for v in [mx, mn, cs] {
        b.output(v).unwrap();
    }
    let out = run(&mut compile(b), &[("x", &x)]);
    assert_eq!(out[0].to_vec::<i64>().unwrap(), [0, 1]);
    assert_eq!(out[1].shape(), &[1, 3]);
    assert_eq!(out[1].to_vec::<i32>().unwrap(), [1, 0, 1]);
    assert_eq!(out[2].to_vec::<i64>().unwrap(), [2, 4, 0, 0, -9, 0]);
}

#[test]
fn cross_entropy_and_its_backward_through_a_graph() {
    let x = Tensor::from_slice(&[2, 3], &[1.0f64, 2.0, 3.0, f64::NEG_INFINITY, 0.0, 0.0]).unwrap();
    let t = Tensor::from_slice(&[2, 3], &[0.0f64, 0.0, 1.0, 0.0, 0.5, 0.5]).unwrap();
    let dl = Tensor::from_slice(&[2], &[1.0f64, 2.0]).unwrap();
    let mut b = GraphBuilder::new();
    let (xi, ti, di) = (input(&mut b, "x", &x), input(&mut b, "t", &t), input(&mut b, "d", &dl));
    let l = b.softmax_cross_entropy(xi, ti, -1).unwrap();
    let g = b.softmax_cross_entropy_backward(xi, ti, di, -1).unwrap();
    b.output(l).unwrap();
    b.output(g).unwrap();
    let out = run(&mut compile(b), &[("x", &x), ("t", &t), ("d", &dl)]);
    let l = out[0].to_vec::<f64>().unwrap();
    let lse = (1f64.exp() + 2f64.exp() + 3f64.exp()).ln();
    assert!((l[0] - (lse - 3.0)).abs() < 1e-14);
    assert!((l[1] - std::f64::consts::LN_2).abs() < 1e-15);
    let g = out[1].to_vec::<f64>().unwrap();
    assert_eq!(&g[3..], [0.0, 0.0, 0.0]);
    assert!((g[2] - (3f64.exp() / (lse.exp()) - 1.0)).abs() < 1e-14);
}

fn key_tensor(lo: u32, hi: u32) -> Tensor {
    Tensor::from_slice(&[2], &[lo, hi]).unwrap()
}

#[test]
fn random_ops_reproduce_the_spec_reference_values() {
    let mut b = GraphBuilder::new();
    let k = b.input("key", DType::U32, [2]).unwrap();
    let bits = b.rng_bits(k, vec![8], 3).unwrap();
    let uni = b.rng_uniform(k, vec![4], DType::F32, 0.0, 1.0, 3).unwrap();
    let nor = b.rng_normal(k, vec![2, 4], DType::F64, 0.0, 1.0, 3).unwrap();
    for v in [bits, uni, nor] {
        b.output(v).unwrap();
    }
    let mut exe = compile(b);
    let key = key_tensor(1, 2);
    let out = run(&mut exe, &[("key", &key)]);
    assert_eq!(
        out[0].to_vec::<u32>().unwrap(),
        [0x4236452e, 0xd5af937b, 0xe196fd49, 0x1dd16593, 0xbe4d29c6, 0x1b06ef7b, 0x795632f1, 0x7e50bf3f]
    );
    let u = out[1].to_vec::<f32>().unwrap();
    for (g, w) in u.iter().zip([0.258640587, 0.834710300, 0.881210148, 0.116476357]) {
        assert!((*g as f64 - w).abs() < 1e-9);
    }
    let n = out[2].to_vec::<f64>().unwrap();
    let want = [0.8345794, -1.4170774, 0.3741369, 0.3360651, 0.6068326, 0.4742263, -1.2209278, 0.0505092];
    for (g, w) in n.iter().zip(want) {
        assert!((g - w).abs() < 1e-6, "{g} vs {w}");
    }
    // Same key, same results; another key, another stream.
    assert_eq!(run(&mut exe, &[("key", &key)]), out);
    assert_ne!(run(&mut exe, &[("key", &key_tensor(0, 0))])[0], out[0]);
}

#[test]
fn sample_through_a_graph() {
    let logits = Tensor::from_slice(&[3, 4], &[0.0f32, 5.0, 1.0, 5.0, 1.0, 2.0, 3.0, 4.0, 9.0, 0.0, 0.0, 0.0]).unwrap();
    let mut b = GraphBuilder::new();
    let x = input(&mut b, "x", &logits);
    let k = b.input("key", DType::U32, [2]).unwrap();
    let greedy = b.sample(x, k, SampleAttrs { temperature: 0.0, ..Default::default() }).unwrap();
    let top1 = b.sample(x, k, SampleAttrs { top_k: 1, index_dtype: DType::I64, ..Default::default() }).unwrap();
    let top2 = b.sample(x, k, SampleAttrs { top_k: 2, seed: 5, ..Default::default() }).unwrap();
    for v in [greedy, top1, top2] {
        b.output(v).unwrap();
    }
    let mut exe = compile(b);
    for kk in 0..50u32 {
        let out = run(&mut exe, &[("x", &logits), ("key", &key_tensor(kk, 1))]);
        assert_eq!(out[0].to_vec::<i32>().unwrap(), [1, 3, 0]);
        assert_eq!(out[1].to_vec::<i64>().unwrap(), [1, 3, 0]);
        let t2 = out[2].to_vec::<i32>().unwrap();
        assert!(t2[0] == 1 || t2[0] == 3);
        assert!(t2[1] == 2 || t2[1] == 3);
        assert!(t2[2] == 0 || t2[2] == 1);
    }
}
