//! §2.11 signal processing, §2.16.4 LogMelBackward, §2.12 randomness.

use crate::{dims, dt, fails, inp, sym};
use backend_api::op::{FftNorm, FloorScope, SampleAttrs};
use backend_api::{DType, Dim, ErrorKind, GraphBuilder, Shape};

#[test]
fn fft_and_errors() {
    let mut b = GraphBuilder::new();
    let x = sym(&mut b, "x", DType::C64, vec![Dim::from("frames"), Dim::Static(12)]);
    let y = b.fft(x, true, FftNorm::Ortho).unwrap();
    assert_eq!(b.value_type(y).unwrap().shape, Shape(vec![Dim::from("frames"), Dim::Static(12)]));
    let f = inp(&mut b, "f", DType::F32, &[8]);
    fails(b.fft(f, false, FftNorm::Backward), ErrorKind::DType);
    let s = inp(&mut b, "s", DType::C64, &[]);
    fails(b.fft(s, false, FftNorm::Backward), ErrorKind::Shape);
}

#[test]
fn log_mel_whisper_shapes() {
    let mut b = GraphBuilder::new();
    // Whisper: 3000 frames of a 400-point FFT, 80 mel bands over 201 bins.
    let spec = inp(&mut b, "spec", DType::C64, &[3000, 400]);
    let filters = inp(&mut b, "filters", DType::F32, &[80, 201]);
    let y = b.log_mel(spec, filters, FloorScope::Spectrogram).unwrap();
    assert_eq!((dims(&b, y), dt(&b, y)), (vec![3000, 80], DType::F32));
    let frame = inp(&mut b, "frame", DType::C64, &[400]);
    let one = b.log_mel(frame, filters, FloorScope::Frame).unwrap();
    assert_eq!(dims(&b, one), [80]);
    fails(b.log_mel(frame, filters, FloorScope::Spectrogram), ErrorKind::Shape);
    let f200 = inp(&mut b, "f200", DType::F32, &[80, 200]);
    fails(b.log_mel(spec, f200, FloorScope::Frame), ErrorKind::Shape);
    let f64_ = inp(&mut b, "f64", DType::F64, &[80, 201]);
    fails(b.log_mel(spec, f64_, FloorScope::Frame), ErrorKind::DType);
    let empty = inp(&mut b, "empty", DType::C64, &[3, 0]);
    fails(b.log_mel(empty, filters, FloorScope::Frame), ErrorKind::Shape);

    let dy = inp(&mut b, "dy", DType::F32, &[3000, 80]);
    let ds = b.log_mel_backward(spec, filters, dy, FloorScope::Spectrogram).unwrap();
    assert_eq!((dims(&b, ds), dt(&b, ds)), (vec![3000, 400], DType::C64));
    let dy_bad = inp(&mut b, "dyb", DType::F32, &[3000, 81]);
    fails(b.log_mel_backward(spec, filters, dy_bad, FloorScope::Frame), ErrorKind::Shape);
    fails(b.log_mel_backward(spec, filters, spec, FloorScope::Frame), ErrorKind::DType);
}

#[test]
fn welch_peaks_and_errors() {
    let mut b = GraphBuilder::new();
    let x = inp(&mut b, "x", DType::C64, &[2, 5, 16]);
    let (bins, power) = b.welch_peaks(x, 3, DType::I64).unwrap();
    assert_eq!((dims(&b, bins), dt(&b, bins)), (vec![2, 3], DType::I64));
    assert_eq!((dims(&b, power), dt(&b, power)), (vec![2, 3], DType::F32));
    b.welch_peaks(x, 9, DType::I32).unwrap();
    fails(b.welch_peaks(x, 10, DType::I32), ErrorKind::Attribute);
    fails(b.welch_peaks(x, 1, DType::U32), ErrorKind::Attribute);
    let no_seg = inp(&mut b, "ns", DType::C64, &[0, 16]);
    fails(b.welch_peaks(no_seg, 1, DType::I32), ErrorKind::Shape);
    let r1 = inp(&mut b, "r1", DType::C64, &[16]);
    fails(b.welch_peaks(r1, 1, DType::I32), ErrorKind::Shape);
    let f = inp(&mut b, "f", DType::F32, &[5, 16]);
    fails(b.welch_peaks(f, 1, DType::I32), ErrorKind::DType);
}

#[test]
fn rng_ops_and_errors() {
    let mut b = GraphBuilder::new();
    let key = inp(&mut b, "key", DType::U32, &[2]);
    let bits = b.rng_bits(key, [2, 3], 7).unwrap();
    assert_eq!((dims(&b, bits), dt(&b, bits)), (vec![2, 3], DType::U32));
    let u = b.rng_uniform(key, [5], DType::F16, -1.0, 1.0, 0).unwrap();
    assert_eq!((dims(&b, u), dt(&b, u)), (vec![5], DType::F16));
    let n = b.rng_normal(key, Shape(vec![Dim::from("n")]), DType::F64, 0.0, 0.0, 1).unwrap();
    assert_eq!(b.value_type(n).unwrap().shape, Shape(vec![Dim::from("n")]));
    let ikey = inp(&mut b, "ikey", DType::I32, &[2]);
    fails(b.rng_bits(ikey, [1], 0), ErrorKind::DType);
    let key3 = inp(&mut b, "key3", DType::U32, &[3]);
    fails(b.rng_bits(key3, [1], 0), ErrorKind::Shape);
    fails(b.rng_uniform(key, [1], DType::F32, 1.0, 0.0, 0), ErrorKind::Attribute);
    fails(b.rng_uniform(key, [1], DType::F32, f64::NAN, 1.0, 0), ErrorKind::Attribute);
    fails(b.rng_uniform(key, [1], DType::I32, 0.0, 1.0, 0), ErrorKind::Attribute);
    fails(b.rng_normal(key, [1], DType::F32, 0.0, -1.0, 0), ErrorKind::Attribute);
    fails(b.rng_normal(key, [1], DType::F32, f64::INFINITY, 1.0, 0), ErrorKind::Attribute);
    fails(b.rng_normal(key3, [1], DType::F32, 0.0, 1.0, 0), ErrorKind::Shape);
}

#[test]
fn sample_and_errors() {
    let mut b = GraphBuilder::new();
    let key = inp(&mut b, "key", DType::U32, &[2]);
    let logits = inp(&mut b, "logits", DType::BF16, &[4, 32000]);
    let t = b.sample(logits, key, SampleAttrs::default()).unwrap();
    assert_eq!((dims(&b, t), dt(&b, t)), (vec![4], DType::I32));
    let row = inp(&mut b, "row", DType::F32, &[10]);
    let greedy = SampleAttrs { temperature: 0.0, index_dtype: DType::I64, ..SampleAttrs::default() };
    let s = b.sample(row, key, greedy).unwrap();
    assert_eq!((dims(&b, s), dt(&b, s)), (vec![], DType::I64));
    fails(b.sample(row, key, SampleAttrs { temperature: -1.0, ..SampleAttrs::default() }), ErrorKind::Attribute);
    fails(b.sample(row, key, SampleAttrs { temperature: f32::NAN, ..SampleAttrs::default() }), ErrorKind::Attribute);
    fails(b.sample(row, key, SampleAttrs { top_p: 0.0, ..SampleAttrs::default() }), ErrorKind::Attribute);
    fails(b.sample(row, key, SampleAttrs { top_p: 1.5, ..SampleAttrs::default() }), ErrorKind::Attribute);
    let v0 = inp(&mut b, "v0", DType::F32, &[3, 0]);
    fails(b.sample(v0, key, SampleAttrs::default()), ErrorKind::Shape);
    let scalar = inp(&mut b, "scalar", DType::F32, &[]);
    fails(b.sample(scalar, key, SampleAttrs::default()), ErrorKind::Shape);
    let l64 = inp(&mut b, "l64", DType::F64, &[10]);
    fails(b.sample(l64, key, SampleAttrs::default()), ErrorKind::DType);
    fails(b.sample(row, row, SampleAttrs::default()), ErrorKind::DType);
}
