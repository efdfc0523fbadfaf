//! The sentence a wrong quote should have been.

use std::sync::OnceLock;

use super::sentences::Sentence;
use super::source::Source;

/// The sentence of `source` most like `quote`: the most shared words, rare words counting more
/// (a shared "TaskNotCancelableError" says more than a shared "task"), to say what a wrong quote
/// should have been.
pub fn nearest(quote: &str, source: Source) -> Option<Sentence> {
    use std::collections::{BTreeMap, BTreeSet};
    let words = |s: &str| -> BTreeSet<String> {
        s.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2).map(str::to_lowercase).collect()
    };
    type Index = (Vec<BTreeSet<String>>, BTreeMap<String, usize>);
    static INDEX: [OnceLock<Index>; 3] = [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let all = source.text().all_sentences();
    let (bags, df) = INDEX[source as usize].get_or_init(|| {
        let bags: Vec<BTreeSet<String>> = all.iter().map(|s| words(&s.text)).collect();
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        for w in bags.iter().flatten() {
            *df.entry(w.clone()).or_default() += 1;
        }
        (bags, df)
    });
    let weight = |w: &str| (all.len() as f64 / (1 + df.get(w).copied().unwrap_or(0)) as f64).ln().max(0.1);
    let q = words(quote);
    if q.is_empty() {
        return None;
    }
    let score = |bag: &BTreeSet<String>| {
        let shared: f64 = q.intersection(bag).map(|w| weight(w)).sum();
        let union: f64 = q.union(bag).map(|w| weight(w)).sum();
        shared / union.max(f64::MIN_POSITIVE)
    };
    let best = bags.iter().enumerate().max_by(|(_, a), (_, b)| score(a).total_cmp(&score(b)))?.0;
    all.get(best).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_points_at_the_real_sentence() {
        let s = nearest("Servers MUST validate every input parameter before processing", Source::Spec).unwrap();
        assert!(s.text.contains("Servers MUST validate all input parameters"), "{}", s.text);
    }
}
