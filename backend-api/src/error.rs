//! Errors as values (§1.10): every failure names the node, the op, the shapes and the reason.

use std::fmt;

/// What went wrong, in the spec's words (§1.10) plus the registry's and device's own kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Wrong number of inputs for the op and its flags.
    Arity,
    /// An input dtype outside the op's list, or operands that must share a dtype do not.
    DType,
    /// Incompatible shapes, rank out of range, a dim that must be ≥ 1 is 0.
    Shape,
    /// Axis out of range, duplicate axes, a permutation that is not one.
    Axis,
    /// Attribute outside its allowed range.
    Attribute,
    /// Body signature mismatch of `If`/`While`/`Scan`.
    Subgraph,
    /// `Custom` with a name absent from the registry.
    UnknownCustom,
    /// Op, dtype or attribute combination this backend cannot run on this device.
    Unsupported,
    /// Work that cannot be split or tiled within device limits.
    DeviceLimit,
    /// Run: missing input or param, wrong dtype, shape not matching the declaration.
    Input,
    /// Run: symbols bound inconsistently, or a deferred shape check failing.
    ShapeBinding,
    /// Run: a documented capacity attribute exceeded by the data.
    Capacity,
    /// Registry: no backend of that name.
    UnknownBackend,
    /// The device or driver failed (no adapter, lost device, validation error).
    Device,
}

impl ErrorKind {
    /// The kind's name as the spec writes it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Arity => "Arity",
            ErrorKind::DType => "DType",
            ErrorKind::Shape => "Shape",
            ErrorKind::Axis => "Axis",
            ErrorKind::Attribute => "Attribute",
            ErrorKind::Subgraph => "Subgraph",
            ErrorKind::UnknownCustom => "UnknownCustom",
            ErrorKind::Unsupported => "Unsupported",
            ErrorKind::DeviceLimit => "DeviceLimit",
            ErrorKind::Input => "Input",
            ErrorKind::ShapeBinding => "ShapeBinding",
            ErrorKind::Capacity => "Capacity",
            ErrorKind::UnknownBackend => "UnknownBackend",
            ErrorKind::Device => "Device",
        }
    }
}

/// An error with its kind, the node it concerns (if any) and a message that tells the story.
#[derive(Clone, Debug, PartialEq)]
pub struct Error {
    kind: ErrorKind,
    node: Option<(usize, String)>,
    message: String,
}

impl Error {
    /// A new error of `kind` with `message` and no node context yet.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error { kind, node: None, message: message.into() }
    }

    /// Adds the node (id and op description) unless a node is already named.
    pub fn at_node(mut self, id: usize, op: impl Into<String>) -> Error {
        if self.node.is_none() {
            self.node = Some((id, op.into()));
        }
        self
    }

    /// Names `id` and `op` as the node, replacing any node already named: how an error found in a
    /// rewritten graph (legalisation) is reported against the node of the user's graph.
    pub fn with_node(mut self, id: usize, op: impl Into<String>) -> Error {
        self.node = Some((id, op.into()));
        self
    }

    /// Prefixes the message with more context.
    pub fn context(mut self, ctx: impl fmt::Display) -> Error {
        self.message = format!("{ctx}: {}", self.message);
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The node id, if the error concerns one node.
    pub fn node_id(&self) -> Option<usize> {
        self.node.as_ref().map(|(id, _)| *id)
    }

    /// The op description of the node, if the error concerns one node.
    pub fn node_op(&self) -> Option<&str> {
        self.node.as_ref().map(|(_, op)| op.as_str())
    }

    /// The message without the kind and node prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Some((id, op)) => write!(f, "{} error at node {id} ({op}): {}", self.kind.name(), self.message),
            None => write!(f, "{} error: {}", self.kind.name(), self.message),
        }
    }
}

impl std::error::Error for Error {}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Returns early with an [`Error`] of the given kind and a formatted message.
#[macro_export]
macro_rules! bail {
    ($kind:ident, $($arg:tt)*) => {
        return Err($crate::Error::new($crate::ErrorKind::$kind, format!($($arg)*)))
    };
}

/// Returns early with an [`Error`] unless the condition holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $kind:ident, $($arg:tt)*) => {
        if !$cond {
            $crate::bail!($kind, $($arg)*);
        }
    };
}
