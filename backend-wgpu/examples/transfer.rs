//! Host↔device transfer costs of `run`, and what device-resident values save in a decode loop.
//!
//! ```sh
//! cargo run -p backend-wgpu --release --example transfer -- [--elements N] [--cache S,D] [--iters N]
//! ```
//! Cases (F32, medians of `--iters` runs after warm-up, random data):
//! - `upload`: `Input x[N]` → `Narrow` to one element: one run = upload N·4 bytes (+ a 1-element copy).
//! - `readback`: `Param p[N]` as the graph output: one run = copy to the staging buffer + map + read.
//! - `readback_reuse`: the same with `run_into`, reusing the previous run's output memory.
//! - `roundtrip`: `Input x[N]` as the output: upload and readback.
//! - `decode_host` / `decode_resident`: one step of a toy attention layer over a KV cache `[S, D]`
//!   that is updated every step; the cache goes through host memory, or stays on the device
//!   (`run_with` + `Placement::Device`).
//!
//! `--probe` instead times the pieces of one transfer with wgpu directly (host memcpy, write_buffer,
//! a persistent mapped buffer, readback map and copy).
//!
//! Output: `# ...` comments, then `name<TAB>value<TAB>unit` lines.

use anyhow::{Context, Result};
use backend_api::op::BinaryOp;
use backend_api::{Backend, DType, Feed, Graph, GraphBuilder, Placement, Tensor};
use backend_wgpu::{WgpuBackend, WgpuOptions};
use std::time::Instant;

struct Args {
    elements: usize,
    cache: (usize, usize),
    iters: usize,
    probe: bool,
}

fn parse_args() -> Result<Args> {
    let mut a = Args { elements: 1 << 22, cache: (2048, 512), iters: 20, probe: false };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().with_context(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--elements" => a.elements = value()?.parse()?,
            "--cache" => {
                let v = value()?;
                let (s, d) = v.split_once(',').context("--cache takes S,D")?;
                a.cache = (s.trim().parse()?, d.trim().parse()?);
            }
            "--iters" => a.iters = value()?.parse()?,
            "--probe" => a.probe = true,
            other => anyhow::bail!("unknown argument {other:?}"),
        }
    }
    a.iters = a.iters.max(3);
    Ok(a)
}

fn random(n: usize, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        })
        .collect()
}

/// Median seconds of `iters` calls of `f` after two warm-up calls.
fn median(iters: usize, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    f()?;
    f()?;
    let mut t = Vec::with_capacity(iters);
    for _ in 0..iters {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    Ok(t[iters / 2])
}

fn transfers(be: &dyn Backend, n: usize, iters: usize) -> Result<()> {
    let x = Tensor::from_slice(&[n], &random(n, 1))?;
    let gb = (n * 4) as f64 / 1e9;
    let mut g = GraphBuilder::new();
    let xi = g.input("x", DType::F32, [n])?;
    // One element out: the run's cost is the upload (a full Reduce would add its own time).
    let s = g.narrow(xi, 0, 0, 1, 1)?;
    g.output(s)?;
    let mut up = be.compile(&g.build()?, &Default::default())?;
    let t = median(iters, || up.run(&[("x", x.view())]).map(drop).map_err(Into::into))?;
    println!("upload_f32_{n}\t{:.2}\tGB/s", gb / t);
    let mut g = GraphBuilder::new();
    let p = g.param("p", DType::F32, &[n])?;
    g.output(p)?;
    let mut down = be.compile(&g.build()?, &Default::default())?;
    down.set_param("p", x.view())?;
    let t = median(iters, || down.run(&[]).map(drop).map_err(Into::into))?;
    println!("readback_f32_{n}\t{:.2}\tGB/s", gb / t);
    let mut outs = Vec::new();
    let t = median(iters, || down.run_into(&[], &mut outs).map_err(Into::into))?;
    println!("readback_reuse_f32_{n}\t{:.2}\tGB/s (run_into, output memory reused)", gb / t);
    let mut g = GraphBuilder::new();
    let xi = g.input("x", DType::F32, [n])?;
    g.output(xi)?;
    let mut both = be.compile(&g.build()?, &Default::default())?;
    let t = median(iters, || both.run(&[("x", x.view())]).map(drop).map_err(Into::into))?;
    println!("roundtrip_f32_{n}\t{:.2}\tGB/s (bytes moved each way / time)", gb / t);
    Ok(())
}

/// cache' = cache + onehot·k;  out = softmax(q·cache'ᵀ)·cache'
fn decode_graph(s: usize, d: usize) -> Result<Graph> {
    let mut g = GraphBuilder::new();
    let cache = g.input("cache", DType::F32, [s, d])?;
    let q = g.input("q", DType::F32, [1, d])?;
    let k = g.input("k", DType::F32, [1, d])?;
    let onehot = g.input("onehot", DType::F32, [s, 1])?;
    let new = g.binary(BinaryOp::Mul, onehot, k)?;
    let cache2 = g.binary(BinaryOp::Add, cache, new)?;
    let ct = g.transpose(cache2, &[1, 0])?;
    let scores = g.matmul(q, ct)?;
    let p = g.softmax(scores, -1)?;
    let out = g.matmul(p, cache2)?;
    g.output(out)?;
    g.output(cache2)?;
    Ok(g.build()?)
}

fn decode(be: &dyn Backend, (s, d): (usize, usize), iters: usize) -> Result<()> {
    let mut exe = be.compile(&decode_graph(s, d)?, &Default::default())?;
    let q = Tensor::from_slice(&[1, d], &random(d, 2))?;
    let k = Tensor::from_slice(&[1, d], &random(d, 3))?;
    let onehot = Tensor::from_slice(&[s, 1], &(0..s).map(|i| (i == 1) as u8 as f32).collect::<Vec<_>>())?;
    let mut host = Tensor::from_slice(&[s, d], &random(s * d, 4))?;
    let t_host = median(iters, || {
        let feeds = [("cache", host.view()), ("q", q.view()), ("k", k.view()), ("onehot", onehot.view())];
        let mut out = exe.run(&feeds)?;
        host = out.pop().context("two outputs")?;
        Ok(())
    })?;
    let first = exe.run_with(
        &[
            ("cache", host.view().into()),
            ("q", q.view().into()),
            ("k", k.view().into()),
            ("onehot", onehot.view().into()),
        ],
        &[Placement::Host, Placement::Device],
    )?;
    let mut dev = first[1].device().context("device output")?.clone();
    let t_dev = median(iters, || {
        let feeds = [
            ("cache", Feed::Device(&dev)),
            ("q", q.view().into()),
            ("k", k.view().into()),
            ("onehot", onehot.view().into()),
        ];
        let mut out = exe.run_with(&feeds, &[Placement::Host, Placement::Device])?;
        dev = out.pop().and_then(|f| f.device().cloned()).context("device output")?;
        Ok(())
    })?;
    let mib = (s * d * 4) as f64 / (1 << 20) as f64;
    println!("# decode step, KV cache [{s}, {d}] F32 ({mib:.1} MiB)");
    println!("decode_host_{s}x{d}\t{:.3}\tms/step", t_host * 1e3);
    println!("decode_resident_{s}x{d}\t{:.3}\tms/step", t_dev * 1e3);
    Ok(())
}

fn main() -> Result<()> {
    let a = parse_args()?;
    if a.probe {
        return probe::run(a.elements * 4);
    }
    let be = WgpuBackend::new(&WgpuOptions::default())?;
    println!("# adapter: {}", be.device_caps().description);
    transfers(&be, a.elements, a.iters)?;
    decode(&be, a.cache, a.iters)
}

/// `--probe`: times the pieces of a transfer with wgpu directly (no graph), to find where the
/// time of `upload` / `readback` goes.
mod probe {
    use anyhow::{Context, Result};
    use backend_wgpu::{DeviceContext, WgpuOptions};
    use std::time::Instant;

    fn wait(ctx: &DeviceContext) -> Result<()> {
        ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    }

    fn map(ctx: &DeviceContext, b: &wgpu::Buffer, mode: wgpu::MapMode) -> Result<()> {
        let (tx, rx) = std::sync::mpsc::channel();
        b.slice(..).map_async(mode, move |r| {
            let _ = tx.send(r);
        });
        wait(ctx)?;
        rx.recv()?.map_err(|e| anyhow::anyhow!("{e}"))
    }

    fn ms(t: Instant) -> f64 {
        t.elapsed().as_secs_f64() * 1e3
    }

    pub fn run(n: usize) -> Result<()> {
        let ctx = DeviceContext::open(&WgpuOptions::default())?;
        let src: Vec<u8> = (0..n).map(|i| (i * 31 % 251) as u8).collect();
        let mut dst = vec![1u8; n];
        for _ in 0..3 {
            let t = Instant::now();
            dst.copy_from_slice(&src);
            let a = ms(t);
            let t = Instant::now();
            let fresh = src.to_vec();
            let b = ms(t);
            std::hint::black_box(&fresh);
            println!("# host memcpy into touched memory {a:.2} ms, into fresh memory (to_vec) {b:.2} ms");
        }
        let st = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        let dev_buf = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: n as u64,
            usage: st,
            mapped_at_creation: false,
        });
        let up = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: n as u64,
            usage: wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let down = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: n as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        for _ in 0..3 {
            let t = Instant::now();
            ctx.queue.write_buffer(&dev_buf, 0, &src);
            let a = ms(t);
            let t = Instant::now();
            ctx.queue.submit([]);
            wait(&ctx)?;
            let b = ms(t);
            println!("# write_buffer: call {a:.2} ms, submit+wait {b:.2} ms");
        }
        for _ in 0..3 {
            let t = Instant::now();
            map(&ctx, &up, wgpu::MapMode::Write)?;
            let a = ms(t);
            let t = Instant::now();
            up.get_mapped_range_mut(..).context("map range")?.copy_from_slice(&src);
            let b = ms(t);
            let t = Instant::now();
            up.unmap();
            let c = ms(t);
            let t = Instant::now();
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(&up, 0, &dev_buf, 0, n as u64);
            ctx.queue.submit([enc.finish()]);
            wait(&ctx)?;
            let d = ms(t);
            println!("# persistent MAP_WRITE: map {a:.2} ms, memcpy {b:.2} ms, unmap {c:.2} ms, copy to device+wait {d:.2} ms");
        }
        for _ in 0..3 {
            let t = Instant::now();
            let mut enc = ctx.device.create_command_encoder(&Default::default());
            enc.copy_buffer_to_buffer(&dev_buf, 0, &down, 0, n as u64);
            ctx.queue.submit([enc.finish()]);
            wait(&ctx)?;
            let a = ms(t);
            let t = Instant::now();
            map(&ctx, &down, wgpu::MapMode::Read)?;
            let b = ms(t);
            let t = Instant::now();
            let v = down.get_mapped_range(..).context("map range")?.to_vec();
            let c = ms(t);
            let t = Instant::now();
            dst.copy_from_slice(&down.get_mapped_range(..).context("map range")?);
            let d = ms(t);
            down.unmap();
            std::hint::black_box(&v);
            println!("# readback: copy to staging+wait {a:.2} ms, map {b:.2} ms, to_vec {c:.2} ms, memcpy into touched {d:.2} ms");
        }
        Ok(())
    }
}
