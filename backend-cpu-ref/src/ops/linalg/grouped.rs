//! GroupedMatMul (§2.6.4): row `m` of `x [M, K]` times `w[e]` of `w [E, K, N]` with
//! `e = resolve(expert[m])` (§1.6); a row whose expert is out of range is zero. Dot products
//! accumulate in f64 and each output is rounded once.

use crate::mem::try_vec;
use crate::ops::indexing::{index_values, resolve};
use crate::value::{floats, from_floats};
use backend_api::{bail, Result, Tensor};

/// `out[m, n] = Σ_k x[m, k] · w[e_m, k, n]`, zero rows where `expert[m]` is out of range.
pub fn grouped_matmul(x: &Tensor, w: &Tensor, expert: &Tensor) -> Result<Tensor> {
    let (xd, wd, ed) = (x.shape(), w.shape(), expert.shape());
    let (&[m, k], &[e, wk, n], &[em]) = (xd, wd, ed) else {
        bail!(Shape, "GroupedMatMul needs x [M, K], w [E, K, N] and expert [M], got {xd:?}, {wd:?} and {ed:?}");
    };
    if x.dtype() != w.dtype() || wk != k || em != m {
        bail!(
            Shape,
            "GroupedMatMul of x {}{xd:?}, w {}{wd:?} and expert {ed:?}: need equal float dtypes, matching K and M",
            x.dtype(),
            w.dtype()
        );
    }
    let ids = index_values(expert, "GroupedMatMul expert")?;
    let (vx, vw) = (floats(x, "GroupedMatMul x")?, floats(w, "GroupedMatMul w")?);
    let mut out = try_vec(m.saturating_mul(n))?;
    for (row, &id) in ids.iter().enumerate() {
        match resolve(id, e) {
            Some(ex) => {
                let (xr, wb) = (row * k, ex * k * n);
                for j in 0..n {
                    let mut acc = 0.0;
                    for kk in 0..k {
                        acc += vx[xr + kk] * vw[wb + kk * n + j];
                    }
                    out.push(acc);
                }
            }
            None => out.extend(std::iter::repeat_n(0.0, n)),
        }
    }
    from_floats(x.dtype(), &[m, n], &out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::f16;

    fn t(shape: &[usize], v: &[f32]) -> Tensor {
        Tensor::from_slice(shape, v).unwrap()
    }
    fn ids(v: &[i32]) -> Tensor {
        Tensor::from_slice(&[v.len()], v).unwrap()
    }

    /// Three experts: 0 the identity, 1 twice the identity, 2 swaps the two columns.
    fn experts() -> Tensor {
        t(&[3, 2, 2], &[1., 0., 0., 1., 2., 0., 0., 2., 0., 1., 1., 0.])
    }

    #[test]
    fn rows_use_their_own_expert_with_unequal_counts_and_an_unused_one() {
        // Expert 1 has no row, expert 2 three, expert 0 one.
        let x = t(&[4, 2], &[1., 2., 3., 4., 5., 6., 7., 8.]);
        let y = grouped_matmul(&x, &experts(), &ids(&[2, 0, 2, 2])).unwrap();
        assert_eq!(y.shape(), &[4, 2]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [2., 1., 3., 4., 6., 5., 8., 7.]);
    }

    #[test]
    fn negative_ids_wrap_and_out_of_range_ids_give_zero_rows() {
        let x = t(&[5, 2], &[1., 2., 3., 4., 5., 6., 7., 8., 9., 10.]);
        // -1 is expert 2, -3 expert 0; 3 and -4 are out of range.
        let y = grouped_matmul(&x, &experts(), &ids(&[-1, 3, -3, -4, 1])).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [2., 1., 0., 0., 5., 6., 0., 0., 18., 20.]);
        let big = Tensor::from_slice(&[2], &[u32::MAX, 1]).unwrap();
        let y = grouped_matmul(&t(&[2, 2], &[1., 1., 1., 1.]), &experts(), &big).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [0., 0., 2., 2.]);
        let wide = Tensor::from_slice(&[2], &[i64::MIN, (1i64 << 32) + 1]).unwrap();
        let y = grouped_matmul(&t(&[2, 2], &[1., 1., 1., 1.]), &experts(), &wide).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [0.; 4]);
    }

    #[test]
    fn empty_edges() {
        // E = 0: every row out of range.
        let y = grouped_matmul(&t(&[2, 2], &[1.; 4]), &t(&[0, 2, 3], &[]), &ids(&[0, -1])).unwrap();
        assert_eq!(y.shape(), &[2, 3]);
        assert_eq!(y.to_vec::<f32>().unwrap(), [0.; 6]);
        // K = 0: zeros.
        let y = grouped_matmul(&t(&[2, 0], &[]), &t(&[2, 0, 3], &[]), &ids(&[0, 1])).unwrap();
        assert_eq!(y.to_vec::<f32>().unwrap(), [0.; 6]);
        // M = 0: empty.
        let y = grouped_matmul(&t(&[0, 2], &[]), &experts(), &ids(&[])).unwrap();
        assert_eq!(y.shape(), &[0, 2]);
    }

    #[test]
    fn equals_a_matmul_when_every_row_has_one_expert() {
        let x = t(&[3, 2], &[0.5, -1., 2., 3., -4., 0.25]);
        let w = t(&[2, 2, 3], &[9., 9., 9., 9., 9., 9., 1., 2., 3., 4., 5., 6.]);
        let y = grouped_matmul(&x, &w, &ids(&[1, 1, -1])).unwrap();
        let w1 = t(&[2, 3], &[1., 2., 3., 4., 5., 6.]);
        assert_eq!(y.to_vec::<f32>().unwrap(), super::super::matmul(&x, &w1).unwrap().to_vec::<f32>().unwrap());
    }

    #[test]
    fn half_accumulates_wide_and_bad_operands_are_errors() {
        let h = |v: f32| f16::from_f32(v);
        let x = Tensor::from_slice(&[1, 3], &[h(2048.0), h(1.0), h(1.0)]).unwrap();
        let w = Tensor::from_slice(&[1, 3, 1], &[h(1.0), h(1.0), h(1.0)]).unwrap();
        let y = grouped_matmul(&x, &w, &ids(&[0])).unwrap();
        assert_eq!(y.to_vec::<f16>().unwrap(), [h(2050.0)]);
        assert!(grouped_matmul(&t(&[2, 2], &[0.; 4]), &experts(), &ids(&[0])).is_err());
        assert!(grouped_matmul(&t(&[2, 3], &[0.; 6]), &experts(), &ids(&[0, 0])).is_err());
        let fids = t(&[2], &[0., 1.]);
        let e = grouped_matmul(&t(&[2, 2], &[0.; 4]), &experts(), &fids).unwrap_err();
        assert_eq!(e.kind(), backend_api::ErrorKind::DType);
    }
}
