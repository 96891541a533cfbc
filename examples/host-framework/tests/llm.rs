//! The tiny LM on "wgpu" against "cpu-ref": one decoder block over a 64-token prefill, and a
//! 16-token prefill followed by 32 greedy decode steps with the KV cache on the device.

use backend_api::Tensor;
use host_framework::llm::{block_graph, max_logit_diff, write_weights, Config, Llm};
use host_framework::values;
use std::path::PathBuf;

fn weights_dir(name: &str, cfg: &Config) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("host-framework-{name}-{}", std::process::id()));
    write_weights(cfg, &dir, 7).unwrap();
    dir
}

/// RmsNorm, QKV, NeoX Rope, causal GQA attention (4 query heads, 2 KV heads, head width 16),
/// output projection, residual + RmsNorm fused, SwiGLU MLP, residual: 64 positions.
#[test]
fn decoder_block_prefill_matches_cpu_ref() {
    let cfg = Config { context: 64, ..Config::default() };
    assert_eq!((cfg.heads, cfg.kv_heads, cfg.head_dim()), (4, 2, 16));
    let dir = weights_dir("block", &cfg);
    let graph = block_graph(&cfg, 64).unwrap();
    let weights = host_framework::load_weights(&graph, &dir).unwrap();
    let x = Tensor::from_slice(&[1, 64, cfg.width], &values(11, 64 * cfg.width, 1.0)).unwrap();
    let mut outs = Vec::new();
    for name in ["wgpu", "cpu-ref"] {
        let backend = backend_api::create(name).unwrap();
        let mut exe = backend.compile(&graph, &Default::default()).unwrap();
        for (n, t) in &weights {
            exe.set_param(n, t.view()).unwrap();
        }
        outs.push(exe.run(&[("x", x.view())]).unwrap().remove(0).to_vec::<f32>().unwrap());
    }
    let scale = outs[1].iter().fold(0f32, |m, v| m.max(v.abs()));
    let diff = outs[0].iter().zip(&outs[1]).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    // f32 GEMMs of width ≤ 128 and a 64-key softmax: a few ulps of the output's magnitude
    assert!(scale > 0.1 && diff <= 1e-4 * scale, "max difference {diff} at magnitude {scale}");
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn tiny_llm_generates_the_same_tokens_on_wgpu_and_cpu_ref() {
    let cfg = Config { context: 48, ..Config::default() };
    let dir = weights_dir("llm", &cfg);
    let prompt: Vec<i32> = (0..16).map(|i| (i * 37 + 5) % 256).collect();
    let mut gens = Vec::new();
    for name in ["wgpu", "cpu-ref"] {
        let backend = backend_api::create(name).unwrap();
        let mut llm = Llm::new(backend.as_ref(), cfg, prompt.len(), &dir).unwrap();
        gens.push(llm.generate(&prompt, 32, true).unwrap());
    }
    let (got, want) = (&gens[0], &gens[1]);
    assert_eq!(got.tokens.len(), 33);
    assert_eq!(got.logits.len(), 33);
    assert_eq!(got.tokens, want.tokens);
    // not a degenerate generation: the model does not repeat one token
    assert!(want.tokens.iter().any(|&t| t != want.tokens[0]), "{:?}", want.tokens);
    let diff = max_logit_diff(got, want);
    assert!(diff <= 1e-3, "logits differ by {diff}");
    std::fs::remove_dir_all(dir).ok();
}
