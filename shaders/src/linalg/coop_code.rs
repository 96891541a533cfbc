//! Straight-line code of the cooperative-matrix kernels: `linalg_coop.wgsl` and
//! `linalg_coop_vec.wgsl`.

use super::*;

/// Which cooperative-matrix template the code is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Staging {
    /// Element pairs through the operand strides (`linalg_coop.wgsl`).
    Pairs,
    /// 16-byte loads of 8 elements staged element by element, as f16, into f16 tiles
    /// (`linalg_coop_vec.wgsl`).
    Cvt,
}

/// The per-invocation straight-line code of a cooperative-matrix kernel. Names: `ca{r}`/`cb{r}`
/// tile coordinates of the first element of the r-th staged unit (pair or 8-element group),
/// `ia{r}`/`ib{r}` its workgroup index, `pa{r}`/`pb{r}` the unit's prefetched elements (`RAW8`
/// for groups), `oa{r}`/`ob{r}` whether a group lies in the operand, `c{i}_{j}` the accumulator
/// fragment of fragment row i, column j of the subgroup's block. Staged tiles are read at the
/// current buffer's offsets `abuf`/`bbuf` (groups).
pub(super) struct CoopCode {
    t: CoopTile,
    staging: Staging,
    /// K step.
    bk: u32,
    /// Units of the A and B tiles each invocation stages per K step.
    la: u32,
    lb: u32,
}

impl CoopCode {
    pub(super) fn new(t: CoopTile, staging: Staging, bk: u32) -> CoopCode {
        let (tm, tn) = t.block();
        let nt = t.threads().max(1);
        let per = match staging {
            Staging::Pairs => 2,
            Staging::Cvt => 8,
        };
        let units = |rows: u32| (rows * bk).checked_div(per).map_or(0, |u| u / nt);
        CoopCode { t, staging, bk, la: units(tm), lb: units(tn) }
    }

    pub(super) fn decls(&self) -> String {
        let nt = self.t.threads();
        let mut out = String::new();
        for (x, n) in [("a", self.la), ("b", self.lb)] {
            for r in 0..n {
                out += &format!("    let c{x}{r} = {x}_coord(li + {}u);\n", nt * r);
                let s = if x == "a" { "SA" } else { "SB" };
                out += &format!("    let i{x}{r} = c{x}{r}.x * {s} + c{x}{r}.y;\n");
                if x == "b" && self.staging == Staging::Pairs {
                    // the columns of the pair's two elements, addressed once
                    out += &format!("    let bc{r} = b_col(col0, cb{r}.y);\n");
                    out += &format!("    let bd{r} = b_col(col0, (cb{r} + b_next()).y);\n");
                }
                out += &match self.staging {
                    Staging::Pairs => format!("    var p{x}{r} = 0u;\n"),
                    Staging::Cvt => format!("    var p{x}{r} = RAW8();\n    var o{x}{r} = false;\n"),
                };
            }
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
        if self.staging == Staging::Pairs {
            // what the step's addressing shares, once per step
            out += "        let ks = k_step(k0);\n";
        }
        for (x, n, base, at) in [("a", self.la, "off.x", "row0"), ("b", self.lb, "off.y", "col0")] {
            for r in 0..n {
                out += &match self.staging {
                    Staging::Pairs if x == "a" => format!(
                        "        pa{r} = pair_a(index_a({base}, {at}, ks, kend, ca{r}), \
                         index_a({base}, {at}, ks, kend, ca{r} + a_next()));\n"
                    ),
                    Staging::Pairs => format!(
                        "        pb{r} = pair_b(index_b({base}, bc{r}, ks, kend, cb{r}.x), \
                         index_b({base}, bd{r}, ks, kend, (cb{r} + b_next()).x));\n"
                    ),
                    Staging::Cvt => format!(
                        "        p{x}{r} = load8_{x}(index_{x}({base}, {at}, k0, kend, c{x}{r}));\n        \
                         o{x}{r} = inside_{x}({at}, k0, kend, c{x}{r});\n"
                    ),
                };
            }
        }
        out
    }

    pub(super) fn stage(&self) -> String {
        let mut out = String::new();
        for (x, n) in [("a", self.la), ("b", self.lb)] {
            for r in 0..n {
                out += &match self.staging {
                    Staging::Pairs => format!("        stage_{x}(i{x}{r}, s{x}_step, p{x}{r});\n"),
                    Staging::Cvt => format!("        stage_{x}({x}buf + i{x}{r}, p{x}{r}, o{x}{r});\n"),
                };
            }
        }
        out
    }

    /// The fragment loads of slice `kk` (K offset `kk·F` within the step): (A of row i, B of
    /// column j) as WGSL expressions.
    fn fragment_loads(&self, kk: u32, i: u32, j: u32) -> (String, String) {
        let f = self.t.frag;
        let (ko, ro, co) = (kk * f, i * f, j * f);
        match self.staging {
            Staging::Pairs => (
                format!("coopLoadT<FragA>(&sa[(wr + {ro}u) * SA + {ko}u], SA)"),
                format!("coopLoadT<FragB>(&sb[{ko}u * SB + wc + {co}u], SB)"),
            ),
            Staging::Cvt => (
                format!("coopLoadT<FragA>(&sa[abuf + (wr + {ro}u) * SA + {ko}u], SA)"),
                format!("coopLoadT<FragB>(&sb[bbuf + {ko}u * SB + wc + {co}u], SB)"),
            ),
        }
    }

    pub(super) fn compute(&self) -> String {
        let (_, _, fm, fn_) = self.t.grid();
        let f = self.t.frag.max(1);
        let mut out = String::new();
        for kk in 0..self.bk / f {
            out += "        {\n";
            for i in 0..fm {
                out += &format!("            let a{i} = {};\n", self.fragment_loads(kk, i, 0).0);
            }
            for j in 0..fn_ {
                out += &format!("            let b{j} = {};\n", self.fragment_loads(kk, 0, j).1);
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
