//! The backend registry, filled at link time with `inventory`.
//!
//! A backend crate calls [`register_backend!`]. Hosts must reference the plugin crate
//! (`use backend_wgpu as _;`): a crate nothing refers to may be dropped by the linker together with
//! its registration, and then `create("wgpu")` would not find it.

use crate::{bail, Backend, Result};

/// One registered backend: a name and a constructor.
pub struct BackendEntry {
    /// The registry name.
    pub name: &'static str,
    /// One line saying what it is.
    pub description: &'static str,
    /// Creates the backend (opens its device); errs when the machine cannot run it.
    pub create: fn() -> Result<Box<dyn Backend>>,
}

inventory::collect!(BackendEntry);

/// Registers a backend under a name: `register_backend!("wgpu", "WGSL on wgpu", create_fn);`
#[macro_export]
macro_rules! register_backend {
    ($name:expr, $description:expr, $create:expr) => {
        $crate::inventory::submit! {
            $crate::BackendEntry { name: $name, description: $description, create: $create }
        }
    };
}

/// Names and descriptions of every registered backend, sorted by name.
pub fn available() -> Vec<(&'static str, &'static str)> {
    let mut v: Vec<_> = inventory::iter::<BackendEntry>.into_iter().map(|e| (e.name, e.description)).collect();
    v.sort();
    v
}

/// Creates the backend registered as `name`; an unknown name lists the registered ones.
pub fn create(name: &str) -> Result<Box<dyn Backend>> {
    match inventory::iter::<BackendEntry>.into_iter().find(|e| e.name == name) {
        Some(e) => (e.create)(),
        None => {
            let names: Vec<&str> = available().into_iter().map(|(n, _)| n).collect();
            bail!(
                UnknownBackend,
                "no backend named {name:?}; registered: {names:?} (is the plugin crate linked with `use <crate> as _;`?)"
            )
        }
    }
}
