//! `backend-api`: the contract between host frameworks and backends.
//!
//! - the graph IR: [`DType`], [`Shape`], [`Op`] (every op of SPEC-ops.md), [`Graph`] built with
//!   [`GraphBuilder`], with shape/dtype inference and validation in one place ([`infer`]);
//! - host tensors [`Tensor`] / [`TensorView`], read from `.npy` ([`npy`]) and GGUF ([`gguf`]) files;
//! - the [`Backend`] / [`Executable`] traits and the name registry ([`create`], [`available`]);
//! - the op table ([`spec`]) that backends and the conformance suite iterate;
//! - errors as values ([`Error`], [`ErrorKind`]).
#![warn(missing_docs)]

mod backend;
mod bind;
mod builder;
pub mod custom;
pub mod decompose;
pub mod device_value;
mod dispatch;
mod dtype;
mod error;
pub mod gguf;
mod graph;
pub mod infer;
#[cfg(feature = "serde")]
pub mod json;
pub mod npy;
pub mod op;
pub mod philox;
mod registry;
pub mod shape;
pub mod spec;
mod tensor;
pub mod trace;

pub use backend::{
    bind_feeds, check_feeds, check_placement, check_run_inputs, check_slot, check_value, Backend, Capabilities,
    CompileOptions, Executable, Signature, Slot, SymbolBinding,
};
pub use bind::Bindings;
pub use builder::GraphBuilder;
pub use custom::CustomOpDef;
pub use device_value::{DeviceStorage, DeviceTensor, Feed, Fetched, Placement};
pub use dtype::{DType, DTypeSet};
pub use error::{Error, ErrorKind, Result};
pub use graph::{Graph, Node, NodeId, TensorType, Value};
pub use op::Op;
pub use registry::{available, create, BackendEntry};
pub use shape::{Dim, Shape};
pub use spec::{Family, OpKind};
pub use tensor::{element_to_f64, Complex32, Element, Tensor, TensorView};

#[doc(hidden)]
pub use inventory;
