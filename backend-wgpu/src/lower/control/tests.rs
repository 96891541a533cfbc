//! The control mechanism through the real compile and run path on the test adapter: (a) an
//! indirect dispatch whose counts a previous kernel computed from a run-time condition, (b) a
//! body recorded once per iteration with per-iteration offsets, and the errors around both.

use super::super::{norm, Lower, LowerFn, NodeIo};
use super::{copy_at, gate};
use crate::exec::WgpuExecutable;
use crate::{WgpuBackend, WgpuOptions};
use backend_api::{CompileOptions, DType, ErrorKind, Executable, Graph, GraphBuilder, Result, Tensor};
use backend_cpu_ref as _;
use std::sync::OnceLock;

fn wgpu() -> &'static WgpuBackend {
    static B: OnceLock<WgpuBackend> = OnceLock::new();
    B.get_or_init(|| WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter (install mesa-vulkan-drivers)"))
}

fn compile(g: &Graph, lower: LowerFn) -> Result<WgpuExecutable> {
    WgpuExecutable::compile_lowered(&wgpu().ctx, g, &CompileOptions::default(), lower)
}

/// Deterministic values in [-4, 4).
fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761).wrapping_add(seed) >> 8) as f32 / (1 << 24) as f32 * 8.0 - 4.0)
        .collect()
}

/// cpu-ref's row softmax of `x` (`[rows, len]`).
fn softmax_ref(x: &Tensor) -> Vec<f32> {
    let mut g = GraphBuilder::new();
    let v = g.input("x", DType::F32, x.shape()).unwrap();
    let y = g.softmax(v, 1).unwrap();
    g.output(y).unwrap();
    let cpu = backend_api::create("cpu-ref").unwrap();
    let mut exe = cpu.compile(&g.build().unwrap(), &CompileOptions::default()).unwrap();
    exe.run(&[("x", x.view())]).unwrap().remove(0).to_vec::<f32>().unwrap()
}

fn assert_close(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-6 + 1e-5 * w.abs(), "{what}: element {i} is {g}, want {w}");
    }
}

// ------------------------------------------------ (a) indirect dispatch from a GPU-computed count

/// `Where(c, x, x)` as a graph whose node the test lowerings below replace: c Bool[], x F32[5, 70].
fn gated_graph() -> Graph {
    let mut g = GraphBuilder::new();
    let c = g.input("c", DType::Bool, &[] as &[usize]).unwrap();
    let x = g.input("x", DType::F32, &[5usize, 70][..]).unwrap();
    let y = g.where_(c, x, x).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

/// out = c ? softmax(x) : 0.
fn lower_if(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    let (c, x, out) = (io.input(0)?, io.input(1)?, io.output(0)?);
    b.zero(out)?;
    gate(b, c, false, |b| norm::softmax(b, 1, x, out))
}

/// out = !c ? softmax(x) : 0, with the softmax pushed 17 times (two gate kernels of at most 16).
fn lower_else_long(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    let (c, x, out) = (io.input(0)?, io.input(1)?, io.output(0)?);
    b.zero(out)?;
    gate(b, c, true, |b| (0..17).try_for_each(|_| norm::softmax(b, 1, x, out)))
}

fn run_gated(exe: &mut WgpuExecutable, cond: bool, x: &Tensor) -> Vec<f32> {
    let c = Tensor::scalar(cond);
    exe.run(&[("c", c.view()), ("x", x.view())]).unwrap().remove(0).to_vec::<f32>().unwrap()
}

#[test]
fn a_gated_body_runs_only_when_the_condition_computed_on_the_gpu_holds() {
    let x = Tensor::from_slice(&[5, 70], &data(350, 1)).unwrap();
    let want = softmax_ref(&x);
    let mut exe = compile(&gated_graph(), lower_if).unwrap();
    // zero, gate, softmax (dispatched indirectly).
    assert_eq!(exe.dispatch_count(), 3);
    assert_close(&run_gated(&mut exe, true, &x), &want, "true");
    assert_eq!(run_gated(&mut exe, false, &x), vec![0.0; 350], "false: the body dispatched no workgroup");
    assert_close(&run_gated(&mut exe, true, &x), &want, "true again");

    let mut exe = compile(&gated_graph(), lower_else_long).unwrap();
    assert_eq!(exe.dispatch_count(), 1 + 2 + 17);
    assert_close(&run_gated(&mut exe, false, &x), &want, "else branch taken");
    assert_eq!(run_gated(&mut exe, true, &x), vec![0.0; 350], "else branch not taken");
}

/// A kernel dispatched from a control buffer it also binds is refused at compile.
fn lower_self_gated(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    let out = io.output(0)?;
    let args = b.control(12)?;
    let k = super::super::builder::zero_kernel(args, 3)?;
    b.push(super::super::Kernel { grid: super::super::Grid::Indirect(args), ..k });
    b.zero(out)
}

#[test]
fn a_kernel_cannot_read_its_counts_from_a_buffer_it_binds() {
    let e = compile(&gated_graph(), lower_self_gated).err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("control buffer"), "{e}");
}

// ------------------------------------------------ (b) a body repeated with per-iteration offsets

const ROWS: usize = 6;
const LEN: usize = 70;

fn softmax_graph() -> Graph {
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, &[ROWS, LEN][..]).unwrap();
    let y = g.softmax(x, 1).unwrap();
    g.output(y).unwrap();
    g.build().unwrap()
}

/// Row softmax as a loop over rows: copy row i in, softmax it, copy it out at row i. The
/// offsets are params of iteration i; the windows are the same every iteration.
fn lower_rows(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    let (x, out) = (io.input(0)?, io.output(0)?);
    let row = b.temp(DType::F32, vec![LEN])?;
    b.repeat(ROWS, |b, i| {
        // Scratch made inside the body is made once for every iteration.
        let soft = b.temp(DType::F32, vec![LEN])?;
        copy_at(b, x, i * LEN, &row, 0, LEN)?;
        norm::softmax(b, 0, &row, &soft)?;
        copy_at(b, &soft, 0, out, i * LEN, LEN)
    })
}

#[test]
fn a_repeated_body_runs_once_per_iteration_with_its_offsets() {
    let x = Tensor::from_slice(&[ROWS, LEN], &data(ROWS * LEN, 7)).unwrap();
    let mut exe = compile(&softmax_graph(), lower_rows).unwrap();
    assert_eq!(exe.dispatch_count(), 3 * ROWS);
    let got = exe.run(&[("x", x.view())]).unwrap().remove(0).to_vec::<f32>().unwrap();
    assert_close(&got, &softmax_ref(&x), "row loop");
    // Runs again with other data (nothing of the first run is left in the loop's state).
    let x2 = Tensor::from_slice(&[ROWS, LEN], &data(ROWS * LEN, 99)).unwrap();
    let got = exe.run(&[("x", x2.view())]).unwrap().remove(0).to_vec::<f32>().unwrap();
    assert_close(&got, &softmax_ref(&x2), "row loop, second run");
}

/// Iteration 1 binds another window than iteration 0.
fn lower_uneven(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    let (x, out) = (io.input(0)?, io.output(0)?);
    b.repeat(2, |b, i| {
        let row = x.slice(i * LEN, vec![LEN])?;
        norm::softmax(b, 0, &row, &out.slice(0, vec![LEN])?)
    })
}

/// More iterations than the node may record.
fn lower_too_long(b: &mut Lower<'_>, io: &NodeIo<'_>) -> Result<()> {
    let (x, out) = (io.input(0)?, io.output(0)?);
    b.repeat(70_000, |b, _| copy_at(b, x, 0, out, 0, LEN))
}

#[test]
fn repeated_bodies_must_repeat_and_stay_within_the_bound() {
    let e = compile(&softmax_graph(), lower_uneven).err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::Shape, "{e}");
    assert!(e.to_string().contains("iteration 1"), "{e}");
    let e = compile(&softmax_graph(), lower_too_long).err().expect("refused");
    assert_eq!(e.kind(), ErrorKind::DeviceLimit, "{e}");
    assert!(e.to_string().contains("65536"), "{e}");
    assert!(e.to_string().contains("Softmax"), "the error names the node: {e}");
}

#[test]
fn an_op_of_the_graph_is_still_lowered_normally() {
    // The product's lowering, through the same entry point the tests use.
    let x = Tensor::from_slice(&[ROWS, LEN], &data(ROWS * LEN, 3)).unwrap();
    let mut exe = compile(&softmax_graph(), crate::lower::lower).unwrap();
    let got = exe.run(&[("x", x.view())]).unwrap().remove(0).to_vec::<f32>().unwrap();
    assert_close(&got, &softmax_ref(&x), "native softmax");
}
