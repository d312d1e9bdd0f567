//! Escaping for the two places text goes in the page: HTML text and attributes, and the JSON
//! inside a `<script>` element.

use serde::Serialize;

/// `s` safe as HTML text or a quoted attribute value.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `value` as JSON that can sit inside `<script type="application/json">`: every `<` is
/// written `\u003c` (only strings can hold one), so no text in the data can close the
/// element or open a comment.
pub fn json_script<T: Serialize>(value: &T) -> crate::Result<String> {
    let json = serde_json::to_string(value)
        .map_err(|e| crate::Error::Results(format!("cannot write the report data: {e}")))?;
    Ok(json.replace('<', "\\u003c"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_text() {
        assert_eq!(
            text("a<b & \"c\" 'd'>"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;&gt;"
        );
    }

    #[test]
    fn script_json_cannot_close_the_element() {
        let s = json_script(&serde_json::json!({"label": "</script><!-- x"})).unwrap();
        assert!(!s.contains('<'), "{s}");
        let back: serde_json::Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back["label"], "</script><!-- x");
    }
}
