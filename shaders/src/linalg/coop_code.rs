//! Straight-line code of the cooperative-matrix kernels, `linalg_coop.wgsl` and
//! `linalg_coop_vec.wgsl`.

use super::*;

/// The per-invocation straight-line code of the cooperative-matrix kernel (see
/// `linalg_coop.wgsl`). Names: `ca{r}`/`cb{r}` tile coordinates of the first element of the r-th
/// staged pair, `ia{r}`/`ib{r}` its workgroup index, `pa{r}`/`pb{r}` the pair's prefetched f16
/// bits, `c{i}_{j}` the accumulator fragment of fragment row i, column j of the subgroup's block.
///
/// With `vec` (`linalg_coop_vec.wgsl`) the staged units are 8-half vectors: `pa{r}`/`pb{r}` the
/// prefetched vectors, `oa{r}`/`ob{r}` whether they lie in the operand, and the tiles are read
/// at the current buffer's offsets `abuf`/`bbuf`.
pub(super) struct CoopCode {
    t: CoopTile,
    /// Vector loads rather than element pairs.
    vec: bool,
    /// Element pairs (vectors) of the A and B tiles each invocation stages per K step.
    la: u32,
    lb: u32,
}

impl CoopCode {
    pub(super) fn new(t: CoopTile, vec: bool) -> CoopCode {
        let (tm, tn) = t.block();
        let nt = t.threads().max(1);
        let per = if vec { 8 } else { 2 };
        CoopCode { t, vec, la: tm * COOP_BK / per / nt, lb: tn * COOP_BK / per / nt }
    }

    pub(super) fn decls(&self) -> String {
        let nt = self.t.threads();
        let mut out = String::new();
        if self.vec {
            for r in 0..self.la {
                out += &format!("    let ca{r} = a_coord(li + {}u);\n", nt * r);
                out += &format!(
                    "    let ia{r} = ca{r}.x * SA + ca{r}.y;\n    var pa{r} = vec4<u32>(0u);\n    var oa{r} = false;\n"
                );
            }
            for r in 0..self.lb {
                out += &format!("    let cb{r} = b_coord(li + {}u);\n", nt * r);
                out += &format!(
                    "    let ib{r} = cb{r}.x * SB + cb{r}.y;\n    var pb{r} = vec4<u32>(0u);\n    var ob{r} = false;\n"
                );
            }
        }
        for r in 0..self.la * u32::from(!self.vec) {
            out += &format!("    let ca{r} = a_coord(li + {}u);\n", nt * r);
            out += &format!("    let ia{r} = ca{r}.x * SA + ca{r}.y;\n    var pa{r} = 0u;\n");
        }
        for r in 0..self.lb * u32::from(!self.vec) {
            out += &format!("    let cb{r} = b_coord(li + {}u);\n", nt * r);
            out += &format!("    let ib{r} = cb{r}.x * SB + cb{r}.y;\n    var pb{r} = 0u;\n");
        }
        let (_, _, fm, fn_) = self.t.grid();
        for i in 0..fm {
            for j in 0..fn_ {
                out += &format!("    var c{i}_{j} = FragC();\n");
            }
        }
        out
    }

    pub(super) fn load(&self) -> String {
        let mut out = String::new();
        if self.vec {
            for r in 0..self.la {
                out += &format!(
                    "        pa{r} = a[index_a(off.x, row0, k0, kend, ca{r})];\n        oa{r} = inside_a(row0, k0, kend, ca{r});\n"
                );
            }
            for r in 0..self.lb {
                out += &format!(
                    "        pb{r} = b[index_b(off.y, col0, k0, kend, cb{r})];\n        ob{r} = inside_b(col0, k0, kend, cb{r});\n"
                );
            }
            return out;
        }
        for r in 0..self.la {
            out += &format!(
                "        pa{r} = pair_a(index_a(off.x, row0, k0, kend, ca{r}), index_a(off.x, row0, k0, kend, ca{r} + a_next()));\n"
            );
        }
        for r in 0..self.lb {
            out += &format!(
                "        pb{r} = pair_b(index_b(off.y, col0, k0, kend, cb{r}), index_b(off.y, col0, k0, kend, cb{r} + b_next()));\n"
            );
        }
        out
    }

    pub(super) fn stage(&self) -> String {
        let mut out = String::new();
        if self.vec {
            for r in 0..self.la {
                out += &format!("        stage_a(abuf + ia{r}, pa{r}, oa{r});\n");
            }
            for r in 0..self.lb {
                out += &format!("        stage_b(bbuf + ib{r}, pb{r}, ob{r});\n");
            }
            return out;
        }
        for r in 0..self.la {
            out += &format!("        stage_a(ia{r}, sa_step, pa{r});\n");
        }
        for r in 0..self.lb {
            out += &format!("        stage_b(ib{r}, sb_step, pb{r});\n");
        }
        out
    }

    pub(super) fn compute(&self) -> String {
        let (_, _, fm, fn_) = self.t.grid();
        let f = self.t.frag;
        let (abuf, bbuf) = if self.vec { ("abuf + ", "bbuf + ") } else { ("", "") };
        let mut out = String::new();
        for kk in 0..COOP_BK / f {
            out += "        {\n";
            for i in 0..fm {
                out += &format!(
                    "            let a{i} = coopLoadT<FragA>(&sa[{abuf}(wr + {}u) * SA + {}u], SA);\n",
                    i * f,
                    kk * f
                );
            }
            for j in 0..fn_ {
                out += &format!(
                    "            let b{j} = coopLoadT<FragB>(&sb[{bbuf}{}u * SB + wc + {}u], SB);\n",
                    kk * f,
                    j * f
                );
            }
            for i in 0..fm {
                for j in 0..fn_ {
                    out += &format!("            c{i}_{j} = coopMultiplyAdd(a{i}, b{j}, c{i}_{j});\n");
                }
            }
            out += "        }\n";
        }
        out
    }

    pub(super) fn store(&self) -> String {
        let (_, _, fm, fn_) = self.t.grid();
        let f = self.t.frag;
        let mut out = String::new();
        for i in 0..fm {
            for j in 0..fn_ {
                out += &format!(
                    "    coopStoreT(c{i}_{j}, &sc[s * F * F], F);\n    workgroupBarrier();\n    \
                     store_frag(obase, off.z, s, row0 + wr + {}u, col0 + wc + {}u, lane);\n    workgroupBarrier();\n",
                    i * f,
                    j * f
                );
            }
        }
        out
    }
}
