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

/// The longest server name: it becomes a label and a part of result file names (at most 255
/// bytes, with the parameters in them too).
pub const MAX_NAME: usize = 64;

/// `NAME=URL` (a value of `flag`, e.g. `--postgres`) as a name and a URL; a plain URL as
/// `(None, text)`. It is `NAME=URL` when what follows the first `=` starts like a URL
/// (`scheme://`) and what precedes it is no URL's start; else that `=` is inside a URL (a query
/// string, a password) or key=value settings, and the whole text goes to the URL parser. A name
/// is letters, digits, `.`, `_` and `-`, at most [`MAX_NAME`]: it becomes a label and a part of
/// result file names.
pub fn split_named(flag: &str, text: &str) -> Result<(Option<String>, String)> {
    let plain = || Ok((None, text.to_string()));
    let Some((name, url)) = text.split_once('=') else {
        return plain();
    };
    let scheme_first = url.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+.-".contains(c))
    });
    if !scheme_first || name.contains("://") || name.contains('@') {
        return plain();
    }
    let rule = format!(
        "a server name is letters, digits, '.', '_' and '-', at most {MAX_NAME} of them (it \
         becomes the label of the server's points and a part of their file names), e.g. \
         {flag} pg18=URL"
    );
    // Text with a ':' before the '=' may be a mangled URL's `user:password` (`postgres//u:p=`):
    // never shown.
    let shown = if name.contains(':') {
        "NAME".to_string()
    } else {
        crate::terminal::escape(&crate::terminal::bound(name, 40))
    };
    if name.is_empty() {
        return Err(Error::Config(format!(
            "{flag} =URL: the server name is empty; give one ({rule}), or the URL alone"
        )));
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(Error::Config(format!(
            "{flag} {shown}=URL: the server name {} holds {}; {rule}",
            if shown == "NAME" {
                "(the text before the first '=')".to_string()
            } else {
                format!("'{shown}'")
            },
            crate::terminal::escape(&format!("{c:?}"))
        )));
    }
    if name.len() > MAX_NAME {
        return Err(Error::Config(format!(
            "{flag} {shown}=URL: the server name is {} characters long; {rule}",
            name.len()
        )));
    }
    Ok((Some(name.to_string()), url.to_string()))
}

impl NamedServer {
    /// `server 'b' (postgres://u:***@h:5433/db)`: its name and masked URL, as every error of a
    /// run on several servers names the server it comes from.
    pub fn describe(&self) -> String {
        let url = ServerUrl::parse(self.kind, &self.url)
            .map(|u| u.to_string())
            .unwrap_or_else(|_| crate::connect::redact_text(&self.url));
        format!("server '{}' ({url})", self.name)
    }

    /// `e` as an error of this server: [`Self::describe`] first.
    pub fn error(&self, e: Error) -> Error {
        e.with_context(&self.describe())
    }

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
    pub fn urls_of(&self, kind: ServerKind) -> Result<Vec<(Option<&NamedServer>, ServerUrl)>> {
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
                Ok((Some(s), url))
            })
            .collect()
    }

    /// Add the URLs of `kind` given on the command line: one plain URL, or any number of
    /// `NAME=URL` (unique names; not mixed with a plain URL).
    pub fn add_urls(&mut self, kind: ServerKind, values: &[String]) -> Result<()> {
        let flag = kind.decl().flag;
        let mut plain = Vec::new();
        for v in values {
            match split_named(flag, v)? {
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
        let split = |t: &str| split_named("--mariadb", t);
        let url = "mysql://u:p@localhost/db?socket=%2Ftmp%2Fm.sock";
        assert_eq!(split(url).unwrap(), (None, url.to_string()));
        let named = split(&format!("pg18={url}")).unwrap();
        assert_eq!(named, (Some("pg18".into()), url.to_string()));
        assert!(split("bad name=postgres://x").is_err());
        // An `=` in a password, in key=value settings, or before a mangled scheme: a URL for
        // the parser to judge (and mask), never a name echoed whole.
        for text in [
            "mysql://u:a=b@h/db",
            "host=h password=x",
            "u:pw=x@h/db",
            "u:pw@x=postgres://h/db",
        ] {
            assert_eq!(split(text).unwrap(), (None, text.to_string()), "{text}");
        }
    }

    #[test]
    fn bad_names_name_the_flag_the_name_and_the_rule() {
        let e = split_named("--postgres", "a/b=postgres://h/db")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--postgres a/b=URL: the server name 'a/b' holds '/'")
                && e.contains("letters, digits")
                && e.contains("at most 64"),
            "{e}"
        );
        let long = "x".repeat(300);
        let e = split_named("--postgres", &format!("{long}=postgres://h/db"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("is 300 characters long")
                && e.contains("at most 64")
                && !e.contains("--label"),
            "{e}"
        );
        assert!(e.len() < 400, "{e}");
        let e = split_named("--postgres", "postgres//u:Zq9=postgres://@h/db")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("(the text before the first '=') holds '/'") && !e.contains("Zq9"),
            "{e}"
        );
        let e = split_named("--redis", "=redis://h")
            .unwrap_err()
            .to_string();
        assert!(e.contains("--redis =URL: the server name is empty"), "{e}");
        let ok = "n".repeat(MAX_NAME);
        assert!(split_named("--postgres", &format!("{ok}=postgres://h/db")).is_ok());
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
