//! Decompositions: the only place composites become primitives (filled in below).
