//! Tests of the random ops: the known answers of §1.9, the stream positions each op consumes,
//! and the Sample pipeline (greedy, temperature, top-k, top-p, draw).

use super::*;
use backend_api::philox::{stream_word, uniform};
use backend_api::Shape;
use half::{bf16, f16};

const W00: [u32; 8] = [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8, 0xf8e4cca4, 0x5cb200db, 0xb1a574eb, 0x097eff67];
const W12: [u32; 8] = [0x4236452e, 0xd5af937b, 0xe196fd49, 0x1dd16593, 0xbe4d29c6, 0x1b06ef7b, 0x795632f1, 0x7e50bf3f];
const U00: [f64; 4] = [0.399046421, 0.880520165, 0.735712767, 0.605481803];
const U12: [f64; 4] = [0.258640587, 0.834710300, 0.881210148, 0.116476357];
const N00: [f64; 8] = [0.9911375, -0.9246628, -0.6176091, -0.4820683, -0.1536381, 0.1808259, 0.8317351, 0.1974396];
const N12: [f64; 8] = [0.8345794, -1.4170774, 0.3741369, 0.3360651, 0.6068326, 0.4742263, -1.2209278, 0.0505092];

fn key(lo: u32, hi: u32) -> Tensor {
    Tensor::from_slice(&[2], &[lo, hi]).unwrap()
}

fn bits(k: &Tensor, dims: &[usize], seed: u64) -> Vec<u32> {
    let a = RngBitsAttrs { shape: Shape::from(dims.to_vec()), seed };
    let t = rng_bits(k, &a, &Bindings::default()).unwrap();
    assert_eq!(t.shape(), dims);
    t.to_vec::<u32>().unwrap()
}

fn unif(k: &Tensor, n: usize, dtype: DType, low: f64, high: f64, seed: u64) -> Tensor {
    let a = RngUniformAttrs { shape: Shape::from(vec![n]), dtype, low, high, seed };
    rng_uniform(k, &a, &Bindings::default()).unwrap()
}

fn normal(k: &Tensor, dims: &[usize], dtype: DType, mean: f64, std: f64, seed: u64) -> Tensor {
    let a = RngNormalAttrs { shape: Shape::from(dims.to_vec()), dtype, mean, std, seed };
    rng_normal(k, &a, &Bindings::default()).unwrap()
}

#[test]
fn rng_bits_known_answers() {
    assert_eq!(bits(&key(0, 0), &[8], 0), W00);
    assert_eq!(bits(&key(1, 2), &[2, 4], 3), W12);
    assert_eq!(bits(&key(1, 2), &[3], 3), W12[..3]);
    assert_eq!(bits(&key(0, 0), &[], 0), [W00[0]]);
    assert!(bits(&key(0, 0), &[4, 0], 0).is_empty());
    // Philox(0, 0) with key (0, 0) is the first known answer of §1.9 directly.
    assert_eq!(block([0, 0], 0, 0), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
}

#[test]
fn block_counter_uses_all_64_bits_of_position_and_seed() {
    let seed = 3 | (7u64 << 32);
    let k = [0xdead_beef, 0x0123_4567];
    for b in [0u64, 1, (1 << 32) + 5, u64::MAX / 4] {
        let blk = block(k, seed, b);
        for (i, &w) in blk.iter().enumerate() {
            assert_eq!(w, stream_word(k, seed, 4 * b + i as u64));
        }
    }
    // A seed differing only in its high word gives another stream.
    assert_ne!(bits(&key(1, 2), &[4], 3), bits(&key(1, 2), &[4], seed));
}

#[test]
fn key_must_be_u32_pair() {
    let a = RngBitsAttrs { shape: Shape::from(vec![2]), seed: 0 };
    let b = Bindings::default();
    let kind = |t: Tensor| rng_bits(&t, &a, &b).unwrap_err().kind();
    assert_eq!(kind(Tensor::from_slice(&[3], &[0u32, 0, 0]).unwrap()), backend_api::ErrorKind::Shape);
    assert_eq!(kind(Tensor::from_slice(&[2], &[0i32, 0]).unwrap()), backend_api::ErrorKind::DType);
}

#[test]
fn uniform_reference_values_every_dtype() {
    for (k, seed, u) in [(key(0, 0), 0, U00), (key(1, 2), 3, U12)] {
        let v64 = unif(&k, 4, DType::F64, 0.0, 1.0, seed).to_vec::<f64>().unwrap();
        let v32 = unif(&k, 4, DType::F32, 0.0, 1.0, seed).to_vec::<f32>().unwrap();
        let v16 = unif(&k, 4, DType::F16, 0.0, 1.0, seed).to_vec::<f16>().unwrap();
        let vb = unif(&k, 4, DType::BF16, 0.0, 1.0, seed).to_vec::<bf16>().unwrap();
        for e in 0..4 {
            assert!((v64[e] - u[e]).abs() < 1e-9, "{e}: {} vs {}", v64[e], u[e]);
            // Exact multiples of 2^-24, equal in F32 and F64.
            assert_eq!(v64[e], v32[e] as f64);
            assert_eq!((v64[e] * 16_777_216.0).fract(), 0.0);
            assert_eq!(v16[e], f16::from_f32(v32[e]));
            assert_eq!(vb[e], bf16::from_f32(v32[e]));
        }
    }
}

#[test]
fn uniform_bounds_are_applied_in_the_output_precision() {
    let k = key(0, 0);
    let v = unif(&k, 4, DType::F64, -2.0, 3.0, 0).to_vec::<f64>().unwrap();
    for e in 0..4 {
        assert_eq!(v[e], -2.0 + 5.0 * unit(W00[e]));
    }
    let v = unif(&k, 4, DType::F32, 0.1, 0.7, 0).to_vec::<f32>().unwrap();
    for e in 0..4 {
        let (lo, hi) = (0.1f32, 0.7f32);
        assert_eq!(v[e], lo + (hi - lo) * unit(W00[e]) as f32);
        assert!((0.1..0.7).contains(&v[e]));
    }
    let v = unif(&k, 5, DType::BF16, 1.5, 1.5, 0).to_vec::<bf16>().unwrap();
    assert!(v.iter().all(|&x| x == bf16::from_f32(1.5)));
    assert_eq!(unif(&k, 0, DType::F32, 0.0, 1.0, 0).numel(), 0);
}

#[test]
fn normal_reference_values() {
    for (k, seed, want) in [(key(0, 0), 0, N00), (key(1, 2), 3, N12)] {
        let v64 = normal(&k, &[8], DType::F64, 0.0, 1.0, seed).to_vec::<f64>().unwrap();
        let v32 = normal(&k, &[2, 4], DType::F32, 0.0, 1.0, seed).to_vec::<f32>().unwrap();
        for e in 0..8 {
            assert!((v64[e] - want[e]).abs() < 1e-6, "F64 {e}: {} vs {}", v64[e], want[e]);
            assert!((v32[e] as f64 - want[e]).abs() < 2e-6, "F32 {e}: {} vs {}", v32[e], want[e]);
        }
    }
}

#[test]
fn normal_pairs_positions_and_precisions() {
    let k = key(1, 2);
    // Element e uses words 2⌊e/2⌋ and 2⌊e/2⌋ + 1: cosine for even e, sine for odd e.
    let v64 = normal(&k, &[8], DType::F64, 0.0, 1.0, 3).to_vec::<f64>().unwrap();
    let v32 = normal(&k, &[8], DType::F32, 0.0, 1.0, 3).to_vec::<f32>().unwrap();
    for e in 0..8 {
        let p = e & !1;
        assert_eq!(v64[e], box_muller_f64(W12[p], W12[p + 1], e % 2 == 1));
        assert_eq!(v32[e], box_muller_f32(W12[p], W12[p + 1], e % 2 == 1));
    }
    // Odd lengths are prefixes of longer outputs; F16/BF16 round the f32 value.
    for n in [1usize, 3, 5, 7] {
        let v = normal(&k, &[n], DType::F32, 0.0, 1.0, 3).to_vec::<f32>().unwrap();
        assert_eq!(v, v32[..n]);
    }
    let h = normal(&k, &[8], DType::F16, 0.0, 1.0, 3).to_vec::<f16>().unwrap();
    let b = normal(&k, &[8], DType::BF16, 0.0, 1.0, 3).to_vec::<bf16>().unwrap();
    for e in 0..8 {
        assert_eq!(h[e], f16::from_f32(v32[e]));
        assert_eq!(b[e], bf16::from_f32(v32[e]));
    }
    // mean + std·z, in f32 for F32 and in f64 for F64; std = 0 gives the mean.
    let m = normal(&k, &[8], DType::F32, 1.5, 2.0, 3).to_vec::<f32>().unwrap();
    let m64 = normal(&k, &[8], DType::F64, 1.5, 2.0, 3).to_vec::<f64>().unwrap();
    for e in 0..8 {
        assert_eq!(m[e], 1.5 + 2.0 * v32[e]);
        assert_eq!(m64[e], 1.5 + 2.0 * v64[e]);
    }
    let z = normal(&k, &[6], DType::F32, -0.25, 0.0, 3).to_vec::<f32>().unwrap();
    assert!(z.iter().all(|&x| x == -0.25));
}

#[test]
fn box_muller_extremes_are_finite() {
    // w0 >> 8 = 0 gives the smallest u1 = 2^-24 (largest radius); all ones gives u1 = 1, r = 0.
    let r = box_muller_f64(0, 0, false);
    assert!((r - (48.0 * std::f64::consts::LN_2).sqrt()).abs() < 1e-12);
    assert!(box_muller_f32(0, 0, false).is_finite());
    assert_eq!(box_muller_f64(u32::MAX, 12345, true), 0.0);
    assert_eq!(box_muller_f32(u32::MAX, 12345, false), 0.0);
}

fn sa(temperature: f32, top_k: u32, top_p: f32, seed: u64) -> SampleAttrs {
    SampleAttrs { temperature, top_k, top_p, seed, index_dtype: DType::I32 }
}

fn run_sample(rows: &[Vec<f32>], k: &Tensor, a: &SampleAttrs) -> Vec<i32> {
    let v = rows[0].len();
    let flat: Vec<f32> = rows.iter().flatten().copied().collect();
    let x = Tensor::from_slice(&[rows.len(), v], &flat).unwrap();
    let y = sample(&x, k, a).unwrap();
    assert_eq!(y.shape(), &[rows.len()]);
    y.to_vec::<i32>().unwrap()
}

#[test]
fn greedy_takes_the_first_maximum_and_uses_no_randomness() {
    let inf = f32::INFINITY;
    let rows = vec![
        vec![1.0, 3.0, 3.0, -1.0],
        vec![-inf, -inf, -inf, -inf],
        vec![f32::NAN, -inf, -5.0, f32::NAN],
        vec![0.0, inf, 2.0, inf],
    ];
    for kk in 0..5 {
        assert_eq!(run_sample(&rows, &key(kk, 9), &sa(0.0, 0, 1.0, kk as u64)), [1, 0, 2, 1]);
    }
    // Greedy ignores top-k / top-p.
    assert_eq!(run_sample(&rows, &key(0, 0), &sa(0.0, 1, 0.1, 0)), [1, 0, 2, 1]);
}

#[test]
fn temperature_draw_is_the_inverse_cdf_over_index_order() {
    // p = [0.25, 0.75] exactly in f32 (logits 0 and ln 3 at temperature 1 round close to it), so
    // row r returns 0 iff its running sum p0 exceeds u(r)·T.
    let k = [5u32, 6];
    let rows: Vec<Vec<f32>> = (0..400).map(|_| vec![0.0, 3f32.ln()]).collect();
    let got = run_sample(&rows, &key(k[0], k[1]), &sa(1.0, 0, 1.0, 11));
    let p = probabilities(&rows[0], 1.0).unwrap();
    let t = p[0] + p[1];
    let mut zeros = 0;
    for (r, &g) in got.iter().enumerate() {
        let u = uniform(k, 11, r as u64) as f32;
        assert_eq!(g, if p[0] > u * t { 0 } else { 1 }, "row {r}");
        zeros += (g == 0) as usize;
    }
    assert!((60..140).contains(&zeros), "{zeros} zeros out of 400");
    // Temperature 0.5 doubles the logits: p0 = 1/(1 + 9) = 0.1.
    let got = run_sample(&rows, &key(k[0], k[1]), &sa(0.5, 0, 1.0, 11));
    let p = probabilities(&rows[0], 0.5).unwrap();
    assert!((p[0] - 0.1).abs() < 1e-6);
    for (r, &g) in got.iter().enumerate() {
        let u = uniform(k, 11, r as u64) as f32;
        assert_eq!(g, if p[0] > u * (p[0] + p[1]) { 0 } else { 1 }, "row {r}");
    }
}

#[test]
fn huge_temperature_ratio_and_infinite_logits() {
    // x / temperature overflowing to +∞ (or a +∞ logit) shares the mass among the +∞ entries.
    let inf = f32::INFINITY;
    let p = probabilities(&[3e38, 0.0, 3e38, -inf], 1e-3).unwrap();
    assert_eq!(p, [0.5, 0.0, 0.5, 0.0]);
    let rows: Vec<Vec<f32>> = (0..200).map(|_| vec![inf, 0.0, inf, 1.0]).collect();
    let got = run_sample(&rows, &key(3, 4), &sa(1.0, 0, 1.0, 0));
    assert!(got.iter().all(|&g| g == 0 || g == 2));
    assert!(got.contains(&0) && got.contains(&2));
    // Every logit −∞ (or NaN) returns 0 without drawing.
    let rows = vec![vec![-inf, f32::NAN, -inf]];
    assert_eq!(run_sample(&rows, &key(3, 4), &sa(0.7, 0, 1.0, 0)), [0]);
}

#[test]
fn top_k_keeps_exactly_k_with_ties_to_smaller_index() {
    let rows: Vec<Vec<f32>> = (0..300).map(|_| vec![1.0, 2.0, 3.0, 4.0]).collect();
    let got = run_sample(&rows, &key(7, 7), &sa(1.0, 2, 1.0, 1));
    assert!(got.iter().all(|&g| g == 2 || g == 3));
    assert!(got.contains(&2) && got.contains(&3));
    let p = probabilities(&rows[0], 1.0).unwrap();
    for (r, &g) in got.iter().enumerate() {
        let u = uniform([7, 7], 1, r as u64) as f32;
        assert_eq!(g, if p[2] > u * (p[2] + p[3]) { 2 } else { 3 });
    }
    // Equal probabilities: top_k = 2 keeps indices 0 and 1.
    let rows: Vec<Vec<f32>> = (0..100).map(|_| vec![1.0; 4]).collect();
    let got = run_sample(&rows, &key(7, 7), &sa(1.0, 2, 1.0, 1));
    assert!(got.iter().all(|&g| g == 0 || g == 1) && got.contains(&0) && got.contains(&1));
    // top_k ≥ V keeps everything.
    assert_eq!(kept(&[0.25, 0.75], 2, 1.0), [true, true]);
    assert_eq!(kept(&[0.25, 0.75], 9, 1.0), [true, true]);
}

#[test]
fn top_p_keeps_the_shortest_prefix_renormalised_over_top_k() {
    let p = [0.1f32, 0.2, 0.3, 0.4];
    assert_eq!(kept(&p, 0, 0.5), [false, false, true, true]);
    assert_eq!(kept(&p, 0, 0.35), [false, false, false, true]);
    assert_eq!(kept(&p, 0, 1e-6), [false, false, false, true]);
    assert_eq!(kept(&p, 0, 0.85), [false, true, true, true]);
    assert_eq!(kept(&p, 0, 0.95), [true; 4]);
    // Over the top-3 set (K = 0.9): 0.75·K = 0.675 needs {3, 2}; 0.8·K = 0.72 needs {3, 2, 1}.
    assert_eq!(kept(&p, 3, 0.75), [false, false, true, true]);
    assert_eq!(kept(&p, 3, 0.8), [false, true, true, true]);
    let logits: Vec<f32> = p.iter().map(|v| v.ln()).collect();
    let rows: Vec<Vec<f32>> = (0..300).map(|_| logits.clone()).collect();
    let got = run_sample(&rows, &key(1, 1), &sa(1.0, 0, 0.5, 2));
    assert!(got.iter().all(|&g| g == 2 || g == 3) && got.contains(&2) && got.contains(&3));
    let got = run_sample(&rows, &key(1, 1), &sa(1.0, 0, 0.35, 2));
    assert!(got.iter().all(|&g| g == 3));
}

#[test]
fn draw_never_returns_a_zero_probability_token() {
    let p = [0.0f32, 0.5, 0.0, 0.5, 0.0];
    let keep = [true; 5];
    for u in [0.0f32, 0.25, 0.5, 0.75, 1.0 - f32::EPSILON / 2.0] {
        let i = draw(&p, &keep, u);
        assert!(i == 1 || i == 3, "u {u} gave {i}");
    }
    // u·T rounding up to T falls back to the largest kept index with p > 0.
    assert_eq!(draw(&p, &keep, 1.0), 3);
    assert_eq!(draw(&p, &[true, true, false, false, true], 1.0), 1);
}

/// An independent f64 model of steps 2–5 (sorting, top-k, top-p) for well-separated
/// probabilities; `None` when the top-p cut is too close to call.
fn model_kept(x: &[f32], temp: f64, top_k: usize, top_p: f64) -> Option<Vec<usize>> {
    let z: Vec<f64> = x.iter().map(|&v| v as f64 / temp).collect();
    let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e: Vec<f64> = z.iter().map(|v| (v - m).exp()).collect();
    let s: f64 = e.iter().sum();
    let mut order: Vec<usize> = (0..x.len()).collect();
    order.sort_by(|&i, &j| e[j].partial_cmp(&e[i]).unwrap());
    let len = if top_k > 0 && top_k < x.len() { top_k } else { x.len() };
    if top_p >= 1.0 {
        return Some(order[..len].to_vec());
    }
    let k: f64 = order[..len].iter().map(|&i| e[i] / s).sum();
    let mut run = 0.0;
    for (c, &i) in order[..len].iter().enumerate() {
        run += e[i] / s;
        if (run - top_p * k).abs() < 1e-4 {
            return None;
        }
        if run >= top_p * k {
            return Some(order[..c + 1].to_vec());
        }
    }
    Some(order[..len].to_vec())
}

#[test]
fn never_emits_a_filtered_token_over_many_keys() {
    // Rows are permutations of well-separated logits; settings sweep top-k and top-p.
    let v = 7;
    let rows: Vec<Vec<f32>> =
        (0..16).map(|r| (0..v).map(|i| (((i * 3 + r * 5) % v) as f32) * 0.6 - 1.0).collect()).collect();
    let settings = [(1.0, 0, 0.6), (0.8, 3, 1.0), (1.3, 4, 0.7), (1.0, 2, 0.9), (0.5, 0, 0.3)];
    for (temp, top_k, top_p) in settings {
        let allowed: Vec<Option<Vec<usize>>> = rows.iter().map(|x| model_kept(x, temp, top_k, top_p)).collect();
        let mut seen = vec![vec![false; v]; rows.len()];
        for kk in 0..200u32 {
            let a = sa(temp as f32, top_k as u32, top_p as f32, kk as u64 % 3);
            let got = run_sample(&rows, &key(kk, kk.wrapping_mul(2654435761)), &a);
            for (r, &g) in got.iter().enumerate() {
                seen[r][g as usize] = true;
                if let Some(ok) = &allowed[r] {
                    assert!(ok.contains(&(g as usize)), "row {r} drew {g}, allowed {ok:?} ({temp}, {top_k}, {top_p})");
                }
            }
        }
        // Every allowed token of reasonable probability shows up (sanity of the draw).
        for (r, ok) in allowed.iter().enumerate() {
            if let Some(ok) = ok {
                assert!(seen[r][ok[0]], "row {r}: the most probable token was never drawn");
            }
        }
    }
}

#[test]
fn sample_shapes_dtypes_and_row_independence() {
    let k = key(2, 3);
    // Rank-1 logits give a scalar; V = 1 gives 0; I64 output.
    let x = Tensor::from_slice(&[3], &[0.5f32, 0.1, 0.2]).unwrap();
    let a = SampleAttrs { index_dtype: DType::I64, ..sa(1.0, 0, 1.0, 0) };
    let y = sample(&x, &k, &a).unwrap();
    assert_eq!(y.shape(), &[] as &[usize]);
    assert_eq!(y.dtype(), DType::I64);
    let one = Tensor::from_slice(&[2, 2, 1], &[5.0f32, -1.0, 0.0, 3.0]).unwrap();
    assert_eq!(sample(&one, &k, &a).unwrap().to_vec::<i64>().unwrap(), [0, 0, 0, 0]);
    // F16 and BF16 logits behave as their exact f32 values.
    let vals = [0.5f32, -1.0, 2.0, 0.25, 1.0, 0.0];
    let f = Tensor::from_slice(&[2, 3], &vals).unwrap();
    let h = Tensor::from_slice(&[2, 3], &vals.map(f16::from_f32)).unwrap();
    let b = Tensor::from_slice(&[2, 3], &vals.map(bf16::from_f32)).unwrap();
    let want = sample(&f, &k, &a).unwrap();
    assert_eq!(sample(&h, &k, &a).unwrap(), want);
    assert_eq!(sample(&b, &k, &a).unwrap(), want);
    // Changing row 0 does not change row 1; a run is deterministic.
    let mut other = vals;
    other[0] = 9.0;
    let y2 = sample(&Tensor::from_slice(&[2, 3], &other).unwrap(), &k, &a).unwrap();
    assert_eq!(y2.to_vec::<i64>().unwrap()[1], want.to_vec::<i64>().unwrap()[1]);
    assert_eq!(sample(&f, &k, &a).unwrap(), want);
    // Errors: F64 logits, scalar logits, empty vocabulary.
    assert!(sample(&Tensor::from_slice(&[1], &[0.0f64]).unwrap(), &k, &a).is_err());
    assert!(sample(&Tensor::scalar(0.0f32), &k, &a).is_err());
    assert!(sample(&Tensor::from_slice::<f32>(&[2, 0], &[]).unwrap(), &k, &a).is_err());
}
