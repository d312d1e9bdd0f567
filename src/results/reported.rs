//! What a backend reports that the result files store: the server's identity and settings,
//! and the phases of an index build. Plain data, so that results read it without importing
//! a backend (the backends re-export it).

use crate::connect::ServerUrl;
use std::collections::BTreeMap;

/// A named phase of an index build and how long it took.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, PartialEq)]
pub struct BuildPhase {
    pub name: String,
    pub seconds: f64,
}

/// Server identity and the settings that shape results, for the result files.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ServerInfo {
    /// e.g. `MariaDB 11.8.3` or `PostgreSQL 17.6, pgvector 0.8.0`.
    pub version: String,
    /// e.g. `mhnsw_max_cache_size`, `shared_buffers`, `maintenance_work_mem`.
    pub settings: BTreeMap<String, String>,
}

impl ServerInfo {
    /// This info with how the client reaches the server (`tcp`, `unix socket`): the transport
    /// changes latency and client CPU, so every result records it.
    pub fn with_transport(mut self, url: &ServerUrl) -> Self {
        self.settings
            .insert("client_transport".into(), url.transport().into());
        self
    }
}
