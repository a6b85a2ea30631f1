//! Names: kebab-case conversion and checks.

/// `todo_create` and `todoCreate` -> `todo-create`.
pub fn to_kebab(ident: &str) -> String {
    let ident = ident.strip_prefix("r#").unwrap_or(ident);
    let mut out = String::with_capacity(ident.len() + 4);
    let mut prev_lower_or_digit = false;
    for ch in ident.chars() {
        if ch == '_' {
            if !out.is_empty() && !out.ends_with('-') {
                out.push('-');
            }
            prev_lower_or_digit = false;
        } else if ch.is_ascii_uppercase() {
            if prev_lower_or_digit {
                out.push('-');
            }
            out.push(ch.to_ascii_lowercase());
            prev_lower_or_digit = false;
        } else {
            out.push(ch);
            prev_lower_or_digit = ch.is_ascii_lowercase() || ch.is_ascii_digit();
        }
    }
    out.trim_end_matches('-').to_owned()
}

/// Lowercase words of letters and digits joined by single hyphens, starting with a letter.
pub fn is_kebab(name: &str) -> bool {
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.split('-').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        })
}

/// `NOT_FOUND`: uppercase words of letters and digits joined by single underscores.
pub fn is_screaming_snake(code: &str) -> bool {
    !code.is_empty()
        && code.starts_with(|c: char| c.is_ascii_uppercase())
        && code.split('_').all(|word| {
            !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_snake_and_camel() {
        assert_eq!(to_kebab("todo_create"), "todo-create");
        assert_eq!(to_kebab("todoCreate"), "todo-create");
        assert_eq!(to_kebab("r#type"), "type");
        assert_eq!(to_kebab("get_v2_item"), "get-v2-item");
    }

    #[test]
    fn checks_kebab() {
        assert!(is_kebab("todo-create"));
        assert!(is_kebab("v2"));
        assert!(!is_kebab("todoCreate"));
        assert!(!is_kebab("todo--create"));
        assert!(!is_kebab("-todo"));
        assert!(!is_kebab("todo_create"));
        assert!(!is_kebab("2fa"));
    }

    #[test]
    fn checks_screaming_snake() {
        assert!(is_screaming_snake("NOT_FOUND"));
        assert!(!is_screaming_snake("not_found"));
        assert!(!is_screaming_snake("NOT__FOUND"));
    }
}
