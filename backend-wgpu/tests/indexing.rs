//! Indexing family (Gather, ScatterAdd, GatherBackward) on the wgpu backend against `cpu-ref`,
//! for every dtype the op allows × every index dtype the adapter supports. Indices mix in-range,
//! negative, out-of-range and huge values (beyond 2^24 and 2^32) and collide (many updates to one
//! row). Gather data are random bits (raw copies must keep NaN payloads and every byte); scatter
//! data are small integers, so every float sum is exact in any order and the comparison is
//! exact. Every case of one (op, dtype, index dtype) goes into one graph to keep compiles few.

use backend_api::{Backend, DType, Graph, GraphBuilder, Shape, Tensor, Value};
use backend_cpu_ref as _;
use backend_wgpu::{WgpuBackend, WgpuOptions};
use std::sync::OnceLock;

fn gpu() -> &'static WgpuBackend {
    static BE: OnceLock<WgpuBackend> = OnceLock::new();
    BE.get_or_init(|| WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter (install mesa-vulkan-drivers)"))
}

fn cpu() -> &'static dyn Backend {
    static BE: OnceLock<Box<dyn Backend>> = OnceLock::new();
    BE.get_or_init(|| backend_api::create("cpu-ref").expect("cpu-ref is linked")).as_ref()
}

const INDEX: [DType; 3] = [DType::I32, DType::I64, DType::U32];
const FLOATS: [DType; 4] = [DType::F32, DType::F16, DType::BF16, DType::F64];

/// xorshift state.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

/// Random bits of `d` (Bool: 0/1 bytes, the only values ops write).
fn random_bits(d: DType, shape: &[usize], rng: &mut Rng) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * d.size();
    let bytes = (0..n)
        .map(|_| if d == DType::Bool { (rng.next() >> 40) as u8 & 1 } else { (rng.next() >> 24) as u8 })
        .collect();
    Tensor::from_bytes(d, shape, bytes).unwrap()
}

/// The bytes of small integer `v` as an element of `d` (C64: `v + (1 - v)i`).
fn encode(d: DType, v: i64) -> Vec<u8> {
    match d {
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => (v as f64).to_le_bytes().to_vec(),
        DType::F16 => half::f16::from_f32(v as f32).to_le_bytes().to_vec(),
        DType::BF16 => half::bf16::from_f32(v as f32).to_le_bytes().to_vec(),
        DType::C64 => [(v as f32).to_le_bytes(), ((1 - v) as f32).to_le_bytes()].concat(),
        DType::I64 => v.to_le_bytes().to_vec(),
        DType::I32 | DType::U32 => (v as i32).to_le_bytes().to_vec(),
        DType::I8 | DType::U8 | DType::Bool => vec![v as u8],
    }
}

/// Small-integer values in [-3, 3] for floats (sums of a few hundred stay exact in BF16), random
/// bits for integers (sums wrap identically in any order).
fn scatter_values(d: DType, shape: &[usize], rng: &mut Rng) -> Tensor {
    if matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::F64 | DType::C64) {
        let n: usize = shape.iter().product();
        let bytes = (0..n).flat_map(|_| encode(d, rng.range(-3, 3))).collect();
        Tensor::from_bytes(d, shape, bytes).unwrap()
    } else {
        random_bits(d, shape, rng)
    }
}

/// How the indices of a case are drawn.
#[derive(Clone, Copy)]
enum Pick {
    /// In `[-a, a)` with some out-of-range and huge values mixed in.
    Mixed,
    /// All the same row (given as a negative index where the dtype allows), a few misses.
    Collide,
}

/// Huge and boundary values of index dtype `d` for an axis of size `a`.
fn specials(d: DType, a: i64) -> Vec<i64> {
    let mut s = vec![a, a + 1, (1 << 24) + 1, -a - 1];
    match d {
        DType::I32 => s.extend([i32::MIN as i64, i32::MAX as i64]),
        DType::I64 => s.extend([i64::MIN, i64::MAX, 1 << 32, (1 << 32) + 1, -(1 << 32), -(1 << 32) + 1, (1 << 33) - 1]),
        _ => s.extend([u32::MAX as i64, 1 << 31]),
    }
    s
}

fn indices(d: DType, shape: &[usize], a: usize, pick: Pick, rng: &mut Rng) -> Tensor {
    let n: usize = shape.iter().product();
    let a = a as i64;
    let sp = specials(d, a);
    let vals: Vec<i64> = (0..n)
        .map(|k| match pick {
            _ if a == 0 || rng.next().is_multiple_of(5) => sp[k % sp.len()],
            Pick::Mixed => rng.range(-a, a - 1),
            Pick::Collide if k % 7 == 3 => -a,
            Pick::Collide if d == DType::U32 => a / 2,
            Pick::Collide => a / 2 - a,
        })
        .collect();
    let bytes = vals
        .iter()
        .flat_map(|&v| match d {
            DType::I64 => v.to_le_bytes().to_vec(),
            // U32 sees negative values as their wrapped (huge) bit patterns: out of range.
            _ => (v as u32).to_le_bytes().to_vec(),
        })
        .collect();
    Tensor::from_bytes(d, shape, bytes).unwrap()
}

/// One node under test: data shape, axis, indices shape, how indices are picked.
struct Case {
    data: Vec<usize>,
    axis: usize,
    idx: Vec<usize>,
    pick: Pick,
}

fn case(data: &[usize], axis: usize, idx: &[usize], pick: Pick) -> Case {
    Case { data: data.to_vec(), axis, idx: idx.to_vec(), pick }
}

impl Case {
    fn gathered(&self) -> Vec<usize> {
        let mut s = self.data[..self.axis].to_vec();
        s.extend(&self.idx);
        s.extend(&self.data[self.axis + 1..]);
        s
    }
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Which {
    Gather,
    ScatterAdd,
    GatherBackward,
}

fn cases() -> Vec<Case> {
    use Pick::*;
    vec![
        case(&[257], 0, &[70], Mixed),
        case(&[3, 65], 1, &[], Mixed),
        case(&[2, 63, 4], 1, &[2, 3], Mixed),
        case(&[64, 5], 0, &[300], Mixed),
        case(&[5, 3], 0, &[255], Collide),
        case(&[2, 6, 3], 1, &[65], Collide),
        case(&[0, 3], 0, &[4], Mixed),
        case(&[4, 0], 0, &[3], Mixed),
        case(&[5, 2], 0, &[0], Mixed),
        case(&[2, 3, 1], 2, &[1, 256], Mixed),
    ]
}

fn run(be: &dyn Backend, g: &Graph, feeds: &[(String, Tensor)]) -> Vec<Tensor> {
    let mut exe = be.compile(g, &Default::default()).unwrap_or_else(|e| panic!("{} compile: {e}", be.name()));
    let inputs: Vec<(&str, backend_api::TensorView<'_>)> = feeds.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&inputs).unwrap_or_else(|e| panic!("{} run: {e}", be.name()))
}

/// Builds every case of `which` for data dtype `d` and index dtype `id`; checks wgpu == cpu-ref.
fn check(which: Which, d: DType, id: DType, cases: &[Case]) {
    let mut rng = Rng::new(d.size() as u64 * 7 + id.size() as u64 + which as u64 * 131);
    let mut g = GraphBuilder::new();
    let mut feeds = Vec::new();
    // Every input is declared before any node (the planner expects non-decreasing definitions).
    let mut ins: Vec<Vec<Value>> = Vec::new();
    for (ci, c) in cases.iter().enumerate() {
        let mut add = |name: &str, t: Tensor, g: &mut GraphBuilder| {
            let name = format!("c{ci}_{name}");
            let v = g.input(&name, t.dtype(), Shape::of(t.shape())).unwrap();
            feeds.push((name, t));
            v
        };
        let a = c.data[c.axis];
        let xs = match which {
            Which::Gather => vec![add("x", random_bits(d, &c.data, &mut rng), &mut g)],
            Which::ScatterAdd => vec![add("x", scatter_values(d, &c.data, &mut rng), &mut g)],
            Which::GatherBackward => vec![],
        };
        let mut xs = xs;
        xs.push(add("i", indices(id, &c.idx, a, c.pick, &mut rng), &mut g));
        if which != Which::Gather {
            xs.push(add("u", scatter_values(d, &c.gathered(), &mut rng), &mut g));
        }
        ins.push(xs);
    }
    for (c, xs) in cases.iter().zip(&ins) {
        let ax = c.axis as i64;
        let y = match which {
            Which::Gather => g.gather(xs[0], xs[1], ax),
            Which::ScatterAdd => g.scatter_add(xs[0], xs[1], xs[2], ax),
            Which::GatherBackward => g.gather_backward(xs[1], xs[0], ax, Shape::of(&c.data)),
        };
        g.output(y.unwrap_or_else(|e| panic!("{which:?} {d:?}/{id:?} {:?}: build: {e}", c.data))).unwrap();
    }
    let graph = g.build().unwrap();
    let want = run(cpu(), &graph, &feeds);
    let got = run(gpu(), &graph, &feeds);
    for ((c, w), o) in cases.iter().zip(&want).zip(&got) {
        let what = format!("{which:?} {d:?} indices {id:?} data {:?} axis {} idx {:?}", c.data, c.axis, c.idx);
        assert_eq!((o.dtype(), o.shape()), (w.dtype(), w.shape()), "{what}");
        let sz = d.size();
        let bad = (0..w.numel()).find(|&i| {
            let (a, b) = (&o.bytes()[i * sz..(i + 1) * sz], &w.bytes()[i * sz..(i + 1) * sz]);
            // Scatter outputs are exact integers: only the sign of a zero may differ.
            a != b
                && !(which != Which::Gather
                    && backend_api::element_to_f64(d, a) == backend_api::element_to_f64(d, b)
                    && d != DType::C64)
        });
        if let Some(i) = bad {
            panic!(
                "{what}: element {i}: got {:02x?}, want {:02x?}",
                &o.bytes()[i * sz..(i + 1) * sz],
                &w.bytes()[i * sz..(i + 1) * sz]
            );
        }
    }
}

fn each(which: Which, dtypes: &[DType]) {
    let caps = gpu().device_caps();
    for &d in dtypes {
        for &id in &INDEX {
            if !caps.supports(d) || !caps.supports(id) {
                eprintln!("{which:?}: skipping {d:?}/{id:?} (not supported by {})", caps.description);
                continue;
            }
            check(which, d, id, &cases());
            eprintln!("{which:?} {d:?} indices {id:?}: ok");
        }
    }
}

#[test]
fn gather_every_dtype() {
    each(Which::Gather, &DType::ALL);
}

#[test]
fn scatter_add_every_dtype() {
    let dtypes: Vec<DType> = DType::ALL.iter().copied().filter(|&d| d != DType::Bool).collect();
    each(Which::ScatterAdd, &dtypes);
}

#[test]
fn gather_backward_every_float() {
    each(Which::GatherBackward, &FLOATS);
}

/// An axis longer than 2^24: indices near its end must resolve exactly (no f32 on the way).
#[test]
fn indices_beyond_2_pow_24() {
    let a = (1usize << 24) + 5;
    let big = [a as i64 - 2, (1 << 24) + 1, -1, -(a as i64), (1 << 24) + 3, a as i64, (1 << 24) - 1];
    for &id in &INDEX {
        if !gpu().device_caps().supports(id) {
            continue;
        }
        let mut rng = Rng::new(99);
        let data = random_bits(DType::U8, &[a], &mut rng);
        let vals: Vec<i64> = big.iter().map(|&v| if id == DType::U32 && v < 0 { v + a as i64 } else { v }).collect();
        let bytes = vals
            .iter()
            .flat_map(|&v| if id == DType::I64 { v.to_le_bytes().to_vec() } else { (v as u32).to_le_bytes().to_vec() })
            .collect();
        let idx = Tensor::from_bytes(id, &[vals.len()], bytes).unwrap();
        let upd = random_bits(DType::U8, &[vals.len()], &mut rng);
        let mut g = GraphBuilder::new();
        let x = g.input("x", DType::U8, Shape::of(&[a])).unwrap();
        let i = g.input("i", id, Shape::of(&[vals.len()])).unwrap();
        let u = g.input("u", DType::U8, Shape::of(&[vals.len()])).unwrap();
        let y = g.gather(x, i, 0).unwrap();
        g.output(y).unwrap();
        let z = g.scatter_add(x, i, u, 0).unwrap();
        g.output(z).unwrap();
        let graph = g.build().unwrap();
        let feeds = vec![("x".to_string(), data), ("i".to_string(), idx), ("u".to_string(), upd)];
        let want = run(cpu(), &graph, &feeds);
        let got = run(gpu(), &graph, &feeds);
        assert_eq!(got[0].bytes(), want[0].bytes(), "Gather U8 [{a}] indices {id:?}");
        assert!(got[1].bytes() == want[1].bytes(), "ScatterAdd U8 [{a}] indices {id:?}");
    }
}
