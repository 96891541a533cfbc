//! The quantised GEMM for prefill (`linalg_quant_gemm_common.wgsl` with
//! `linalg_quant_gemm.wgsl` or `linalg_quant_gemm_coop.wgsl`; QuantMatMul §2.6.5 with more rows
//! of x than the decode GEMV takes): output tiles computed from workgroup-memory tiles of x and
//! of W decoded by the GEMV's item functions, so each weight is decoded once per tile of rows.
//! The scalar form computes in f32 on every adapter; the tensor-core form rounds x and the
//! decoded weights to f16 (the explicit reduced-precision option).
//!
//! Bindings (those of the generic kernel): 1 `x`, 2 `w` (raw words), then the format's other
//! weight inputs in their order, then `out`.

use super::quant::{decode, decode_helpers, weight_and_out_bindings};
use super::quant_vec::{items, unit_source, QUANT_WORDS};
use crate::{module, render, tensor_binding, Access, COMMON};
use backend_api::op::QuantFormat;
use backend_api::DType;

/// Staging and params shared by both forms.
pub const QUANT_GEMM_COMMON: &str = include_str!("../wgsl/linalg_quant_gemm_common.wgsl");
/// The scalar form.
pub const QUANT_GEMM: &str = include_str!("../wgsl/linalg_quant_gemm.wgsl");
/// The tensor-core form.
pub const QUANT_GEMM_COOP: &str = include_str!("../wgsl/linalg_quant_gemm_coop.wgsl");
/// Staging of x element by element.
pub const QUANT_GEMM_X: &str = include_str!("../wgsl/linalg_quant_gemm_x.wgsl");
/// Staging of x from 16-byte vectors.
pub const QUANT_GEMM_XVEC: &str = include_str!("../wgsl/linalg_quant_gemm_xvec.wgsl");

/// Elements of K per step (`BK`).
pub const QUANT_GEMM_BK: u32 = 32;
/// Rows and columns of the scalar form's output tile.
pub const QUANT_GEMM_TILE: u32 = 64;
/// Invocations of the scalar form's workgroup.
const SCALAR_THREADS: u32 = 256;
/// Rows and columns of the tensor-core form's output tile (2 x 4 subgroups).
pub const QUANT_GEMM_COOP_TILE: u32 = 128;

crate::params! {
    /// `QuantGemmParams` of `linalg_quant_gemm_common.wgsl`.
    pub struct QuantGemmParams {
        /// Rows of x (the product of its leading dims).
        pub m: u32,
        /// Output columns N (rows of W).
        pub n: u32,
        /// Contraction length K.
        pub k: u32,
        /// Bytes per row of `w`.
        pub wrow: u32,
        /// Elements per row of the scale input (as `QuantParams::srow`).
        pub srow: u32,
        /// Elements per scale of the scale-tensor integer formats (`block_size`).
        pub qb: u32,
        /// Items per row in whole units (as `QuantVecParams::items`).
        pub items: u32,
        /// Row tiles: `⌈M / tile rows⌉`.
        pub mtiles: u32,
        /// Workgroups that do work: row tiles times column tiles.
        pub groups: u32,
        /// K-steps: `⌈K / QUANT_GEMM_BK⌉`.
        pub steps: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
    }
}

/// Which form of the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuantGemmForm {
    /// f32 arithmetic, 64 x 64 tiles, 256 invocations.
    Scalar,
    /// f16 cooperative matrices of `frag` x `frag` (8 or 16) with f32 accumulators, on a device
    /// whose only subgroup size is `subgroup`: 128 x 128 tiles, 8 subgroups.
    Coop {
        /// Fragment size.
        frag: u32,
        /// Subgroup size.
        subgroup: u32,
    },
}

impl QuantGemmForm {
    /// Rows and columns of the output tile.
    pub fn tile(&self) -> u32 {
        match self {
            QuantGemmForm::Scalar => QUANT_GEMM_TILE,
            QuantGemmForm::Coop { .. } => QUANT_GEMM_COOP_TILE,
        }
    }

    /// Invocations per workgroup.
    pub fn threads(&self) -> u32 {
        match self {
            QuantGemmForm::Scalar => SCALAR_THREADS,
            QuantGemmForm::Coop { subgroup, .. } => 8 * subgroup,
        }
    }

    /// Bytes of workgroup memory.
    pub fn workgroup_bytes(&self) -> u64 {
        let (t, bk) = (u64::from(self.tile()), u64::from(QUANT_GEMM_BK));
        match self {
            QuantGemmForm::Scalar => 4 * (t * bk + bk * t),
            // Two buffers of each tile.
            QuantGemmForm::Coop { frag, .. } => 4 * (t * (bk + 8) + t * (bk + 8)) + 4 * 8 * u64::from(*frag).pow(2),
        }
    }

    /// Whether the templates can be rendered for this form: the tile's elements divide among
    /// the invocations, the fragments among the subgroups.
    pub fn renderable(&self) -> bool {
        let nt = self.threads();
        let t = self.tile();
        let frags = match self {
            QuantGemmForm::Scalar => true,
            QuantGemmForm::Coop { frag, subgroup } => {
                matches!(frag, 8 | 16)
                    && *subgroup > 0
                    && (t / 2).is_multiple_of(*frag)
                    && (t / 4).is_multiple_of(*frag)
            }
        };
        frags && nt > 0 && (t * QUANT_GEMM_BK).is_multiple_of(nt) && (t * 4).is_multiple_of(nt)
    }
}

/// `(IPS, R)` of a format (see the template): the items of a row one K-step of 32 elements
/// touches, and the K-steps over which a run of that many items spans.
fn step_items(format: QuantFormat) -> (u32, u32) {
    match format {
        // Units of 8 elements, one item each: a step is 4 units.
        QuantFormat::Int8Block { .. }
        | QuantFormat::Int8BlockAsym { .. }
        | QuantFormat::Int4Block { .. }
        | QuantFormat::Fp8E4m3
        | QuantFormat::Fp8E5m2
        | QuantFormat::Nvfp4 => (4, 1),
        // A step is a block of 4 items.
        QuantFormat::Q4_0 | QuantFormat::Q4_1 | QuantFormat::Q5_0 | QuantFormat::Q5_1 | QuantFormat::Q8_0 => (4, 1),
        // Items of 8 consecutive elements.
        QuantFormat::Q8_K => (4, 1),
        // Item 4 pr + h: elements 64 pr + 8 h .. + 8 and 32 further on.
        QuantFormat::Q4_K | QuantFormat::Q5_K => (4, 2),
        // Item 8 hq + q: elements 128 hq + 32 c + 4 q .. + 4 for c < 4.
        QuantFormat::Q2_K | QuantFormat::Q3_K | QuantFormat::Q6_K => (8, 4),
    }
}

/// The kernel for `format`, `x` of float dtype `x` (F32, F16 or BF16; the output has the same),
/// weight inputs of dtypes `ws` in the format's order, in `form`. With `xvec` (K a multiple of 8
/// and x's window whole 16-byte vectors) x is staged with 16-byte loads where the tile's
/// vectors divide among the invocations. `None` for an `x` dtype outside the float32 family or a
/// form that cannot be rendered; `Err` for weight dtypes the format does not take.
pub fn module_for(
    format: QuantFormat,
    x: DType,
    ws: &[DType],
    form: QuantGemmForm,
    xvec: bool,
) -> Option<Result<String, String>> {
    if !matches!(x, DType::F32 | DType::F16 | DType::BF16) || !form.renderable() {
        return None;
    }
    Some(render_for(format, x, ws, form, xvec))
}

/// Elements of x per 16-byte vector.
fn x_per_vector(x: DType) -> u32 {
    if x == DType::F32 {
        4
    } else {
        8
    }
}

/// The x staging part: vectors when allowed and the tile's vectors divide among the invocations.
fn x_staging(x: DType, form: QuantGemmForm, xvec: bool) -> Result<(String, String), String> {
    let xv = x_per_vector(x);
    if !xvec || !(form.tile() * QUANT_GEMM_BK).is_multiple_of(xv * form.threads()) {
        return Ok((tensor_binding("x", 1, x, Access::Read), QUANT_GEMM_X.to_string()));
    }
    let coop = matches!(form, QuantGemmForm::Coop { .. });
    let part = render(QUANT_GEMM_XVEC, &[("XV", &xv.to_string()), ("PUT_XV", &put_xv(x, coop))])?;
    Ok((String::new(), part))
}

/// The body of `put_xv`: F32 words as they are; F16 exactly (`f16_bits_to_f32`) in the scalar
/// form, by `unpack2x16float` in the tensor-core form (which rounds to f16 anyway); BF16 by its
/// exact widening.
fn put_xv(x: DType, coop: bool) -> String {
    let mut b = String::new();
    for i in 0..4 {
        let (lo, hi) = (2 * i, 2 * i + 1);
        b += &match x {
            DType::F32 => format!("    put_x(row, kk + {i}u, bitcast<f32>(w[{i}]));\n"),
            DType::F16 if coop => format!(
                "    let h{i} = unpack2x16float(w[{i}]);\n    put_x(row, kk + {lo}u, h{i}.x);\n    put_x(row, kk + {hi}u, h{i}.y);\n"
            ),
            DType::F16 => format!(
                "    put_x(row, kk + {lo}u, f16_bits_to_f32(w[{i}] & 0xffffu));\n    put_x(row, kk + {hi}u, f16_bits_to_f32(w[{i}] >> 16u));\n"
            ),
            _ => format!(
                "    put_x(row, kk + {lo}u, bf16_bits_to_f32(w[{i}]));\n    put_x(row, kk + {hi}u, bf16_bits_to_f32(w[{i}] >> 16u));\n"
            ),
        };
    }
    b
}

fn render_for(format: QuantFormat, x: DType, ws: &[DType], form: QuantGemmForm, xvec: bool) -> Result<String, String> {
    let (extra, expr) = decode(format, ws)?;
    let (mut tensors, x_part) = x_staging(x, form, xvec)?;
    weight_and_out_bindings(&mut tensors, &extra, x);
    let it = items(format);
    let (ips, r) = step_items(format);
    let num = |v: u32| v.to_string();
    let common = [
        ("NT", num(form.threads())),
        ("G", num(it.g)),
        ("IPS", num(ips)),
        ("R", num(r)),
        ("TENSORS", tensors),
        ("DECODE", expr),
        ("ITEM", it.item.to_string()),
        ("WHOLE", whole_groups(it.xg, it.kof, r > 1)),
        ("RAGGED", ragged_groups(it.xg, it.kof, r > 1)),
    ];
    let common: Vec<(&str, &str)> = common.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let common = render(QUANT_GEMM_COMMON, &common)?;
    let (prelude, kernel) = match form {
        QuantGemmForm::Scalar => {
            let slots = [("DECLS", scalar_decls()), ("COMPUTE", scalar_compute()), ("STORE", scalar_store())];
            let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
            ("", render(QUANT_GEMM, &slots)?)
        }
        QuantGemmForm::Coop { frag, subgroup } => {
            let (fm, fn_) = (QUANT_GEMM_COOP_TILE / (2 * frag), QUANT_GEMM_COOP_TILE / (4 * frag));
            let slots = [
                ("F", num(frag)),
                ("FM", num(fm)),
                ("FN", num(fn_)),
                ("SG", num(subgroup)),
                ("STORE_PAIR", super::store_pair_body(x).to_string()),
                ("DECLS", coop_decls(fm, fn_)),
                ("COMPUTE", coop_compute(frag, fm, fn_)),
                ("STORE", coop_store(frag, fm, fn_)),
            ];
            let slots: Vec<(&str, &str)> = slots.iter().map(|(k, v)| (*k, v.as_str())).collect();
            ("enable f16;\nenable wgpu_cooperative_matrix;\n", render(QUANT_GEMM_COOP, &slots)?)
        }
    };
    let unit_src = unit_source(format, ws)?;
    let mut parts =
        vec![prelude, COMMON, common.as_str(), x_part.as_str(), kernel.as_str(), QUANT_WORDS, unit_src.as_str()];
    parts.extend_from_slice(decode_helpers(format));
    Ok(crate::loops_bounded(&module(&parts)))
}

/// The groups of a whole item `v` put into the tile; `filter`: only those inside the step.
fn whole_groups(xg: u32, kof: &str, filter: bool) -> String {
    let mut b = String::new();
    for j in 0..xg {
        // (`kk`, not `k`: `k0` is the step's first element.)
        b += &format!("            let kk{j} = {kof}(u, i, {j}u) - k0;\n");
        let put = format!("put_w(kk{j}, c, v[{j}]);");
        b +=
            &if filter { format!("            if (kk{j} < BK) {{ {put} }}\n") } else { format!("            {put}\n") };
    }
    b
}

/// The groups of an item past the whole units, element by element (zero past K).
fn ragged_groups(xg: u32, kof: &str, filter: bool) -> String {
    let mut b = String::new();
    for j in 0..xg {
        b += &format!("            let ke{j} = {kof}(u, i, {j}u);\n");
        let e: Vec<String> = (0..4).map(|d| format!("wq0(n, ke{j} + {d}u)")).collect();
        let put = format!("put_w(ke{j} - k0, c, vec4<f32>({}));", e.join(", "));
        b += &if filter {
            format!("            if (ke{j} - k0 < BK) {{ {put} }}\n")
        } else {
            format!("            {put}\n")
        };
    }
    b
}

/// Per-invocation rows and columns of the scalar form (`ty + 16 i`, `tx + 16 j`).
const SCALAR_PER: u32 = QUANT_GEMM_TILE / 16;

fn scalar_decls() -> String {
    let mut b = String::new();
    for i in 0..SCALAR_PER {
        for j in 0..SCALAR_PER {
            b += &format!("    var a{i}_{j} = 0.0;\n");
        }
    }
    b
}

fn scalar_compute() -> String {
    let mut b = String::new();
    for i in 0..SCALAR_PER {
        b += &format!("            let x{i} = sa[(ty + {}u) * BK + kk];\n", 16 * i);
    }
    for j in 0..SCALAR_PER {
        b += &format!("            let y{j} = sb[kk * TN + tx + {}u];\n", 16 * j);
    }
    for i in 0..SCALAR_PER {
        for j in 0..SCALAR_PER {
            b += &format!("            a{i}_{j} = a{i}_{j} + x{i} * y{j};\n");
        }
    }
    b
}

fn scalar_store() -> String {
    let mut b = String::new();
    for i in 0..SCALAR_PER {
        b += &format!("    let r{i} = row0 + ty + {}u;\n", 16 * i);
        for j in 0..SCALAR_PER {
            b += &format!(
                "    if (r{i} < p.m && col0 + tx + {c}u < p.n) {{ st_out(r{i} * p.n + col0 + tx + {c}u, a{i}_{j}); }}\n",
                c = 16 * j
            );
        }
    }
    b
}

fn coop_decls(fm: u32, fn_: u32) -> String {
    let mut b = String::new();
    for i in 0..fm {
        for j in 0..fn_ {
            b += &format!("    var c{i}_{j} = FragC();\n");
        }
    }
    b
}

fn coop_compute(f: u32, fm: u32, fn_: u32) -> String {
    let mut b = String::new();
    for kk in 0..QUANT_GEMM_BK / f {
        let ko = kk * f;
        b += "        {\n";
        for i in 0..fm {
            b += &format!("            let a{i} = coopLoadT<FragA>(&sa[abuf + (wr + {}u) * SA + {ko}u], SA);\n", i * f);
        }
        for j in 0..fn_ {
            b += &format!("            let b{j} = coopLoad<FragB>(&sb[bbuf + (wc + {}u) * SB + {ko}u], SB);\n", j * f);
        }
        for i in 0..fm {
            for j in 0..fn_ {
                b += &format!("            c{i}_{j} = coopMultiplyAdd(a{i}, b{j}, c{i}_{j});\n");
            }
        }
        b += "        }\n";
    }
    b
}

fn coop_store(f: u32, fm: u32, fn_: u32) -> String {
    let mut b = String::new();
    for i in 0..fm {
        for j in 0..fn_ {
            b += &format!(
                "    coopStoreT(c{i}_{j}, &sc[s * F * F], F);\n    workgroupBarrier();\n    \
                 store_frag(s, row0 + wr + {}u, col0 + wc + {}u, lane);\n    workgroupBarrier();\n",
                i * f,
                j * f
            );
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scalar_form_fits_the_default_workgroup_memory() {
        assert_eq!(QuantGemmForm::Scalar.workgroup_bytes(), 16384);
        assert!(QuantGemmForm::Coop { frag: 16, subgroup: 32 }.workgroup_bytes() <= 48 * 1024);
        assert!(!QuantGemmForm::Coop { frag: 12, subgroup: 32 }.renderable());
        assert!(module_for(QuantFormat::Q4_0, DType::I32, &[DType::U8], QuantGemmForm::Scalar, false).is_none());
    }
}
