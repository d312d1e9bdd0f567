//! Named servers: `--postgres NAME=URL` (repeatable). One named server of a database gives its
//! points that name as label; two or more run interleaved in one sweep (`runner::interleave`),
//! each under its name, so that their passes can be paired round by round.

use super::BackendOptions;
use crate::connect::{ServerKind, ServerUrl};
use crate::{Error, Result};

/// One server of a database, with the name its points are labelled with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedServer {
    pub kind: ServerKind,
    /// The label of its points, e.g. `pg18`.
    pub name: String,
    pub url: String,
}

/// `NAME=URL` as a name and a URL; a plain URL (or text with no `=` before its `://`) as
/// `(None, text)`. A name is letters, digits, `.`, `_` and `-`: it becomes a label and a part
/// of result file names.
pub fn split_named(text: &str) -> Result<(Option<String>, String)> {
    let Some((name, url)) = text.split_once('=') else {
        return Ok((None, text.to_string()));
    };
    // A URL's query string has `=` too (`?socket=...`): only text before the scheme names.
    if name.contains("://") || name.contains('/') || name.contains(':') {
        return Ok((None, text.to_string()));
    }
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !valid {
        return Err(Error::Config(format!(
            "server name '{name}' in '{name}=...': use letters, digits, '.', '_' and '-', \
             e.g. --postgres pg18=postgres://..."
        )));
    }
    Ok((Some(name.to_string()), url.to_string()))
}

impl NamedServer {
    /// The TCP port its URL names (`None` for a Unix socket, a default port or a bad URL).
    pub fn tcp_port(&self) -> Option<u16> {
        crate::connect::server_url(self.kind, Some(&self.url))
            .ok()?
            .tcp_port()
    }
}

impl BackendOptions {
    /// The named servers of the database `algorithm` runs on (none for an in-process one).
    pub fn named_for(&self, algorithm: &str) -> Vec<&NamedServer> {
        crate::backend::algorithm(algorithm)
            .and_then(|a| a.database)
            .map(|d| self.named(d.kind))
            .unwrap_or_default()
    }

    /// The named servers of `kind`, in the order given.
    pub fn named(&self, kind: ServerKind) -> Vec<&NamedServer> {
        self.servers.iter().filter(|s| s.kind == kind).collect()
    }

    /// These options for one named server: its URL for its database, no other named server.
    pub fn for_server(&self, server: &NamedServer) -> BackendOptions {
        let mut opts = self.clone();
        opts.servers.clear();
        opts.urls.insert(server.kind, server.url.clone());
        opts
    }

    /// Every URL of `kind` a sweep connects to: each named server's, else the one server's.
    pub fn urls_of(&self, kind: ServerKind) -> Result<Vec<(Option<&str>, ServerUrl)>> {
        let named = self.named(kind);
        if named.is_empty() {
            return Ok(vec![(None, self.url(kind)?)]);
        }
        named
            .into_iter()
            .map(|s| {
                let url = crate::connect::server_url(kind, Some(&s.url)).map_err(|e| {
                    Error::Config(format!("server '{}' ({}): {e}", s.name, kind.decl().flag))
                })?;
                Ok((Some(s.name.as_str()), url))
            })
            .collect()
    }

    /// Add the URLs of `kind` given on the command line: one plain URL, or any number of
    /// `NAME=URL` (unique names; not mixed with a plain URL).
    pub fn add_urls(&mut self, kind: ServerKind, values: &[String]) -> Result<()> {
        let flag = kind.decl().flag;
        let mut plain = Vec::new();
        for v in values {
            match split_named(v)? {
                (None, url) => plain.push(url),
                (Some(name), url) => {
                    if self.named(kind).iter().any(|s| s.name == name) {
                        return Err(Error::Config(format!(
                            "{flag} {name}=... is given twice: give each server its own name"
                        )));
                    }
                    self.servers.push(NamedServer { kind, name, url });
                }
            }
        }
        let named = self.named(kind).len();
        match (plain.len(), named) {
            (0, _) => Ok(()),
            (1, 0) => {
                self.urls.insert(kind, plain.remove(0));
                Ok(())
            }
            _ => Err(Error::Config(format!(
                "{flag} is given {} times: name each server to run them interleaved, e.g. \
                 {flag} a=URL {flag} b=URL (the names become the labels of their points)",
                plain.len() + named
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_with_a_query_string_is_not_a_name() {
        let url = "mysql://u:p@localhost/db?socket=%2Ftmp%2Fm.sock";
        assert_eq!(split_named(url).unwrap(), (None, url.to_string()));
        let named = split_named(&format!("pg18={url}")).unwrap();
        assert_eq!(named, (Some("pg18".into()), url.to_string()));
        assert!(split_named("bad name=postgres://x").is_err());
    }

    #[test]
    fn repeated_flags_need_names() {
        let mut o = BackendOptions::default();
        let k = ServerKind::Postgres;
        let e = o
            .add_urls(k, &["postgres://a/x".into(), "postgres://b/x".into()])
            .unwrap_err();
        assert!(e.to_string().contains("name each server"), "{e}");
        let mut o = BackendOptions::default();
        o.add_urls(k, &["a=postgres://a/x".into(), "b=postgres://b/x".into()])
            .unwrap();
        assert_eq!(o.named(k).len(), 2);
        assert_eq!(o.for_server(o.named(k)[1]).urls[&k], "postgres://b/x");
        let mut o = BackendOptions::default();
        let e = o
            .add_urls(k, &["a=postgres://a/x".into(), "a=postgres://b/x".into()])
            .unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
    }
}
