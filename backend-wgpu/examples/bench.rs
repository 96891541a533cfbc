//! Benchmark of the wgpu backend: matmul (F32 and F16), elementwise `Binary.Add` and unary ops
//! (F32), and the row ops Softmax, LogSoftmax, LayerNorm, RmsNorm over the last axis (F32).
//!
//! ```sh
//! cargo run -p backend-wgpu --release --example bench -- \
//!     [--matmul M,N,K]... [--elementwise N]... [--unary OP,N]... [--rows KIND,R,H]... \
//!     [--iters N] [--chain T] [--adapter NAME]
//! ```
//! `OP` is a unary op name (`Gelu`, `Exp`, `Tanh`, ...); `KIND` one of `softmax`, `logsoftmax`,
//! `layernorm`, `rmsnorm` (LayerNorm and RmsNorm with gamma and beta of `[H]`). Their GB/s count
//! the tensor read once and written once (2·4·N; gamma and beta are left out, as torch_ref.py's).
//! With no case given it runs small sanity sizes. Output: `# ...` comment lines (adapter, method,
//! per-case details), then one line per figure, `name<TAB>value<TAB>unit`, with names that match
//! `bench/torch_ref.py` (`matmul_4096_f32`, `gemv_1x4096x4096_f16`, `add_2p26_f32`, ...).
//!
//! Two figures per case, both medians over `--iters` timed runs after warm-up, on random data:
//! - **device** (the name without suffix, comparable with torch's CUDA-event figures): operands
//!   are `Param`s uploaded once. Two graphs are compiled, one with a single op node and one with
//!   `T = --chain` identical op nodes over the same params (only the first row of the last is a
//!   graph output, so every run reads back one small result). The per-op device time is the difference of their median
//!   `run` times divided by `T − 1`: upload-free, and the submit, wait and readback costs, equal
//!   in both graphs, cancel. Each extra node is a full dispatch (plus the zeroing pass that packed
//!   F16 outputs need) with the barrier wgpu puts between dispatches.
//! - **e2e** (suffix `_e2e`): operands are graph `Input`s, so one `run` = upload of every input,
//!   the op, readback of the output and the CPU-side wait; what a host calling `run` sees.
//!
//! TFLOP/s = 2·M·N·K / t; GB/s = (bytes read + bytes written) / t, i.e. 3·4·N for Add F32 (and,
//! for M = 1 matmuls, the operand and result bytes, as torch_ref.py's `_bw` lines).
//! A spot check of a few outputs against f64 on the CPU guards against timing a broken kernel.

use anyhow::{bail, Context, Result};
use backend_api::op::{BinaryOp, UnaryOp};
use backend_api::{DType, Executable, Graph, GraphBuilder, Tensor, Value};
use backend_wgpu::{WgpuBackend, WgpuExecutable, WgpuOptions};
use half::f16;
use std::time::Instant;

struct Args {
    matmul: Vec<[usize; 3]>,
    elementwise: Vec<usize>,
    unary: Vec<(UnaryOp, usize)>,
    rows: Vec<(String, usize, usize)>,
    iters: usize,
    chain: usize,
    adapter: Option<String>,
}

fn parse_args() -> Result<Args> {
    let mut a =
        Args { matmul: vec![], elementwise: vec![], unary: vec![], rows: vec![], iters: 20, chain: 16, adapter: None };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--matmul" => {
                let v: Vec<usize> = value()?.split(',').map(|s| s.trim().parse()).collect::<Result<_, _>>()?;
                let [m, n, k] = v[..] else { bail!("--matmul takes M,N,K") };
                a.matmul.push([m, n, k]);
            }
            "--elementwise" => a.elementwise.push(value()?.parse()?),
            "--unary" => {
                let v = value()?;
                let Some((op, n)) = v.split_once(',') else { bail!("--unary takes OP,N") };
                let Some(&u) = UnaryOp::ALL.iter().find(|u| u.name().eq_ignore_ascii_case(op)) else {
                    bail!("--unary: no unary op {op:?}")
                };
                a.unary.push((u, n.trim().parse()?));
            }
            "--rows" => {
                let v: Vec<String> = value()?.split(',').map(|s| s.trim().to_string()).collect();
                let [kind, r, h] = &v[..] else { bail!("--rows takes KIND,R,H") };
                a.rows.push((kind.to_lowercase(), r.parse()?, h.parse()?));
            }
            "--iters" => a.iters = value()?.parse()?,
            "--chain" => a.chain = value()?.parse()?,
            "--adapter" => a.adapter = Some(value()?),
            "-h" | "--help" => {
                println!(
                    "bench [--matmul M,N,K]... [--elementwise N]... [--unary OP,N]... [--rows KIND,R,H]... \
                     [--iters N] [--chain T] [--adapter NAME]"
                );
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?} (try --help)"),
        }
    }
    if a.matmul.is_empty() && a.elementwise.is_empty() && a.unary.is_empty() && a.rows.is_empty() {
        a.matmul = vec![[256, 256, 256], [1, 512, 512]];
        a.elementwise = vec![1 << 20];
    }
    a.iters = a.iters.max(3);
    a.chain = a.chain.max(2);
    Ok(a)
}

/// Uniform values in [-1, 1) (xorshift; no dependency needed).
fn random_f64(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        })
        .collect()
}

fn tensor(d: DType, shape: &[usize], v: &[f64]) -> Result<Tensor> {
    Ok(match d {
        DType::F16 => Tensor::from_slice(shape, &v.iter().map(|&x| f16::from_f64(x)).collect::<Vec<_>>())?,
        _ => Tensor::from_slice(shape, &v.iter().map(|&x| x as f32).collect::<Vec<_>>())?,
    })
}

/// Median and minimum of `iters` timed runs (seconds) after warm-up.
fn time_runs(exe: &mut WgpuExecutable, inputs: &[(&str, Tensor)], iters: usize) -> Result<(f64, f64, Vec<Tensor>)> {
    let views: Vec<_> = inputs.iter().map(|(n, t)| (*n, t.view())).collect();
    let mut last = exe.run(&views)?;
    for _ in 0..2 {
        last = exe.run(&views)?;
    }
    let mut ts = Vec::with_capacity(iters);
    for _ in 0..iters {
        let t0 = Instant::now();
        last = exe.run(&views)?;
        ts.push(t0.elapsed().as_secs_f64());
    }
    ts.sort_by(f64::total_cmp);
    Ok((ts[ts.len() / 2], ts[0], last))
}

/// A graph of `count` identical `op(operands)` nodes; only the last is an output.
fn build(
    dtype: DType,
    shapes: &[Vec<usize>],
    as_params: bool,
    count: usize,
    op: &dyn Fn(&mut GraphBuilder, &[Value]) -> Result<Value>,
) -> Result<Graph> {
    let mut g = GraphBuilder::new();
    let names = ["a", "b"];
    let mut vals = Vec::new();
    for (name, shape) in names.iter().zip(shapes) {
        vals.push(if as_params { g.param(name, dtype, shape)? } else { g.input(name, dtype, shape.clone())? });
    }
    let mut y = op(&mut g, &vals)?;
    for _ in 1..count {
        y = op(&mut g, &vals)?;
    }
    if as_params {
        // Read back one row only: a full readback (hundreds of MB for the large cases) would add
        // a large, noisy fixed cost to both graphs of the device measurement.
        y = g.narrow(y, 0, 0, 1, 1)?;
    }
    g.output(y)?;
    Ok(g.build()?)
}

struct Timing {
    e2e_median: f64,
    e2e_min: f64,
    device: f64,
    device_min: f64,
    out: Tensor,
}

/// Times one op both ways (see the module docs).
fn measure(
    be: &WgpuBackend,
    args: &Args,
    dtype: DType,
    operands: &[(Vec<usize>, Tensor)],
    op: &dyn Fn(&mut GraphBuilder, &[Value]) -> Result<Value>,
) -> Result<Timing> {
    let shapes: Vec<Vec<usize>> = operands.iter().map(|(s, _)| s.clone()).collect();
    let named: Vec<(&str, Tensor)> = ["a", "b"].into_iter().zip(operands.iter().map(|(_, t)| t.clone())).collect();
    let mut e2e = be.compile_wgpu(&build(dtype, &shapes, false, 1, op)?, &Default::default())?;
    let (e2e_median, e2e_min, mut outs) = time_runs(&mut e2e, &named, args.iters)?;
    let out = outs.pop().context("the graph has one output")?;
    drop(e2e);
    let mut per = Vec::new();
    for count in [1, args.chain] {
        let mut exe = be.compile_wgpu(&build(dtype, &shapes, true, count, op)?, &Default::default())?;
        for (n, t) in &named {
            exe.set_param(n, t.view())?;
        }
        per.push((exe.dispatch_count(), time_runs(&mut exe, &[], args.iters)?));
    }
    let (d1, (med1, min1, _)) = &per[0];
    let (dt, (medt, mint, _)) = &per[1];
    // Both graphs end with the same one-row Narrow, so the dispatch count must grow by the op's
    // own dispatches for each extra node.
    if dt <= d1 || (dt - d1) % (args.chain - 1) != 0 {
        bail!(
            "the {}-node graph records {dt} dispatches against {d1} for one node: device figure would be wrong",
            args.chain
        );
    }
    let steps = (args.chain - 1) as f64;
    Ok(Timing { e2e_median, e2e_min, device: (medt - med1) / steps, device_min: (mint - min1) / steps, out })
}

fn p2(n: usize) -> String {
    if n.is_power_of_two() {
        format!("2p{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

fn matmul_name([m, n, k]: [usize; 3], d: DType) -> String {
    let dt = if d == DType::F16 { "f16" } else { "f32" };
    if m == n && n == k {
        format!("matmul_{m}_{dt}")
    } else if m == 1 {
        format!("gemv_1x{k}x{n}_{dt}")
    } else {
        format!("matmul_{m}x{n}x{k}_{dt}")
    }
}

/// Largest relative error of a few outputs against an f64 dot product on the CPU.
fn spot_check(a: &[f64], b: &[f64], out: &Tensor, [m, n, k]: [usize; 3]) -> f64 {
    let got = out.view().to_f64_lossy();
    let mut worst: f64 = 0.0;
    for s in 0..16usize {
        let (i, j) = ((s * 7919) % m, (s * 104_729) % n);
        let (mut want, mut mag) = (0.0, 0.0);
        for kk in 0..k {
            want += a[i * k + kk] * b[kk * n + j];
            mag += (a[i * k + kk] * b[kk * n + j]).abs();
        }
        worst = worst.max((got[i * n + j] - want).abs() / mag.max(1e-30));
    }
    worst
}

fn matmul_case(be: &WgpuBackend, args: &Args, mnk: [usize; 3], d: DType) -> Result<()> {
    let [m, n, k] = mnk;
    let (av, bv) = (random_f64(m * k, 1), random_f64(k * n, 2));
    let (at, bt) = (tensor(d, &[m, k], &av)?, tensor(d, &[k, n], &bv)?);
    // Spot-check against the values the GPU saw (rounded to the dtype).
    let (av, bv) = (at.view().to_f64_lossy(), bt.view().to_f64_lossy());
    let operands = [(vec![m, k], at), (vec![k, n], bt)];
    let t = measure(be, args, d, &operands, &|g, v| Ok(g.matmul(v[0], v[1])?))?;
    let err = spot_check(&av, &bv, &t.out, mnk);
    let name = matmul_name(mnk, d);
    let flops = 2.0 * (m * n * k) as f64;
    println!(
        "# {name}: device {:.4} ms (min-based {:.4} ms), e2e median {:.4} ms min {:.4} ms; spot-check rel err {err:.2e}",
        t.device * 1e3, t.device_min * 1e3, t.e2e_median * 1e3, t.e2e_min * 1e3
    );
    println!("{name}\t{:.6}\tTFLOP/s", flops / t.device / 1e12);
    println!("{name}_e2e\t{:.6}\tTFLOP/s", flops / t.e2e_median / 1e12);
    if m == 1 {
        let bytes = ((m * k + k * n + m * n) * d.size()) as f64;
        println!("{name}_bw\t{:.6}\tGB/s", bytes / t.device / 1e9);
    }
    Ok(())
}

fn add_case(be: &WgpuBackend, args: &Args, n: usize) -> Result<()> {
    let (a, b) = (random_f64(n, 3), random_f64(n, 4));
    let operands = [(vec![n], tensor(DType::F32, &[n], &a)?), (vec![n], tensor(DType::F32, &[n], &b)?)];
    let t = measure(be, args, DType::F32, &operands, &|g, v| Ok(g.binary(BinaryOp::Add, v[0], v[1])?))?;
    let got = t.out.view().to_f64_lossy();
    let bad = (0..n).step_by((n / 64).max(1)).filter(|&i| got[i] != ((a[i] as f32) + (b[i] as f32)) as f64).count();
    let name = format!("add_{}_f32", p2(n));
    let bytes = (3 * 4 * n) as f64;
    println!(
        "# {name}: device {:.4} ms (min-based {:.4} ms), e2e median {:.4} ms min {:.4} ms; spot-check mismatches {bad}",
        t.device * 1e3,
        t.device_min * 1e3,
        t.e2e_median * 1e3,
        t.e2e_min * 1e3
    );
    println!("{name}\t{:.6}\tGB/s", bytes / t.device / 1e9);
    println!("{name}_e2e\t{:.6}\tGB/s", bytes / t.e2e_median / 1e9);
    Ok(())
}

fn main() -> Result<()> {
    let args = parse_args()?;
    let be = WgpuBackend::new(&WgpuOptions { adapter_name: args.adapter.clone(), ..Default::default() })?;
    println!("# adapter: {}", be.device_caps().description);
    println!(
        "# iters {} (median), device figure = slope between 1- and {}-node graphs over params",
        args.iters, args.chain
    );
    for &mnk in &args.matmul {
        for d in [DType::F32, DType::F16] {
            matmul_case(&be, &args, mnk, d).with_context(|| format!("matmul {mnk:?} {d}"))?;
        }
    }
    for &n in &args.elementwise {
        add_case(&be, &args, n).with_context(|| format!("elementwise {n}"))?;
    }
    for &(op, n) in &args.unary {
        unary_case(&be, &args, op, n).with_context(|| format!("unary {} {n}", op.name()))?;
    }
    for (kind, r, h) in &args.rows {
        rows_case(&be, &args, kind, *r, *h).with_context(|| format!("rows {kind} {r}x{h}"))?;
    }
    Ok(())
}

/// Prints the device and e2e GB/s of a case that reads and writes `bytes` in total.
fn print_bandwidth(name: &str, t: &Timing, bytes: f64) {
    println!(
        "# {name}: device {:.4} ms (min-based {:.4} ms), e2e median {:.4} ms",
        t.device * 1e3,
        t.device_min * 1e3,
        t.e2e_median * 1e3
    );
    println!("{name}\t{:.6}\tGB/s", bytes / t.device / 1e9);
    println!("{name}_e2e\t{:.6}\tGB/s", bytes / t.e2e_median / 1e9);
}

fn unary_case(be: &WgpuBackend, args: &Args, op: UnaryOp, n: usize) -> Result<()> {
    let x: Vec<f64> = random_f64(n, 5).iter().map(|v| v * 4.0).collect();
    let operands = [(vec![n], tensor(DType::F32, &[n], &x)?)];
    let t = measure(be, args, DType::F32, &operands, &|g, v| Ok(g.unary(op, v[0])?))?;
    let name = format!("{}_{}_f32", op.name().to_lowercase(), p2(n));
    print_bandwidth(&name, &t, (2 * 4 * n) as f64);
    Ok(())
}

fn rows_case(be: &WgpuBackend, args: &Args, kind: &str, r: usize, h: usize) -> Result<()> {
    let n = r.checked_mul(h).context("rows overflow")?;
    let x = tensor(DType::F32, &[r, h], &random_f64(n, 6))?;
    let gamma: Vec<f64> = random_f64(h, 7).iter().map(|v| 1.0 + 0.5 * v).collect();
    let operands = [(vec![r, h], x), (vec![h], tensor(DType::F32, &[h], &gamma)?)];
    let t = match kind {
        "softmax" => measure(be, args, DType::F32, &operands[..1], &|g, v| Ok(g.softmax(v[0], -1)?))?,
        "logsoftmax" => measure(be, args, DType::F32, &operands[..1], &|g, v| Ok(g.log_softmax(v[0], -1)?))?,
        "layernorm" => {
            measure(be, args, DType::F32, &operands, &|g, v| Ok(g.layer_norm(v[0], v[1], Some(v[1]), -1, 1e-5)?))?
        }
        "rmsnorm" => {
            measure(be, args, DType::F32, &operands, &|g, v| Ok(g.rms_norm(v[0], v[1], Some(v[1]), -1, 1e-5)?))?
        }
        other => bail!("--rows: unknown kind {other:?} (softmax, logsoftmax, layernorm, rmsnorm)"),
    };
    print_bandwidth(&format!("{kind}_{r}x{h}_f32"), &t, (2 * 4 * n) as f64);
    Ok(())
}
