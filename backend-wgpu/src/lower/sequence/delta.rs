//! GatedDeltaNet (§2.10.6) on the GPU.
