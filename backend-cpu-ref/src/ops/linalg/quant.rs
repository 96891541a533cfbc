//! The quantisation formats of §2.6.7 (QuantMatMul and QuantGroupedMatMul, §2.6.5–2.6.6): one
//! decoder file per format family, each decoding exactly as the spec writes it.
// The ops that use the decoders come next.
#![allow(dead_code)]

mod fp8;
mod ggml;
mod int;
mod kquants;
mod nvfp4;
