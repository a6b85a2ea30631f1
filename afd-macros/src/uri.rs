//! URIs and URI templates as `#[resource]` checks them at compile time: a scheme (`test:`),
//! no whitespace, and in a template simple `{name}` variables, each named once, none next
//! to another. The runtime parses templates the same way to match URIs against them.

/// The variables of a URI template, or why it does not parse.
pub fn template_variables(template: &str) -> Result<Vec<String>, String> {
    let mut variables: Vec<String> = Vec::new();
    let mut literal = String::new();
    let mut rest = template;
    let mut last_was_variable = false;
    while let Some(open) = rest.find(['{', '}']) {
        if rest[open..].starts_with('}') {
            return Err("unmatched `}` in the URI template".to_owned());
        }
        literal.push_str(&rest[..open]);
        if open == 0 && last_was_variable {
            return Err(
                "two variables with nothing between them: they cannot be told apart".to_owned(),
            );
        }
        let after = &rest[open + 1..];
        let close = after
            .find('}')
            .ok_or_else(|| "unclosed `{` in the URI template".to_owned())?;
        let name = &after[..close];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`{{{name}}}` is not a simple variable: write `{{name}}` with letters, digits and `_`"
            ));
        }
        if variables.iter().any(|seen| seen == name) {
            return Err(format!("`{{{name}}}` appears twice in the URI template"));
        }
        variables.push(name.to_owned());
        // A placeholder character where the variable was, for the URI check.
        literal.push('x');
        last_was_variable = true;
        rest = &after[close + 1..];
    }
    literal.push_str(rest);
    check_uri(&literal)?;
    if variables.is_empty() {
        return Err(
            "a URI template has at least one `{variable}`: a fixed URI is declared with `uri`"
                .to_owned(),
        );
    }
    Ok(variables)
}

/// Whether `uri` is a usable URI: `scheme:rest`, no whitespace or control characters.
pub fn check_uri(uri: &str) -> Result<(), String> {
    let Some((scheme, rest)) = uri.split_once(':') else {
        return Err(format!(
            "`{uri}` is not a URI: it needs a scheme, as in `file:///notes.txt`"
        ));
    };
    let scheme_ok = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(format!(
            "`{scheme}` is not a URI scheme: a letter, then letters, digits, `+`, `-` or `.`"
        ));
    }
    if rest.is_empty() {
        return Err(format!("`{uri}` is only a scheme"));
    }
    if uri.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("a URI cannot hold whitespace: percent-encode it (`%20`)".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_give_their_variables() {
        assert_eq!(
            template_variables("test://template/{id}/data").unwrap(),
            ["id"]
        );
        assert_eq!(
            template_variables("file:///{dir}/{name}.txt").unwrap(),
            ["dir", "name"]
        );
    }

    #[test]
    fn bad_uris_and_templates_say_why() {
        assert!(check_uri("no-scheme").is_err());
        assert!(check_uri("1x://a").is_err());
        assert!(check_uri("a b:c").is_err());
        assert!(check_uri("test:").is_err());
        assert!(check_uri("test://static-text").is_ok());
        for bad in [
            "t://{id",
            "t://}",
            "t://{}",
            "t://{a}{b}",
            "t://{a}/{a}",
            "t://x",
            "t://{+a}",
        ] {
            assert!(template_variables(bad).is_err(), "{bad}");
        }
    }
}
