//! Which of a registry's commands one dispatcher exposes ([`Exposed`]): their names, their
//! positions in name order, their categories and tags, and the lists afd-discover browses
//! without scanning the catalog ([`BrowseIndex`]).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::OnceLock;

use serde_json::{Value, json};

use super::{CommandEntry, Registry, TagMode};
use crate::text::summary;

/// The commands a dispatcher exposes, decided once when it is built.
#[derive(Debug)]
pub(crate) struct Exposed {
    names: HashSet<&'static str>,
    /// Registry indices of the exposed commands, in name order.
    listing: Vec<usize>,
    /// Categories of the exposed commands, with counts, sorted.
    categories: Vec<(&'static str, usize)>,
    /// Tags of the exposed commands, sorted.
    tags: Vec<&'static str>,
    /// afd-discover's lists, built on first use.
    browse: OnceLock<BrowseIndex>,
}

impl Exposed {
    /// The exposure of `names` (canonical names of `registry`'s commands).
    pub(crate) fn new(registry: &Registry, names: HashSet<&'static str>) -> Exposed {
        let listing: Vec<usize> = (0..registry.len())
            .filter(|&index| names.contains(registry.commands()[index].name()))
            .collect();
        let mut categories: BTreeMap<&'static str, usize> = BTreeMap::new();
        let mut tags: BTreeSet<&'static str> = BTreeSet::new();
        for &index in &listing {
            let entry = &registry.commands()[index];
            *categories.entry(entry.category()).or_default() += 1;
            tags.extend(entry.tags().iter().copied());
        }
        Exposed {
            names,
            listing,
            categories: categories.into_iter().collect(),
            tags: tags.into_iter().collect(),
            browse: OnceLock::new(),
        }
    }

    /// Whether the command named `name` (canonical name) is exposed.
    pub(crate) fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The exposed names, in no order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.names.iter().copied()
    }

    /// How many commands are exposed.
    pub(crate) fn len(&self) -> usize {
        self.listing.len()
    }

    /// The exposed commands of `registry`, in name order.
    pub(crate) fn entries<'r>(
        &'r self,
        registry: &'r Registry,
    ) -> impl Iterator<Item = &'r CommandEntry> + 'r {
        let commands = registry.commands();
        self.listing.iter().map(move |&index| &commands[index])
    }

    /// The exposed command at `position` in name order.
    pub(crate) fn entry<'r>(&self, registry: &'r Registry, position: usize) -> &'r CommandEntry {
        &registry.commands()[self.listing[position]]
    }

    /// The registry index of the exposed command at `position`.
    pub(crate) fn index(&self, position: usize) -> usize {
        self.listing[position]
    }

    /// The categories with their counts, sorted by name.
    pub(crate) fn categories(&self) -> &[(&'static str, usize)] {
        &self.categories
    }

    /// The tags, sorted.
    pub(crate) fn tags(&self) -> &[&'static str] {
        &self.tags
    }

    /// afd-discover's lists (built on first use).
    pub(crate) fn browse(&self, registry: &Registry) -> &BrowseIndex {
        self.browse
            .get_or_init(|| BrowseIndex::build(registry, self))
    }
}

/// What afd-discover browses without scanning the catalog, built once per dispatcher (on
/// first use): the positions, in exposed order, of each category's
/// and each tag's commands, every command's one-line summary, and the taxonomy part of the
/// answer, ready to copy.
#[derive(Debug)]
pub(crate) struct BrowseIndex {
    by_category: HashMap<&'static str, Vec<u32>>,
    by_tag: HashMap<&'static str, Vec<u32>>,
    /// Every exposed command's one-line summary, in exposed order.
    pub(crate) summaries: Vec<Box<str>>,
    /// The exposed categories' names, as JSON.
    pub(crate) available_categories: Value,
    /// The exposed tags, as JSON.
    pub(crate) available_tags: Value,
    /// Each exposed category with its count and description, as JSON.
    pub(crate) categories: Value,
}

impl BrowseIndex {
    fn build(registry: &Registry, exposed: &Exposed) -> BrowseIndex {
        let mut by_category: HashMap<&'static str, Vec<u32>> = HashMap::new();
        let mut by_tag: HashMap<&'static str, Vec<u32>> = HashMap::new();
        let mut summaries = Vec::with_capacity(exposed.len());
        for (position, entry) in exposed.entries(registry).enumerate() {
            let position = position as u32;
            by_category
                .entry(entry.category())
                .or_default()
                .push(position);
            for tag in entry.tags() {
                let list = by_tag.entry(tag).or_default();
                // A tag written twice on one command counts once.
                if list.last() != Some(&position) {
                    list.push(position);
                }
            }
            summaries.push(summary(entry.description()).into_boxed_str());
        }
        let categories = exposed.categories();
        BrowseIndex {
            by_category,
            by_tag,
            summaries,
            available_categories: categories.iter().map(|(name, _)| json!(name)).collect(),
            available_tags: exposed.tags().iter().map(|tag| json!(tag)).collect(),
            categories: categories
                .iter()
                .map(|(name, count)| {
                    let mut info = json!({"name": name, "count": count});
                    if let Some(description) = registry.category_description(name) {
                        info["description"] = json!(description);
                    }
                    info
                })
                .collect(),
        }
    }

    /// Positions of the commands in `category` (if given) carrying `tags` (combined by
    /// `mode`), in catalog order; `None` when nothing is filtered.
    pub(crate) fn filter(
        &self,
        category: Option<&str>,
        tags: &[&str],
        mode: TagMode,
    ) -> Option<Vec<u32>> {
        let tagged = match (tags, mode) {
            ([], _) => None,
            ([tag], _) => Some(self.tagged(tag).to_vec()),
            (tags, TagMode::Any) => {
                let mut union: Vec<u32> = tags
                    .iter()
                    .flat_map(|tag| self.tagged(tag))
                    .copied()
                    .collect();
                union.sort_unstable();
                union.dedup();
                Some(union)
            }
            (tags, TagMode::All) => {
                let mut lists: Vec<&[u32]> = tags.iter().map(|tag| self.tagged(tag)).collect();
                lists.sort_by_key(|list| list.len());
                let (first, rest) = lists.split_first().expect("at least two tags");
                Some(
                    first
                        .iter()
                        .copied()
                        .filter(|position| {
                            rest.iter().all(|list| list.binary_search(position).is_ok())
                        })
                        .collect(),
                )
            }
        };
        let Some(category) = category else {
            return tagged;
        };
        let in_category = self
            .by_category
            .get(category)
            .map_or(&[][..], Vec::as_slice);
        Some(match tagged {
            None => in_category.to_vec(),
            Some(mut tagged) => {
                tagged.retain(|position| in_category.binary_search(position).is_ok());
                tagged
            }
        })
    }

    fn tagged(&self, tag: &str) -> &[u32] {
        self.by_tag.get(tag).map_or(&[][..], Vec::as_slice)
    }
}
