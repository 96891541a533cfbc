//! The attention and position family (§2.8): Rope and RopeBackward in `rope`.

pub(crate) mod rope;
