//! Straight-line code of the wide skinny (GEMV) kernels: `linalg_gemv.wgsl` (N-contiguous B)
//! and `linalg_gemv_dot.wgsl` (K-contiguous B, `x · Wᵀ`).

use super::*;

/// The straight-line code of the wide skinny kernels. Names: `v{e}` the B vector of the e-th
/// load of an iteration, `w{e}_{g}` its g-th 4 elements converted, `x{e}_{r}` the A value(s) of
/// row r that multiply them, `acc{r}_{g}` (N-contiguous: the sums of row r, columns 4g .. 4g+3)
/// or `acc{r}` (K-contiguous: four partial sums of row r's dot product).
pub(super) struct GemvCode {
    t: GemvTile,
    d: DType,
    /// Elements of one 16-byte vector of B.
    pub(super) cw: u32,
}

/// Subgroup builtins the kernels take as extra entry-point arguments.
const SUBGROUP_IDS: &str = ", @builtin(subgroup_id) sg_id: u32, @builtin(num_subgroups) sg_count: u32, \
     @builtin(subgroup_size) sg_size: u32, @builtin(subgroup_invocation_id) sg_lane: u32";

/// The invocation index `li` and the shuffle width `w`: the subgroup order where the subgroups
/// tile the workgroup exactly (the templates' comments give the argument), else the local index
/// and no shuffles.
const SUBGROUP_LI: &str = "    let full = sg_count * sg_size == 256u;\n    \
     let li = select(lid, sg_id * sg_size + sg_lane, full);\n    \
     let w = select(1u, sg_size, full);";

impl GemvCode {
    pub(super) fn new(t: GemvTile, d: DType) -> Option<GemvCode> {
        Some(GemvCode { t, d, cw: gemv_columns(d)? })
    }

    /// The template slots of the kernel, `raw` being the raw access of A.
    pub(super) fn slots(&self, raw: String) -> Vec<(&'static str, String)> {
        let num = |x: u32| x.to_string();
        let (ids, li) = if self.t.subgroups { (SUBGROUP_IDS, SUBGROUP_LI) } else { ("", "    let li = lid;") };
        let mut slots = vec![
            ("CT", num(self.t.ct)),
            ("ROWS", num(self.t.rows)),
            ("CW", num(self.cw)),
            ("BVEC", self.bvec().to_string()),
            ("RAW", raw + &self.a_pair()),
            ("U", num(self.t.unroll)),
            ("IDS", ids.to_string()),
            ("LI", li.to_string()),
        ];
        if self.t.kdot {
            slots.extend([
                ("RED", num(GEMV_THREADS * self.t.rows)),
                ("DECLS", self.dot_decls()),
                ("BODYU", self.dot_body(self.t.unroll)),
                ("BODY1", self.dot_body(1)),
                ("REDUCE", self.dot_reduce()),
            ]);
        } else {
            slots.extend([
                ("RED", num(GEMV_THREADS * self.groups() * self.rows_per_pass())),
                ("DECLS", self.decls()),
                ("BODYU", self.body(self.t.unroll)),
                ("BODY1", self.body(1)),
                ("REDUCE", self.reduce()),
            ]);
        }
        slots
    }

    /// 4-element groups per vector of B.
    pub(super) fn groups(&self) -> u32 {
        self.cw / 4
    }

    /// Rows reduced together (N-contiguous kernel): as many as keep `red` within 16 KiB (256 x
    /// 16-byte vectors per group and row).
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

    /// The 4 elements `g` of vector `v` as `R4`.
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

    /// The reduction over the L lanes and the stores, `rows_per_pass` rows at a time.
    pub(super) fn reduce(&self) -> String {
        let mut out = String::new();
        if self.t.subgroups {
            // Within each subgroup first: partners are li ^ o, o a multiple of CT below w.
            out += "    for (var o = CT; o < w; o = o * 2u) {\n";
            for r in 0..self.t.rows {
                for g in 0..self.groups() {
                    out += &format!("        acc{r}_{g} = acc{r}_{g} + subgroupShuffleXor(acc{r}_{g}, o);\n");
                }
            }
            out += "    }\n    let q = max(w, CT);\n";
        }
        let pass = self.rows_per_pass();
        for r0 in (0..self.t.rows).step_by(pass as usize) {
            if r0 > 0 {
                out += "    workgroupBarrier();\n";
            }
            let rows: Vec<u32> = (r0..(r0 + pass).min(self.t.rows)).collect();
            out += &if self.t.subgroups { self.pass_subgroup(r0, &rows) } else { self.pass_tree(r0, &rows) };
        }
        out
    }

    /// Slot of row `r`, group `g` in `red` (in units of 256 vectors) within the pass of `r0`.
    fn slot(&self, r0: u32, r: u32, g: u32) -> u32 {
        ((r - r0) * self.groups() + g) * GEMV_THREADS
    }

    /// One pass of the tree reduction (log2 L barriers) for `rows`.
    fn pass_tree(&self, r0: u32, rows: &[u32]) -> String {
        let lanes = GEMV_THREADS / self.t.ct;
        let mut out = String::new();
        for &r in rows {
            for g in 0..self.groups() {
                out += &format!("    red[{}u + li] = acc{r}_{g};\n", self.slot(r0, r, g));
            }
        }
        out += "    workgroupBarrier();\n";
        let mut s = lanes / 2;
        while s >= 1 {
            out += &format!("    if (lane < {s}u) {{\n");
            for q in 0..(rows.len() as u32 * self.groups()) {
                let base = q * GEMV_THREADS;
                out += &format!("        red[{base}u + li] = red[{base}u + li] + red[{base}u + li + {s}u * CT];\n");
            }
            out += "    }\n    workgroupBarrier();\n";
            s /= 2;
        }
        out += "    if (lane == 0u) {\n";
        for &r in rows {
            for g in 0..self.groups() {
                out += &format!(
                    "        store4(obase, off.z, row0 + {r}u, j + {}u, red[{}u + li]);\n",
                    4 * g,
                    self.slot(r0, r, g)
                );
            }
        }
        out + "    }\n"
    }

    /// One pass across subgroups for `rows`: each subgroup's sums in slots, lane 0 adds its
    /// column's 256 / q slots in order.
    fn pass_subgroup(&self, r0: u32, rows: &[u32]) -> String {
        let mut out = "    if (li % q < CT) {\n        let at = min((li / q) * CT + c, 255u);\n".to_string();
        for &r in rows {
            for g in 0..self.groups() {
                out += &format!("        red[{}u + at] = acc{r}_{g};\n", self.slot(r0, r, g));
            }
        }
        out += "    }\n    workgroupBarrier();\n    if (lane == 0u) {\n";
        for &r in rows {
            for g in 0..self.groups() {
                let base = self.slot(r0, r, g);
                out += &format!(
                    "        var t{r}_{g} = red[{base}u + c];\n        \
                     for (var i = 1u; i < 256u / q; i = i + 1u) {{\n            \
                     t{r}_{g} = t{r}_{g} + red[{base}u + min(i * CT + c, 255u)];\n        }}\n        \
                     store4(obase, off.z, row0 + {r}u, j + {}u, t{r}_{g});\n",
                    4 * g
                );
            }
        }
        out + "    }\n"
    }

    /// The K-contiguous kernel's accumulators: four partial sums per row.
    fn dot_decls(&self) -> String {
        (0..self.t.rows).map(|r| format!("    var acc{r} = R4(R(0.0));\n")).collect()
    }

    /// One iteration over `n` vectors (kv, kv + L, ...) of the K-contiguous kernel: loads of B
    /// first, then the A values, conversions and sums.
    fn dot_body(&self, n: u32) -> String {
        let mut out = String::new();
        for e in 0..n {
            let kv = if e == 0 { "kv".to_string() } else { format!("(kv + {e}u * L)") };
            out += &format!("        let v{e} = b[bj + {kv}];\n        let k{e} = {kv} * CW;\n");
        }
        for e in 0..n {
            for g in 0..self.groups() {
                out += &format!("        let w{e}_{g} = {};\n", self.convert(&format!("v{e}"), g));
                for r in 0..self.t.rows {
                    let a = if self.apairs() {
                        let at = |i: u32| format!("a_pair(off.x, row0 + {r}u, k{e} + {}u)", 4 * g + i);
                        format!("R4({}, {})", at(0), at(2))
                    } else {
                        let at = |i: u32| format!("a_at(off.x, row0 + {r}u, k{e} + {}u)", 4 * g + i);
                        format!("R4({}, {}, {}, {})", at(0), at(1), at(2), at(3))
                    };
                    out += &format!("        acc{r} = acc{r} + {a} * w{e}_{g};\n");
                }
            }
        }
        out
    }

    /// Whether A is read two elements per word (see [`GemvTile::apairs`]).
    fn apairs(&self) -> bool {
        self.t.kdot && self.t.apairs && self.cw == 8
    }

    /// `a_pair(base, row, k)`: elements k, k + 1 (k even) of A's row as one word, converted
    /// together (the F16 conversion is the hardware one, as for B); empty unless [`Self::apairs`].
    pub(super) fn a_pair(&self) -> String {
        if !self.apairs() {
            return String::new();
        }
        let cvt = match self.d {
            DType::F16 => "unpack2x16float(x)",
            _ => "vec2<f32>(bitcast<f32>(x << 16u), bitcast<f32>(x & 0xffff0000u))",
        };
        format!(
            "// Elements (row, k), (row, k + 1) of A for an even k (A K-contiguous, rows on word\n\
             // boundaries: the lowering checks it); rows past M re-read row M - 1.\n\
             fn a_pair(base: u32, row: u32, k: u32) -> vec2<R> {{\n    \
             let x = a[(base + k + min(row, p.m - 1u) * p.a_rs) >> 1u];\n    return {cvt};\n}}\n"
        )
    }

    /// The K-contiguous kernel's reduction over the L lanes of each column and the stores: lane
    /// 0 of each column stores it, or where [`GemvTile::whole_words`], lane 0 of each even column
    /// c stores columns c and c + 1 together (`store2`).
    fn dot_reduce(&self) -> String {
        let rows = self.t.rows;
        let pairs = self.t.ct >= 2;
        let mut out: String =
            (0..rows).map(|r| format!("    var s{r} = acc{r}.x + acc{r}.y + acc{r}.z + acc{r}.w;\n")).collect();
        let storing = if pairs { "lane == 0u && (c & 1u) == 0u" } else { "lane == 0u" };
        if self.t.subgroups {
            out += "    let q = min(w, L);\n    for (var o = 1u; o < q; o = o * 2u) {\n";
            for r in 0..rows {
                out += &format!("        s{r} = s{r} + subgroupShuffleXor(s{r}, o);\n");
            }
            out += "    }\n    if (li % q == 0u) {\n";
            for r in 0..rows {
                out += &format!("        red[{}u + min(li / q, 255u)] = s{r};\n", r * GEMV_THREADS);
            }
            out += &format!("    }}\n    workgroupBarrier();\n    if ({storing}) {{\n");
            // The sum of column `col`'s L / q slots, in slot order.
            let sum = |name: &str, base: u32, col: &str| {
                format!(
                    "        var {name} = red[{base}u + min({col} * (L / q), 255u)];\n        \
                     for (var i = 1u; i < L / q; i = i + 1u) {{\n            \
                     {name} = {name} + red[{base}u + min({col} * (L / q) + i, 255u)];\n        }}\n"
                )
            };
            for r in 0..rows {
                let base = r * GEMV_THREADS;
                out += &sum(&format!("t{r}"), base, "c");
                if pairs {
                    out += &sum(&format!("u{r}"), base, "(c + 1u)");
                    out += &format!("        store2(obase, off.z, row0 + {r}u, j, t{r}, u{r});\n");
                } else {
                    out += &format!("        store1(obase, off.z, row0 + {r}u, j, t{r});\n");
                }
            }
            return out + "    }\n";
        }
        for r in 0..rows {
            out += &format!("    red[{}u + li] = s{r};\n", r * GEMV_THREADS);
        }
        out += "    workgroupBarrier();\n";
        let mut s = (GEMV_THREADS / self.t.ct) / 2;
        while s >= 1 {
            out += &format!("    if (lane < {s}u) {{\n");
            for r in 0..rows {
                let base = r * GEMV_THREADS;
                out += &format!("        red[{base}u + li] = red[{base}u + li] + red[{base}u + li + {s}u];\n");
            }
            out += "    }\n    workgroupBarrier();\n";
            s /= 2;
        }
        out += &format!("    if ({storing}) {{\n");
        for r in 0..rows {
            let base = r * GEMV_THREADS;
            if pairs {
                // Column c + 1's sum is at its lane 0, L slots on (li + L = (c + 1) * L < 256).
                out += &format!(
                    "        store2(obase, off.z, row0 + {r}u, j, red[{base}u + li], red[{base}u + li + L]);\n"
                );
            } else {
                out += &format!("        store1(obase, off.z, row0 + {r}u, j, red[{base}u + li]);\n");
            }
        }
        out + "    }\n"
    }
}
