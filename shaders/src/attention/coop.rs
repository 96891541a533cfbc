//! The tensor-core variant of the blocked attention kernel (`attention_flash_coop.wgsl`): F16
//! q, k, v whose head widths are multiples of 16, both products on 16 x 16 f16 cooperative
//! matrices with f32 accumulators. The renderer generates the straight-line fragment code for
//! the rendered head widths (Q and output fragments are separate variables: WGSL has no arrays
//! of cooperative matrices).

use super::flash::AttnVariant;
use crate::{module as join, render, tensor_binding, trusted, Access, COMMON, MATH};
use backend_api::DType;
use std::fmt::Write as _;

/// The tensor-core attention kernel.
pub const ATTENTION_FLASH_COOP: &str = include_str!("../wgsl/attention_flash_coop.wgsl");

/// Query rows per workgroup (4 subgroups of 16 rows).
pub const COOP_BQ: u32 = 64;
/// The widest head (D and Dv) the kernel takes.
pub const COOP_MAX_WIDTH: u32 = 256;

/// What a tensor-core attention kernel is rendered for: the device's subgroup size and the
/// head widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CoopAttnTile {
    /// Invocations per subgroup (16, 32 or 64: the device's only size).
    pub subgroup: u32,
    /// Query/key head width D (a multiple of 16, at most 256).
    pub d: u32,
    /// Value head width Dv (a multiple of 16, at most 256).
    pub dv: u32,
}

impl CoopAttnTile {
    /// Whether the kernel can be rendered for this tile.
    pub fn valid(self) -> bool {
        let width = |w: u32| w > 0 && w.is_multiple_of(16) && w <= COOP_MAX_WIDTH;
        matches!(self.subgroup, 16 | 32 | 64) && width(self.d) && width(self.dv)
    }

    /// Keys per block: 64, or 32 for heads wider than 128 (workgroup memory).
    pub fn bk(self) -> u32 {
        if self.d.max(self.dv) <= 128 {
            64
        } else {
            32
        }
    }

    /// Row stride (halves) of the staged Q, K and V blocks.
    fn sw(self) -> u32 {
        self.d.max(self.dv) + 8
    }

    /// Bytes of workgroup memory the kernel declares (staged block, scores, probabilities,
    /// row factors, flags).
    pub fn workgroup_bytes(self) -> u32 {
        let bk = self.bk();
        2 * COOP_BQ * self.sw() + 4 * COOP_BQ * (bk + 4) + 2 * COOP_BQ * (bk + 8) + 4 * COOP_BQ + 16
    }

    /// Invocations per workgroup.
    pub fn threads(self) -> u32 {
        4 * self.subgroup
    }
}

/// The fragment code of one tile: `q{t}` Q fragments, `o{n}` output accumulators.
struct Code {
    dq: u32,
    dvf: u32,
    kf: u32,
}

impl Code {
    fn qload(&self) -> String {
        let mut s = String::new();
        for t in 0..self.dq {
            let _ = writeln!(s, "    let q{t} = coopLoadT<FragA>(&st[s * 16u * SW + {}u], SW);", 16 * t);
        }
        s
    }

    fn odecl(&self) -> String {
        (0..self.dvf).map(|n| format!("    var o{n} = FragC();\n")).collect()
    }

    /// S = Q Kᵀ, one 16-key fragment at a time (Kᵀ read column-major from K's rows), into `ss`.
    fn scores(&self) -> String {
        let mut s = String::new();
        for n in 0..self.kf {
            s += "        {\n            var a = FragC();\n";
            for t in 0..self.dq {
                let _ = writeln!(
                    s,
                    "            a = coopMultiplyAdd(q{t}, coopLoad<FragB>(&st[{}u * SW + {}u], SW), a);",
                    16 * n,
                    16 * t
                );
            }
            let _ = writeln!(s, "            coopStoreT(a, &ss[s * 16u * SS + {}u], SS);\n        }}", 16 * n);
        }
        s
    }

    /// The output fragments in batches that fit a subgroup's `ss` area: (first, count).
    fn batches(&self) -> Vec<(u32, u32)> {
        let per = self.kf.max(1);
        (0..self.dvf).step_by(per as usize).map(|f| (f, per.min(self.dvf - f))).collect()
    }

    fn stash(first: u32, count: u32, indent: &str) -> String {
        (first..first + count)
            .map(|n| format!("{indent}coopStoreT(o{n}, &ss[s * 16u * SS + {}u], SS);\n", 16 * (n - first)))
            .collect()
    }

    /// Rows of the output fragments times their alpha, through `ss`.
    fn rescale(&self) -> String {
        let ind = "            ";
        let mut s = String::new();
        for (first, count) in self.batches() {
            s += &Self::stash(first, count, ind);
            let _ = writeln!(s, "{ind}workgroupBarrier();\n{ind}scale_rows(s, lane, {}u);", 16 * count);
            let _ = writeln!(s, "{ind}workgroupBarrier();");
            for n in first..first + count {
                let _ = writeln!(s, "{ind}o{n} = coopLoadT<FragC>(&ss[s * 16u * SS + {}u], SS);", 16 * (n - first));
            }
            let _ = writeln!(s, "{ind}workgroupBarrier();");
        }
        s
    }

    /// O += P V: P's fragments from `sp`, V's from the staged block.
    fn pv(&self) -> String {
        let mut s = String::from("        {\n");
        for kk in 0..self.kf {
            let _ = writeln!(s, "            let p{kk} = coopLoadT<FragA>(&sp[s * 16u * PS + {}u], PS);", 16 * kk);
        }
        for n in 0..self.dvf {
            for kk in 0..self.kf {
                let _ = writeln!(
                    s,
                    "            o{n} = coopMultiplyAdd(p{kk}, coopLoadT<FragB>(&st[{}u * SW + {}u], SW), o{n});",
                    16 * kk,
                    16 * n
                );
            }
        }
        s + "        }\n"
    }

    /// The output rows divided by l, as f16 words.
    fn store(&self) -> String {
        let ind = "    ";
        let mut s = String::new();
        for (first, count) in self.batches() {
            s += &Self::stash(first, count, ind);
            let _ = writeln!(
                s,
                "{ind}workgroupBarrier();\n{ind}store_rows(s, lane, {}u, o_base, i0, {}u);\n{ind}workgroupBarrier();",
                16 * count,
                16 * first
            );
        }
        s
    }
}

/// The tensor-core kernel for variant `v` and tile `t`; `None` unless q, k, v are F16 (the
/// bias F16 or F32) and `t` is [valid](CoopAttnTile::valid). Its bindings are those of the
/// blocked kernel: params, q, k, v, keep-mask, bias (as present), then the output.
pub fn coop_module(v: AttnVariant, t: CoopAttnTile) -> Option<Result<String, String>> {
    if v.dtype != DType::F16 || !v.supported() || !t.valid() {
        return None;
    }
    Some((|| {
        let code = Code { dq: t.d / 16, dvf: t.dv / 16, kf: t.bk() / 16 };
        let mut extra = String::new();
        let mut next = 4;
        if v.keep_mask {
            extra += &tensor_binding("mask", next, DType::Bool, Access::Read);
            next += 1;
        }
        if let Some(d) = v.bias {
            extra += &tensor_binding("bias", next, d, Access::Read);
        }
        let out = tensor_binding("o", v.first_output(), DType::F16, Access::Write);
        let num = |x: u32| x.to_string();
        let body = render(
            ATTENTION_FLASH_COOP,
            &[
                ("SG", &num(t.subgroup)),
                ("BK", &num(t.bk())),
                ("D", &num(t.d)),
                ("DV", &num(t.dv)),
                ("SW", &num(t.sw())),
                ("QLOAD", &code.qload()),
                ("ODECL", &code.odecl()),
                ("SCORES", &code.scores()),
                ("RESCALE", &code.rescale()),
                ("PV", &code.pv()),
                ("PLAIN", if v.keep_mask || v.bias.is_some() { "false" } else { "true" }),
                ("STORE", &code.store()),
            ],
        )?;
        let prelude = "enable f16;\nenable wgpu_cooperative_matrix;\n";
        Ok(trusted(&(prelude.to_string() + &join(&[COMMON, MATH, &v.common()?, &extra, &out, &body]))))
    })())
}
