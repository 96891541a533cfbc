//! Fused attention (§2.8.1) with online softmax: `attention_flash.wgsl` for any query length
//! (blocks of query rows, key blocks streamed through workgroup memory), `attention_decode.wgsl`
//! for few query rows (the key range split over workgroups, flash-decoding) and
//! `attention_combine.wgsl`, which merges the splits. They share `attention_common.wgsl`: the
//! params, the structural-mask key ranges and the logit (scale, soft-cap, bias, masks). The
//! score matrix is never written to device memory: the decode scratch holds one partial output
//! row, max and sum per split and query row.

use crate::{module as join, render, tensor_binding, trusted, Access, COMMON, MATH};
use backend_api::DType;

/// Shared params and helpers.
pub const ATTENTION_COMMON: &str = include_str!("../wgsl/attention_common.wgsl");
/// The blocked kernel for any query length.
pub const ATTENTION_FLASH: &str = include_str!("../wgsl/attention_flash.wgsl");
/// The split kernel for few query rows per key/value head.
pub const ATTENTION_DECODE: &str = include_str!("../wgsl/attention_decode.wgsl");
/// The merge of the split kernel's partial rows.
pub const ATTENTION_COMBINE: &str = include_str!("../wgsl/attention_combine.wgsl");

/// Invocations per workgroup of the split and combine kernels (one key per invocation in a
/// block, one value column per invocation).
pub const DECODE_THREADS: u32 = 128;
/// The most query rows per key/value head the split kernel computes together.
pub const DECODE_MAX_ROWS: u32 = 8;

crate::params! {
    /// `AttnParams` of `attention_common.wgsl`. Logical Q[b, h, i, d] is at
    /// `b·q_sb + h·q_sh + i·q_si + d` (likewise K, V, O with their own strides); the keep-mask
    /// (`m_*`) and bias (`c_*`) strides index the logical [b, h, i, j] with 0 on broadcast axes.
    pub struct AttnParams {
        /// Query rows `Sq`.
        pub sq: u32,
        /// Keys `Sk`.
        pub sk: u32,
        /// Query/key head width `D`.
        pub d: u32,
        /// Value head width `Dv`.
        pub dv: u32,
        /// Query heads per key/value head.
        pub grp: u32,
        /// Query heads `Hq`.
        pub hq: u32,
        /// Batch-head pairs `B·Hq`.
        pub bh: u32,
        /// Rows of the grid's (y, z) plane that carry the batch-head pairs.
        pub bh_rows: u32,
        /// Query batch stride.
        pub q_sb: u32,
        /// Query head stride.
        pub q_sh: u32,
        /// Query row stride.
        pub q_si: u32,
        /// Key batch stride.
        pub k_sb: u32,
        /// Key head stride.
        pub k_sg: u32,
        /// Key row stride.
        pub k_sj: u32,
        /// Value batch stride.
        pub v_sb: u32,
        /// Value head stride.
        pub v_sg: u32,
        /// Value row stride.
        pub v_sj: u32,
        /// Output batch stride.
        pub o_sb: u32,
        /// Output head stride.
        pub o_sh: u32,
        /// Output row stride.
        pub o_si: u32,
        /// Keep-mask strides over (b, h, i, j).
        pub m_sb: u32,
        /// See `m_sb`.
        pub m_sh: u32,
        /// See `m_sb`.
        pub m_si: u32,
        /// See `m_sb`.
        pub m_sj: u32,
        /// Bias strides over (b, h, i, j).
        pub c_sb: u32,
        /// See `c_sb`.
        pub c_sh: u32,
        /// See `c_sb`.
        pub c_si: u32,
        /// See `c_sb`.
        pub c_sj: u32,
        /// `δ` of the structural masks.
        pub delta: i32,
        /// 0 none, 1 causal, 2 sliding window.
        pub mask_kind: u32,
        /// Sliding-window length.
        pub window: u32,
        /// Logit scale.
        pub scale: f32,
        /// Soft-cap, 0 for none.
        pub softcap: f32,
        /// Keys per split (decode kernel).
        pub chunk: u32,
        /// Splits (decode kernel).
        pub splits: u32,
        /// Value-column chunks (prefill kernel).
        pub dv_chunks: u32,
    }
}

/// Tile of the blocked kernel: `bq` query rows (a multiple of 4; `2·bq` invocations), `bk`
/// keys per block (a multiple of 8), `dc` head-width elements per staged chunk (a multiple of 4), `dvc` value
/// columns per workgroup (a multiple of 32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FlashTile {
    /// Query rows per workgroup.
    pub bq: u32,
    /// Keys per block.
    pub bk: u32,
    /// Head-width chunk.
    pub dc: u32,
    /// Value columns per workgroup.
    pub dvc: u32,
}

impl FlashTile {
    /// The tile for adapters with 48 KiB of workgroup memory or more.
    pub const LARGE: FlashTile = FlashTile { bq: 64, bk: 32, dc: 32, dvc: 128 };
    /// The tile that fits WebGPU's default 16 KiB.
    pub const SMALL: FlashTile = FlashTile { bq: 32, bk: 32, dc: 16, dvc: 64 };

    /// Vec4s of the staging array: the Q and K chunks (rows padded by one vec4), or the V
    /// block, whichever is larger.
    pub fn stage_vec4s(self) -> u32 {
        let qk = (self.bq + self.bk) * (self.dc / 4 + 1);
        qk.max(self.bk * self.dvc / 4)
    }

    /// Bytes of workgroup memory the kernel declares.
    pub fn workgroup_bytes(self) -> u32 {
        16 * (self.stage_vec4s() + self.bq * (self.bk / 4 + 1)) + 4 * self.bq * 8
    }

    /// Invocations per workgroup.
    pub fn threads(self) -> u32 {
        2 * self.bq
    }
}

/// What selects a variant: the dtype of q, k, v and the output, the keep-mask (Bool) and the
/// bias dtype when present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttnVariant {
    /// dtype of q, k, v and the output (F32, F16 or BF16).
    pub dtype: DType,
    /// A Bool keep-mask is bound.
    pub keep_mask: bool,
    /// The bias dtype, when a bias is bound.
    pub bias: Option<DType>,
}

impl AttnVariant {
    /// The storage bindings after the params, in order: q, k, v, keep-mask, bias, then the
    /// kernel's own outputs (see each renderer).
    fn inputs(self) -> String {
        let mut s = String::new();
        for (k, name) in ["q", "k", "v"].into_iter().enumerate() {
            s += &tensor_binding(name, 1 + k as u32, self.dtype, Access::Read);
        }
        s + &self.extra_inputs()
    }

    /// The keep-mask and bias bindings (as present), after q, k and v.
    fn extra_inputs(self) -> String {
        let mut s = String::new();
        let mut next = 4;
        if self.keep_mask {
            s += &tensor_binding("mask", next, DType::Bool, Access::Read);
            next += 1;
        }
        if let Some(d) = self.bias {
            s += &tensor_binding("bias", next, d, Access::Read);
        }
        s
    }

    /// The binding number of the first output.
    pub(super) fn first_output(self) -> u32 {
        4 + u32::from(self.keep_mask) + u32::from(self.bias.is_some())
    }

    /// `attention_common.wgsl` with this variant's keep-mask and bias expressions.
    pub(super) fn common(self) -> Result<String, String> {
        let keep = if self.keep_mask { "ld_mask(b * p.m_sb + h * p.m_sh + i * p.m_si + j * p.m_sj)" } else { "1u" };
        let bias =
            if self.bias.is_some() { "ld_bias(b * p.c_sb + h * p.c_sh + i * p.c_si + j * p.c_sj)" } else { "0.0" };
        render(ATTENTION_COMMON, &[("BIAS", bias), ("KEEP", keep)])
    }

    /// A float32-family dtype and a bias of that dtype or F32.
    pub(super) fn supported(self) -> bool {
        let float = |d: DType| matches!(d, DType::F32 | DType::F16 | DType::BF16);
        float(self.dtype) && self.bias.is_none_or(|d| d == self.dtype || d == DType::F32)
    }
}

/// The blocked kernel for variant `v` and tile `t`; `None` for a dtype outside the float32
/// family or a bias dtype the spec does not allow.
pub fn flash_module(v: AttnVariant, t: FlashTile) -> Option<Result<String, String>> {
    if !v.supported()
        || !t.bq.is_multiple_of(4)
        || !t.bk.is_multiple_of(8)
        || !t.dvc.is_multiple_of(32)
        || !t.dc.is_multiple_of(4)
        || t.dc == 0
    {
        return None;
    }
    Some((|| {
        let out = tensor_binding("o", v.first_output(), v.dtype, Access::Write);
        let body = render(
            ATTENTION_FLASH,
            &[
                ("BQ", &t.bq.to_string()),
                ("BK", &t.bk.to_string()),
                ("DC", &t.dc.to_string()),
                ("DVC", &t.dvc.to_string()),
                ("STAGE", &t.stage_vec4s().to_string()),
            ],
        )?;
        Ok(trusted(&join(&[COMMON, MATH, &v.common()?, &v.inputs(), &out, &body])))
    })())
}

/// The split kernel for variant `v` computing up to `rmax` rows (1, 2, 4 or 8) per key/value
/// head; its outputs are the f32 scratch of partial rows (`po`) and of (max, sum) pairs (`pm`).
/// `k_vec` binds K as vectors of 4 elements (`vec4<f32>`, or `vec2<u32>` for F16/BF16): the
/// lowering checks that D, K's strides and its window's offset and size allow it.
pub fn decode_module(v: AttnVariant, rmax: u32, k_vec: bool) -> Option<Result<String, String>> {
    if !v.supported() || !matches!(rmax, 1 | 2 | 4 | 8) {
        return None;
    }
    Some((|| {
        let first = v.first_output();
        let po = tensor_binding("po", first, DType::F32, Access::Write);
        let pm = tensor_binding("pm", first + 1, DType::F32, Access::Write);
        let body = render(ATTENTION_DECODE, &[("RMAX", &rmax.to_string())])?;
        let mut inputs = String::new();
        for (k, name) in ["q", "k", "v"].into_iter().enumerate() {
            inputs += &if name == "k" && k_vec {
                k_vector_binding(v.dtype)
            } else {
                tensor_binding(name, 1 + k as u32, v.dtype, Access::Read)
            };
        }
        inputs += &v.extra_inputs();
        let loads = kv_loads(v.dtype, k_vec);
        Ok(trusted(&join(&[COMMON, MATH, &v.common()?, &inputs, &loads, &po, &pm, &body])))
    })())
}

/// K bound as vectors of 4 elements, with `kv_k(i)` and `kv_k4(i)` (i a multiple of 4).
fn k_vector_binding(d: DType) -> String {
    let decl = "@group(0) @binding(2) var<storage, read_write> k: ";
    match d {
        DType::F16 => format!(
            "{decl}array<vec2<u32>>;\n\
             fn kv_k(i: u32) -> f32 {{ return unpack2x16float(k[i >> 2u][(i >> 1u) & 1u])[i & 1u]; }}\n\
             fn kv_k4(i: u32) -> vec4<f32> {{ let w = k[i >> 2u]; \
             return vec4<f32>(unpack2x16float(w.x), unpack2x16float(w.y)); }}\n"
        ),
        DType::BF16 => format!(
            "{decl}array<vec2<u32>>;\n\
             fn kv_k(i: u32) -> f32 {{ return bf16_bits_to_f32(k[i >> 2u][(i >> 1u) & 1u] >> (16u * (i & 1u))); }}\n\
             fn kv_k4(i: u32) -> vec4<f32> {{ let w = k[i >> 2u]; \
             return vec4<f32>(bitcast<f32>(w.x << 16u), bitcast<f32>(w.x & 0xffff0000u), \
             bitcast<f32>(w.y << 16u), bitcast<f32>(w.y & 0xffff0000u)); }}\n"
        ),
        _ => format!(
            "{decl}array<vec4<f32>>;\n\
             fn kv_k(i: u32) -> f32 {{ return k[i >> 2u][i & 3u]; }}\n\
             fn kv_k4(i: u32) -> vec4<f32> {{ return k[i >> 2u]; }}\n"
        ),
    }
}

/// `kv_k`, `kv_k4` (unless K is bound as vectors) and `kv_v`, the split kernel's K and V
/// loads: F16 through the hardware's conversion (`unpack2x16float`; every f16 value is exact in
/// f32, and the integer-op conversion of `ld_k` cost the kernel more than the halved bytes
/// saved, docs/PERF.md), other dtypes through `ld_k` / `ld_v`.
fn kv_loads(d: DType, k_vec: bool) -> String {
    let names: &[&str] = if k_vec { &["v"] } else { &["k", "v"] };
    let mut s: String = names
        .iter()
        .map(|n| match d {
            DType::F16 => format!("fn kv_{n}(i: u32) -> f32 {{ return unpack2x16float({n}[i >> 1u])[i & 1u]; }}\n"),
            _ => format!("fn kv_{n}(i: u32) -> f32 {{ return ld_{n}(i); }}\n"),
        })
        .collect();
    if !k_vec {
        s += "fn kv_k4(i: u32) -> vec4<f32> { return vec4<f32>(kv_k(i), kv_k(i + 1u), kv_k(i + 2u), kv_k(i + 3u)); }\n";
    }
    s
}

/// The merge of the split kernel's scratch into the output of dtype `d`; `pairs` writes an
/// F16/BF16 output two columns per invocation as whole words (the lowering checks that Dv, the
/// output strides and the window's offset are even), so it needs no zeroing pass. `None` for a
/// dtype outside the float32 family or `pairs` with an unpacked dtype.
pub fn combine_module(d: DType, pairs: bool) -> Option<Result<String, String>> {
    let v = AttnVariant { dtype: d, keep_mask: false, bias: None };
    let bits = match d {
        DType::F16 => "f32_to_f16_bits",
        DType::BF16 => "f32_to_bf16_bits",
        _ => "",
    };
    if !v.supported() || (pairs && bits.is_empty()) {
        return None;
    }
    Some((|| {
        let po = tensor_binding("po", 1, DType::F32, Access::Read);
        let pm = tensor_binding("pm", 2, DType::F32, Access::Read);
        let (cpi, store) = if pairs {
            ("2", format!("    atomicStore(&o[at >> 1u], {bits}(val[0]) | ({bits}(val[1]) << 16u));"))
        } else {
            ("1", "    st_o(at, val[0]);".to_string())
        };
        let out = tensor_binding("o", 3, d, Access::Write);
        let body = render(ATTENTION_COMBINE, &[("CPI", cpi), ("STORE", &store)])?;
        Ok(trusted(&join(&[COMMON, MATH, &v.common()?, &po, &pm, &out, &body])))
    })())
}
