//! RngBits, RngUniform, RngNormal and Sample (§2.12) with `shaders::random`.
//!
//! The key is an input tensor read by the kernel at run time (a new key needs no recompilation);
//! the op seed and the float attributes travel in the params uniform. The elementwise ops run one
//! invocation per Philox block of four stream words; `Sample` runs one workgroup per row (see
//! `random_sample.wgsl` for how top-k/top-p cuts are found without sorting, for any vocabulary).
//! Stream positions are 64-bit: each dispatch carries the 64-bit position of its first block/row.

use super::legacy::{words, zero_kernel, Buf, Kernel, LowerCtx, Lowered};
use super::reduce::workgroup_grid;
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::op::{Op, SampleAttrs};
use backend_api::spec::op_label;
use backend_api::{bail, DType, Error, ErrorKind, Result};
use bytemuck::{Pod, Zeroable};
use shaders::random::{elem_module, sample_module, RngKind};

/// Kernels index with u32: stay well inside.
const MAX_ELEMENTS: usize = 1 << 31;

/// `Params` of `random_elem.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct ElemParams {
    n: u32,
    nblocks: u32,
    seed: [u32; 2],
    base: [u32; 2],
    /// `opaque_zero` (must be 0: see `uniform_f32` in random_f32.wgsl) and padding.
    pad: [u32; 2],
    a: [u32; 2],
    b: [u32; 2],
}

/// `Params` of `random_sample.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SampleParams {
    rows: u32,
    v: u32,
    temperature: f32,
    top_k: u32,
    top_p: f32,
    greedy: u32,
    seed: [u32; 2],
    base: [u32; 2],
    /// `opaque_zero` (must be 0: see `scaled_logit` in random_sample.wgsl) and padding.
    pad: [u32; 2],
}

/// A u64 as (lo, hi) words.
fn split(x: u64) -> [u32; 2] {
    [x as u32, (x >> 32) as u32]
}

/// A float attribute as the kernel reads it: f32 bits for F32/F16/BF16, f64 bits for F64.
fn attr(x: f64, d: DType) -> [u32; 2] {
    if d == DType::F64 {
        split(x.to_bits())
    } else {
        [(x as f32).to_bits(), 0]
    }
}

/// Lowers a node of the random family.
pub fn lower(ctx: &LowerCtx<'_>) -> Result<Lowered> {
    match &ctx.node.op {
        Op::RngBits(a) => elem(ctx, RngKind::Bits, a.seed, (0.0, 0.0)),
        Op::RngUniform(a) => elem(ctx, RngKind::Uniform, a.seed, (a.low, a.high)),
        Op::RngNormal(a) => elem(ctx, RngKind::Normal, a.seed, (a.mean, a.std)),
        Op::Sample(a) => sample(ctx, a),
        other => bail!(Unsupported, "{} is not in the random family", op_label(other)),
    }
}

/// RngBits / RngUniform / RngNormal: one invocation per block of four elements.
fn elem(ctx: &LowerCtx<'_>, kind: RngKind, seed: u64, ab: (f64, f64)) -> Result<Lowered> {
    let Some((d, _)) = ctx.outputs.first() else {
        bail!(Arity, "{kind:?} node has no output");
    };
    let d = *d;
    let Some(src) = elem_module(kind, d) else {
        bail!(Unsupported, "no GPU kernel for Rng{kind:?} producing {d}");
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("random shader: {e}")))?;
    let n = ctx.out_numel(0);
    if n == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "Rng{kind:?} output {:?} has more than 2^31 elements", ctx.outputs[0].1);
    }
    let nblocks = n.div_ceil(4);
    let p = ElemParams {
        n: n as u32,
        nblocks: nblocks as u32,
        seed: split(seed),
        base: [0, 0],
        pad: [0, 0],
        a: attr(ab.0, d),
        b: attr(ab.1, d),
    };
    let main = Kernel {
        source,
        bindings: vec![(Buf::In(0), BindKind::Read), (Buf::Out(0), BindKind::Write)],
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: Grid::Threads(nblocks as u64),
    };
    let mut kernels = Vec::new();
    if shaders::is_packed(d) {
        kernels.push(zero_kernel(Buf::Out(0), words(d, n)));
    }
    kernels.push(main);
    Ok(Lowered::Kernels { temps: vec![], kernels })
}

/// Sample: one workgroup per row.
fn sample(ctx: &LowerCtx<'_>, a: &SampleAttrs) -> Result<Lowered> {
    let Some((xd, dims)) = ctx.inputs.first() else {
        bail!(Arity, "Sample node has no logits input");
    };
    let Some(src) = sample_module(*xd, a.index_dtype) else {
        bail!(Unsupported, "no GPU Sample kernel for {xd} logits and {} indices", a.index_dtype);
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("sample shader: {e}")))?;
    let Some(&v) = dims.last() else {
        bail!(Shape, "Sample logits must have rank >= 1, got a scalar");
    };
    let numel: usize = dims.iter().product();
    let rows = ctx.out_numel(0);
    if rows == 0 || v == 0 {
        return Ok(Lowered::Kernels { temps: vec![], kernels: vec![] });
    }
    if numel >= MAX_ELEMENTS {
        bail!(DeviceLimit, "Sample logits {dims:?} have more than 2^31 elements");
    }
    let p = SampleParams {
        rows: rows as u32,
        v: v as u32,
        temperature: a.temperature,
        top_k: a.top_k,
        top_p: a.top_p,
        greedy: u32::from(a.temperature == 0.0),
        seed: split(a.seed),
        base: [0, 0],
        pad: [0, 0],
    };
    let main = Kernel {
        source,
        bindings: vec![(Buf::In(0), BindKind::Read), (Buf::In(1), BindKind::Read), (Buf::Out(0), BindKind::Write)],
        params: bytemuck::bytes_of(&p).to_vec(),
        grid: workgroup_grid(ctx, rows)?,
    };
    Ok(Lowered::Kernels { temps: vec![], kernels: vec![main] })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_match_the_wgsl_layouts() {
        assert_eq!(std::mem::size_of::<ElemParams>(), 48);
        assert_eq!(std::mem::size_of::<SampleParams>(), 48);
    }

    #[test]
    fn attributes_keep_their_precision() {
        assert_eq!(attr(0.1, DType::F64), split(0.1f64.to_bits()));
        assert_eq!(attr(0.1, DType::F32), [0.1f32.to_bits(), 0]);
        assert_eq!(split(0x1234_5678_9abc_def0), [0x9abc_def0, 0x1234_5678]);
    }
}
