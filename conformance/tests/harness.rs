//! Self-test of the harness: a backend that wraps cpu-ref, scales every F32 output by
//! (1 + 3e-6) and refuses F64 graphs must fail exactly where the tolerance classes say, and be
//! skipped (not failed) where it is unsupported; and a backend whose decomposed path alone is wrong
//! must fail exactly on the rows that run both paths.

use backend_api::{
    bail, Backend, Capabilities, CompileOptions, DType, Executable, Feed, Fetched, Graph, OpKind, Placement, Result,
    Signature, Tensor, TensorView,
};
use conformance::{proptest_config, variants, Runner, Status, REFERENCE};

use backend_cpu_ref as _;

const SCALE: f32 = 1.0 + 3e-6;

struct Perturbed(Box<dyn Backend>);
/// An executable whose F32 outputs are scaled by the factor.
struct PerturbedExe(Box<dyn Executable>, f32);

impl Backend for Perturbed {
    fn name(&self) -> &str {
        "perturbed"
    }
    fn capabilities(&self) -> Capabilities {
        self.0.capabilities()
    }
    fn implements(&self, kind: OpKind) -> bool {
        self.0.implements(kind)
    }
    fn compile(&self, graph: &Graph, options: &CompileOptions) -> Result<Box<dyn Executable>> {
        if graph.nodes().iter().flat_map(|n| &n.outputs).any(|t| t.dtype == DType::F64) {
            bail!(Unsupported, "perturbed refuses F64");
        }
        Ok(Box::new(PerturbedExe(self.0.compile(graph, options)?, SCALE)))
    }
}

impl Executable for PerturbedExe {
    fn signature(&self) -> &Signature {
        self.0.signature()
    }
    fn set_param(&mut self, name: &str, value: TensorView<'_>) -> Result<()> {
        self.0.set_param(name, value)
    }
    fn run(&mut self, inputs: &[(&str, TensorView<'_>)]) -> Result<Vec<Tensor>> {
        let outs = self.0.run(inputs)?;
        outs.into_iter()
            .map(|t| match t.dtype() {
                DType::F32 => {
                    let v: Vec<f32> = t.to_vec::<f32>()?.into_iter().map(|x| x * self.1).collect();
                    Tensor::from_slice(t.shape(), &v)
                }
                _ => Ok(t),
            })
            .collect()
    }
    fn run_with(&mut self, inputs: &[(&str, Feed<'_>)], placement: &[Placement]) -> Result<Vec<Fetched>> {
        self.0.run_with(inputs, placement)
    }
    fn clone_shared(&self) -> Result<Box<dyn Executable>> {
        Ok(Box::new(PerturbedExe(self.0.clone_shared()?, self.1)))
    }
}

fn create() -> Result<Box<dyn Backend>> {
    Ok(Box::new(Perturbed(backend_api::create(REFERENCE)?)))
}

backend_api::register_backend!("perturbed", "cpu-ref with F32 outputs scaled by 1 + 3e-6", create);

/// cpu-ref whose F32 outputs are 1 % off when compiled with `decompose_all`.
struct WrongDecomposed(Box<dyn Backend>);

impl Backend for WrongDecomposed {
    fn name(&self) -> &str {
        "wrong-decomposed"
    }
    fn capabilities(&self) -> Capabilities {
        self.0.capabilities()
    }
    fn implements(&self, kind: OpKind) -> bool {
        self.0.implements(kind)
    }
    fn compile(&self, graph: &Graph, options: &CompileOptions) -> Result<Box<dyn Executable>> {
        let factor = if options.decompose_all { 1.01 } else { 1.0 };
        Ok(Box::new(PerturbedExe(self.0.compile(graph, options)?, factor)))
    }
}

fn create_wrong() -> Result<Box<dyn Backend>> {
    Ok(Box::new(WrongDecomposed(backend_api::create(REFERENCE)?)))
}

backend_api::register_backend!("wrong-decomposed", "cpu-ref, 1 % off with decompose_all", create_wrong);

fn status(runner: &Runner, row: &str, label: &str) -> (Status, Option<String>) {
    let vs = variants(row).unwrap();
    let v = vs.iter().find(|v| v.label == label).unwrap();
    let r = runner.run_variant(row, v, &proptest_config(Some(8), None));
    (r.status, r.message)
}

#[test]
fn tolerance_classes_catch_exactly_what_they_should() {
    let runner = Runner::new("perturbed", REFERENCE).unwrap();
    // 3e-6 relative is inside Approx (1e-4), outside Close (1e-6) and Exact.
    assert_eq!(status(&runner, "Unary.Exp", "F32").0, Status::Pass);
    assert_eq!(status(&runner, "MatMul", "F32").0, Status::Pass);
    assert_eq!(status(&runner, "Unary.Sqrt", "F32").0, Status::Fail);
    let (s, msg) = status(&runner, "Binary.Add", "F32");
    assert_eq!(s, Status::Fail);
    let msg = msg.unwrap();
    eprintln!("{msg}");
    assert!(msg.contains("worst at") && msg.contains("minimal failing case"), "{msg}");
    // Integer outputs are untouched; F64 graphs are refused, which skips rather than fails.
    assert_eq!(status(&runner, "Binary.Add", "I32").0, Status::Pass);
    assert_eq!(status(&runner, "Unary.Exp", "F64").0, Status::Unsupported);
}

#[test]
fn the_decomposed_path_is_checked_where_there_are_two() {
    let runner = Runner::new("wrong-decomposed", REFERENCE).unwrap();
    assert!(runner.has_two_paths(OpKind::DotGeneral) && !runner.has_two_paths(OpKind::Softmax));
    let (s, msg) = status(&runner, "DotGeneral", "F32");
    assert_eq!(s, Status::Fail);
    assert!(msg.as_deref().unwrap_or("").contains("decompose_all"), "{msg:?}");
    assert_eq!(status(&runner, "Fma", "F32").0, Status::Fail);
    // Softmax has no decomposition: its one path is right.
    assert_eq!(status(&runner, "Softmax", "F32").0, Status::Pass);
}
