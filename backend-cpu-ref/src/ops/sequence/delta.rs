//! `GatedDeltaNet` (§2.10.6): the gated delta rule as the spec's five sequential steps, one state
//! `M[Dk, Dv]` per (batch, head). Computed in f64 and rounded once into the input dtype, like
//! `SelectiveScan` and `Mamba2` in [`super::ssm`]; nothing is clamped.
//!
//! Operands are checked by the op's own shape inference, so the indexing below is in range by
//! construction.

use super::ssm::Operands;
use crate::layout::count;
use crate::mem::try_filled;
use backend_api::op::{GatedDeltaNetAttrs, Op};
use backend_api::{Result, Tensor};

/// One step's operands for one (batch, head).
struct Step<'a> {
    q: &'a [f64],
    k: &'a [f64],
    v: &'a [f64],
    /// `[Dk]` log-decays (rank-4 `g`) or one shared by every key channel (rank-3 `g`).
    g: &'a [f64],
    beta: f64,
}

impl Step<'_> {
    /// `γ_i = exp(g_i)`, or `exp(g)` for a per-head `g`.
    fn gamma(&self, i: usize) -> f64 {
        let g = if self.g.len() == 1 { self.g[0] } else { self.g[i] };
        g.exp()
    }
}

/// Steps 1–5 of §2.10.6 on `m` (`[Dk, Dv]`, row-major); `o` receives step 5's output and `u` is
/// scratch of `Dv`.
fn delta_step(m: &mut [f64], s: &Step<'_>, scale: f64, u: &mut [f64], o: &mut [f64]) {
    let dv = s.v.len();
    // 1. decay and 2. u = Mᵀk, with the decayed M
    u.fill(0.0);
    for (i, &k) in s.k.iter().enumerate() {
        let gamma = s.gamma(i);
        for (mij, uj) in m[i * dv..][..dv].iter_mut().zip(u.iter_mut()) {
            *mij *= gamma;
            *uj += *mij * k;
        }
    }
    // 3. δ = β(v − u), kept in u
    for (uj, &vj) in u.iter_mut().zip(s.v) {
        *uj = s.beta * (vj - *uj);
    }
    // 4. M += k δᵀ and 5. o = scale · Mᵀq, with the updated M
    o.fill(0.0);
    for (i, (&k, &q)) in s.k.iter().zip(s.q).enumerate() {
        for ((mij, &dj), oj) in m[i * dv..][..dv].iter_mut().zip(u.iter()).zip(o.iter_mut()) {
            *mij += k * dj;
            *oj += *mij * q;
        }
    }
    for oj in o.iter_mut() {
        *oj *= scale;
    }
}

/// `GatedDeltaNet(q, k, v, g, beta[, state0])` per §2.10.6: `(o [B, S, H, Dv], state [B, H, Dk, Dv])`.
/// The rank of `g` (3 or 4) picks a per-head or a per-key-channel decay.
pub fn gated_delta_net(ins: &[&Tensor], attrs: &GatedDeltaNetAttrs) -> Result<Vec<Tensor>> {
    let ops = Operands::of(&Op::GatedDeltaNet(*attrs), ins, &["q", "k", "v", "g", "beta", "state0"])?;
    let mut m = ops.initial_state(5)?;
    let [bs, s, heads, dv] = [ops.out_shape[0], ops.out_shape[1], ops.out_shape[2], ops.out_shape[3]];
    let dk = ops.state_shape[2];
    let mut o = try_filled(count(&ops.out_shape)?, 0.0)?;
    if o.is_empty() || dk == 0 {
        // Empty o: the state is empty or never updated (the other dims may be huge). Dk = 0: every
        // sum is empty, so o = 0 and the default scale 1/√0 is never evaluated.
        return ops.finish(&o, &m);
    }
    let scale = attrs.scale.map_or(1.0 / (dk as f64).sqrt(), f64::from);
    let per_key = ins[3].shape().len() == 4;
    let gw = if per_key { dk } else { 1 };
    let mut u = try_filled(dv, 0.0)?;
    let v = &ops.values;
    for bi in 0..bs {
        for h in 0..heads {
            let state = &mut m[(bi * heads + h) * dk * dv..][..dk * dv];
            for t in 0..s {
                let row = (bi * s + t) * heads + h;
                let step = Step {
                    q: &v[0][row * dk..][..dk],
                    k: &v[1][row * dk..][..dk],
                    v: &v[2][row * dv..][..dv],
                    g: &v[3][row * gw..][..gw],
                    beta: v[4][row],
                };
                delta_step(state, &step, scale, &mut u, &mut o[row * dv..][..dv]);
            }
        }
    }
    ops.finish(&o, &m)
}

#[cfg(test)]
#[path = "delta_tests.rs"]
mod tests;
