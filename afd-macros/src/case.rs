//! Spelling: kebab-case and SCREAMING_SNAKE_CASE checks, the kebab-case form of a function
//! name, and the closest word to a misspelt one for "did you mean" suggestions.

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

/// A valid MCP tool name: 1 to 128 of `A-Z a-z 0-9 _ . -` (`create_pull_request`,
/// `todo-create`, `files.read`).
pub fn is_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
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

/// The candidate closest to a misspelt `word`, if one is close enough to suggest:
/// `categroy` -> `category`, `alias` -> `aliases`, `execution` -> `execution_time`.
pub fn closest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let budget = match word.chars().count() {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    candidates
        .iter()
        .map(|candidate| (edit_distance(word, candidate), *candidate))
        .filter(|(distance, candidate)| {
            *distance <= budget || (word.len() >= 4 && candidate.starts_with(word))
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

/// Edits (insertions, deletions, substitutions, swaps of neighbours) from `a` to `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut rows = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = best;
        }
    }
    rows[a.len()][b.len()]
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
    fn checks_tool_names() {
        for name in [
            "todo-create",
            "create_pull_request",
            "files.read",
            "A1",
            "x",
        ] {
            assert!(is_tool_name(name), "{name}");
        }
        for name in ["", "todo create", "todo/create", "tôdo", &"a".repeat(129)] {
            assert!(!is_tool_name(name), "{name}");
        }
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
    fn suggests_close_keys_only() {
        let keys = [
            "name",
            "category",
            "tags",
            "aliases",
            "execution_time",
            "mutation",
        ];
        assert_eq!(closest("categroy", &keys), Some("category"));
        assert_eq!(closest("tag", &keys), Some("tags"));
        assert_eq!(closest("alias", &keys), Some("aliases"));
        assert_eq!(closest("execution", &keys), Some("execution_time"));
        assert_eq!(closest("colour", &keys), None);
        assert_eq!(closest("time", &keys), None);
    }

    #[test]
    fn checks_screaming_snake() {
        assert!(is_screaming_snake("NOT_FOUND"));
        assert!(!is_screaming_snake("not_found"));
        assert!(!is_screaming_snake("NOT__FOUND"));
    }
}
