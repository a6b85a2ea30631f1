//! [`Hit`], one search result, and how scored candidates become the best hits in order.

/// One search result.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// The document's position in the order the index was built from.
    pub doc: usize,
    /// Its relevance, higher is better; comparable only within one search.
    pub score: f32,
}

/// The best `limit` of `ranked`, each `(score, tie_break, document)`, as hits in order:
/// higher score first, equal scores to the higher tie-break, then to the earlier document.
pub(super) fn best(mut ranked: Vec<(f32, f32, usize)>, limit: usize) -> Vec<Hit> {
    let order = |a: &(f32, f32, usize), b: &(f32, f32, usize)| {
        b.0.total_cmp(&a.0)
            .then(b.1.total_cmp(&a.1))
            .then(a.2.cmp(&b.2))
    };
    if ranked.len() > limit {
        ranked.select_nth_unstable_by(limit, order);
        ranked.truncate(limit);
    }
    ranked.sort_unstable_by(order);
    ranked
        .into_iter()
        .map(|(score, _, doc)| Hit { doc, score })
        .collect()
}
