//! The uniform params structs kernels read at binding 0, declared once in Rust next to the WGSL
//! they mirror.
//!
//! [`params!`](crate::params!) declares a `#[repr(C)]` struct and records its layout (size, field
//! names, offsets and sizes) as [`Params::LAYOUT`]. The WGSL struct of the same name must have the
//! same layout: the naga tests reflect every rendered kernel's binding-0 uniform, look its struct
//! name up in [`all`] and compare field by field, so a field added on one side only fails a test
//! instead of shifting every later field on the GPU.

/// One field of a params struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// Field name (the same in Rust and WGSL).
    pub name: &'static str,
    /// Byte offset.
    pub offset: usize,
    /// Byte size.
    pub size: usize,
}

/// The layout of a params struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Struct name (the same in Rust and WGSL).
    pub name: &'static str,
    /// Byte size.
    pub size: usize,
    /// Fields in declaration order.
    pub fields: &'static [Field],
}

/// A params struct: plain bytes with a recorded layout.
pub trait Params: bytemuck::Pod {
    /// Its layout.
    const LAYOUT: Layout;

    /// Its bytes, as the uniform buffer holds them.
    fn to_bytes(&self) -> Vec<u8> {
        bytemuck::bytes_of(self).to_vec()
    }
}

/// Declares a params struct (`#[repr(C)]`, `Pod`, `Default`) and its [`Params`] layout. Fields
/// are `u32`, `i32`, `f32`, `[u32; 4]` (a `vec4<u32>`) or `[[u32; 4]; N]` (an
/// `array<vec4<u32>, N>`); pad by hand to WGSL's alignment (the layout test catches a mistake).
#[macro_export]
macro_rules! params {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* pub $f:ident : $t:ty),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name {
            $($(#[$fm])* pub $f: $t),*
        }

        impl $crate::params::Params for $name {
            const LAYOUT: $crate::params::Layout = $crate::params::Layout {
                name: stringify!($name),
                size: ::core::mem::size_of::<$name>(),
                fields: &[$($crate::params::Field {
                    name: stringify!($f),
                    offset: ::core::mem::offset_of!($name, $f),
                    size: ::core::mem::size_of::<$t>(),
                }),*],
            };
        }
    };
}

params! {
    /// `ZeroParams` of `zero.wgsl`.
    pub struct ZeroParams {
        /// Words to zero.
        pub n: u32,
        /// Padding.
        pub pad0: u32,
        /// Padding.
        pub pad1: u32,
        /// Padding.
        pub pad2: u32,
    }
}

/// The params structs of the shared kernels (`zero.wgsl`).
pub const PARAMS: &[Layout] = &[ZeroParams::LAYOUT];

/// Every params struct a kernel binds, family by family (each family module lists its own in
/// `PARAMS`): the naga tests look each rendered kernel's uniform up here.
pub fn all() -> impl Iterator<Item = &'static Layout> {
    [
        PARAMS,
        crate::attention::PARAMS,
        crate::backward::PARAMS,
        crate::control::PARAMS,
        crate::conv::PARAMS,
        crate::elementwise::PARAMS,
        crate::indexing::PARAMS,
        crate::linalg::PARAMS,
        crate::movement::PARAMS,
        crate::norm::PARAMS,
        crate::random::PARAMS,
        crate::reduce::PARAMS,
    ]
    .into_iter()
    .flatten()
    .chain(crate::sequence::params())
}

/// The layout named `name`, if any.
pub fn layout(name: &str) -> Option<&'static Layout> {
    all().find(|l| l.name == name)
}
