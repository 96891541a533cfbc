//! `cargo run --release -p host-framework --example tiny-llm -- [OPTIONS]`: a tiny decoder-only
//! LM (random weights written as `.npy` and loaded back) prefills a prompt and decodes greedily
//! with its KV cache on the device; prints the tokens and tokens/s of prefill and decode.
//!
//! Options (defaults in brackets): `--backend NAME` [wgpu], `--width N` [64], `--layers N` [2],
//! `--heads N` [4], `--kv-heads N` [2], `--vocab N` [256], `--ffn N` [2·width],
//! `--context N` [prompt + steps], `--prompt N` [16], `--steps N` [32], `--seed N` [1],
//! `--weights DIR` [target/tiny-llm], `--check` (also run cpu-ref and compare tokens and logits).

use anyhow::{bail, ensure, Context, Result};
use host_framework::llm::{write_weights, Config, Llm};
use std::path::PathBuf;

struct Args {
    backend: String,
    cfg: Config,
    prompt: usize,
    steps: usize,
    seed: u64,
    weights: PathBuf,
    check: bool,
}

fn parse() -> Result<Args> {
    let mut a = Args {
        backend: "wgpu".into(),
        cfg: Config::default(),
        prompt: 16,
        steps: 32,
        seed: 1,
        weights: PathBuf::from("target/tiny-llm"),
        check: false,
    };
    let (mut ffn, mut context) = (None, None);
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--check" {
            a.check = true;
            continue;
        }
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        let num = || value.parse::<usize>().with_context(|| format!("{flag} {value}: not a number"));
        match flag.as_str() {
            "--backend" => a.backend = value.clone(),
            "--width" => a.cfg.width = num()?,
            "--layers" => a.cfg.layers = num()?,
            "--heads" => a.cfg.heads = num()?,
            "--kv-heads" => a.cfg.kv_heads = num()?,
            "--vocab" => a.cfg.vocab = num()?,
            "--ffn" => ffn = Some(num()?),
            "--context" => context = Some(num()?),
            "--prompt" => a.prompt = num()?,
            "--steps" => a.steps = num()?,
            "--seed" => a.seed = num()? as u64,
            "--weights" => a.weights = PathBuf::from(&value),
            _ => bail!("unknown option {flag} (see the top of examples/tiny-llm.rs)"),
        }
    }
    a.cfg.ffn = ffn.unwrap_or(2 * a.cfg.width);
    a.cfg.context = context.unwrap_or(a.prompt + a.steps);
    ensure!(a.prompt >= 1, "the prompt needs a token");
    Ok(a)
}

fn main() -> Result<()> {
    let a = parse()?;
    a.cfg.check()?;
    write_weights(&a.cfg, &a.weights, a.seed)?;
    let prompt: Vec<i32> = (0..a.prompt).map(|i| ((i * 7 + 3) % a.cfg.vocab) as i32).collect();
    let backend = backend_api::create(&a.backend)?;
    println!("backend: {} ({}), {:?}", backend.name(), backend.capabilities().device, a.cfg);
    let mut llm = Llm::new(backend.as_ref(), a.cfg, a.prompt, &a.weights)?;
    // a first generation compiles the pipelines; the second is timed
    llm.generate(&prompt, a.steps, false)?;
    let gen = llm.generate(&prompt, a.steps, false)?;
    println!("prompt:    {prompt:?}");
    println!("generated: {:?}", gen.tokens);
    println!(
        "prefill: {} tokens in {:.2} ms ({:.0} tokens/s); decode: {} tokens in {:.2} ms ({:.1} tokens/s)",
        a.prompt,
        gen.prefill_s * 1e3,
        a.prompt as f64 / gen.prefill_s,
        a.steps,
        gen.decode_s * 1e3,
        a.steps as f64 / gen.decode_s
    );
    if a.check {
        let reference = backend_api::create("cpu-ref")?;
        let want = Llm::new(reference.as_ref(), a.cfg, a.prompt, &a.weights)?.generate(&prompt, a.steps, true)?;
        // the same generation again, reading every step's logits back this time
        let got = llm.generate(&prompt, a.steps, true)?;
        let diff = host_framework::llm::max_logit_diff(&got, &want);
        println!("cpu-ref:   {:?}\nmax logit difference {diff:.2e}", want.tokens);
        ensure!(gen.tokens == want.tokens && got.tokens == want.tokens, "the tokens differ from cpu-ref's");
    }
    Ok(())
}
