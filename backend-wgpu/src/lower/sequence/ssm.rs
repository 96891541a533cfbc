//! SelectiveScan (§2.10.4) and Mamba2 (§2.10.5) on the GPU.
