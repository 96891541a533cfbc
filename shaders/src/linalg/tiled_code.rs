//! Straight-line code of the tiled kernels, `linalg.wgsl` and `linalg_tiled_vec.wgsl`.

use super::*;

/// The per-thread straight-line code of one tile shape (see `linalg.wgsl` for why it is
/// unrolled here rather than written as WGSL loops). Names: `ca{r}`/`cb{r}` tile coordinates of
/// the r-th staged element, `ia{r}`/`ib{r}` their vec4 slot in workgroup memory, `pa{r}`/`pb{r}`
/// the prefetched raw values and `ea{r}`/`eb{r}` their element indices, `c{i}_{g}` the accumulator of row i, column group g.
pub(super) struct Unrolled {
    s: TileShape,
    /// Products with an absent B element (index `NONE`) are skipped rather than multiplied by
    /// zero (a non-finite A element must not reach the sum through them): B's presence is staged
    /// in `sm` (declared by the operands' code) and each product selected on it.
    masked: bool,
    /// Elements of the A and B tiles each thread stages per K step.
    la: u32,
    lb: u32,
}

impl Unrolled {
    pub(super) fn new(s: TileShape) -> Unrolled {
        Unrolled { s, masked: false, la: s.tm() * s.bk / 256, lb: s.tn() * s.bk / 256 }
    }

    /// [`Unrolled::new`] with absent B elements skipped (see `masked`).
    pub(super) fn masked(s: TileShape) -> Unrolled {
        Unrolled { masked: true, ..Unrolled::new(s) }
    }

    pub(super) fn decls(&self) -> String {
        let mut out = String::new();
        for r in 0..self.la {
            out += &format!("    let ca{r} = a_coord(li + {}u);\n", 256 * r);
            out += &format!(
                "    let ia{r} = ca{r}.y * SA + (ca{r}.x >> 2u);\n    var pa{r} = RAW(0);\n    var ea{r} = NONE;\n"
            );
        }
        for r in 0..self.lb {
            out += &format!("    let cb{r} = b_coord(li + {}u);\n", 256 * r);
            out += &format!(
                "    let ib{r} = cb{r}.x * SB + (cb{r}.y >> 2u);\n    var pb{r} = RAW(0);\n    var eb{r} = NONE;\n"
            );
            out += &format!("    let bc{r} = b_col(col0, cb{r}.y);\n");
        }
        for i in 0..self.s.rm {
            for g in 0..self.s.rn / 4 {
                out += &format!("    var c{i}_{g} = R4(R(0.0));\n");
            }
        }
        out
    }

    pub(super) fn load(&self) -> String {
        // what the step's addressing shares, once per step
        let mut out = String::from("        let ks = k_step(k0);\n");
        for r in 0..self.la {
            out += &format!("        ea{r} = index_a(off.x, row0, ks, kend, ca{r});\n        pa{r} = raw_a(ea{r});\n");
        }
        for r in 0..self.lb {
            out +=
                &format!("        eb{r} = index_b(off.y, bc{r}, ks, kend, cb{r}.x);\n        pb{r} = raw_b(eb{r});\n");
        }
        out
    }

    pub(super) fn stage(&self) -> String {
        let mut out = String::new();
        for r in 0..self.la {
            out += &format!("        sa[ia{r}][ca{r}.x & 3u] = cvt(pa{r}, ea{r});\n");
        }
        for r in 0..self.lb {
            out += &format!("        sb[ib{r}][cb{r}.y & 3u] = cvt(pb{r}, eb{r});\n");
            if self.masked {
                out += &format!("        sm[ib{r}][cb{r}.y & 3u] = u32(eb{r} != NONE);\n");
            }
        }
        out
    }

    pub(super) fn compute(&self) -> String {
        self.compute_at("", "")
    }

    /// The arithmetic of one K step reading the staged tiles from `sa[abase ..]` and
    /// `sb[bbase ..]` (prefixes such as `"abuf + "` for a double-buffered kernel).
    pub(super) fn compute_at(&self, abase: &str, bbase: &str) -> String {
        const LANE: [&str; 4] = ["x", "y", "z", "w"];
        let mut out = String::new();
        for kk in 0..self.s.bk {
            out += "        {\n";
            for g in 0..self.s.rm / 4 {
                out += &format!("            let a{g} = sa[{abase}{kk}u * SA + {}u + ty];\n", 16 * g);
            }
            for g in 0..self.s.rn / 4 {
                out += &format!("            let b{g} = sb[{bbase}{kk}u * SB + {}u + tx];\n", 16 * g);
                if self.masked {
                    out +=
                        &format!("            let m{g} = sm[{bbase}{kk}u * SB + {}u + tx] != vec4<u32>(0u);\n", 16 * g);
                }
            }
            for i in 0..self.s.rm {
                let a = format!("a{}.{}", i / 4, LANE[(i % 4) as usize]);
                for g in 0..self.s.rn / 4 {
                    out += &if self.masked {
                        format!("            c{i}_{g} = c{i}_{g} + select(R4(R(0.0)), {a} * b{g}, m{g});\n")
                    } else {
                        format!("            c{i}_{g} = c{i}_{g} + {a} * b{g};\n")
                    };
                }
            }
            out += "        }\n";
        }
        out
    }

    pub(super) fn store(&self) -> String {
        let mut out = String::new();
        for i in 0..self.s.rm {
            let row = (i / 4) * 64 + i % 4;
            for g in 0..self.s.rn / 4 {
                out += &format!(
                    "    store4(obase, off.z, row0 + {row}u + ty * 4u, col0 + {}u + tx * 4u, c{i}_{g});\n",
                    64 * g
                );
            }
        }
        out
    }
}

/// The per-thread straight-line code of the vector-load kernel (`linalg_tiled_vec.wgsl`): as
/// [`Unrolled`], with whole vectors staged. Names: `ca{r}`/`cb{r}` the tile coordinates of the
/// first element of the r-th staged vector, `pa{r}`/`pb{r}` the prefetched vectors and
/// `ea{r}`/`eb{r}` their vector indices (`NONE` outside the operand).
pub(super) struct VecUnrolled {
    code: Unrolled,
    /// Vectors of the A and B tiles each thread stages per K step.
    va: u32,
    vb: u32,
}

impl VecUnrolled {
    /// `None` unless every thread stages a whole number (at least one) of vectors of each tile.
    pub(super) fn new(s: TileShape) -> Option<VecUnrolled> {
        let (a, b) = (s.tm() * s.bk / 4, s.tn() * s.bk / 4);
        let whole = |v: u32| v >= 256 && v.is_multiple_of(256);
        (whole(a) && whole(b)).then(|| VecUnrolled { code: Unrolled::new(s), va: a / 256, vb: b / 256 })
    }

    pub(super) fn decls(&self) -> String {
        let mut out = String::new();
        for r in 0..self.va {
            out += &format!(
                "    let ca{r} = a_coord(li + {}u);\n    var pa{r} = R4(0.0);\n    var ea{r} = NONE;\n",
                256 * r
            );
        }
        for r in 0..self.vb {
            out += &format!(
                "    let cb{r} = b_coord(li + {}u);\n    var pb{r} = R4(0.0);\n    var eb{r} = NONE;\n",
                256 * r
            );
        }
        let s = self.code.s;
        for i in 0..s.rm {
            for g in 0..s.rn / 4 {
                out += &format!("    var c{i}_{g} = R4(R(0.0));\n");
            }
        }
        out
    }

    pub(super) fn load(&self) -> String {
        let mut out = String::new();
        for r in 0..self.va {
            out += &format!("        ea{r} = index_a(off.x, row0, k0, kend, ca{r});\n        pa{r} = ld_a4(ea{r});\n");
        }
        for r in 0..self.vb {
            out += &format!("        eb{r} = index_b(off.y, col0, k0, kend, cb{r});\n        pb{r} = ld_b4(eb{r});\n");
        }
        out
    }

    pub(super) fn stage(&self) -> String {
        let mut out = String::new();
        for r in 0..self.va {
            out += &format!("        stage_a(nb, ca{r}, pa{r}, ea{r});\n");
        }
        for r in 0..self.vb {
            out += &format!("        stage_b(nb, cb{r}, pb{r}, eb{r});\n");
        }
        out
    }

    pub(super) fn compute(&self) -> String {
        self.code.compute_at("abuf + ", "bbuf + ")
    }

    /// The arithmetic of one K step from an A tile staged as loaded (rows of BK / 4 vectors
    /// along k): per 4 k, one vector per row of the thread (rows `64 (i / 4) + 4 ty + i % 4`,
    /// below TM), then for each k the B vectors of that k row, as in [`Unrolled::compute_at`].
    pub(super) fn compute_a_rows(&self) -> String {
        const LANE: [&str; 4] = ["x", "y", "z", "w"];
        let s = self.code.s;
        let mut out = String::new();
        for q in 0..s.bk / 4 {
            out += "        {\n";
            for i in 0..s.rm {
                let row = (i / 4) * 64 + i % 4;
                out += &format!("            let a{i} = sa[abuf + ({row}u + 4u * ty) * (BK / 4u) + {q}u];\n");
            }
            for l in 0..4 {
                let kk = 4 * q + l;
                for g in 0..s.rn / 4 {
                    out += &format!("            let b{l}_{g} = sb[bbuf + {kk}u * SB + {}u + tx];\n", 16 * g);
                }
                for i in 0..s.rm {
                    for g in 0..s.rn / 4 {
                        out += &format!("            c{i}_{g} = c{i}_{g} + a{i}.{} * b{l}_{g};\n", LANE[l as usize]);
                    }
                }
            }
            out += "        }\n";
        }
        out
    }

    pub(super) fn store(&self) -> String {
        self.code.store()
    }
}
