//! Text fit for a terminal. Dataset names, labels and server messages come from files, other
//! machines and servers, and may hold escape sequences (`\x1b[2J` clears the screen, `\r`
//! overwrites a line) or run to kilobytes. Every line annbench prints to standard error (errors
//! and their causes, warnings, progress) and every name it prints in a heading passes through
//! [`for_terminal`].

/// The longest line printed: a longer one is cut, saying how much was left out.
pub const MAX_LINE: usize = 1000;

/// The longest server message quoted in an error (the driver's text, before annbench's own
/// words around it).
pub const MAX_QUOTED: usize = 500;

/// Control characters escaped (ESC as `\x1b`; bidirectional overrides as `\u{202e}`), line
/// breaks kept, and each line cut to [`MAX_LINE`] characters.
pub fn for_terminal(text: &str) -> String {
    text.split('\n')
        .map(|line| bound(&escape(line), MAX_LINE))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every control character (tab aside) as `\xNN` (lower case: `\x1b`), C1 controls and bidirectional overrides as
/// `\u{NNNN}`; line breaks too (one line stays one line).
pub fn escape(text: &str) -> String {
    if !text.chars().any(needs_escape) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !needs_escape(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:04x}}}", c as u32)),
        }
    }
    out
}

fn needs_escape(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` cut after `max` characters: `start... (N more characters)`.
pub fn bound(text: &str, max: usize) -> String {
    let total = text.chars().count();
    if total <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}... ({} more characters)", total - max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_bounds() {
        assert_eq!(
            for_terminal("a\x1b[2Jb\rc\u{7f}\u{9b}\u{202e}x\ty\nz"),
            "a\\x1b[2Jb\\x0dc\\x7f\\u{009b}\\u{202e}x\ty\nz"
        );
        let long = "x".repeat(5000);
        let t = for_terminal(&long);
        assert!(t.len() < MAX_LINE + 40, "{}", t.len());
        assert!(t.ends_with("... (4000 more characters)"), "{t}");
        assert_eq!(escape("a\nb"), "a\\x0ab");
        assert_eq!(bound("héllo", 2), "hé... (3 more characters)");
    }
}
