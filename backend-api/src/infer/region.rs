//! Fused regions (§2.14). The program itself is validated by [`RegionProgram::register_dtypes`].

use super::conv::resized_type;
use super::util::{mul, out, st, static_at};
use super::{arity, broadcast_all};
use crate::op::{RegionAttrs, RegionProgram, TransformRegionAttrs};
use crate::{bail, Result, TensorType};

/// Outputs of `program` over inputs `ins`: one per output register, at the broadcast shape.
fn region_outputs(program: &RegionProgram, ins: &[TensorType], op: &str) -> Result<Vec<TensorType>> {
    let dtypes: Vec<_> = ins.iter().map(|t| t.dtype).collect();
    let regs = program.register_dtypes(&dtypes).map_err(|e| e.context(op))?;
    let shape = broadcast_all(ins).map_err(|e| e.context(format!("{op} inputs")))?;
    program.outputs.iter().map(|&r| out(regs[r as usize], shape.0.clone())).collect()
}

pub(crate) fn elementwise_region(a: &RegionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    region_outputs(&a.program, ins, "ElementwiseRegion")
}

pub(crate) fn batch_elementwise_region(a: &RegionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let p = &a.program;
    if p.num_inputs != 1 || p.outputs.len() != 1 {
        bail!(
            Attribute,
            "BatchElementwiseRegion needs a program with 1 input and 1 output, got {} and {}",
            p.num_inputs,
            p.outputs.len()
        );
    }
    if ins.is_empty() {
        bail!(Arity, "BatchElementwiseRegion needs at least one input");
    }
    let x0 = &ins[0];
    for (i, t) in ins.iter().enumerate().skip(1) {
        if t.dtype != x0.dtype {
            bail!(DType, "BatchElementwiseRegion input {i} {t} must have the dtype of input 0 {x0}");
        }
        if t.shape != x0.shape {
            bail!(Shape, "BatchElementwiseRegion input {i} {t} must have the shape of input 0 {x0}");
        }
    }
    if x0.rank() == 0 {
        bail!(Shape, "BatchElementwiseRegion inputs {x0} must have rank >= 1 (they are stacked on axis 0)");
    }
    let one = region_outputs(p, &ins[..1], "BatchElementwiseRegion")?;
    let mut dims = x0.shape.0.clone();
    if ins.len() > 1 {
        let d0 = static_at(x0, 0, "BatchElementwiseRegion input (stacked axis 0)")?;
        dims[0] = st(mul(ins.len(), d0, "BatchElementwiseRegion stacked axis 0")?);
    }
    Ok(vec![out(one[0].dtype, dims)?])
}

pub(crate) fn transform_region(a: &TransformRegionAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let r = a.resized_input as usize;
    if a.resized_input >= a.program.num_inputs {
        bail!(Attribute, "TransformRegion resized_input {r} must be < num_inputs {}", a.program.num_inputs);
    }
    if a.scales.is_empty() || a.scales.len() > 3 {
        bail!(Attribute, "TransformRegion scales {:?} must have 1 to 3 entries", a.scales);
    }
    arity(ins, a.program.num_inputs as usize, "TransformRegion (num_inputs of the program)")?;
    let x = &ins[r];
    if x.rank() != 2 + a.scales.len() {
        bail!(Shape, "TransformRegion resized input {r} {x} must have rank 2 + {} (N-C-spatial)", a.scales.len());
    }
    let mut replaced = ins.to_vec();
    replaced[r] = resized_type(&a.scales, x, "TransformRegion")?;
    region_outputs(&a.program, &replaced, "TransformRegion")
}
