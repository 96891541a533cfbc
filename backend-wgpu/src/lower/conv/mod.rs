//! Convolution-family lowerings (§2.9): Pool and Im2Col share the window addressing of
//! [`pool::WindowGeometry`]; ResizeNearest is a copy of its own.

mod im2col;
mod pool;
mod resize;

pub use im2col::im2col;
pub use pool::pool;
pub use resize::resize_nearest;
