//! The recurrences of Rnn, Gru and Lstm (§2.10.1–2.10.3) on the GPU.
