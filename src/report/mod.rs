//! Reports over stored results: best-QPS-at-recall tables, Pareto frontiers, exports,
//! build tables and relative comparisons.
