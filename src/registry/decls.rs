//! Every folder's declarations, compiled here, below the backends: each file sits in its
//! folder beside the implementation that points at it (`src/backend/<folder>/decl.rs`), but
//! is a module of the registry, so it can read nothing but the registry, the metrics and the
//! parameter helpers. The folder's `mod.rs` takes it back as its `decl` module.
//!
//! These are the registry's lines, the only place outside a folder that names it: a new
//! folder adds its module here and its algorithms to `algorithm_list!` below.

#[path = "../backend/exact/decl.rs"]
pub mod exact;
#[path = "../backend/mariadb/decl.rs"]
pub mod mariadb;
#[path = "../backend/pgvector/decl.rs"]
pub mod pgvector;
#[path = "../backend/pgvector_binary/decl.rs"]
pub mod pgvector_binary;
#[path = "../backend/pgvector_ivfflat/decl.rs"]
pub mod pgvector_ivfflat;
#[path = "../backend/postgres/decl.rs"]
pub mod postgres;
#[path = "../backend/redis/decl.rs"]
pub mod redis;

/// `algorithm_list!(then)` calls `then! { folder: [NAME, ...], ... }` with every algorithm
/// annbench runs, in the order help and docs list them: `NAME` is the algorithm's static both
/// in the folder's `decl.rs` (its [`super::AlgorithmDecl`]) and in its `mod.rs` (its implementation).
/// Adding an algorithm: its declaration and implementation, its
/// `algorithms/<name>/config.yml`, and one line here (a new folder also adds its module
/// above).
macro_rules! algorithm_list {
    ($then:ident) => {
        $then! {
            exact: [ALGORITHM],
            mariadb: [ALGORITHM],
            pgvector: [VECTOR, HALFVEC, HALFVEC_COLUMN],
            pgvector_ivfflat: [ALGORITHM],
            pgvector_binary: [ALGORITHM],
            redis: [ALGORITHM],
        }
    };
}
pub(crate) use algorithm_list;
