//! Movement family (Transpose, Narrow, Concat, Expand, Reverse, Pad) on the wgpu backend against
//! `cpu-ref`, bit for bit, for every dtype the adapter supports. Inputs are random bits (NaNs with
//! payloads, subnormals, every byte value), so a copy that converts values anywhere shows up.
//! Every op's cases go into one graph per dtype (one output per case) to keep compiles few.

use backend_api::op::PadMode;
use backend_api::{Backend, DType, Graph, GraphBuilder, Result, Shape, Tensor, Value};
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

type Build = Box<dyn Fn(&mut GraphBuilder, &[Value]) -> Result<Value>>;

/// One node under test: input shapes and how to build it.
struct Case {
    name: String,
    shapes: Vec<Vec<usize>>,
    build: Build,
}

fn case(
    name: &str,
    shapes: &[&[usize]],
    build: impl Fn(&mut GraphBuilder, &[Value]) -> Result<Value> + 'static,
) -> Case {
    Case { name: name.to_string(), shapes: shapes.iter().map(|s| s.to_vec()).collect(), build: Box::new(build) }
}

/// Deterministic random bits; Bool gets 0/1 bytes (the only values ops write).
fn random(d: DType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * d.size();
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let bytes = (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let b = (s >> 24) as u8;
            if d == DType::Bool {
                b & 1
            } else {
                b
            }
        })
        .collect();
    Tensor::from_bytes(d, shape, bytes).unwrap()
}

fn run(be: &dyn Backend, g: &Graph, feeds: &[(String, Tensor)]) -> Vec<Tensor> {
    let mut exe = be.compile(g, &Default::default()).unwrap_or_else(|e| panic!("{} compile: {e}", be.name()));
    let inputs: Vec<(&str, backend_api::TensorView<'_>)> = feeds.iter().map(|(n, t)| (n.as_str(), t.view())).collect();
    exe.run(&inputs).unwrap_or_else(|e| panic!("{} run: {e}", be.name()))
}

/// Builds every case for every supported dtype and compares wgpu with cpu-ref bit for bit.
fn check(op: &str, cases: &[Case]) {
    let caps = gpu().device_caps();
    for &d in &DType::ALL {
        if !caps.supports(d) {
            eprintln!("{op}: skipping {d:?} (not supported by {})", caps.description);
            continue;
        }
        let mut g = GraphBuilder::new();
        let mut feeds = Vec::new();
        // Every input is declared before any node: the planner places requests in order and
        // assumes their definition steps never decrease (see the report on plan::assign).
        let mut ins: Vec<Vec<Value>> = Vec::new();
        for (ci, c) in cases.iter().enumerate() {
            let mut xs = Vec::new();
            for (k, s) in c.shapes.iter().enumerate() {
                let name = format!("c{ci}_{k}");
                feeds.push((name.clone(), random(d, s, (ci * 31 + k + 1) as u64)));
                xs.push(g.input(&name, d, Shape::of(s)).unwrap());
            }
            ins.push(xs);
        }
        for (c, xs) in cases.iter().zip(&ins) {
            let y = (c.build)(&mut g, xs).unwrap_or_else(|e| panic!("{op} {}: build: {e}", c.name));
            g.output(y).unwrap();
        }
        let graph = g.build().unwrap();
        let want = run(cpu(), &graph, &feeds);
        let got = run(gpu(), &graph, &feeds);
        for ((c, w), o) in cases.iter().zip(&want).zip(&got) {
            let what = format!("{op} {} {d:?}", c.name);
            assert_eq!((o.dtype(), o.shape()), (w.dtype(), w.shape()), "{what}");
            if o.bytes() != w.bytes() {
                let sz = d.size();
                let i = (0..w.numel()).find(|&i| o.bytes()[i * sz..(i + 1) * sz] != w.bytes()[i * sz..(i + 1) * sz]);
                let i = i.unwrap_or(0);
                panic!(
                    "{what}: element {i} of {:?}: got {:02x?}, want {:02x?}",
                    w.shape(),
                    &o.bytes()[i * sz..(i + 1) * sz],
                    &w.bytes()[i * sz..(i + 1) * sz]
                );
            }
        }
        eprintln!("{op} {d:?}: {} cases ok", cases.len());
    }
}

#[test]
fn transpose_every_dtype() {
    let perm = |p: &'static [i64]| move |g: &mut GraphBuilder, x: &[Value]| g.transpose(x[0], p);
    check(
        "Transpose",
        &[
            case("[257] identity", &[&[257]], perm(&[0])),
            case("scalar", &[&[]], perm(&[])),
            case("[63,65] T", &[&[63, 65]], perm(&[1, 0])),
            case("[65,64] T negative", &[&[65, 64]], perm(&[-1, -2])),
            case("[2,3,4,5] 3102", &[&[2, 3, 4, 5]], perm(&[3, 1, 0, 2])),
            case("[3,1,255] size-1 moves", &[&[3, 1, 255]], perm(&[1, 0, 2])),
            case("[1,257,1] identity modulo 1s", &[&[1, 257, 1]], perm(&[2, 1, 0])),
            case("[0,5] T", &[&[0, 5]], perm(&[1, 0])),
            case("[4,0,3] empty", &[&[4, 0, 3]], perm(&[2, 0, 1])),
            case("rank 8", &[&[2, 1, 3, 1, 2, 2, 1, 3]], perm(&[7, 0, 5, 2, 4, 1, 3, 6])),
            case("rank 8 reversed", &[&[2, 3, 2, 3, 2, 3, 2, 2]], perm(&[7, 6, 5, 4, 3, 2, 1, 0])),
            case("[5,7,9] block swap", &[&[5, 7, 9]], perm(&[2, 0, 1])),
        ],
    );
}

#[test]
fn narrow_every_dtype() {
    let nar = |axis: i64, start: i64, len: usize, step: usize| {
        move |g: &mut GraphBuilder, x: &[Value]| g.narrow(x[0], axis, start, len, step)
    };
    check(
        "Narrow",
        &[
            case("[255] step 2", &[&[255]], nar(0, 1, 127, 2)),
            case("[257] full (alias)", &[&[257]], nar(0, 0, 257, 1)),
            case("[257] prefix", &[&[257]], nar(0, 0, 256, 1)),
            case("[257] suffix", &[&[257]], nar(0, -64, 64, 1)),
            case("[4,65] last column", &[&[4, 65]], nar(-1, 64, 1, 1)),
            case("[4,65] len 1 huge step", &[&[4, 65]], nar(1, 3, 1, 1 << 40)),
            case("[5,63] rows 1..3", &[&[5, 63]], nar(0, 1, 2, 1)),
            case("[3,64,5] middle step 3", &[&[3, 64, 5]], nar(1, 2, 21, 3)),
            case("[3,64,5] len 0", &[&[3, 64, 5]], nar(1, 64, 0, 1)),
            case("[0,6] on the non-empty axis", &[&[0, 6]], nar(1, 1, 4, 1)),
            case("rank 8", &[&[2, 3, 1, 2, 3, 1, 2, 5]], nar(7, 0, 2, 4)),
            case("[6] step 5", &[&[6]], nar(0, 0, 2, 5)),
        ],
    );
}

#[test]
fn leading_axis_slices_alias_their_window() {
    // Rows of 256 elements start on a 256-byte boundary for every dtype, so these Narrows become
    // aliases of a window of their input (a non-zero offset) on any device; later nodes and the
    // graph outputs read them from there.
    let nar = |start: i64, len: usize| move |g: &mut GraphBuilder, x: &[Value]| g.narrow(x[0], 0, start, len, 1);
    check(
        "Narrow window",
        &[
            case("[16,256] row 3", &[&[16, 256]], nar(3, 1)),
            case("[16,256] rows 4..12", &[&[16, 256]], nar(4, 8)),
            case("[16,256] rows 2..6 of rows 4..12", &[&[16, 256]], |g, x| {
                let a = g.narrow(x[0], 0, 4, 8, 1)?;
                g.narrow(a, 0, 2, 4, 1)
            }),
            case("[16,256] rows feeding a transpose", &[&[16, 256]], |g, x| {
                let a = g.narrow(x[0], 0, 8, 4, 1)?;
                g.transpose(a, &[1, 0])
            }),
            case("[16,256] two windows concatenated", &[&[16, 256]], |g, x| {
                let a = g.narrow(x[0], 0, 1, 2, 1)?;
                let b = g.narrow(x[0], 0, 13, 3, 1)?;
                g.concat(&[b, a], 0)
            }),
        ],
    );
}

#[test]
fn concat_every_dtype() {
    let cat = |axis: i64| move |g: &mut GraphBuilder, x: &[Value]| g.concat(x, axis);
    check(
        "Concat",
        &[
            case("last axis 63+1+64", &[&[2, 63], &[2, 1], &[2, 64]], cat(-1)),
            case("first axis with empty", &[&[1, 5], &[0, 5], &[3, 5]], cat(0)),
            case("one input (alias)", &[&[257]], cat(0)),
            case("one non-empty + empty (alias)", &[&[0, 3], &[4, 3]], cat(0)),
            case("all empty", &[&[2, 0], &[2, 0]], cat(1)),
            case("empty other axis", &[&[0, 3], &[0, 4]], cat(1)),
            case("odd sizes straddle words", &[&[1], &[3], &[2], &[1], &[5], &[255]], cat(0)),
            case("middle axis", &[&[3, 1, 7], &[3, 2, 7], &[3, 5, 7]], cat(1)),
            case("10 inputs", &[&[2usize, 1][..]; 10], cat(1)),
            case("[65] + [257]", &[&[65], &[257]], cat(0)),
        ],
    );
}

#[test]
fn expand_every_dtype() {
    let exp = |to: &'static [usize]| move |g: &mut GraphBuilder, x: &[Value]| g.expand(x[0], Shape::of(to));
    check(
        "Expand",
        &[
            case("[1] -> [257]", &[&[1]], exp(&[257])),
            case("scalar -> [3,65]", &[&[]], exp(&[3, 65])),
            case("scalar -> []", &[&[]], exp(&[])),
            case("[3,1] -> [2,3,65]", &[&[3, 1]], exp(&[2, 3, 65])),
            case("[2,1,3] -> [2,4,3]", &[&[2, 1, 3]], exp(&[2, 4, 3])),
            case("[63] -> [4,63] rows", &[&[63]], exp(&[4, 63])),
            case("same shape (alias)", &[&[5, 64]], exp(&[5, 64])),
            case("[1] -> [0]", &[&[1]], exp(&[0])),
            case("[1,1] -> [0,5]", &[&[1, 1]], exp(&[0, 5])),
            case("rank 8", &[&[1, 2, 1, 3]], exp(&[2, 1, 2, 3, 1, 2, 2, 3])),
        ],
    );
}

#[test]
fn reverse_every_dtype() {
    let rev = |axes: &'static [i64]| move |g: &mut GraphBuilder, x: &[Value]| g.reverse(x[0], axes);
    check(
        "Reverse",
        &[
            case("[257]", &[&[257]], rev(&[0])),
            case("[255] none (alias)", &[&[255]], rev(&[])),
            case("[3,64,5] outer+inner", &[&[3, 64, 5]], rev(&[0, 2])),
            case("[63,65] last negative", &[&[63, 65]], rev(&[-1])),
            case("[63,65] both (one merged axis)", &[&[63, 65]], rev(&[1, 0])),
            case("[0,4]", &[&[0, 4]], rev(&[0, 1])),
            case("[1,7] size-1 axis", &[&[1, 7]], rev(&[0])),
            case("rank 8 all", &[&[2, 3, 1, 2, 2, 3, 1, 2]], rev(&[0, 1, 2, 3, 4, 5, 6, 7])),
            case("rank 8 some", &[&[2, 3, 1, 2, 2, 3, 1, 2]], rev(&[1, 4, 7])),
        ],
    );
}

fn pad_cases(mode: PadMode) -> Vec<Case> {
    let pad = move |b: &'static [usize], e: &'static [usize]| {
        move |g: &mut GraphBuilder, x: &[Value]| g.pad(x[0], b, e, mode)
    };
    let mut v = vec![
        case("[5] 2/3", &[&[5]], pad(&[2], &[3])),
        case("[257] 1/0", &[&[257]], pad(&[1], &[0])),
        case("[63] 0/1", &[&[63]], pad(&[0], &[1])),
        case("[3,4] rows/cols", &[&[3, 4]], pad(&[1, 0], &[2, 3])),
        case("[4,65] inner only", &[&[4, 65]], pad(&[0, 3], &[0, 2])),
        case("[65,4] outer only", &[&[65, 4]], pad(&[2, 0], &[3, 0])),
        case("[2,3,4] every axis", &[&[2, 3, 4]], pad(&[1, 2, 3], &[1, 1, 2])),
        case("[3,4] no pads (alias)", &[&[3, 4]], pad(&[0, 0], &[0, 0])),
        case("rank 8", &[&[2, 1, 3, 2, 1, 2, 3, 2]], pad(&[1, 0, 2, 1, 0, 0, 1, 1], &[0, 0, 1, 1, 0, 1, 2, 0])),
        case("[0,5] nothing padded: empty", &[&[0, 5]], pad(&[0, 1], &[0, 1])),
    ];
    if matches!(mode, PadMode::Constant { .. }) {
        v.push(case("[0,3] constant only", &[&[0, 3]], pad(&[1, 0], &[1, 2])));
        v.push(case("[0] constant only", &[&[0]], pad(&[63], &[2])));
        v.push(case("[2,0,3] constant only", &[&[2, 0, 3]], pad(&[0, 1, 0], &[1, 0, 0])));
    }
    v
}

#[test]
fn pad_constant_every_dtype_and_value() {
    for value in [0.0, -1.5, 300.0, 0.1, -0.0, 1e10, 65520.0, -200.7, 1.0 + 2f64.powi(-11) + 2f64.powi(-40), 3e-8] {
        check(&format!("Pad Constant({value})"), &pad_cases(PadMode::Constant { value }));
    }
}

#[test]
fn pad_reflect_every_dtype() {
    let mut cases = pad_cases(PadMode::Reflect);
    cases.push(case("[257] max reflect", &[&[257]], |g, x| g.pad(x[0], &[256], &[256], PadMode::Reflect)));
    cases.push(case("[2] 1/1", &[&[2]], |g, x| g.pad(x[0], &[1], &[1], PadMode::Reflect)));
    check("Pad Reflect", &cases);
}

#[test]
fn pad_edge_every_dtype() {
    let mut cases = pad_cases(PadMode::Edge);
    cases.push(case("[1,3] wide edge", &[&[1, 3]], |g, x| g.pad(x[0], &[5, 64], &[2, 65], PadMode::Edge)));
    check("Pad Edge", &cases);
}

#[test]
fn chained_movement_ops() {
    // Movement outputs feeding movement inputs (aliases included).
    check(
        "chain",
        &[case("transpose->pad->narrow->reverse->concat->expand", &[&[3, 5], &[5, 1]], |g, x| {
            let t = g.transpose(x[0], &[1, 0])?;
            let p = g.pad(t, &[1, 0], &[0, 2], PadMode::Reflect)?;
            let n = g.narrow(p, 0, 0, 5, 1)?;
            let r = g.reverse(n, &[0])?;
            let c = g.concat(&[r, x[1]], 1)?;
            g.expand(c, Shape::of(&[2, 5, 6]))
        })],
    );
}
