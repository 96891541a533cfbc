//! Graph files nest as deep as the writer writes and the reader reads: the same limit, a clear
//! error past it (docs/GRAPH-FORMAT.md, "Nesting").
#![cfg(feature = "serde")]

use backend_api::json::{from_json, to_json, MAX_NESTING};
use backend_api::op::UnaryOp;
use backend_api::{DType, ErrorKind, Graph, GraphBuilder, Tensor};

/// `x → Neg`.
fn leaf() -> Graph {
    let mut b = GraphBuilder::new();
    let x = b.input("x", DType::F32, [2]).unwrap();
    let y = b.unary(UnaryOp::Neg, x).unwrap();
    b.output(y).unwrap();
    b.build().unwrap()
}

/// `x → Neg` inside `levels` nested `If`s (the then branch nests, the else branch is a leaf).
fn nested(levels: usize) -> Graph {
    let mut inner = leaf();
    for _ in 0..levels {
        let mut b = GraphBuilder::new();
        let x = b.input("x", DType::F32, [2]).unwrap();
        let c = b.constant(&Tensor::from_slice(&[1], &[true]).unwrap()).unwrap();
        let y = b.if_(c, &[x], inner, leaf()).unwrap();
        b.output(y[0]).unwrap();
        inner = b.build().unwrap();
    }
    inner
}

/// The most `If` levels [`to_json`] writes.
fn deepest_written() -> usize {
    (0..64).take_while(|&l| to_json(&nested(l)).is_ok()).last().unwrap()
}

#[test]
fn the_deepest_graph_the_writer_writes_reads_back() {
    let levels = deepest_written();
    assert_eq!(levels, 24, "each If level is five JSON levels under the file's seven");
    let g = nested(levels);
    let text = to_json(&g).unwrap();
    assert_eq!(from_json(&text).unwrap(), g);
}

#[test]
fn one_level_deeper_is_refused_by_the_writer_and_the_reader_alike() {
    let levels = deepest_written() + 1;
    let e = to_json(&nested(levels)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
    assert!(e.to_string().contains(&format!("limit of {MAX_NESTING}")), "{e}");
    // A text one level deeper than the deepest file (that file inside an array) is refused by the
    // reader with the same limit, not serde_json's; so is a far deeper one.
    let text = to_json(&nested(levels - 1)).unwrap();
    let deeper = format!("[{text}]");
    let far = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    for t in [deeper.as_str(), far.as_str()] {
        let e = from_json(t).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.to_string().contains(&format!("limit of {MAX_NESTING}")), "{e}");
    }
    // Brackets inside strings do not count: an input named by 500 `[` reads.
    let quoted = text.replacen("\"x\"", &format!("\"{}\"", "[".repeat(500)), 1);
    assert!(from_json(&quoted).is_ok());
}
