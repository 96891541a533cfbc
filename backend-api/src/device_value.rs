//! Device-resident values: outputs a backend keeps in its own memory so that a host can feed them
//! to the next run (a KV cache in a decode loop) without a round trip through host memory.

use crate::{DType, Result, Tensor, TensorView};
use std::any::Any;
use std::fmt;
use std::sync::Arc;

/// What a backend stores behind a [`DeviceTensor`]. Implemented by backends, not by hosts.
pub trait DeviceStorage: Send + Sync + 'static {
    /// Element type.
    fn dtype(&self) -> DType;
    /// Static shape.
    fn shape(&self) -> &[usize];
    /// The registry name of the backend that owns the memory.
    fn backend(&self) -> &str;
    /// Copies the value to host memory (waits for the device).
    fn read(&self) -> Result<Tensor>;
    /// For the owning backend to recover its concrete type.
    fn as_any(&self) -> &dyn Any;
}

/// A tensor kept where a backend computes (device memory for GPU backends). Cloning is cheap and
/// shares the memory; the memory is freed when the last clone is dropped. Values are immutable:
/// a run never writes into a `DeviceTensor` it was given.
#[derive(Clone)]
pub struct DeviceTensor(Arc<dyn DeviceStorage>);

impl DeviceTensor {
    /// Wraps a backend's storage.
    pub fn new(storage: Arc<dyn DeviceStorage>) -> DeviceTensor {
        DeviceTensor(storage)
    }
    /// Element type.
    pub fn dtype(&self) -> DType {
        self.0.dtype()
    }
    /// Shape.
    pub fn shape(&self) -> &[usize] {
        self.0.shape()
    }
    /// The owning backend's registry name.
    pub fn backend(&self) -> &str {
        self.0.backend()
    }
    /// Reads the value back to the host.
    pub fn read(&self) -> Result<Tensor> {
        self.0.read()
    }
    /// The backend's concrete storage, if it is a `T`.
    pub fn downcast<T: 'static>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref::<T>()
    }
}

impl fmt::Debug for DeviceTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceTensor({} {:?} on {})", self.dtype(), self.shape(), self.backend())
    }
}

/// One run input: host bytes, or a value an earlier run left on the device.
#[derive(Clone, Copy, Debug)]
pub enum Feed<'a> {
    /// Host memory, uploaded by the run.
    Host(TensorView<'a>),
    /// A device-resident value of the same backend and device.
    Device(&'a DeviceTensor),
}

impl Feed<'_> {
    /// Element type.
    pub fn dtype(&self) -> DType {
        match self {
            Feed::Host(v) => v.dtype(),
            Feed::Device(d) => d.dtype(),
        }
    }
    /// Shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            Feed::Host(v) => v.shape(),
            Feed::Device(d) => d.shape(),
        }
    }
}

impl<'a> From<TensorView<'a>> for Feed<'a> {
    fn from(v: TensorView<'a>) -> Feed<'a> {
        Feed::Host(v)
    }
}

impl<'a> From<&'a DeviceTensor> for Feed<'a> {
    fn from(d: &'a DeviceTensor) -> Feed<'a> {
        Feed::Device(d)
    }
}

/// Where a run leaves one output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Placement {
    /// Read back into a host [`Tensor`] (the default).
    #[default]
    Host,
    /// Kept on the device as a [`DeviceTensor`].
    Device,
}

/// One run output, placed as asked.
#[derive(Clone, Debug)]
pub enum Fetched {
    /// Read back to the host.
    Host(Tensor),
    /// Kept on the device.
    Device(DeviceTensor),
}

impl Fetched {
    /// The value on the host, reading it back if it was kept on the device.
    pub fn into_host(self) -> Result<Tensor> {
        match self {
            Fetched::Host(t) => Ok(t),
            Fetched::Device(d) => d.read(),
        }
    }
    /// The device value, if it was kept on the device.
    pub fn device(&self) -> Option<&DeviceTensor> {
        match self {
            Fetched::Host(_) => None,
            Fetched::Device(d) => Some(d),
        }
    }
}
