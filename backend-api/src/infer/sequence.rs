//! Recurrent cells, state-space scans and `Scan` (§2.10).

use super::control::{inputs_of, outputs_of, params_consistent, signature};
use super::util::{mul, out, rank_is, shape_is, st};
use super::{arity, dtype_in};
use crate::op::{GatedDeltaNetAttrs, RecurrentAttrs, ScanAttrs, StateSpaceAttrs};
use crate::{bail, DTypeSet, Dim, Result, Shape, TensorType};

/// Which recurrent cell (§2.10.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RecurrentKind {
    Rnn,
    Gru,
    Lstm,
}

impl RecurrentKind {
    fn gates(self) -> usize {
        match self {
            RecurrentKind::Rnn => 1,
            RecurrentKind::Gru => 3,
            RecurrentKind::Lstm => 4,
        }
    }
}

/// All inputs float32-family with the dtype of the first.
fn float_inputs(ins: &[TensorType], names: &[&str], op: &str) -> Result<()> {
    dtype_in(&ins[0], DTypeSet::FLOAT32_FAMILY, &format!("{op} input {}", names[0]))?;
    for (t, n) in ins.iter().zip(names).skip(1) {
        if t.dtype != ins[0].dtype {
            bail!(DType, "{op} input {n} {t} must have the dtype of {} {}", names[0], ins[0]);
        }
    }
    Ok(())
}

pub(crate) fn recurrent(kind: RecurrentKind, a: &RecurrentAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let op = format!("{kind:?}");
    if a.hidden_size == 0 || a.num_layers == 0 {
        bail!(Attribute, "{op} hidden_size {} and num_layers {} must be >= 1", a.hidden_size, a.num_layers);
    }
    let (h, l, d) = (a.hidden_size as usize, a.num_layers as usize, a.num_directions());
    let per = 2 + 2 * usize::from(a.has_bias);
    let states = if a.has_initial_state {
        if kind == RecurrentKind::Lstm {
            2
        } else {
            1
        }
    } else {
        0
    };
    let (ld, dh) = (mul(l, d, &op)?, mul(d, h, &op)?);
    let weights = mul(ld, per, &op)?;
    arity(
        ins,
        1 + weights + states,
        &format!(
            "{op} with {l} layer(s), {d} direction(s), has_bias {}, has_initial_state {}",
            a.has_bias, a.has_initial_state
        ),
    )?;
    let x = &ins[0];
    dtype_in(x, DTypeSet::FLOAT32_FAMILY, &format!("{op} input x"))?;
    if let Some((i, t)) = ins.iter().enumerate().find(|(_, t)| t.dtype != x.dtype) {
        bail!(DType, "{op} input {i} {t} must have the dtype of x {x}");
    }
    rank_is(x, 3, &format!("{op} x"))?;
    let (bat, seq) = if a.batch_first { (0, 1) } else { (1, 0) };
    let (b, s) = (x.shape.0[bat].clone(), x.shape.0[seq].clone());
    let gh = st(mul(kind.gates(), h, &op)?);
    for layer in 0..l {
        let in_l = if layer == 0 { x.shape.0[2].clone() } else { st(dh) };
        for dir in 0..d {
            let base = 1 + (layer * d + dir) * per;
            let tag = format!("{op} layer {layer} direction {dir}");
            shape_is(&ins[base], &[gh.clone(), in_l.clone()], &format!("{tag} w_ih ([Gc·H, in])"))?;
            shape_is(&ins[base + 1], &[gh.clone(), st(h)], &format!("{tag} w_hh ([Gc·H, H])"))?;
            if a.has_bias {
                shape_is(&ins[base + 2], std::slice::from_ref(&gh), &format!("{tag} b_ih ([Gc·H])"))?;
                shape_is(&ins[base + 3], std::slice::from_ref(&gh), &format!("{tag} b_hh ([Gc·H])"))?;
            }
        }
    }
    let state = vec![st(ld), b.clone(), st(h)];
    for (i, t) in ins[1 + weights..].iter().enumerate() {
        shape_is(t, &state, &format!("{op} initial state {} ([L·D, B, H])", ["h0", "c0"][i.min(1)]))?;
    }
    let y = if a.batch_first { vec![b, s, st(dh)] } else { vec![s, b, st(dh)] };
    let mut outs = vec![out(x.dtype, y)?, out(x.dtype, state.clone())?];
    if kind == RecurrentKind::Lstm {
        outs.push(out(x.dtype, state)?);
    }
    Ok(outs)
}

pub(crate) fn selective_scan(a: &StateSpaceAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let names = ["x", "delta", "a", "b", "c", "h0"];
    arity(ins, 5 + usize::from(a.has_initial_state), "SelectiveScan (x, delta, a, b, c, [h0])")?;
    float_inputs(ins, &names, "SelectiveScan")?;
    let x = &ins[0];
    rank_is(x, 3, "SelectiveScan x ([B, S, C])")?;
    let [bb, s, c] = dims3(x);
    shape_is(&ins[1], &x.shape.0, "SelectiveScan delta ([B, S, C])")?;
    rank_is(&ins[2], 2, "SelectiveScan a ([C, N])")?;
    let n = ins[2].shape.0[1].clone();
    shape_is(&ins[2], &[c.clone(), n.clone()], "SelectiveScan a ([C, N])")?;
    shape_is(&ins[3], &[bb.clone(), s.clone(), n.clone()], "SelectiveScan b ([B, S, N])")?;
    shape_is(&ins[4], &[bb.clone(), s, n.clone()], "SelectiveScan c ([B, S, N])")?;
    let state = vec![bb, c, n];
    if a.has_initial_state {
        shape_is(&ins[5], &state, "SelectiveScan h0 ([B, C, N])")?;
    }
    Ok(vec![x.clone(), out(x.dtype, state)?])
}

fn dims3(t: &TensorType) -> [Dim; 3] {
    [t.shape.0[0].clone(), t.shape.0[1].clone(), t.shape.0[2].clone()]
}

pub(crate) fn mamba2(a: &StateSpaceAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let names = ["x", "dt", "a", "b", "c", "state0"];
    arity(ins, 5 + usize::from(a.has_initial_state), "Mamba2 (x, dt, a, b, c, [state0])")?;
    float_inputs(ins, &names, "Mamba2")?;
    let x = &ins[0];
    rank_is(x, 4, "Mamba2 x ([B, S, H, P])")?;
    let [bb, s, h] = dims3(x);
    let p = x.shape.0[3].clone();
    shape_is(&ins[1], &[bb.clone(), s.clone(), h.clone()], "Mamba2 dt ([B, S, H])")?;
    shape_is(&ins[2], std::slice::from_ref(&h), "Mamba2 a ([H])")?;
    rank_is(&ins[3], 4, "Mamba2 b ([B, S, H, N])")?;
    let n = ins[3].shape.0[3].clone();
    let bc = [bb.clone(), s, h.clone(), n.clone()];
    shape_is(&ins[3], &bc, "Mamba2 b ([B, S, H, N])")?;
    shape_is(&ins[4], &bc, "Mamba2 c ([B, S, H, N])")?;
    let state = vec![bb, h, p, n];
    if a.has_initial_state {
        shape_is(&ins[5], &state, "Mamba2 state0 ([B, H, P, N])")?;
    }
    Ok(vec![x.clone(), out(x.dtype, state)?])
}

pub(crate) fn gated_delta_net(a: &GatedDeltaNetAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let names = ["q", "k", "v", "g", "beta", "state0"];
    arity(ins, 5 + usize::from(a.has_initial_state), "GatedDeltaNet (q, k, v, g, beta, [state0])")?;
    float_inputs(ins, &names, "GatedDeltaNet")?;
    if let Some(s) = a.scale {
        if !s.is_finite() {
            bail!(Attribute, "GatedDeltaNet scale {s} must be finite");
        }
    }
    let q = &ins[0];
    rank_is(q, 4, "GatedDeltaNet q ([B, S, H, Dk])")?;
    let [bb, s, h] = dims3(q);
    let dk = q.shape.0[3].clone();
    shape_is(&ins[1], &q.shape.0, "GatedDeltaNet k ([B, S, H, Dk])")?;
    rank_is(&ins[2], 4, "GatedDeltaNet v ([B, S, H, Dv])")?;
    let dv = ins[2].shape.0[3].clone();
    shape_is(&ins[2], &[bb.clone(), s.clone(), h.clone(), dv.clone()], "GatedDeltaNet v ([B, S, H, Dv])")?;
    let bsh = vec![bb.clone(), s.clone(), h.clone()];
    let g = &ins[3];
    match g.rank() {
        3 => shape_is(g, &bsh, "GatedDeltaNet g ([B, S, H])")?,
        4 => shape_is(g, &q.shape.0, "GatedDeltaNet g ([B, S, H, Dk])")?,
        r => bail!(Shape, "GatedDeltaNet g {g} must have rank 3 ([B, S, H]) or 4 ([B, S, H, Dk]), got {r}"),
    }
    shape_is(&ins[4], &bsh, "GatedDeltaNet beta ([B, S, H])")?;
    let state = vec![bb.clone(), h.clone(), dk, dv.clone()];
    if a.has_initial_state {
        shape_is(&ins[5], &state, "GatedDeltaNet state0 ([B, H, Dk, Dv])")?;
    }
    Ok(vec![out(q.dtype, vec![bb, s, h, dv])?, out(q.dtype, state)?])
}

pub(crate) fn scan(a: &ScanAttrs, ins: &[TensorType]) -> Result<Vec<TensorType>> {
    let (c, bc, x) = (a.num_carry as usize, a.num_bcast as usize, a.num_xs as usize);
    arity(ins, c + bc + x, &format!("Scan ({c} carries, {bc} broadcast, {x} sequence inputs)"))?;
    let Ok(len) = usize::try_from(a.length) else {
        bail!(Attribute, "Scan length {} does not fit in usize", a.length);
    };
    let mut want_in = ins[..c + bc].to_vec();
    for (m, t) in ins[c + bc..].iter().enumerate() {
        if t.shape.0.first() != Some(&st(len)) {
            bail!(Shape, "Scan sequence input {m} {t} must have leading dim length = {len}");
        }
        want_in.push(TensorType { dtype: t.dtype, shape: Shape(t.shape.0[1..].to_vec()) });
    }
    signature(&inputs_of(&a.body), &want_in, "Scan body input")?;
    let body_out = outputs_of(&a.body, "Scan body")?;
    if body_out.len() < c {
        bail!(Subgraph, "Scan body has {} outputs, fewer than its {c} carries", body_out.len());
    }
    signature(&body_out[..c], &ins[..c], "Scan body carry output")?;
    params_consistent(&[&a.body])?;
    let stacked = |t: &TensorType| {
        let mut dims = vec![st(len)];
        dims.extend(t.shape.0.iter().cloned());
        out(t.dtype, dims)
    };
    let mut outs = ins[..c].to_vec();
    for y in &body_out[c..] {
        outs.push(stacked(y)?);
    }
    if a.save_trajectory {
        for carry in &ins[..c] {
            outs.push(stacked(carry)?);
        }
    }
    Ok(outs)
}
