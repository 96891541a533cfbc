//! End to end (IR only): the image-model blocks of convolutional networks run on wgpu and compared
//! with cpu-ref running the same graph:
//!
//! - a ResNet basic block (3×3 convs, a batch norm folded into scale + shift, ReLU, a strided 1×1
//!   downsample on the residual path, global average pooling and a linear head);
//! - a ResNet(X) bottleneck block (1×1 → grouped 3×3 → 1×1 convs with GroupNorm, identity
//!   residual, ReduceMean over the image as the global pool);
//! - a U-Net down/up pair (conv + GroupNorm + SiLU, 2×2 max pool, a 2× ResizeNearest followed by a
//!   conv and a stride-2 ConvTranspose as the two up paths, the skip concatenated along channels).
//!
//! Shapes are small (lavapipe) but straddle workgroup edges; weights are scaled like a trained
//! network's (about 1/√fan-in), so the activations stay of order one and a wrong value shows.

mod common;
use backend_api::op::{BinaryOp, ConvAttrs, ConvTransposeAttrs, PoolAttrs, PoolKind, ReduceOp, UnaryOp};
use backend_api::{DType, Graph, GraphBuilder, Tensor, Value};
use backend_cpu_ref as _;
use backend_wgpu as _;
use common::{check, cpu, random, run, wgpu};

/// A graph under construction with its random parameters (graph inputs named `p0`, `p1`, …).
struct Net {
    g: GraphBuilder,
    dtype: DType,
    params: Vec<(String, Tensor)>,
    seed: u64,
}

impl Net {
    fn new(dtype: DType, seed: u64) -> Net {
        Net { g: GraphBuilder::new(), dtype, params: Vec::new(), seed }
    }

    /// A parameter of `shape` uniform in [lo, hi).
    fn param(&mut self, shape: &[usize], lo: f64, hi: f64) -> Value {
        let name = format!("p{}", self.params.len());
        self.seed += 1;
        let t = random(self.dtype, shape, lo, hi, self.seed);
        let v = self.g.input(&name, self.dtype, shape.to_vec()).unwrap();
        self.params.push((name, t));
        v
    }

    /// A 2-D convolution `cin → cout` with a `k × k` kernel, fan-in scaled weights and a bias.
    fn conv(&mut self, x: Value, (cin, cout): (usize, usize), k: usize, stride: usize, groups: u32) -> Value {
        let fan_in = (cin / groups as usize * k * k) as f64;
        let s = 1.5 / fan_in.sqrt();
        let w = self.param(&[cout, cin / groups as usize, k, k], -s, s);
        let b = self.param(&[cout], -0.1, 0.1);
        let pad = k / 2;
        let a = ConvAttrs {
            stride: vec![stride],
            pads_begin: vec![pad],
            pads_end: vec![pad],
            groups,
            ..Default::default()
        };
        self.g.conv(x, w, Some(b), &a).unwrap()
    }

    /// A batch norm folded into a per-channel scale and shift (inference form).
    fn folded_norm(&mut self, x: Value, c: usize) -> Value {
        let scale = self.param(&[1, c, 1, 1], 0.5, 1.5);
        let shift = self.param(&[1, c, 1, 1], -0.2, 0.2);
        let y = self.g.binary(BinaryOp::Mul, x, scale).unwrap();
        self.g.binary(BinaryOp::Add, y, shift).unwrap()
    }

    fn group_norm(&mut self, x: Value, c: usize, groups: u32) -> Value {
        let gamma = self.param(&[c], 0.5, 1.5);
        let beta = self.param(&[c], -0.2, 0.2);
        self.g.group_norm(x, gamma, Some(beta), groups, 1e-5).unwrap()
    }

    fn unary(&mut self, op: UnaryOp, x: Value) -> Value {
        self.g.unary(op, x).unwrap()
    }

    fn add(&mut self, a: Value, b: Value) -> Value {
        self.g.binary(BinaryOp::Add, a, b).unwrap()
    }

    /// A linear head `[n, c] → [n, classes]`.
    fn linear(&mut self, x: Value, c: usize, classes: usize) -> Value {
        let s = 1.0 / (c as f64).sqrt();
        let w = self.param(&[c, classes], -s, s);
        let b = self.param(&[1, classes], -0.1, 0.1);
        let y = self.g.matmul(x, w).unwrap();
        self.g.binary(BinaryOp::Add, y, b).unwrap()
    }

    /// The graph with output `y`, and its inputs: `x` then the parameters.
    fn finish(mut self, y: Value, x: Tensor) -> (Graph, Vec<(String, Tensor)>) {
        self.g.output(y).unwrap();
        let mut inputs = vec![("x".to_string(), x)];
        inputs.extend(self.params);
        (self.g.build().unwrap(), inputs)
    }
}

/// ResNet basic block with a strided downsample, then global average pool and a linear head:
/// `[n, c, h, w]` → `[n, 10]`.
fn resnet_basic(dtype: DType, [n, c, h, w]: [usize; 4]) -> (Graph, Vec<(String, Tensor)>) {
    let mut net = Net::new(dtype, 10);
    let x = net.g.input("x", dtype, vec![n, c, h, w]).unwrap();
    let co = 2 * c;
    let y = net.conv(x, (c, co), 3, 2, 1);
    let y = net.folded_norm(y, co);
    let y = net.unary(UnaryOp::Relu, y);
    let y = net.conv(y, (co, co), 3, 1, 1);
    let y = net.folded_norm(y, co);
    let short = net.conv(x, (c, co), 1, 2, 1);
    let short = net.folded_norm(short, co);
    let y = net.add(y, short);
    let y = net.unary(UnaryOp::Relu, y);
    let (oh, ow) = (h.div_ceil(2), w.div_ceil(2));
    let pooled = net.g.pool(y, &PoolAttrs::new(PoolKind::Avg, &[oh, ow], &[1])).unwrap();
    let flat = net.g.reshape(pooled, &[n as i64, co as i64]).unwrap();
    let logits = net.linear(flat, co, 10);
    net.finish(logits, random(dtype, &[n, c, h, w], -1.0, 1.0, 1))
}

/// ResNeXt-style bottleneck: 1×1 reduce, grouped 3×3, 1×1 expand, GroupNorm after each, identity
/// residual, ReduceMean over the image and a linear head: `[n, c, h, w]` → `[n, 10]`.
fn bottleneck(dtype: DType, [n, c, h, w]: [usize; 4]) -> (Graph, Vec<(String, Tensor)>) {
    let mut net = Net::new(dtype, 20);
    let x = net.g.input("x", dtype, vec![n, c, h, w]).unwrap();
    let mid = c / 2;
    let y = net.conv(x, (c, mid), 1, 1, 1);
    let y = net.group_norm(y, mid, 4);
    let y = net.unary(UnaryOp::Relu, y);
    let y = net.conv(y, (mid, mid), 3, 1, 4);
    let y = net.group_norm(y, mid, 4);
    let y = net.unary(UnaryOp::Relu, y);
    let y = net.conv(y, (mid, c), 1, 1, 1);
    let y = net.group_norm(y, c, 8);
    let y = net.add(y, x);
    let y = net.unary(UnaryOp::Relu, y);
    let pooled = net.g.reduce(ReduceOp::Mean, y, &[2, 3], false).unwrap();
    let logits = net.linear(pooled, c, 10);
    net.finish(logits, random(dtype, &[n, c, h, w], -1.0, 1.0, 2))
}

/// U-Net down/up pair: `[n, c, h, w]` (h, w even) → `[n, c, h, w]`.
fn unet_pair(dtype: DType, [n, c, h, w]: [usize; 4]) -> (Graph, Vec<(String, Tensor)>) {
    let mut net = Net::new(dtype, 30);
    let x = net.g.input("x", dtype, vec![n, c, h, w]).unwrap();
    let f = 2 * c;
    // Down: conv, GroupNorm, SiLU (the skip), then 2×2 max pool and another conv block.
    let d = net.conv(x, (c, f), 3, 1, 1);
    let d = net.group_norm(d, f, 4);
    let skip = net.unary(UnaryOp::Silu, d);
    let p = net.g.pool(skip, &PoolAttrs::new(PoolKind::Max, &[2], &[2])).unwrap();
    let m = net.conv(p, (f, f), 3, 1, 1);
    let m = net.group_norm(m, f, 4);
    let m = net.unary(UnaryOp::Silu, m);
    // Up, twice: nearest 2× then a conv, and a stride-2 transposed conv.
    let up = net.g.resize_nearest(m, &[2, 2]).unwrap();
    let up = net.conv(up, (f, c), 3, 1, 1);
    let s = 1.0 / ((f * 4) as f64).sqrt();
    let wt = net.param(&[f, c, 2, 2], -s, s);
    let bt = net.param(&[c], -0.1, 0.1);
    let ta = ConvTransposeAttrs { conv: ConvAttrs { stride: vec![2], ..Default::default() }, output_padding: vec![] };
    let ct = net.g.conv_transpose(m, wt, Some(bt), &ta).unwrap();
    // Skip concat along channels, GroupNorm, SiLU and a 1×1 conv back to c channels.
    let cat = net.g.concat(&[skip, up, ct], 1).unwrap();
    let y = net.group_norm(cat, 2 * f, 8);
    let y = net.unary(UnaryOp::Silu, y);
    let y = net.conv(y, (2 * f, c), 1, 1, 1);
    net.finish(y, random(dtype, &[n, c, h, w], -1.0, 1.0, 3))
}

/// Runs `graph` on both backends and compares, errors relative to the largest output.
fn compare(name: &str, (graph, inputs): (Graph, Vec<(String, Tensor)>), tol: f64) {
    let named: Vec<(&str, &Tensor)> = inputs.iter().map(|(n, t)| (n.as_str(), t)).collect();
    let got = run(wgpu(), &graph, &named).remove(0);
    let want = run(cpu(), &graph, &named).remove(0);
    let w = want.view().to_f64_lossy();
    let scale = w.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(w.iter().all(|v| v.is_finite()) && scale > 0.05, "{name}: outputs not of order one ({scale})");
    check(name, &got, &want, Some(tol), Some(&vec![scale; w.len()]));
}

#[test]
fn resnet_basic_block_matches_cpu_ref() {
    compare("ResNet basic block f32", resnet_basic(DType::F32, [2, 8, 11, 9]), 1e-4);
    compare("ResNet basic block f16", resnet_basic(DType::F16, [1, 8, 10, 10]), 2e-2);
}

#[test]
fn resnet_bottleneck_block_matches_cpu_ref() {
    compare("bottleneck f32", bottleneck(DType::F32, [2, 32, 9, 7]), 1e-4);
}

#[test]
fn unet_down_up_pair_matches_cpu_ref() {
    compare("U-Net pair f32", unet_pair(DType::F32, [2, 4, 12, 10]), 1e-4);
    compare("U-Net pair bf16", unet_pair(DType::BF16, [1, 4, 8, 8]), 8e-2);
}
