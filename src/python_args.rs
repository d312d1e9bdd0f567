//! Error messages in the words of the Python API.
//!
//! The library's messages name the CLI's flags (`--build M`, `--base and --me`), because the
//! CLI is where most of them are read. The Python module raises the same errors, and there
//! the fix is a keyword argument: [`for_python`] rewrites each flag that `annbench.run`,
//! `results`, `table`, `compare`, ... take as their keyword (`build=`, `base=`). Text in
//! backticks is a shell command and stays as written; flags with no Python counterpart
//! (`--shard`, `--calibrate`) too.

/// CLI flag -> the Python keyword argument that sets the same thing (besides the databases'
/// URL flags, which are their keywords).
const KEYWORDS: &[(&str, &str)] = &[
    ("algorithm", "algorithms"),
    ("base", "base"),
    ("build", "build"),
    ("clients", "clients"),
    ("config", "config"),
    ("count", "count"),
    ("data-dir", "data_dir"),
    ("expect", "expect"),
    ("force", "force"),
    ("judge-disturbed", "judge_disturbed"),
    ("keep-going", "keep_going"),
    ("label", "label"),
    ("max-time", "max_time"),
    ("me", "me"),
    ("min-time", "min_time"),
    ("noise", "noise"),
    ("order", "order"),
    ("query", "query"),
    ("rebuilds", "rebuilds"),
    ("recall", "recall"),
    ("results", "results"),
    ("runs", "runs"),
    ("stat", "stat"),
    ("target-ci", "target_ci"),
    ("timeout", "timeout"),
];

/// Boolean flags: `--keep-going` reads `keep_going=True`.
const SWITCHES: &[&str] = &["force", "judge-disturbed", "keep-going"];

/// `message` with each known flag outside backticks as its Python keyword: `--runs 0: give
/// ...` -> `runs=0: give ...`, `--base and --me` -> `base= and me=`.
pub fn for_python(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut in_code = false;
    let mut rest = message;
    while let Some(c) = rest.chars().next() {
        if c == '`' {
            in_code = !in_code;
        } else if !in_code && rest.starts_with("--") && starts_word(&out) {
            if let Some((flag, keyword)) = flag_at(&rest[2..]) {
                out.push_str(keyword);
                out.push('=');
                rest = &rest[2 + flag.len()..];
                if SWITCHES.contains(&flag) {
                    out.push_str("True");
                } else if let Some(value) = value_after(rest) {
                    out.push_str(value);
                    rest = &rest[1 + value.len()..];
                }
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A flag starts a word: at the start, or after a space or an opening bracket or quote.
fn starts_word(before: &str) -> bool {
    before
        .chars()
        .last()
        .is_none_or(|c| c.is_whitespace() || "([{'\"".contains(c))
}

/// The known flag at the start of `text` (after `--`), whole words only.
fn flag_at(text: &str) -> Option<(&'static str, &'static str)> {
    let end = text
        .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
        .unwrap_or(text.len());
    let word = &text[..end];
    // Each database's URL flag is its keyword (`--mariadb URL` -> `mariadb=`).
    let database = crate::backend::databases()
        .into_iter()
        .map(|d| d.kind.key())
        .find(|key| *key == word)
        .map(|key| (key, key));
    database.or_else(|| KEYWORDS.iter().copied().find(|(flag, _)| *flag == word))
}

/// The flag's value when the message gives one right after it (` 0:`, ` 'x'`, ` 2%`): a
/// number or a quoted string, or a bare word that ends at `:` or `,`. `None` for prose
/// (`--label is empty`, `--base and --me`).
fn value_after(rest: &str) -> Option<&str> {
    let text = rest.strip_prefix(' ')?;
    let first = text.chars().next()?;
    if first == '\'' || first == '"' {
        let close = text[1..].find(first)?;
        return Some(&text[..close + 2]);
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    let word = &text[..end];
    if first.is_ascii_digit() {
        return Some(word.trim_end_matches([':', ',', ';', ')']));
    }
    let bare = word.strip_suffix(':').or_else(|| word.strip_suffix(','))?;
    (!bare.is_empty() && first.is_alphanumeric()).then_some(bare)
}

#[cfg(test)]
mod tests {
    use super::for_python;

    #[test]
    fn flags_become_keywords_with_their_values() {
        let cases = [
            ("--runs 0: give 1 to 100", "runs=0: give 1 to 100"),
            ("--base and --me are both 'a'", "base= and me= are both 'a'"),
            (
                "--base v1: no results have that label",
                "base=v1: no results have that label",
            ),
            (
                "--label \"a\\u{7}\" holds a control",
                "label=\"a\\u{7}\" holds a control",
            ),
            (
                "--label is empty: give a name",
                "label= is empty: give a name",
            ),
            (
                "--count 100 is larger than the 50",
                "count=100 is larger than the 50",
            ),
            ("--target-ci 2%: give", "target_ci=2%: give"),
            (
                "unknown parameter in --build for mariadb",
                "unknown parameter in build= for mariadb",
            ),
            (
                "failed; going on (--keep-going)",
                "failed; going on (keep_going=True)",
            ),
            (
                "pass --algorithm (mariadb, pgvector)",
                "pass algorithms= (mariadb, pgvector)",
            ),
            (
                "choose another with --data-dir or X",
                "choose another with data_dir= or X",
            ),
        ];
        for (cli, python) in cases {
            assert_eq!(for_python(cli), python, "{cli}");
        }
    }

    #[test]
    fn shell_commands_and_unknown_flags_stay() {
        for text in [
            "runs get one with `annbench run --label NAME`",
            "--calibrate 10: use at least 100 rows",
            "fix the variable or pass --shard I/N",
            "a--build inside a word",
            "--builds is another flag",
        ] {
            assert_eq!(for_python(text), text);
        }
    }
}
