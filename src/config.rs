//! `algorithms/<name>/config.yml` grids: build args expand to a Cartesian product (one index
//! build each), query args to a list run against every build. Owned by the runner work.
