//! GGUF reading: files written by a small writer in the tests (v2 and v3), read back as the op
//! inputs of SPEC-ops §2.6.5–2.6.7, and every way a file can be wrong.

#[path = "gguf/writer.rs"]
mod writer;

use backend_api::gguf::{GgmlType, GgufArray, GgufFile, GgufValue, GgufValueType};
use backend_api::op::QuantFormat;
use backend_api::{DType, ErrorKind, GraphBuilder, Shape, Slot, Tensor};
use half::{bf16, f16};
use writer::{TensorSpec, Writer};

/// Every block type: ggml id, format, (QK, BB) as written in §2.6.7.
const QUANT: [(u32, QuantFormat, u64, usize); 11] = [
    (2, QuantFormat::Q4_0, 32, 18),
    (3, QuantFormat::Q4_1, 32, 20),
    (6, QuantFormat::Q5_0, 32, 22),
    (7, QuantFormat::Q5_1, 32, 24),
    (8, QuantFormat::Q8_0, 32, 34),
    (10, QuantFormat::Q2_K, 256, 84),
    (11, QuantFormat::Q3_K, 256, 110),
    (12, QuantFormat::Q4_K, 256, 144),
    (13, QuantFormat::Q5_K, 256, 176),
    (14, QuantFormat::Q6_K, 256, 210),
    (15, QuantFormat::Q8_K, 256, 292),
];

fn parse(w: &Writer) -> backend_api::Result<GgufFile> {
    GgufFile::parse(w.bytes(), "test.gguf")
}

/// The error of parsing `bytes`, with its kind checked and its message returned.
fn parse_err(bytes: Vec<u8>, kind: ErrorKind) -> String {
    let e = GgufFile::parse(bytes, "test.gguf").unwrap_err();
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.to_string().contains("test.gguf"), "the file is named: {e}");
    e.to_string()
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Deterministic block bytes, different for every byte position and seed.
fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

#[test]
fn float_tensors_round_trip_with_dims_reversed() {
    let vals: Vec<f32> = (0..6).map(|i| i as f32 * 1.5 - 2.0).collect();
    let h: Vec<f16> = vals.iter().map(|&v| f16::from_f32(v)).collect();
    let b: Vec<bf16> = vals.iter().map(|&v| bf16::from_f32(v)).collect();
    for version in [2, 3] {
        let w = Writer::new(version)
            .tensor(TensorSpec::new("a.f32", 0, &[3, 2], f32_bytes(&vals)))
            .tensor(TensorSpec::new("b.f16", 1, &[3, 2], h.iter().flat_map(|x| x.to_le_bytes()).collect()))
            .tensor(TensorSpec::new("c.bf16", 30, &[6], b.iter().flat_map(|x| x.to_le_bytes()).collect()))
            .tensor(TensorSpec::new("d.3d", 0, &[1, 2, 3], f32_bytes(&vals)));
        let f = parse(&w).unwrap();
        assert_eq!(f.version(), version);
        assert_eq!(f.tensor_names().collect::<Vec<_>>(), ["a.f32", "b.f16", "c.bf16", "d.3d"]);
        let a = f.tensor("a.f32").unwrap();
        assert_eq!((a.format, a.info.ggml_type(), a.info.ne()), (None, GgmlType::F32, &[3u64, 2][..]));
        assert_eq!(a.tensor, Tensor::from_slice(&[2, 3], &vals).unwrap());
        assert_eq!(f.tensor("b.f16").unwrap().tensor, Tensor::from_slice(&[2, 3], &h).unwrap());
        assert_eq!(f.tensor("c.bf16").unwrap().tensor, Tensor::from_slice(&[6], &b).unwrap());
        assert_eq!(f.tensor("d.3d").unwrap().tensor.shape(), [3, 2, 1]);
    }
}

#[test]
fn every_block_type_gives_its_raw_blocks_as_u8_n_by_row_bytes() {
    for version in [2, 3] {
        for (id, format, qk, bb) in QUANT {
            // K = 2 blocks, N = 3 rows: the file shows it as ne = [K, N].
            let data = pattern(2 * 3 * bb, id as u8);
            let w = Writer::new(version)
                .tensor(TensorSpec::new("w", id, &[2 * qk, 3], data.clone()))
                .tensor(TensorSpec::new("experts", id, &[qk, 2, 4], pattern(8 * bb, 7)));
            let f = parse(&w).unwrap_or_else(|e| panic!("{}: {e}", format.name()));
            let t = f.tensor("w").unwrap();
            assert_eq!(t.format, Some(format));
            assert_eq!(t.info.ggml_type().format(), Some(format));
            assert_eq!(t.info.ggml_type().id(), id);
            assert_eq!(t.tensor.dtype(), DType::U8);
            assert_eq!(t.tensor.shape(), [3, 2 * bb], "{}", format.name());
            assert_eq!(t.tensor.bytes(), data, "{}: bytes unchanged", format.name());
            let e = f.tensor("experts").unwrap();
            assert_eq!((e.tensor.shape(), e.tensor.bytes()), (&[4, 2, bb][..], &pattern(8 * bb, 7)[..]));
        }
    }
}

#[test]
fn block_tensors_are_accepted_by_quant_matmul_as_given() {
    for (id, format, qk, bb) in QUANT {
        let w = Writer::new(3).tensor(TensorSpec::new("w", id, &[qk, 5], pattern(5 * bb, 1))).tensor(TensorSpec::new(
            "e",
            id,
            &[qk, 5, 2],
            pattern(10 * bb, 2),
        ));
        let f = parse(&w).unwrap();
        let (t, e) = (f.tensor("w").unwrap(), f.tensor("e").unwrap());
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [4, qk as usize]).unwrap();
        let wp = b.param("w", t.tensor.dtype(), t.tensor.shape()).unwrap();
        let y = b.quant_matmul(x, &[wp], t.format.unwrap()).unwrap_or_else(|e| panic!("{}: {e}", format.name()));
        let ep = b.param("e", e.tensor.dtype(), e.tensor.shape()).unwrap();
        let idx = b.input("idx", DType::I32, [4]).unwrap();
        let z = b.quant_grouped_matmul(x, &[ep], idx, format).unwrap_or_else(|e| panic!("{}: {e}", format.name()));
        b.output(y).unwrap();
        b.output(z).unwrap();
        let g = b.build().unwrap();
        let sig = g.outputs().iter().map(|&v| g.value_type(v).unwrap().shape.clone()).collect::<Vec<_>>();
        assert_eq!(sig, [Shape::from(vec![4usize, 5]), Shape::from(vec![4usize, 5])], "{}", format.name());
    }
}

#[test]
fn metadata_of_every_value_type() {
    let strings = GgufValue::Array(GgufArray::String(vec!["a".into(), "héllo".into(), String::new()]));
    let nested = GgufValue::Array(GgufArray::Array(vec![GgufArray::I16(vec![-3, 4]), GgufArray::Bool(vec![])]));
    let kvs = vec![
        ("u8", GgufValue::U8(200)),
        ("i8", GgufValue::I8(-100)),
        ("u16", GgufValue::U16(65000)),
        ("i16", GgufValue::I16(-32000)),
        ("u32", GgufValue::U32(4_000_000_000)),
        ("i32", GgufValue::I32(-2_000_000_000)),
        ("f32", GgufValue::F32(-1.25)),
        ("t", GgufValue::Bool(true)),
        ("f", GgufValue::Bool(false)),
        ("general.name", GgufValue::String("tiny ✓".into())),
        ("u64", GgufValue::U64(u64::MAX)),
        ("i64", GgufValue::I64(i64::MIN)),
        ("f64", GgufValue::F64(std::f64::consts::E)),
        ("bytes", GgufValue::Array(GgufArray::U8(vec![1, 2, 255]))),
        ("i8s", GgufValue::Array(GgufArray::I8(vec![-1, 2]))),
        ("u16s", GgufValue::Array(GgufArray::U16(vec![65535]))),
        ("i16s", GgufValue::Array(GgufArray::I16(vec![-32768]))),
        ("u32s", GgufValue::Array(GgufArray::U32(vec![7, 8]))),
        ("i32s", GgufValue::Array(GgufArray::I32(vec![-7, 1, 0]))),
        ("scores", GgufValue::Array(GgufArray::F32(vec![0.5, -0.0, f32::INFINITY]))),
        ("bools", GgufValue::Array(GgufArray::Bool(vec![true, false, true]))),
        ("i64s", GgufValue::Array(GgufArray::I64(vec![i64::MAX]))),
        ("f64s", GgufValue::Array(GgufArray::F64(vec![1e300, -2.5]))),
        ("tokens", strings),
        ("nested", nested),
        ("empty", GgufValue::Array(GgufArray::U64(vec![]))),
    ];
    for version in [2, 3] {
        let mut w = Writer::new(version);
        for (k, v) in &kvs {
            w = w.kv(k, v.clone());
        }
        let f = parse(&w.tensor(TensorSpec::new("x", 0, &[1], f32_bytes(&[9.0])))).unwrap();
        for (k, v) in &kvs {
            assert_eq!(f.metadata(k), Some(v), "{k}");
        }
        assert_eq!(
            f.metadata_pairs().map(|(k, _)| k).collect::<Vec<_>>(),
            kvs.iter().map(|(k, _)| *k).collect::<Vec<_>>()
        );
        assert_eq!(f.metadata("missing"), None);
        assert_eq!(f.metadata("general.name").and_then(GgufValue::as_str), Some("tiny ✓"));
        assert_eq!(f.metadata("u16").and_then(GgufValue::as_u64), Some(65000));
        assert_eq!(f.metadata("i8").and_then(GgufValue::as_u64), None);
        assert_eq!(f.metadata("f32").and_then(GgufValue::as_f64), Some(-1.25));
        let empty = f.metadata("empty").and_then(GgufValue::as_array).unwrap();
        assert_eq!((empty.elem_type(), empty.is_empty()), (GgufValueType::U64, true));
        let tokens = f.metadata("tokens").and_then(GgufValue::as_array).and_then(GgufArray::as_strings);
        assert_eq!(tokens.map(<[String]>::len), Some(3));
        assert_eq!(f.alignment(), 32);
        assert_eq!(f.tensor("x").unwrap().tensor.to_vec::<f32>().unwrap(), [9.0]);
    }
}

#[test]
fn alignments_other_than_32() {
    for align in [1u32, 8, 16, 64, 256] {
        let w = Writer { alignment: Some(align), ..Writer::new(3) }
            .kv("pad", GgufValue::String("xyz".into()))
            .tensor(TensorSpec::new("a", 0, &[3], f32_bytes(&[1.0, 2.0, 3.0])))
            .tensor(TensorSpec::new("b", 8, &[32, 1], pattern(34, 5)));
        let (bytes, layout) = w.write();
        let f = GgufFile::parse(bytes, "aligned.gguf").unwrap();
        assert_eq!(f.alignment(), u64::from(align));
        assert_eq!(f.data_offset(), layout.data_start as u64);
        assert_eq!(f.data_offset() % u64::from(align), 0);
        assert_eq!(f.tensor_info("b").unwrap().offset() % u64::from(align), 0);
        assert_eq!(f.tensor("a").unwrap().tensor.to_vec::<f32>().unwrap(), [1.0, 2.0, 3.0]);
        assert_eq!(f.tensor("b").unwrap().tensor.bytes(), pattern(34, 5));
    }
}

#[test]
fn opening_a_file_reads_tensors_on_demand() {
    let dir = std::env::temp_dir().join(format!("gguf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("model.gguf");
    let w = Writer::new(3)
        .kv("general.architecture", GgufValue::String("llama".into()))
        .tensor(TensorSpec::new(
            "tok",
            1,
            &[2, 2],
            [1.0f32, 2.0, 3.0, 4.0].map(f16::from_f32).iter().flat_map(|x| x.to_le_bytes()).collect(),
        ))
        .tensor(TensorSpec::new("q", 12, &[256, 2], pattern(288, 9)));
    std::fs::write(&path, w.bytes()).unwrap();
    let f = GgufFile::open(&path).unwrap();
    assert_eq!(f.source(), path.display().to_string());
    assert_eq!(f.metadata("general.architecture").and_then(GgufValue::as_str), Some("llama"));
    let q = f.tensor("q").unwrap();
    assert_eq!(
        (q.format, q.tensor.shape(), q.tensor.bytes()),
        (Some(QuantFormat::Q4_K), &[2, 144][..], &pattern(288, 9)[..])
    );
    assert_eq!(f.tensor("tok").unwrap().tensor.to_vec::<f16>().unwrap()[3], f16::from_f32(4.0));
    // The file shrinking after the header was read: the data read says so.
    let full = w.bytes();
    std::fs::write(&path, &full[..full.len() - 10]).unwrap();
    let e = f.tensor("q").unwrap_err();
    assert!(e.to_string().contains("truncated data") && e.to_string().contains("model.gguf"), "{e}");
    // Opened truncated: refused when the header is read, naming the path.
    let e = GgufFile::open(&path).unwrap_err();
    assert!(e.to_string().contains("model.gguf") && e.to_string().contains("\"q\""), "{e}");
    let e = GgufFile::open(dir.join("absent.gguf")).unwrap_err();
    assert!(e.to_string().contains("absent.gguf") && e.to_string().contains("cannot open"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_param_compares_with_the_graph_slot() {
    let w = Writer::new(3).tensor(TensorSpec::new("w", 2, &[64, 3], pattern(3 * 36, 0)));
    let f = parse(&w).unwrap();
    let info = f.tensor_info("w").unwrap();
    let slot = |dtype, dims: &[usize]| Slot { name: "w".into(), dtype, shape: Shape::from(dims.to_vec()) };
    info.check_param(&slot(DType::U8, &[3, 36])).unwrap();
    let e = info.check_param(&slot(DType::U8, &[36, 3])).unwrap_err();
    let s = e.to_string();
    assert!(s.contains("Q4_0") && s.contains("[64, 3]") && s.contains("[3, 36]"), "{s}");
    f.check_param(&slot(DType::U8, &[3, 36])).unwrap();
    let e = f.check_param(&slot(DType::U8, &[3, 18])).unwrap_err();
    assert!(e.to_string().contains("test.gguf") && e.to_string().contains("expects shape [3, 18]"), "{e}");
    let missing = Slot { name: "other".into(), dtype: DType::U8, shape: Shape::from(vec![1usize]) };
    assert!(f.check_param(&missing).unwrap_err().to_string().contains("no tensor \"other\""));
    let e = info.check_param(&slot(DType::F32, &[3, 64])).unwrap_err();
    assert!(e.to_string().contains("expects F32"), "{e}");
}

/// A valid file with metadata and two tensors, to cut and corrupt.
fn sample(version: u32) -> Writer {
    Writer::new(version)
        .kv("general.name", GgufValue::String("sample".into()))
        .kv("ids", GgufValue::Array(GgufArray::U32(vec![1, 2])))
        .tensor(TensorSpec::new("a", 0, &[2, 2], f32_bytes(&[1.0, 2.0, 3.0, 4.0])))
        .tensor(TensorSpec::new("q", 8, &[32, 2], pattern(68, 3)))
}

#[test]
fn bad_magic_and_versions() {
    let mut b = sample(3).bytes();
    b[0] = b'X';
    assert!(parse_err(b, ErrorKind::Input).contains("not a GGUF file"));
    for v in [0u32, 1, 4, 0x0300_0000] {
        let mut b = sample(3).bytes();
        b[4..8].copy_from_slice(&v.to_le_bytes());
        let e = parse_err(b, ErrorKind::Unsupported);
        assert!(e.contains(&format!("unsupported GGUF version {v}")) && e.contains("2 and 3"), "{e}");
        if v == 0x0300_0000 {
            assert!(e.contains("big-endian"), "{e}");
        }
    }
    assert!(parse_err(Vec::new(), ErrorKind::Input).contains("truncated magic"));
}

#[test]
fn truncation_anywhere_is_an_error_that_says_so() {
    let (full, layout) = sample(3).write();
    for n in 0..full.len() {
        let e = GgufFile::parse(full[..n].to_vec(), "cut.gguf").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Input, "{n} bytes: {e}");
        assert!(e.to_string().contains("cut.gguf"), "{e}");
        assert!(e.to_string().contains("truncated") || e.to_string().contains("past the end"), "{n} bytes: {e}");
    }
    let at = |n: usize| GgufFile::parse(full[..n].to_vec(), "cut.gguf").unwrap_err().to_string();
    assert!(at(6).contains("truncated version"), "{}", at(6));
    let e = at(layout.metadata_start + 3);
    assert!(e.contains("2 metadata pairs cannot fit in the 3 bytes left at offset 24"), "{e}");
    let e = at(layout.metadata_start + 30);
    assert!(e.contains("truncated length of metadata \"general.name\": needs 8 bytes at offset 48"), "{e}");
    assert!(at(layout.infos_start - 2).contains("metadata \"ids\""), "{}", at(layout.infos_start - 2));
    assert!(at(layout.infos_start + 12).contains("2 tensor infos cannot fit"), "{}", at(layout.infos_start + 12));
    let e = at(layout.infos_start + 50);
    assert!(e.contains("truncated dim count of tensor 1 (\"q\")"), "{e}");
    let e = at(full.len() - 1);
    assert!(e.contains("tensor \"q\"") && e.contains("past the end of the file"), "{e}");
    GgufFile::parse(full, "whole.gguf").unwrap();
}

#[test]
fn unknown_tensor_types_are_named() {
    for (id, name) in [(9u32, Some("Q8_1")), (16, None), (31, None), (u32::MAX, None)] {
        let w = Writer::new(3).tensor(TensorSpec::new("blk.0.ffn", id, &[32, 1], vec![0; 64]));
        let e = parse_err(w.bytes(), ErrorKind::Unsupported);
        assert!(e.contains(&format!("unsupported GGUF tensor type {id}")) && e.contains("\"blk.0.ffn\""), "{e}");
        if let Some(n) = name {
            assert!(e.contains(n), "{e}");
        }
    }
}

#[test]
fn unknown_value_type_and_bad_values() {
    // A metadata pair whose type id is 13.
    let mut b = sample(2).bytes();
    let key = b.windows(12).position(|w| w == b"general.name").unwrap();
    b[key + 12..key + 16].copy_from_slice(&13u32.to_le_bytes());
    let e = parse_err(b, ErrorKind::Input);
    assert!(e.contains("unknown GGUF value type 13") && e.contains("general.name"), "{e}");
    // An array whose element type is unknown.
    let mut b = sample(2).bytes();
    let key = b.windows(3).position(|w| w == b"ids").unwrap();
    b[key + 7..key + 11].copy_from_slice(&99u32.to_le_bytes());
    assert!(parse_err(b, ErrorKind::Input).contains("unknown GGUF value type 99"));
    // A bool byte of 2.
    let (mut b, l) = Writer::new(3).kv("flag", GgufValue::Bool(true)).write();
    let last = l.infos_start - 1;
    b[last] = 2;
    assert!(parse_err(b, ErrorKind::Input).contains("a bool must be 0 or 1, found 2"));
    // A bool array element of 7.
    let (mut b, l) = Writer::new(3).kv("flags", GgufValue::Array(GgufArray::Bool(vec![true, false]))).write();
    b[l.infos_start - 1] = 7;
    assert!(parse_err(b, ErrorKind::Input).contains("metadata \"flags\"[1] at offset"));
    // A string that is not UTF-8.
    let (mut b, l) = Writer::new(3).kv("s", GgufValue::String("ab".into())).write();
    let last = l.infos_start - 1;
    b[last] = 0xff;
    assert!(parse_err(b, ErrorKind::Input).contains("not UTF-8"));
}

#[test]
fn lengths_larger_than_the_file_are_refused_before_allocating() {
    // A string length, an array count, the tensor and metadata counts, all near u64::MAX.
    let (mut b, l) = Writer::new(3).kv("s", GgufValue::String("ab".into())).write();
    let at = l.infos_start - 10;
    b[at..at + 8].copy_from_slice(&(u64::MAX - 1).to_le_bytes());
    assert!(parse_err(b, ErrorKind::Input).contains("truncated metadata \"s\""));
    let (mut b, l) = Writer::new(3).kv("a", GgufValue::Array(GgufArray::U64(vec![1]))).write();
    let at = l.infos_start - 16;
    b[at..at + 8].copy_from_slice(&(1u64 << 61).to_le_bytes());
    assert!(parse_err(b, ErrorKind::Input).contains("array of 2305843009213693952 U64 values"));
    for field in [8, 16] {
        let mut b = sample(3).bytes();
        b[field..field + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(parse_err(b, ErrorKind::Input).contains("cannot fit"));
    }
}

#[test]
fn deeply_nested_arrays_are_refused() {
    let nest = |levels: usize| {
        let mut a = GgufArray::U8(vec![1]);
        for _ in 0..levels {
            a = GgufArray::Array(vec![a]);
        }
        GgufValue::Array(a)
    };
    let e = parse_err(Writer::new(3).kv("deep", nest(20)).bytes(), ErrorKind::Input);
    assert!(e.contains("nested more than 8 deep"), "{e}");
    parse_err(Writer::new(3).kv("deep", nest(8)).bytes(), ErrorKind::Input);
    let f = parse(&Writer::new(3).kv("ok", nest(7))).unwrap();
    assert_eq!(f.metadata("ok"), Some(&nest(7)));
}

#[test]
fn dims_not_a_multiple_of_the_block() {
    for (id, format, qk, bb) in QUANT {
        let w = Writer::new(3).tensor(TensorSpec::new("w", id, &[qk + 16, 2], vec![0; 4 * bb]));
        let e = parse_err(w.bytes(), ErrorKind::Shape);
        assert!(e.contains(format.name()) && e.contains(&format!("multiple of its block of {qk}")), "{e}");
        let w = Writer::new(3).tensor(TensorSpec::new("scalar", id, &[], vec![]));
        assert!(parse_err(w.bytes(), ErrorKind::Shape).contains("at least one dim"));
    }
    // More than four dims; a byte size past what a tensor can hold.
    let w = Writer::new(3).tensor(TensorSpec::new("w", 0, &[1, 1, 1, 1, 1], vec![0; 4]));
    assert!(parse_err(w.bytes(), ErrorKind::Input).contains("has 5 dims, GGUF allows at most 4"));
    let w = Writer::new(3).tensor(TensorSpec::new("w", 0, &[1 << 40, 1 << 40], vec![]));
    assert!(parse_err(w.bytes(), ErrorKind::Shape).contains("[1099511627776, 1099511627776]"));
    let w = Writer::new(3).tensor(TensorSpec::new("w", 14, &[u64::MAX - 255, 1 << 60], vec![]));
    parse_err(w.bytes(), ErrorKind::Shape);
}

#[test]
fn bad_offsets_overlaps_and_duplicates() {
    let mut w = sample(3);
    w.tensors[1].offset = Some(1 << 20);
    let e = parse_err(w.bytes(), ErrorKind::Input);
    assert!(e.contains("\"q\"") && e.contains("offset 1048576") && e.contains("past the end of the file"), "{e}");
    let mut w = sample(3);
    w.tensors[1].offset = Some(u64::MAX - 31);
    assert!(parse_err(w.bytes(), ErrorKind::Input).contains("past the end"));
    let mut w = sample(3);
    w.tensors[1].offset = Some(4);
    assert!(parse_err(w.bytes(), ErrorKind::Input).contains("not a multiple of the alignment 32"));
    let mut w = sample(3);
    w.tensors[1].offset = Some(0);
    let e = parse_err(w.bytes(), ErrorKind::Input);
    assert!(e.contains("\"a\" and \"q\" overlap"), "{e}");
    let mut w = sample(3);
    w.tensors[1].name = "a".into();
    assert!(parse_err(w.bytes(), ErrorKind::Input).contains("duplicate tensor name \"a\""));
    let w = sample(3).kv("general.name", GgufValue::String("again".into()));
    assert!(parse_err(w.bytes(), ErrorKind::Input).contains("duplicate metadata key \"general.name\""));
}

#[test]
fn bad_alignment_values() {
    let e = parse_err(Writer { alignment: Some(24), ..sample(3) }.bytes(), ErrorKind::Input);
    assert!(e.contains("power of two, found 24"), "{e}");
    assert!(parse_err(Writer { alignment: Some(0), ..sample(3) }.bytes(), ErrorKind::Input).contains("found 0"));
    let w = sample(3).kv("general.alignment", GgufValue::U64(32));
    assert!(parse_err(w.bytes(), ErrorKind::Input).contains("must be a u32"));
}

#[test]
fn a_missing_tensor_is_named() {
    let f = parse(&sample(2)).unwrap();
    let e = f.tensor("nope").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Input);
    assert!(e.to_string().contains("no tensor \"nope\"") && e.to_string().contains("test.gguf"), "{e}");
    assert!(f.tensor_info("nope").is_err());
}

#[test]
fn arbitrary_bytes_never_panic() {
    let full = sample(3).bytes();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..3000 {
        let mut b = full.clone();
        for _ in 0..3 {
            let r = next();
            let at = (r % b.len() as u64) as usize;
            b[at] = (r >> 32) as u8;
        }
        let cut = (next() % (b.len() as u64 + 1)) as usize;
        for bytes in [b.clone(), b[..cut].to_vec()] {
            if let Ok(f) = GgufFile::parse(bytes, "fuzz.gguf") {
                let names: Vec<String> = f.tensor_names().map(str::to_string).collect();
                names.iter().for_each(|n| drop(f.tensor(n)));
            }
        }
    }
}

#[test]
fn ggml_type_table() {
    let ids: Vec<u32> = GgmlType::ALL.iter().map(|t| t.id()).collect();
    assert_eq!(ids, [0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14, 15, 30]);
    for t in GgmlType::ALL {
        assert_eq!(GgmlType::from_id(t.id()), Some(t));
        match t.format() {
            Some(f) => assert_eq!((f.name(), Some(t.block())), (t.name(), f.ggml_block())),
            None => assert_eq!(t.block().0, 1),
        }
    }
    for (id, format, qk, bb) in QUANT {
        assert_eq!(GgmlType::from_id(id).and_then(GgmlType::format), Some(format));
        assert_eq!(GgmlType::from_id(id).map(GgmlType::block), Some((qk as usize, bb)));
    }
    assert_eq!(GgmlType::from_id(30).map(GgmlType::block), Some((1, 2)));
    assert_eq!(GgmlType::from_id(9), None);
}
