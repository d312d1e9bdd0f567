//! `annbench servers check`: version, vector support and benchmark-shaping settings of each
//! server, with warnings that say which value to set.
