//! Runs a graph on cpu-ref and wgpu and compares the outputs under a tolerance class (§1.11).

use crate::values::min_normal;
use backend_api::spec::Tolerance;
use backend_api::{Backend, DType, GraphBuilder, Tensor, Value};
use backend_wgpu::{WgpuBackend, WgpuOptions};
use half::{bf16, f16};

pub struct Harness {
    pub cpu: Box<dyn Backend>,
    pub gpu: WgpuBackend,
    pub lines: Vec<String>,
    pub failures: Vec<String>,
}

/// The worst element of one comparison.
#[derive(Default, Clone)]
pub struct Worst {
    /// Largest |got - want| / allowed (0 when equal).
    pub ratio: f64,
    /// Where the largest ratio was seen.
    pub at: String,
    /// Largest relative error among finite, non-tiny elements.
    pub rel: f64,
    pub bad: usize,
}

impl Harness {
    pub fn new() -> Harness {
        let cpu = backend_api::create("cpu-ref").expect("cpu-ref backend");
        let gpu = WgpuBackend::new(&WgpuOptions::default()).expect("a wgpu adapter (install mesa-vulkan-drivers)");
        Harness { cpu, gpu, lines: Vec::new(), failures: Vec::new() }
    }

    pub fn has(&self, d: DType) -> bool {
        let c = self.gpu.device_caps();
        match d {
            DType::F64 => c.f64 && c.i64,
            DType::I64 => c.i64,
            _ => true,
        }
    }

    /// Builds a graph over inputs `xs` (named x0, x1, ...), runs it on both backends and compares
    /// every output under `tol`; records the result under `label`.
    pub fn check(
        &mut self,
        label: &str,
        xs: &[Tensor],
        tol: Tolerance,
        build: impl Fn(&mut GraphBuilder, &[Value]) -> Vec<Value>,
    ) {
        match self.try_check(xs, tol, build) {
            Ok(w) => {
                self.lines.push(format!("{label:<34} ratio {:>8.2e}  rel {:>8.2e}  {}", w.ratio, w.rel, w.at));
                if w.bad > 0 {
                    self.failures
                        .push(format!("{label}: {} elements outside {tol:?} (worst ratio {:.3e})", w.bad, w.ratio));
                }
            }
            Err(e) => self.failures.push(format!("{label}: {e}")),
        }
    }

    pub fn try_check(
        &self,
        xs: &[Tensor],
        tol: Tolerance,
        build: impl Fn(&mut GraphBuilder, &[Value]) -> Vec<Value>,
    ) -> Result<Worst, String> {
        let mut g = GraphBuilder::new();
        let names: Vec<String> = (0..xs.len()).map(|k| format!("x{k}")).collect();
        let vals: Vec<Value> = xs
            .iter()
            .zip(&names)
            .map(|(t, n)| g.input(n, t.dtype(), t.shape()).map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        for v in build(&mut g, &vals) {
            g.output(v).map_err(|e| format!("build: {e}"))?;
        }
        let graph = g.build().map_err(|e| format!("build: {e}"))?;
        let feeds: Vec<(&str, backend_api::TensorView<'_>)> =
            names.iter().map(|n| n.as_str()).zip(xs.iter().map(|t| t.view())).collect();
        let want = {
            let mut e = self.cpu.compile(&graph, &Default::default()).map_err(|e| format!("cpu-ref compile: {e}"))?;
            e.run(&feeds).map_err(|e| format!("cpu-ref run: {e}"))?
        };
        let mut exe = self.gpu.compile(&graph, &Default::default()).map_err(|e| format!("wgpu compile: {e}"))?;
        let got = exe.run(&feeds).map_err(|e| format!("wgpu run: {e}"))?;
        let mut worst = Worst::default();
        for (k, (g, w)) in got.iter().zip(&want).enumerate() {
            let c = compare(g, w, tol).map_err(|e| format!("output {k}: {e}"))?;
            if c.ratio > worst.ratio {
                worst.ratio = c.ratio;
                worst.at = format!("out {k} {}", c.worst_at);
            }
            worst.rel = worst.rel.max(c.rel);
            worst.bad += c.bad;
            if c.bad > 0 {
                eprintln!("  output {k} ({:?}): {}", w.shape(), c.first_bad);
            }
            if c.ratio > 0.1 && c.ratio.is_finite() {
                eprintln!("  output {k} ({:?}) worst: {} (ratio {:.3})", w.shape(), c.worst_at, c.ratio);
            }
        }
        Ok(worst)
    }

    pub fn finish(self, what: &str) {
        eprintln!("---- {what}: {} variants checked", self.lines.len());
        for l in &self.lines {
            eprintln!("{l}");
        }
        assert!(self.failures.is_empty(), "{what}: {} failures:\n{}", self.failures.len(), self.failures.join("\n"));
    }
}

pub struct Cmp {
    pub ratio: f64,
    pub rel: f64,
    pub bad: usize,
    pub first_bad: String,
    pub worst_at: String,
}

/// One element's float value (F32 for C64 components).
pub fn floats_of(t: &Tensor) -> Vec<f64> {
    let b = t.bytes();
    match t.dtype() {
        DType::F32 | DType::C64 => {
            b.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64).collect()
        }
        DType::F16 => b.chunks_exact(2).map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64()).collect(),
        DType::BF16 => b.chunks_exact(2).map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64()).collect(),
        DType::F64 => b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect(),
        _ => Vec::new(),
    }
}

/// §1.11: NaN = NaN, ±inf only equal to itself, +0 = -0, |x| below the smallest normal = 0, then
/// |got - want| <= atol + rtol |want|. Integers and Bool: bytes equal.
pub fn compare(got: &Tensor, want: &Tensor, tol: Tolerance) -> Result<Cmp, String> {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return Err(format!("got {}{:?}, want {}{:?}", got.dtype(), got.shape(), want.dtype(), want.shape()));
    }
    let d = want.dtype();
    let mut c = Cmp { ratio: 0.0, rel: 0.0, bad: 0, first_bad: String::new(), worst_at: String::new() };
    if !(d.is_float() || d == DType::C64) {
        let s = d.size();
        for (i, (g, w)) in got.bytes().chunks_exact(s).zip(want.bytes().chunks_exact(s)).enumerate() {
            if g != w {
                if c.bad == 0 {
                    c.first_bad = format!("[{i}] got {g:?} want {w:?}");
                }
                c.bad += 1;
                c.ratio = f64::INFINITY;
            }
        }
        return Ok(c);
    }
    let comp = if d == DType::C64 { DType::F32 } else { d };
    let (rtol, atol) = tol.rtol_atol(d);
    let tiny = min_normal(comp);
    let flush = |x: f64| if x.abs() < tiny { 0.0 } else { x };
    for (i, (g, w)) in floats_of(got).into_iter().zip(floats_of(want)).enumerate() {
        let (gf, wf) = (flush(g), flush(w));
        let (ok, ratio) = if gf.is_nan() || wf.is_nan() {
            let same = gf.is_nan() && wf.is_nan();
            (same, if same { 0.0 } else { f64::INFINITY })
        } else if gf.is_infinite() || wf.is_infinite() {
            (gf == wf, if gf == wf { 0.0 } else { f64::INFINITY })
        } else {
            let diff = (gf - wf).abs();
            let allowed = atol + rtol * wf.abs();
            if wf != 0.0 {
                c.rel = c.rel.max(diff / wf.abs());
            }
            (
                diff <= allowed,
                if diff == 0.0 {
                    0.0
                } else if allowed == 0.0 {
                    f64::INFINITY
                } else {
                    diff / allowed
                },
            )
        };
        if ratio > c.ratio {
            c.ratio = ratio;
            c.worst_at = format!("[{i}] got {g:e} want {w:e}");
        }
        if !ok {
            if c.bad == 0 {
                c.first_bad = format!("[{i}] got {g:e} want {w:e}");
            }
            c.bad += 1;
        }
    }
    Ok(c)
}
