//! A tiny decoder-only language model built from the IR alone: token embedding (`Gather`),
//! pre-norm decoder blocks (RmsNorm, QKV projections, NeoX `Rope`, causal grouped-query
//! `Attention`, output projection, `FusedResidualRmsNorm` for the residual and the MLP norm,
//! SwiGLU MLP, residual), a final RmsNorm and the LM head; the next token is the `ArgMax` of the
//! logits, computed on the device.
//!
//! Two graphs share the weights: **prefill** runs the prompt (`[1, P]` tokens) with a causal
//! mask and returns each layer's keys and values zero-padded to the cache capacity `C`;
//! **decode** runs one token at position `pos` against those caches. The caches stay on the
//! device between steps (`Placement::Device` out, `Feed::Device` in): each decode step writes its
//! key and value rows into slot `pos` with `Where` under a one-hot mask (`iota == pos`, an
//! elementwise select rather than a scatter: no atomics, every slot written exactly once), and
//! attends only to slots `≤ pos` through the attention keep-mask (`iota ≤ pos`). The Rope rows of
//! the current position are gathered from the tables on the device. Only the 4-byte position goes
//! up and, when asked, the logits come back per step.

use anyhow::{ensure, Context, Result};
use backend_api::op::{AttentionAttrs, AttnLayout, BinaryOp, CompareOp, MaskKind, PadMode, RopeStyle, UnaryOp};
use backend_api::{DType, DeviceTensor, Executable, Feed, Fetched, Graph, GraphBuilder, Placement, Tensor, Value};
use std::path::Path;

/// Model and run sizes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Model width.
    pub width: usize,
    /// Decoder blocks.
    pub layers: usize,
    /// Query heads (the head width is `width / heads`).
    pub heads: usize,
    /// Key/value heads (dividing `heads`).
    pub kv_heads: usize,
    /// Vocabulary size.
    pub vocab: usize,
    /// MLP hidden width.
    pub ffn: usize,
    /// KV-cache capacity (the longest prompt plus generated sequence).
    pub context: usize,
}

impl Default for Config {
    /// 2 layers, width 64, vocab 256, 4 heads, 2 KV heads, context 64.
    fn default() -> Config {
        Config { width: 64, layers: 2, heads: 4, kv_heads: 2, vocab: 256, ffn: 128, context: 64 }
    }
}

/// RmsNorm epsilon of every norm.
const EPS: f32 = 1e-6;

impl Config {
    /// Head width `D`.
    pub fn head_dim(&self) -> usize {
        self.width / self.heads
    }

    /// Checks the sizes fit together.
    pub fn check(&self) -> Result<()> {
        ensure!(self.heads > 0 && self.kv_heads > 0 && self.layers > 0, "heads, kv heads and layers must be positive");
        ensure!(
            self.width.is_multiple_of(self.heads),
            "width {} is not a multiple of heads {}",
            self.width,
            self.heads
        );
        ensure!(
            self.heads.is_multiple_of(self.kv_heads),
            "heads {} not a multiple of kv heads {}",
            self.heads,
            self.kv_heads
        );
        ensure!(self.head_dim().is_multiple_of(2), "the head width {} must be even for Rope", self.head_dim());
        ensure!(self.vocab > 0 && self.ffn > 0 && self.context > 0, "vocab, ffn and context must be positive");
        Ok(())
    }

    /// Every weight: (name, shape, scale of its random values).
    pub fn weights(&self) -> Vec<(String, Vec<usize>, f32)> {
        let (w, f, d) = (self.width, self.ffn, self.head_dim());
        let (q, kv) = (self.heads * d, self.kv_heads * d);
        let s = |fan_in: usize| 1.0 / (fan_in as f32).sqrt();
        let mut out = vec![("embed".to_string(), vec![self.vocab, w], 1.0)];
        for l in 0..self.layers {
            let p = |n: &str| format!("l{l}.{n}");
            out.extend([
                (p("attn_norm"), vec![w], 0.0),
                (p("wq"), vec![w, q], s(w)),
                (p("wk"), vec![w, kv], s(w)),
                (p("wv"), vec![w, kv], s(w)),
                (p("wo"), vec![q, w], s(q)),
                (p("mlp_norm"), vec![w], 0.0),
                (p("wg"), vec![w, f], s(w)),
                (p("wu"), vec![w, f], s(w)),
                (p("wd"), vec![f, w], s(f)),
            ]);
        }
        out.push(("final_norm".to_string(), vec![w], 0.0));
        out.push(("lm_head".to_string(), vec![w, self.vocab], s(w)));
        out
    }
}

/// Deterministic weights (norm gains `1 + noise`, the rest uniform in ±scale) and the Rope
/// tables `rope_cos`, `rope_sin` (`[context, D/2]`, θ = 10000), written as `DIR/<name>.npy`.
pub fn write_weights(cfg: &Config, dir: &Path, seed: u64) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tensors = Vec::new();
    for (k, (name, shape, scale)) in cfg.weights().into_iter().enumerate() {
        let n = shape.iter().product();
        let noise = crate::values(seed.wrapping_mul(1000).wrapping_add(k as u64 + 1), n, 0.1);
        let v: Vec<f32> = if scale == 0.0 {
            noise.iter().map(|e| 1.0 + e).collect()
        } else {
            noise.iter().map(|e| e * 10.0 * scale).collect()
        };
        tensors.push((name, Tensor::from_slice(&shape, &v)?));
    }
    let (cos, sin) = rope_tables(cfg);
    tensors.push(("rope_cos".to_string(), cos?));
    tensors.push(("rope_sin".to_string(), sin?));
    for (name, t) in tensors {
        let path = dir.join(format!("{name}.npy"));
        std::fs::write(&path, backend_api::npy::to_npy(&t)?).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// NeoX tables: `cos[p, m] = cos(p · 10000^(−2m/D))`, likewise `sin`.
fn rope_tables(cfg: &Config) -> (backend_api::Result<Tensor>, backend_api::Result<Tensor>) {
    let (d, half) = (cfg.head_dim(), cfg.head_dim() / 2);
    let angle = |i: usize| {
        let (p, m) = (i / half, i % half);
        p as f64 * 10000f64.powf(-2.0 * m as f64 / d as f64)
    };
    let n = cfg.context * half;
    let cos: Vec<f32> = (0..n).map(|i| angle(i).cos() as f32).collect();
    let sin: Vec<f32> = (0..n).map(|i| angle(i).sin() as f32).collect();
    (Tensor::from_slice(&[cfg.context, half], &cos), Tensor::from_slice(&[cfg.context, half], &sin))
}

/// Reads every param of `graph` from `DIR/<name>.npy`.
pub fn load_weights(graph: &Graph, dir: &Path) -> Result<Vec<(String, Tensor)>> {
    crate::load_weights(graph, dir)
}

/// How a block's attention reads its keys and values.
enum Kv {
    /// Prefill of `len` tokens: causal attention over the prompt; the caches are the keys and
    /// values padded.
    Prefill { len: usize },
    /// Decode: the new rows go into slot `pos` of the caches (`slot`: `[1, C, 1]` one-hot),
    /// attention over the slots `keep` (`[1, 1, 1, C]`) allows.
    Decode { slot: Value, keep: Value, k_cache: Value, v_cache: Value },
}

/// One pre-norm decoder block on `x: [1, S, W]` with the Rope rows `(cos, sin)`: `[S, D/2]`.
/// Returns the block output and the layer's key and value caches `[1, C, Hkv·D]`.
fn block(
    g: &mut GraphBuilder,
    cfg: &Config,
    l: usize,
    x: Value,
    rope: (Value, Value),
    kv: Kv,
) -> Result<(Value, Value, Value)> {
    let (w, d) = (cfg.width, cfg.head_dim());
    let (q_w, kv_w) = (cfg.heads * d, cfg.kv_heads * d);
    let mut p = |n: &str, shape: &[usize]| g.param(&format!("l{l}.{n}"), DType::F32, shape);
    let (attn_norm, wq, wk, wv, wo) =
        (p("attn_norm", &[w])?, p("wq", &[w, q_w])?, p("wk", &[w, kv_w])?, p("wv", &[w, kv_w])?, p("wo", &[q_w, w])?);
    let (mlp_norm, wg, wu, wd) =
        (p("mlp_norm", &[w])?, p("wg", &[w, cfg.ffn])?, p("wu", &[w, cfg.ffn])?, p("wd", &[cfg.ffn, w])?);
    let h = g.rms_norm(x, attn_norm, None, -1, EPS)?;
    let (q, k, v) = (g.matmul(h, wq)?, g.matmul(h, wk)?, g.matmul(h, wv)?);
    let q = g.rope(q, rope, d as u32, None, RopeStyle::NeoX, -2)?;
    let k = g.rope(k, rope, d as u32, None, RopeStyle::NeoX, -2)?;
    let mut attrs = AttentionAttrs::new(AttnLayout::BsPacked, cfg.heads as u32);
    attrs.num_kv_heads = cfg.kv_heads as u32;
    let (o, k_cache, v_cache) = match kv {
        Kv::Prefill { len: s } => {
            attrs.mask = MaskKind::Causal;
            let o = g.attention(q, k, v, None, None, attrs)?;
            let fill = PadMode::Constant { value: 0.0 };
            let pad = [0, cfg.context.checked_sub(s).context("prompt longer than the context")?, 0];
            (o, g.pad(k, &[0, 0, 0], &pad, fill)?, g.pad(v, &[0, 0, 0], &pad, fill)?)
        }
        Kv::Decode { slot, keep, k_cache, v_cache } => {
            let k_cache = g.where_(slot, k, k_cache)?;
            let v_cache = g.where_(slot, v, v_cache)?;
            (g.attention(q, k_cache, v_cache, Some(keep), None, attrs)?, k_cache, v_cache)
        }
    };
    let o = g.matmul(o, wo)?;
    // the residual add and the MLP norm in one op: h2 = RmsNorm(o + x), x2 = o + x
    let (h2, x2) = g.fused_residual_rms_norm(o, (x, None), (mlp_norm, None), -1, EPS, true)?;
    let x2 = x2.context("the fused norm emits the sum")?;
    let gate = g.matmul(h2, wg)?;
    let gate = g.unary(UnaryOp::Silu, gate)?;
    let up = g.matmul(h2, wu)?;
    let m = g.binary(BinaryOp::Mul, gate, up)?;
    let m = g.matmul(m, wd)?;
    Ok((g.binary(BinaryOp::Add, x2, m)?, k_cache, v_cache))
}

/// Final norm, LM head and greedy choice on the last position of `x: [1, S, W]`: outputs the
/// logits `[1, 1, V]` and the next token `[1, 1]` (I32).
fn head(g: &mut GraphBuilder, cfg: &Config, x: Value, s: usize) -> Result<()> {
    let last = g.narrow(x, 1, s as i64 - 1, 1, 1)?;
    let norm = g.param("final_norm", DType::F32, &[cfg.width])?;
    let lm = g.param("lm_head", DType::F32, &[cfg.width, cfg.vocab])?;
    let h = g.rms_norm(last, norm, None, -1, EPS)?;
    let logits = g.matmul(h, lm)?;
    let next = g.arg_max(logits, -1, false, DType::I32)?;
    g.output(logits)?;
    g.output(next)?;
    Ok(())
}

/// The prefill graph: input `tokens` `[1, P]` (I32); outputs logits, next token, then per layer
/// the key and value caches `[1, C, Hkv·D]`.
pub fn prefill_graph(cfg: &Config, prompt: usize) -> Result<Graph> {
    cfg.check()?;
    ensure!(prompt >= 1 && prompt <= cfg.context, "prompt of {prompt} tokens in a context of {}", cfg.context);
    let mut g = GraphBuilder::new();
    let tokens = g.input("tokens", DType::I32, vec![1, prompt])?;
    let embed = g.param("embed", DType::F32, &[cfg.vocab, cfg.width])?;
    let half = cfg.head_dim() / 2;
    let cos = g.param("rope_cos", DType::F32, &[cfg.context, half])?;
    let sin = g.param("rope_sin", DType::F32, &[cfg.context, half])?;
    let rope = (g.narrow(cos, 0, 0, prompt, 1)?, g.narrow(sin, 0, 0, prompt, 1)?);
    let mut x = g.gather(embed, tokens, 0)?;
    let mut caches = Vec::new();
    for l in 0..cfg.layers {
        let (y, k, v) = block(&mut g, cfg, l, x, rope, Kv::Prefill { len: prompt })?;
        x = y;
        caches.extend([k, v]);
    }
    head(&mut g, cfg, x, prompt)?;
    for c in caches {
        g.output(c)?;
    }
    Ok(g.build()?)
}

/// The decode graph: inputs `token` `[1, 1]` (I32), `pos` `[1]` (I32), and per layer `k{l}`,
/// `v{l}` (the caches); outputs as [`prefill_graph`].
pub fn decode_graph(cfg: &Config) -> Result<Graph> {
    cfg.check()?;
    let mut g = GraphBuilder::new();
    let c = cfg.context;
    let kv_w = cfg.kv_heads * cfg.head_dim();
    let token = g.input("token", DType::I32, vec![1, 1])?;
    let pos = g.input("pos", DType::I32, vec![1])?;
    let iota: Vec<i32> = (0..c as i32).collect();
    let slots = g.constant(&Tensor::from_slice(&[1, c, 1], &iota)?)?;
    let keys = g.constant(&Tensor::from_slice(&[1, 1, 1, c], &iota)?)?;
    let slot = g.compare(CompareOp::Eq, slots, pos)?;
    let keep = g.compare(CompareOp::Le, keys, pos)?;
    let embed = g.param("embed", DType::F32, &[cfg.vocab, cfg.width])?;
    let half = cfg.head_dim() / 2;
    let cos = g.param("rope_cos", DType::F32, &[c, half])?;
    let sin = g.param("rope_sin", DType::F32, &[c, half])?;
    let rope = (g.gather(cos, pos, 0)?, g.gather(sin, pos, 0)?);
    let mut x = g.gather(embed, token, 0)?;
    let mut caches = Vec::new();
    for l in 0..cfg.layers {
        let k_cache = g.input(&format!("k{l}"), DType::F32, vec![1, c, kv_w])?;
        let v_cache = g.input(&format!("v{l}"), DType::F32, vec![1, c, kv_w])?;
        let (y, k, v) = block(&mut g, cfg, l, x, rope, Kv::Decode { slot, keep, k_cache, v_cache })?;
        x = y;
        caches.extend([k, v]);
    }
    head(&mut g, cfg, x, 1)?;
    for c in caches {
        g.output(c)?;
    }
    Ok(g.build()?)
}

/// A generation: the tokens chosen and each step's logits (the prefill's first).
pub struct Generation {
    /// Generated tokens (the prefill's choice, then one per decode step).
    pub tokens: Vec<i32>,
    /// Logits `[V]` of every step, when kept.
    pub logits: Vec<Vec<f32>>,
    /// Seconds spent in the prefill run.
    pub prefill_s: f64,
    /// Seconds spent in the decode runs.
    pub decode_s: f64,
}

/// Compiled prefill and decode executables of one backend with the weights uploaded.
pub struct Llm {
    cfg: Config,
    prefill: Box<dyn Executable>,
    decode: Box<dyn Executable>,
}

impl Llm {
    /// Compiles both graphs on `backend` and uploads the weights from `dir`.
    pub fn new(backend: &dyn backend_api::Backend, cfg: Config, prompt: usize, dir: &Path) -> Result<Llm> {
        let mut exes = Vec::new();
        for graph in [prefill_graph(&cfg, prompt)?, decode_graph(&cfg)?] {
            let mut exe = backend.compile(&graph, &Default::default())?;
            for (name, t) in load_weights(&graph, dir)? {
                exe.set_param(&name, t.view())?;
            }
            exes.push(exe);
        }
        let (Some(decode), Some(prefill)) = (exes.pop(), exes.pop()) else { anyhow::bail!("two graphs compiled") };
        Ok(Llm { cfg, prefill, decode })
    }

    /// Greedy generation of `steps` tokens after `prompt`; with `keep_logits` each step's logits
    /// are read back (otherwise only the chosen token is, for printing).
    pub fn generate(&mut self, prompt: &[i32], steps: usize, keep_logits: bool) -> Result<Generation> {
        let n = prompt.len();
        ensure!(n + steps <= self.cfg.context, "{n} + {steps} tokens exceed the context {}", self.cfg.context);
        let layers = self.cfg.layers;
        let logits_place = if keep_logits { Placement::Host } else { Placement::Device };
        // logits, token, then every cache stays on the device
        let place: Vec<Placement> = [logits_place, Placement::Device]
            .into_iter()
            .chain(std::iter::repeat_n(Placement::Device, 2 * layers))
            .collect();
        let mut gen = Generation { tokens: Vec::new(), logits: Vec::new(), prefill_s: 0.0, decode_s: 0.0 };
        let tokens = Tensor::from_slice(&[1, n], prompt)?;
        let t0 = std::time::Instant::now();
        let mut out = self.prefill.run_with(&[("tokens", Feed::Host(tokens.view()))], &place)?;
        let mut token = collect(&mut gen, &out, keep_logits)?;
        let mut chosen = vec![token.clone()];
        // reading the first token waits for the prefill to finish
        token.read()?;
        gen.prefill_s = t0.elapsed().as_secs_f64();
        let names: Vec<String> = (0..layers).flat_map(|l| [format!("k{l}"), format!("v{l}")]).collect();
        let t1 = std::time::Instant::now();
        for step in 0..steps {
            let pos = Tensor::from_slice(&[1], &[(n + step) as i32])?;
            let caches: Vec<&DeviceTensor> = out.iter().skip(2).filter_map(Fetched::device).collect();
            ensure!(caches.len() == 2 * layers, "the caches stay on the device");
            let mut feeds: Vec<(&str, Feed<'_>)> =
                vec![("token", Feed::Device(&token)), ("pos", Feed::Host(pos.view()))];
            feeds.extend(names.iter().map(String::as_str).zip(caches.into_iter().map(Feed::Device)));
            let next = self.decode.run_with(&feeds, &place)?;
            out = next;
            token = collect(&mut gen, &out, keep_logits)?;
            chosen.push(token.clone());
        }
        // the last token read waits for every queued step
        token.read()?;
        gen.decode_s = t1.elapsed().as_secs_f64();
        for t in chosen {
            gen.tokens.push(*t.read()?.to_vec::<i32>()?.first().context("one token per step")?);
        }
        Ok(gen)
    }
}

/// Keeps the step's logits when they were read back; returns the device token to feed back (the
/// tokens are read once the generation is over).
fn collect(gen: &mut Generation, out: &[Fetched], keep_logits: bool) -> Result<DeviceTensor> {
    let token = out.get(1).and_then(Fetched::device).context("the token stays on the device")?.clone();
    if keep_logits {
        if let Some(Fetched::Host(t)) = out.first() {
            gen.logits.push(t.to_vec::<f32>()?);
        }
    }
    Ok(token)
}

/// One decoder block alone on an input `x` `[1, S, W]` (F32), with layer 0's weights and the Rope
/// tables (`context` ≥ `S`): the block of the model as a graph of its own, for testing.
pub fn block_graph(cfg: &Config, seq: usize) -> Result<Graph> {
    cfg.check()?;
    ensure!(seq >= 1 && seq <= cfg.context, "{seq} positions in a context of {}", cfg.context);
    let mut g = GraphBuilder::new();
    let x = g.input("x", DType::F32, vec![1, seq, cfg.width])?;
    let half = cfg.head_dim() / 2;
    let cos = g.param("rope_cos", DType::F32, &[cfg.context, half])?;
    let sin = g.param("rope_sin", DType::F32, &[cfg.context, half])?;
    let rope = (g.narrow(cos, 0, 0, seq, 1)?, g.narrow(sin, 0, 0, seq, 1)?);
    let (y, _, _) = block(&mut g, cfg, 0, x, rope, Kv::Prefill { len: seq })?;
    g.output(y)?;
    Ok(g.build()?)
}

/// The largest difference between the logits of two generations, step by step (infinite when
/// they kept different numbers of steps or widths).
pub fn max_logit_diff(a: &Generation, b: &Generation) -> f32 {
    if a.logits.len() != b.logits.len() {
        return f32::INFINITY;
    }
    a.logits
        .iter()
        .zip(&b.logits)
        .map(|(x, y)| {
            if x.len() != y.len() {
                return f32::INFINITY;
            }
            x.iter().zip(y).map(|(p, q)| (p - q).abs()).fold(0.0, f32::max)
        })
        .fold(0.0, f32::max)
}
