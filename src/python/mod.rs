//! The PyO3 layer only: thin wrappers over the library API (feature `python`).
