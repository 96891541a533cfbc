//! RngBits, RngUniform, RngNormal and Sample (§2.12) with `shaders::random`.
//!
//! The key is an input tensor read by the kernel at run time (a new key needs no recompilation);
//! the op seed and the float attributes travel in the params uniform. The elementwise ops run one
//! invocation per Philox block of four stream words; `Sample` runs one workgroup per row (see
//! `random_sample.wgsl` for how top-k/top-p cuts are found without sorting, for any vocabulary).
//! Stream positions are 64-bit: each dispatch carries the 64-bit position of its first block/row.

use super::builder::{u32_of, Kernel, Lower, Operand};
use super::Grid;
use crate::pipelines::BindKind;
use backend_api::op::{RngBitsAttrs, RngNormalAttrs, RngUniformAttrs, SampleAttrs};
use backend_api::{bail, ensure, DType, Error, ErrorKind, Result};
use shaders::params::Params;
use shaders::random::{elem_module, sample_module, RandomElemParams, RandomSampleParams, RngKind};

/// Kernels index with u32: stay well inside.
const MAX_ELEMENTS: usize = 1 << 31;

/// RngBits (§2.12.1): the raw U32 stream of `key` and `a.seed` into `out`.
pub fn rng_bits(b: &mut Lower<'_>, a: &RngBitsAttrs, key: &Operand, out: &Operand) -> Result<()> {
    elem(b, RngKind::Bits, a.seed, (0.0, 0.0), key, out)
}

/// RngUniform (§2.12.2): uniforms in `[a.low, a.high)` of `a.dtype` (`out`'s) into `out`.
pub fn rng_uniform(b: &mut Lower<'_>, a: &RngUniformAttrs, key: &Operand, out: &Operand) -> Result<()> {
    ensure!(out.dtype == a.dtype, DType, "RngUniform of {} cannot write {}", a.dtype, out.dtype);
    elem(b, RngKind::Uniform, a.seed, (a.low, a.high), key, out)
}

/// RngNormal (§2.12.3): normals of mean `a.mean` and deviation `a.std` of `a.dtype` into `out`.
pub fn rng_normal(b: &mut Lower<'_>, a: &RngNormalAttrs, key: &Operand, out: &Operand) -> Result<()> {
    ensure!(out.dtype == a.dtype, DType, "RngNormal of {} cannot write {}", a.dtype, out.dtype);
    elem(b, RngKind::Normal, a.seed, (a.mean, a.std), key, out)
}

/// Sample (§2.12.4): one token index per row of `logits` (the last axis) into `out`, with the
/// stream of `key` and `a.seed`; one workgroup per row.
pub fn sample(b: &mut Lower<'_>, a: &SampleAttrs, logits: &Operand, key: &Operand, out: &Operand) -> Result<()> {
    let xd = logits.dtype;
    ensure!(out.dtype == a.index_dtype, DType, "Sample of {} indices cannot write {}", a.index_dtype, out.dtype);
    let Some(src) = sample_module(xd, a.index_dtype) else {
        bail!(Unsupported, "no GPU Sample kernel for {xd} logits and {} indices", a.index_dtype);
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("sample shader: {e}")))?;
    let Some(&v) = logits.dims.last() else {
        bail!(Shape, "Sample logits must have rank >= 1, got a scalar");
    };
    let rows = out.numel();
    if rows == 0 || v == 0 {
        return Ok(());
    }
    ensure!(rows.checked_mul(v) == Some(logits.numel()), Shape, "{rows} samples from logits {:?}", logits.dims);
    if logits.numel() >= MAX_ELEMENTS {
        bail!(DeviceLimit, "Sample logits {:?} have more than 2^31 elements", logits.dims);
    }
    let [seed_lo, seed_hi] = split(a.seed);
    let p = RandomSampleParams {
        rows: u32_of(rows, "rows")?,
        v: u32_of(v, "logits per row")?,
        temperature: a.temperature,
        top_k: a.top_k,
        top_p: a.top_p,
        greedy: u32::from(a.temperature == 0.0),
        seed_lo,
        seed_hi,
        // Stream position 0 and the opaque zero (see `scaled_logit` in random_sample.wgsl).
        ..RandomSampleParams::default()
    };
    let bindings = vec![(logits.window, BindKind::Read), (key.window, BindKind::Read), (out.window, BindKind::Write)];
    let grid = b.workgroups(rows)?;
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid, flops: None });
    Ok(())
}

/// A u64 as (lo, hi) words.
fn split(x: u64) -> [u32; 2] {
    let [a, b, c, d, e, f, g, h] = x.to_le_bytes();
    [u32::from_le_bytes([a, b, c, d]), u32::from_le_bytes([e, f, g, h])]
}

/// A float attribute as the kernel reads it: f32 bits for F32/F16/BF16 (rounded to f32 as the
/// reference does), f64 bits for F64.
fn attr(x: f64, d: DType) -> [u32; 2] {
    if d == DType::F64 {
        split(x.to_bits())
    } else {
        [(x as f32).to_bits(), 0]
    }
}

/// RngBits / RngUniform / RngNormal: one invocation per block of four elements.
fn elem(b: &mut Lower<'_>, kind: RngKind, seed: u64, ab: (f64, f64), key: &Operand, out: &Operand) -> Result<()> {
    let d = out.dtype;
    let Some(src) = elem_module(kind, d) else {
        bail!(Unsupported, "no GPU kernel for Rng{kind:?} producing {d}");
    };
    let source = src.map_err(|e| Error::new(ErrorKind::Device, format!("random shader: {e}")))?;
    let n = out.numel();
    if n == 0 {
        return Ok(());
    }
    if n >= MAX_ELEMENTS {
        bail!(DeviceLimit, "Rng{kind:?} output {:?} has more than 2^31 elements", out.dims);
    }
    let [seed_lo, seed_hi] = split(seed);
    let p = RandomElemParams {
        n: u32_of(n, "elements")?,
        nblocks: u32_of(n.div_ceil(4), "blocks")?,
        seed_lo,
        seed_hi,
        a: attr(ab.0, d),
        b: attr(ab.1, d),
        // Block index 0 and the opaque zero (see `uniform_f32` in random_f32.wgsl).
        ..RandomElemParams::default()
    };
    b.zero_if_packed(out)?;
    let bindings = vec![(key.window, BindKind::Read), (out.window, BindKind::Write)];
    b.push(Kernel { source, bindings, params: p.to_bytes(), grid: Grid::Threads(u64::from(p.nblocks)), flops: None });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_match_the_wgsl_layouts() {
        assert_eq!(std::mem::size_of::<RandomElemParams>(), 48);
        assert_eq!(std::mem::size_of::<RandomSampleParams>(), 48);
    }

    #[test]
    fn attributes_keep_their_precision() {
        assert_eq!(attr(0.1, DType::F64), split(0.1f64.to_bits()));
        assert_eq!(attr(0.1, DType::F32), [0.1f32.to_bits(), 0]);
        assert_eq!(split(0x1234_5678_9abc_def0), [0x9abc_def0, 0x1234_5678]);
    }

    #[test]
    fn blocks_of_four_and_zeroed_packed_outputs() {
        let caps = crate::device::DeviceCaps::for_tests();
        let mut b = Lower::new(&caps, 1);
        let key = Operand::whole(super::super::Buf::In(0), DType::U32, vec![2]).unwrap();
        let out = Operand::whole(super::super::Buf::Out(0), DType::F16, vec![3, 3]).unwrap();
        let a = RngUniformAttrs {
            shape: backend_api::Shape::of(&[3, 3]),
            dtype: DType::F16,
            low: -1.0,
            high: 2.0,
            seed: 1 << 40,
        };
        rng_uniform(&mut b, &a, &key, &out).unwrap();
        let l = b.finish();
        assert_eq!(l.kernels().len(), 2, "zero, then the generator");
        let p: RandomElemParams = bytemuck::pod_read_unaligned(&l.kernels()[1].params);
        assert_eq!((p.n, p.nblocks, p.seed_lo, p.seed_hi, p.opaque_zero), (9, 3, 0, 1 << 8, 0));
        assert_eq!(l.kernels()[1].grid, Grid::Threads(3));
    }
}
