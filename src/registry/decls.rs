//! Every folder's declarations, compiled here, below the backends: each file sits in its
//! folder beside the implementation that points at it (`src/backend/<folder>/decl.rs`), but
//! is a module of the registry, so it can read nothing but the registry, the metrics and the
//! parameter helpers. The folder's `mod.rs` takes it back as its `decl` module.
//!
//! A new folder adds its line here; its algorithms go in `algorithm_list!` (in `mod.rs`).

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
