//! Sliding-window geometry shared by Pool and Im2Col (§2.9): attribute checks, the output grid,
//! and the input coordinate of each kernel point of an output position. Coordinates are `i128`,
//! so `o·stride + κ·dilation − pads_begin` of any `usize` operands never overflows.

use backend_api::{bail, Result};

/// The per-dimension attributes of a windowed op on `x = [N, C, *input]`.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    /// Spatial input dims.
    pub input: Vec<usize>,
    /// Kernel size per dim.
    pub kernel: Vec<usize>,
    /// Stride per dim.
    pub stride: Vec<usize>,
    /// Dilation per dim.
    pub dilation: Vec<usize>,
    /// Padding before per dim.
    pub pads_begin: Vec<usize>,
    /// Padding after per dim.
    pub pads_end: Vec<usize>,
}

impl Window {
    /// Checks `x`'s rank (3 to 5), the list lengths and the ≥ 1 entries, and that the padded
    /// input holds at least one window (`in + pb + pe ≥ ke`) on every dim.
    pub fn new(op: &str, x: &[usize], lists: [&[usize]; 5]) -> Result<Window> {
        if !(3..=5).contains(&x.len()) {
            bail!(Shape, "{op} x {x:?} must be [N, C, *spatial] with 1 to 3 spatial dims");
        }
        let s = x.len() - 2;
        let names = ["kernel", "stride", "dilation", "pads_begin", "pads_end"];
        for (i, (l, name)) in lists.iter().zip(names).enumerate() {
            if l.len() != s {
                bail!(Attribute, "{op} {name} {l:?} must have {s} entries (one per spatial dim of x {x:?})");
            }
            if i < 3 && l.contains(&0) {
                bail!(Attribute, "{op} {name} {l:?} entries must be >= 1");
            }
        }
        let [kernel, stride, dilation, pads_begin, pads_end] = lists.map(<[usize]>::to_vec);
        let w = Window { input: x[2..].to_vec(), kernel, stride, dilation, pads_begin, pads_end };
        for d in 0..s {
            let padded = w.input[d] as i128 + w.pads_begin[d] as i128 + w.pads_end[d] as i128;
            if padded < w.extent(d) {
                bail!(
                    Shape,
                    "{op} spatial dim {d}: padded size {padded} of x {x:?} is smaller than the kernel extent {}",
                    w.extent(d)
                );
            }
        }
        Ok(w)
    }

    /// The effective kernel extent `ke_d = dilation_d·(k_d − 1) + 1`.
    pub fn extent(&self, d: usize) -> i128 {
        self.dilation[d] as i128 * (self.kernel[d] as i128 - 1) + 1
    }

    /// The output size of dim `d`: `⌊(in + pb + pe − ke + (ceil ? stride − 1 : 0)) / stride⌋ + 1`,
    /// less one in ceil mode when the last window would start past the leading padding and the
    /// input.
    pub fn out_dim(&self, d: usize, ceil_mode: bool) -> Result<usize> {
        let (pb, inp, stride) = (self.pads_begin[d] as i128, self.input[d] as i128, self.stride[d] as i128);
        let span = inp + pb + self.pads_end[d] as i128 - self.extent(d);
        let mut o = (span + if ceil_mode { stride - 1 } else { 0 }) / stride + 1;
        if ceil_mode && (o - 1) * stride >= inp + pb {
            o -= 1;
        }
        match usize::try_from(o) {
            Ok(o) => Ok(o),
            Err(_) => bail!(Shape, "output size {o} of spatial dim {d} does not fit usize"),
        }
    }

    /// The output grid (spatial dims only).
    pub fn out_dims(&self, ceil_mode: bool) -> Result<Vec<usize>> {
        (0..self.input.len()).map(|d| self.out_dim(d, ceil_mode)).collect()
    }

    /// The input coordinate `p = o·stride + κ·dilation − pads_begin` of kernel point `k` of
    /// output position `o` (may lie in the padding or past it).
    pub fn point(&self, o: &[usize], k: &[usize]) -> Vec<i128> {
        (0..self.input.len())
            .map(|d| {
                o[d] as i128 * self.stride[d] as i128 + k[d] as i128 * self.dilation[d] as i128
                    - self.pads_begin[d] as i128
            })
            .collect()
    }

    /// The spatial index of `p` when every coordinate is inside the input.
    pub fn inside(&self, p: &[i128]) -> Option<Vec<usize>> {
        p.iter().zip(&self.input).map(|(&c, &n)| usize::try_from(c).ok().filter(|&c| c < n)).collect()
    }

    /// Whether `p` lies in the padded extent: `−pads_begin ≤ p < in + pads_end` on every dim.
    pub fn in_extent(&self, p: &[i128]) -> bool {
        (0..p.len())
            .all(|d| p[d] >= -(self.pads_begin[d] as i128) && p[d] < self.input[d] as i128 + self.pads_end[d] as i128)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w1(input: usize, k: usize, s: usize, dil: usize, pb: usize, pe: usize) -> Window {
        Window::new("T", &[1, 1, input], [&[k], &[s], &[dil], &[pb], &[pe]]).unwrap()
    }

    #[test]
    fn output_sizes_follow_floor_and_ceil_rules() {
        // in 5, k 2, s 2: floor 2, ceil 3 (the last window [4, 5] starts inside the input).
        assert_eq!(w1(5, 2, 2, 1, 0, 0).out_dim(0, false).unwrap(), 2);
        assert_eq!(w1(5, 2, 2, 1, 0, 0).out_dim(0, true).unwrap(), 3);
        // in 4, k 2, s 3, pb 1, pe 1: span 4, ceil gives ⌊6/3⌋+1 = 3, but window 2 would start at
        // 6 − 1 = 5 ≥ in, past the input: reduced to 2.
        assert_eq!(w1(4, 2, 3, 1, 1, 1).out_dim(0, true).unwrap(), 2);
        // Dilation 2, k 3: extent 5.
        assert_eq!(w1(7, 3, 1, 2, 0, 0).out_dim(0, false).unwrap(), 3);
        assert!(Window::new("T", &[1, 1, 2], [&[3], &[1], &[1], &[0], &[0]]).is_err());
        assert!(Window::new("T", &[1, 1, 4], [&[3], &[0], &[1], &[0], &[0]]).is_err());
        assert!(Window::new("T", &[1, 1, 4], [&[3, 3], &[1], &[1], &[0], &[0]]).is_err());
    }
}
