//! Random builders of the matmul, normalisation, attention and convolution ops without a
//! conformance generator (§2.6.4–2.6.7, §2.7, §2.8, §2.9, §2.16.1–2.16.2).

use crate::ctx::{Build, Ctx};
use backend_api::op::{
    AttentionAttrs, AttentionBackwardAttrs, AttnGrad, AttnLayout, ConvAttrs, ConvTransposeAttrs, Im2ColAttrs,
    MaskAlign, MaskKind, NormGrad, PoolAttrs, PoolKind, QuantFormat, RopeStyle,
};
use backend_api::{DType, Dim, Result, Value};

/// Name and builder of every op family here.
pub const BUILDERS: &[(&str, Build)] = &[
    ("GroupedMatMul", grouped_matmul),
    ("QuantMatMul", |c| quant_matmul(c, false)),
    ("QuantGroupedMatMul", |c| quant_matmul(c, true)),
    ("GroupNorm", group_norm),
    ("LayerNorm2d", layer_norm_2d),
    ("FusedResidualLayerNorm", |c| fused_residual_norm(c, true)),
    ("FusedResidualRmsNorm", |c| fused_residual_norm(c, false)),
    ("LayerNormBackward", |c| norm_backward(c, true)),
    ("RmsNormBackward", |c| norm_backward(c, false)),
    ("Attention", |c| attention(c, false)),
    ("AttentionBackward", |c| attention(c, true)),
    ("Rope", |c| rope(c, false)),
    ("RopeBackward", |c| rope(c, true)),
    ("Conv", conv),
    ("ConvTranspose", conv_transpose),
    ("Pool.Max", |c| pool(c, PoolKind::Max)),
    ("Pool.Avg", |c| pool(c, PoolKind::Avg)),
    ("Im2Col+ResizeNearest", im2col_resize),
];

fn grouped_matmul(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("GroupedMatMul");
    let (t, k, n, e) = (c.size(1, 5), c.size(1, 6), c.size(1, 6), c.size(1, 4));
    let x = c.leaf(d, &[t, k])?;
    let w = c.leaf(d, &[e, k, n])?;
    let idx = c.pick(&[DType::I32, DType::I64]);
    let expert = c.leaf(idx, &[t])?;
    Ok(vec![c.b.grouped_matmul(x, w, expert)?])
}

/// Weight inputs (dtype, dims) of `format` for an `n × k` weight.
fn quant_weights(c: &mut Ctx, f: QuantFormat, n: usize, k: usize) -> Vec<(DType, Vec<usize>)> {
    let scale = c.pick(&[DType::F32, DType::F16]);
    let blocks = |b: u32| k.div_ceil(b as usize);
    match f {
        QuantFormat::Int8Block { block_size } => vec![(DType::I8, vec![n, k]), (scale, vec![n, blocks(block_size)])],
        QuantFormat::Int8BlockAsym { block_size } => {
            let w = c.pick(&[DType::U8, DType::I8]);
            vec![(w, vec![n, k]), (scale, vec![n, blocks(block_size)]), (scale, vec![n, blocks(block_size)])]
        }
        QuantFormat::Int4Block { block_size } => {
            vec![(DType::U8, vec![n, k.div_ceil(2)]), (scale, vec![n, blocks(block_size)])]
        }
        QuantFormat::Fp8E4m3 | QuantFormat::Fp8E5m2 => {
            let s = if c.flip() { vec![] } else { vec![n] };
            vec![(DType::U8, vec![n, k]), (DType::F32, s)]
        }
        QuantFormat::Nvfp4 => vec![(DType::U8, vec![n, k / 2]), (DType::U8, vec![n, k / 16]), (DType::F32, vec![])],
        other => {
            let (qk, bb) = other.ggml_block().unwrap_or((1, 1));
            vec![(DType::U8, vec![n, k / qk * bb])]
        }
    }
}

/// `QuantGroupedMatMul` (`grouped`) or `QuantMatMul` with a random format (random block sizes too).
fn quant_matmul(c: &mut Ctx, grouped: bool) -> Result<Vec<Value>> {
    let format = match c.pick(&QuantFormat::ALL) {
        QuantFormat::Int8Block { .. } => QuantFormat::Int8Block { block_size: c.size(1, 40) as u32 },
        QuantFormat::Int8BlockAsym { .. } => QuantFormat::Int8BlockAsym { block_size: c.size(1, 40) as u32 },
        QuantFormat::Int4Block { .. } => QuantFormat::Int4Block { block_size: c.size(1, 40) as u32 },
        other => other,
    };
    let k = match format.ggml_block() {
        Some((qk, _)) => qk * c.size(1, 2),
        None if format == QuantFormat::Nvfp4 => 16 * c.size(1, 3),
        None => c.size(1, 50),
    };
    let n = c.size(1, 4);
    let d = c.dtype("QuantMatMul");
    let experts = if grouped { Some(c.size(1, 3)) } else { None };
    let mut ws = Vec::new();
    for (wd, dims) in quant_weights(c, format, n, k) {
        let dims: Vec<usize> = experts.into_iter().chain(dims).collect();
        ws.push(c.leaf(wd, &dims)?);
    }
    if grouped {
        let t = c.size(1, 4);
        let x = c.leaf(d, &[t, k])?;
        let expert = c.leaf(DType::I32, &[t])?;
        Ok(vec![c.b.quant_grouped_matmul(x, &ws, expert, format)?])
    } else {
        let lead = c.size(1, 3);
        let x = c.leaf(d, &[lead, k])?;
        Ok(vec![c.b.quant_matmul(x, &ws, format)?])
    }
}

fn group_norm(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("GroupNorm");
    let groups = c.size(1, 3);
    let ch = groups * c.size(1, 3);
    let spatial: Vec<usize> = (0..c.size(0, 2)).map(|_| c.size(1, 4)).collect();
    let dims: Vec<usize> = [c.size(1, 2), ch].into_iter().chain(spatial).collect();
    let x = c.leaf(d, &dims)?;
    let gamma = c.leaf(d, &[ch])?;
    let beta = if c.flip() { Some(c.leaf(d, &[ch])?) } else { None };
    let eps = c.eps();
    Ok(vec![c.b.group_norm(x, gamma, beta, groups as u32, eps)?])
}

fn layer_norm_2d(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("LayerNorm2d");
    let ch = c.size(1, 5);
    let dims: Vec<usize> = vec![c.size(1, 2), ch, c.size(1, 4), c.size(1, 4)];
    let x = c.leaf(d, &dims)?;
    let gamma = c.leaf(d, &[ch])?;
    let beta = if c.flip() { Some(c.leaf(d, &[ch])?) } else { None };
    let eps = c.eps();
    Ok(vec![c.b.layer_norm_2d(x, gamma, beta, eps)?])
}

/// A random shape of rank 1..=3 and a canonical axis into it.
fn shape_and_axis(c: &mut Ctx) -> (Vec<usize>, usize) {
    let dims: Vec<usize> = (0..c.size(1, 3)).map(|_| c.size(1, 5)).collect();
    let axis = c.size(0, dims.len() - 1);
    (dims, axis)
}

fn fused_residual_norm(c: &mut Ctx, layer_norm: bool) -> Result<Vec<Value>> {
    let d = c.dtype("FusedResidualLayerNorm");
    let (dims, axis) = shape_and_axis(c);
    let x = c.leaf(d, &dims)?;
    let r = c.leaf(d, &dims)?;
    let bias = if c.flip() { Some(c.leaf(d, &dims[axis..])?) } else { None };
    let gamma = c.leaf(d, &dims[axis..])?;
    let beta = if c.flip() { Some(c.leaf(d, &dims[axis..])?) } else { None };
    let (eps, emit_sum) = (c.eps(), c.flip());
    let (y, s) = if layer_norm {
        c.b.fused_residual_layer_norm(x, (r, bias), (gamma, beta), axis as i64, eps, emit_sum)?
    } else {
        c.b.fused_residual_rms_norm(x, (r, bias), (gamma, beta), axis as i64 - dims.len() as i64, eps, emit_sum)?
    };
    Ok([y].into_iter().chain(s).collect())
}

fn norm_backward(c: &mut Ctx, layer_norm: bool) -> Result<Vec<Value>> {
    let d = c.dtype("LayerNormBackward");
    let (dims, axis) = shape_and_axis(c);
    let x = c.leaf(d, &dims)?;
    let gamma = c.leaf(d, &dims[axis..])?;
    let dy = c.leaf(d, &dims)?;
    let (eps, wrt) = (c.eps(), c.pick(&[NormGrad::Input, NormGrad::Gamma, NormGrad::Beta]));
    let y = if layer_norm {
        c.b.layer_norm_backward(x, gamma, dy, axis as i64, eps, wrt)?
    } else {
        c.b.rms_norm_backward(x, gamma, dy, axis as i64, eps, wrt)?
    };
    Ok(vec![y])
}

/// Dims of a tensor of `heads` heads of width `width` and length `s` in `layout`.
fn attn_dims(layout: AttnLayout, b: usize, heads: usize, s: usize, width: usize) -> Vec<usize> {
    match layout {
        AttnLayout::Bhsd => vec![b, heads, s, width],
        AttnLayout::Bshd => vec![b, s, heads, width],
        AttnLayout::BsPacked => vec![b, s, heads * width],
        AttnLayout::FlatHeads => vec![b * heads, s, width],
    }
}

/// Random `Attention` attributes for `layout`, `hq` and `hkv` heads.
fn attention_attrs(c: &mut Ctx, layout: AttnLayout, hq: usize, hkv: usize) -> AttentionAttrs {
    let mask = match c.size(0, 2) {
        0 => MaskKind::None,
        1 => MaskKind::Causal,
        _ => MaskKind::SlidingWindow { window: c.size(1, 1 << 20) as u64 },
    };
    AttentionAttrs {
        num_kv_heads: hkv as u32,
        mask,
        mask_align: c.pick(&[MaskAlign::End, MaskAlign::Start]),
        scale: c.maybe(Ctx::finite),
        softcap: c.maybe(Ctx::positive),
        ..AttentionAttrs::new(layout, hq as u32)
    }
}

/// `AttentionBackward` (`backward`) or `Attention` with random layout, heads, mask and inputs.
fn attention(c: &mut Ctx, backward: bool) -> Result<Vec<Value>> {
    let d = c.dtype("Attention");
    let layout = c.pick(&[AttnLayout::Bhsd, AttnLayout::Bshd, AttnLayout::BsPacked, AttnLayout::FlatHeads]);
    let hkv = c.size(1, 2);
    let hq = hkv * c.size(1, 2);
    let (b, sq, sk, dk, dv) = (c.size(1, 2), c.size(1, 4), c.size(1, 4), c.size(1, 4), c.size(1, 4));
    let q = c.leaf(d, &attn_dims(layout, b, hq, sq, dk))?;
    let k = c.leaf(d, &attn_dims(layout, b, hkv, sk, dk))?;
    let v = c.leaf(d, &attn_dims(layout, b, hkv, sk, dv))?;
    let keep = if c.flip() { Some(c.leaf(DType::Bool, &[sq, sk])?) } else { None };
    let bias = if c.flip() { Some(c.leaf(d, &[sq, sk])?) } else { None };
    let attrs = attention_attrs(c, layout, hq, hkv);
    if !backward {
        return Ok(vec![c.b.attention(q, k, v, keep, bias, attrs)?]);
    }
    let d_out = c.leaf(d, &attn_dims(layout, b, hq, sq, dv))?;
    let wrt = c.pick(&[AttnGrad::Query, AttnGrad::Key, AttnGrad::Value]);
    let a = AttentionBackwardAttrs { forward: attrs, wrt };
    Ok(vec![c.b.attention_backward((q, k, v), d_out, (keep, bias), a)?])
}

/// `RopeBackward` (`backward`) or `Rope` over `[B, S, heads·D]` with random widths and style.
fn rope(c: &mut Ctx, backward: bool) -> Result<Vec<Value>> {
    let d = c.dtype("Rope");
    let head_dim = 2 * c.size(1, 4);
    let rotary = 2 * c.size(0, head_dim / 2);
    let (b, s, heads) = (c.size(1, 2), c.size(1, 5), c.size(1, 3));
    let x = c.leaf(d, &[b, s, heads * head_dim])?;
    let cos = c.leaf(DType::F32, &[s, rotary / 2])?;
    let sin = c.leaf(DType::F32, &[s, rotary / 2])?;
    let style = c.pick(&[RopeStyle::NeoX, RopeStyle::GptJ]);
    let rotary = if rotary == head_dim && c.flip() { None } else { Some(rotary as u32) };
    let y = if !backward {
        c.b.rope(x, (cos, sin), head_dim as u32, rotary, style, -2)?
    } else {
        c.b.rope_backward(x, (cos, sin), head_dim as u32, rotary, style, 1)?
    };
    Ok(vec![y])
}

/// Per-dim `(kernel, stride, dilation, pads_begin, pads_end, input size)` whose window fits.
fn windows(c: &mut Ctx, s: usize) -> Vec<[usize; 6]> {
    (0..s)
        .map(|_| {
            let (k, st, dil) = (c.size(1, 3), c.size(1, 3), c.size(1, 2));
            let extent = dil * (k - 1) + 1;
            let (pb, pe) = (c.size(0, extent - 1), c.size(0, extent - 1));
            [k, st, dil, pb, pe, extent + c.size(0, 4)]
        })
        .collect()
}

fn column(w: &[[usize; 6]], i: usize) -> Vec<usize> {
    w.iter().map(|d| d[i]).collect()
}

fn conv(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("Conv");
    let w = {
        let s = c.size(1, 3);
        windows(c, s)
    };
    let groups = c.size(1, 2);
    let (cin, cout) = (groups * c.size(1, 2), groups * c.size(1, 2));
    let batch = c.size(1, 2);
    let x = if c.flip() {
        let dims: Vec<Dim> =
            [Dim::from("n"), Dim::Static(cin)].into_iter().chain(column(&w, 5).into_iter().map(Dim::Static)).collect();
        c.input(d, dims)?
    } else {
        c.leaf(d, &[vec![batch, cin], column(&w, 5)].concat())?
    };
    let weight = c.leaf(d, &[vec![cout, cin / groups], column(&w, 0)].concat())?;
    let bias = if c.flip() { Some(c.leaf(d, &[cout])?) } else { None };
    let a = ConvAttrs {
        stride: column(&w, 1),
        dilation: column(&w, 2),
        pads_begin: column(&w, 3),
        pads_end: column(&w, 4),
        groups: groups as u32,
        has_bias: false,
    };
    Ok(vec![c.b.conv(x, weight, bias, &a)?])
}

fn conv_transpose(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("ConvTranspose");
    let w = {
        let s = c.size(1, 2);
        windows(c, s)
    };
    let groups = c.size(1, 2);
    let (cin, cout) = (groups * c.size(1, 2), groups * c.size(1, 2));
    let dims: Vec<usize> = [vec![c.size(1, 2), cin], column(&w, 5)].concat();
    let x = c.leaf(d, &dims)?;
    let weight = c.leaf(d, &[vec![cin, cout / groups], column(&w, 0)].concat())?;
    let output_padding: Vec<usize> = w.iter().map(|dim| c.size(0, dim[1].max(dim[2]) - 1)).collect();
    // Pads of a transposed conv shrink the output: keep them below the unpadded size.
    let a = ConvTransposeAttrs {
        conv: ConvAttrs {
            stride: column(&w, 1),
            dilation: column(&w, 2),
            pads_begin: vec![0; w.len()],
            pads_end: column(&w, 3).iter().map(|p| p.min(&1)).copied().collect(),
            groups: groups as u32,
            has_bias: false,
        },
        output_padding,
    };
    let bias = if c.flip() { Some(c.leaf(d, &[cout])?) } else { None };
    Ok(vec![c.b.conv_transpose(x, weight, bias, &a)?])
}

fn pool(c: &mut Ctx, kind: PoolKind) -> Result<Vec<Value>> {
    let d = c.dtype(if kind == PoolKind::Max { "Pool.Max" } else { "Pool.Avg" });
    let w = {
        let s = c.size(1, 3);
        windows(c, s)
    };
    let dims: Vec<usize> = [vec![c.size(1, 2), c.size(1, 2)], column(&w, 5)].concat();
    let x = c.leaf(d, &dims)?;
    let a = PoolAttrs {
        dilation: column(&w, 2),
        pads_begin: column(&w, 3),
        pads_end: column(&w, 4),
        ceil_mode: c.flip(),
        count_include_pad: c.flip(),
        ..PoolAttrs::new(kind, &column(&w, 0), &column(&w, 1))
    };
    Ok(vec![c.b.pool(x, &a)?])
}

fn im2col_resize(c: &mut Ctx) -> Result<Vec<Value>> {
    let d = c.dtype("Im2Col");
    let w = {
        let s = c.size(1, 3);
        windows(c, s)
    };
    let dims: Vec<usize> = [vec![c.size(1, 2), c.size(1, 3)], column(&w, 5)].concat();
    let x = c.leaf(d, &dims)?;
    let a = Im2ColAttrs {
        stride: column(&w, 1),
        dilation: column(&w, 2),
        pads_begin: column(&w, 3),
        pads_end: column(&w, 4),
        ..Im2ColAttrs::new(&column(&w, 0))
    };
    let cols = c.b.im2col(x, &a)?;
    let scales: Vec<u32> = w.iter().map(|_| c.size(1, 3) as u32).collect();
    let resized = c.b.resize_nearest(x, &scales)?;
    Ok(vec![cols, resized])
}
