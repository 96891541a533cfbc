//! Straight-line code of the wide skinny (GEMV) kernel, `linalg_gemv.wgsl`.

use super::*;

/// The straight-line code of the wide skinny kernel (see `linalg_gemv.wgsl`). Names: `v{e}` the
/// B vector of the e-th k of an iteration, `w{e}_{g}` its g-th 4 columns converted, `x{e}_{r}`
/// element (row r, that k) of A, `acc{r}_{g}` the sums of row r, columns 4g .. 4g+3.
pub(super) struct GemvCode {
    t: GemvTile,
    d: DType,
    /// Columns per invocation.
    pub(super) cw: u32,
}

impl GemvCode {
    pub(super) fn new(t: GemvTile, d: DType) -> Option<GemvCode> {
        Some(GemvCode { t, d, cw: gemv_columns(d)? })
    }

    /// k per lane and main-loop iteration: 8 vector loads in flight for a single row, 4 when
    /// the A values of several rows take registers too.
    pub(super) fn unroll(&self) -> u32 {
        if self.t.rows == 1 {
            8
        } else {
            4
        }
    }

    /// 4-column groups per invocation.
    pub(super) fn groups(&self) -> u32 {
        self.cw / 4
    }

    /// Rows reduced together: as many as keep `red` within 16 KiB (256 x 16-byte vectors per
    /// group and row).
    pub(super) fn rows_per_pass(&self) -> u32 {
        (4 / self.groups().max(1)).clamp(1, self.t.rows)
    }

    pub(super) fn bvec(&self) -> &'static str {
        if self.d == DType::F32 {
            "vec4<f32>"
        } else {
            "vec4<u32>"
        }
    }

    pub(super) fn decls(&self) -> String {
        let mut out = String::new();
        for r in 0..self.t.rows {
            for g in 0..self.groups() {
                out += &format!("    var acc{r}_{g} = R4(R(0.0));\n");
            }
        }
        out
    }

    /// The 4 columns `g` of vector `v` as `R4`.
    pub(super) fn convert(&self, v: &str, g: u32) -> String {
        let (x, y) = (["x", "z"][(g & 1) as usize], ["y", "w"][(g & 1) as usize]);
        match self.d {
            DType::F16 => format!("R4(unpack2x16float({v}.{x}), unpack2x16float({v}.{y}))"),
            DType::BF16 => format!(
                "R4(bitcast<f32>({v}.{x} << 16u), bitcast<f32>({v}.{x} & 0xffff0000u), \
                 bitcast<f32>({v}.{y} << 16u), bitcast<f32>({v}.{y} & 0xffff0000u))"
            ),
            _ => v.to_string(),
        }
    }

    /// One iteration over `n` k (k, k + L, ...): loads first, then conversions and sums.
    pub(super) fn body(&self, n: u32) -> String {
        let kk = |e: u32| if e == 0 { "k".to_string() } else { format!("(k + {e}u * L)") };
        let mut out = String::new();
        for e in 0..n {
            out += &format!("        let v{e} = b[bj + {} * brs];\n", kk(e));
        }
        for e in 0..n {
            for r in 0..self.t.rows {
                out += &format!("        let x{e}_{r} = a_at(off.x, row0 + {r}u, {});\n", kk(e));
            }
        }
        for e in 0..n {
            for g in 0..self.groups() {
                out += &format!("        let w{e}_{g} = {};\n", self.convert(&format!("v{e}"), g));
                for r in 0..self.t.rows {
                    out += &format!("        acc{r}_{g} = acc{r}_{g} + x{e}_{r} * w{e}_{g};\n");
                }
            }
        }
        out
    }

    /// The tree reduction over the L lanes and the stores, `rows_per_pass` rows at a time.
    pub(super) fn reduce(&self) -> String {
        let lanes = GEMV_THREADS / self.t.ct;
        let pass = self.rows_per_pass();
        let slots = self.groups() * pass;
        let mut out = String::new();
        for r0 in (0..self.t.rows).step_by(pass as usize) {
            if r0 > 0 {
                out += "    workgroupBarrier();\n";
            }
            for r in r0..(r0 + pass).min(self.t.rows) {
                for g in 0..self.groups() {
                    out += &format!("    red[{}u + li] = acc{r}_{g};\n", ((r - r0) * self.groups() + g) * GEMV_THREADS);
                }
            }
            out += "    workgroupBarrier();\n";
            let mut s = lanes / 2;
            while s >= 1 {
                out += &format!("    if (lane < {s}u) {{\n");
                for q in 0..slots {
                    let base = q * GEMV_THREADS;
                    out += &format!("        red[{base}u + li] = red[{base}u + li] + red[{base}u + li + {s}u * CT];\n");
                }
                out += "    }\n    workgroupBarrier();\n";
                s /= 2;
            }
            out += "    if (lane == 0u) {\n";
            for r in r0..(r0 + pass).min(self.t.rows) {
                for g in 0..self.groups() {
                    out += &format!(
                        "        store4(obase, off.z, row0 + {r}u, j + {}u, red[{}u + li]);\n",
                        4 * g,
                        ((r - r0) * self.groups() + g) * GEMV_THREADS
                    );
                }
            }
            out += "    }\n";
        }
        out
    }
}
