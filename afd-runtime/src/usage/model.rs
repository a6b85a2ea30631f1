//! The in-memory model of usage statistics, and the deltas the store writers persist.

use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{AccessCounts, AccessLevel, CommandStats, Suggestion, SuggestionSource};

/// Calls of a session kept for session-level transitions.
const HISTORY_CAP: usize = 256;
/// Distinct commands of a session tracked for co-occurrence; later ones are not paired.
const SEEN_CAP: usize = 128;

/// Milliseconds since the Unix epoch (0 before it, saturating far after it).
pub(super) fn to_millis(at: SystemTime) -> i64 {
    at.duration_since(UNIX_EPOCH)
        .map(|since| i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The inverse of [`to_millis`]; negative values clamp to the epoch.
#[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
pub(super) fn from_millis(ms: i64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// What changed since the last write: added to the stored counts by the writer.
#[derive(Debug, Default)]
pub(super) struct Delta {
    /// Per command: (calls, successes, latest use in ms, sessions it was first used in).
    pub(super) commands: HashMap<String, (u64, u64, i64, u64)>,
    /// (command, level) -> views.
    pub(super) accesses: HashMap<(String, AccessLevel), u64>,
    /// (from, to) -> count.
    pub(super) transitions: HashMap<(String, String), u64>,
    /// (a, b) with a < b -> sessions in which both were used.
    pub(super) co_occurrence: HashMap<(String, String), u64>,
}

impl Delta {
    #[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
    pub(super) fn is_empty(&self) -> bool {
        self.commands.is_empty()
            && self.transitions.is_empty()
            && self.co_occurrence.is_empty()
            && self.accesses.is_empty()
    }

    fn command(&mut self, command: &str, success: bool, at_ms: i64) {
        let entry = self.entry(command);
        entry.0 += 1;
        entry.1 += u64::from(success);
        entry.2 = entry.2.max(at_ms);
    }

    fn new_session(&mut self, command: &str) {
        self.entry(command).3 += 1;
    }

    fn entry(&mut self, command: &str) -> &mut (u64, u64, i64, u64) {
        if !self.commands.contains_key(command) {
            self.commands.insert(command.to_owned(), (0, 0, 0, 0));
        }
        self.commands.get_mut(command).expect("just inserted")
    }

    /// Adds `other` into `self` (used to put back a batch whose write failed).
    #[cfg(feature = "usage-sqlite")]
    pub(super) fn merge(&mut self, other: Delta) {
        for (command, (calls, successes, last, sessions)) in other.commands {
            let entry = self.commands.entry(command).or_default();
            entry.0 += calls;
            entry.1 += successes;
            entry.2 = entry.2.max(last);
            entry.3 += sessions;
        }
        for (key, count) in other.accesses {
            *self.accesses.entry(key).or_default() += count;
        }
        for (pair, count) in other.transitions {
            *self.transitions.entry(pair).or_default() += count;
        }
        for (pair, count) in other.co_occurrence {
            *self.co_occurrence.entry(pair).or_default() += count;
        }
    }
}

/// Everything a store holds, loaded at start-up.
#[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
#[derive(Debug, Default)]
pub(super) struct Snapshot {
    pub(super) commands: Vec<(String, CommandStats)>,
    pub(super) transitions: Vec<(String, String, u64)>,
    pub(super) co_occurrence: Vec<(String, String, u64)>,
    pub(super) accesses: Vec<(String, AccessLevel, u64)>,
}

/// How the model bounds and splits sessions.
#[derive(Debug, Clone, Copy)]
pub(super) struct Limits {
    pub(super) max_sessions: usize,
    pub(super) session_gap: Option<Duration>,
}

/// The live state of one session (never persisted).
#[derive(Debug)]
struct Session {
    last_at: SystemTime,
    touched: u64,
    history: VecDeque<String>,
    seen: HashSet<String>,
}

/// The statistics, updated under a short lock on every call.
#[derive(Debug)]
pub(super) struct Model {
    limits: Limits,
    commands: HashMap<String, CommandStats>,
    transitions: HashMap<String, HashMap<String, u64>>,
    co_occurrence: HashMap<String, HashMap<String, u64>>,
    accesses: HashMap<String, AccessCounts>,
    max_calls: u64,
    sessions: HashMap<String, Session>,
    clock: u64,
}

fn bump(map: &mut HashMap<String, HashMap<String, u64>>, from: &str, to: &str) {
    let inner = match map.get_mut(from) {
        Some(inner) => inner,
        None => map.entry(from.to_owned()).or_default(),
    };
    match inner.get_mut(to) {
        Some(count) => *count += 1,
        None => {
            inner.insert(to.to_owned(), 1);
        }
    }
}

/// Followers sorted by count (descending), then name, as suggestions.
fn ranked(
    counts: Vec<(&str, u64)>,
    source: SuggestionSource,
    reason: impl Fn(&str, u64, u64) -> String,
) -> Vec<Suggestion> {
    let total: u64 = counts.iter().map(|(_, count)| count).sum();
    let mut counts = counts;
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    counts
        .into_iter()
        .filter(|(_, count)| *count > 0)
        .map(|(command, count)| Suggestion {
            command: command.to_owned(),
            probability: (count as f64 / total as f64) as f32,
            count,
            source,
            reason: reason(command, count, total),
        })
        .collect()
}

impl Model {
    pub(super) fn new(limits: Limits) -> Self {
        Model {
            limits,
            commands: HashMap::new(),
            transitions: HashMap::new(),
            co_occurrence: HashMap::new(),
            accesses: HashMap::new(),
            max_calls: 0,
            sessions: HashMap::new(),
            clock: 0,
        }
    }

    /// Loads what a store held.
    #[cfg(any(feature = "usage-sqlite", feature = "postgres"))]
    pub(super) fn load(&mut self, snapshot: Snapshot) {
        for (command, stats) in snapshot.commands {
            self.max_calls = self.max_calls.max(stats.calls);
            self.commands.insert(command, stats);
        }
        for (from, to, count) in snapshot.transitions {
            self.transitions.entry(from).or_default().insert(to, count);
        }
        for (a, b, count) in snapshot.co_occurrence {
            *self
                .co_occurrence
                .entry(a.clone())
                .or_default()
                .entry(b.clone())
                .or_default() += count;
            *self
                .co_occurrence
                .entry(b)
                .or_default()
                .entry(a)
                .or_default() += count;
        }
        for (command, level, count) in snapshot.accesses {
            self.accesses.entry(command).or_default().add(level, count);
        }
    }

    /// Replaces the counts, transitions, co-occurrences and views by what a shared store
    /// holds (every replica's writes), plus `pending`, recorded here and not yet written.
    /// Live sessions are kept.
    #[cfg(feature = "postgres")]
    pub(super) fn replace(&mut self, snapshot: Snapshot, pending: &Delta) {
        self.commands.clear();
        self.transitions.clear();
        self.co_occurrence.clear();
        self.accesses.clear();
        self.max_calls = 0;
        self.load(snapshot);
        for (command, (calls, successes, last, sessions)) in &pending.commands {
            let stats = self.commands.entry(command.clone()).or_default();
            stats.calls += calls;
            stats.successes += successes;
            stats.sessions += sessions;
            if *last > 0 {
                let at = from_millis(*last);
                stats.last_used = Some(stats.last_used.map_or(at, |seen| seen.max(at)));
            }
            self.max_calls = self.max_calls.max(stats.calls);
        }
        for ((command, level), count) in &pending.accesses {
            self.accesses
                .entry(command.clone())
                .or_default()
                .add(*level, *count);
        }
        for ((from, to), count) in &pending.transitions {
            *self
                .transitions
                .entry(from.clone())
                .or_default()
                .entry(to.clone())
                .or_default() += count;
        }
        for ((a, b), count) in &pending.co_occurrence {
            for (x, y) in [(a, b), (b, a)] {
                *self
                    .co_occurrence
                    .entry(x.clone())
                    .or_default()
                    .entry(y.clone())
                    .or_default() += count;
            }
        }
    }

    /// Records views of `commands` at `level`.
    pub(super) fn record_access(
        &mut self,
        commands: &[&str],
        level: AccessLevel,
        mut delta: Option<&mut Delta>,
    ) {
        for &command in commands {
            match self.accesses.get_mut(command) {
                Some(counts) => counts.add(level, 1),
                None => {
                    let mut counts = AccessCounts::default();
                    counts.add(level, 1);
                    self.accesses.insert(command.to_owned(), counts);
                }
            }
            if let Some(delta) = delta.as_deref_mut() {
                *delta
                    .accesses
                    .entry((command.to_owned(), level))
                    .or_default() += 1;
            }
        }
    }

    pub(super) fn accesses(&self, command: &str) -> AccessCounts {
        self.accesses.get(command).copied().unwrap_or_default()
    }

    /// Records one call; `delta`, when persisting, collects what changed.
    pub(super) fn record(
        &mut self,
        session: &str,
        command: &str,
        at: SystemTime,
        success: bool,
        mut delta: Option<&mut Delta>,
    ) {
        let at_ms = to_millis(at);
        let stats = match self.commands.get_mut(command) {
            Some(stats) => stats,
            None => self.commands.entry(command.to_owned()).or_default(),
        };
        stats.calls += 1;
        stats.successes += u64::from(success);
        stats.last_used = Some(stats.last_used.map_or(at, |last| last.max(at)));
        self.max_calls = self.max_calls.max(stats.calls);
        if let Some(delta) = delta.as_deref_mut() {
            delta.command(command, success, at_ms);
        }

        // A call outside any session counts, but leads nowhere: without a session there is
        // no "next" to learn.
        if session.is_empty() {
            return;
        }
        self.clock += 1;
        let touched = self.clock;
        if !self.sessions.contains_key(session) {
            self.evict_for_new_session();
            self.sessions.insert(
                session.to_owned(),
                Session {
                    last_at: at,
                    touched,
                    history: VecDeque::new(),
                    seen: HashSet::new(),
                },
            );
        }
        let Some(state) = self.sessions.get_mut(session) else {
            return;
        };
        let gap = at.duration_since(state.last_at).unwrap_or(Duration::ZERO);
        if self.limits.session_gap.is_some_and(|limit| gap > limit) {
            // A new stretch of work: nothing before it leads to this call.
            state.history.clear();
            state.seen.clear();
        }
        state.last_at = state.last_at.max(at);
        state.touched = touched;

        if let Some(previous) = state.history.back() {
            bump(&mut self.transitions, previous, command);
            if let Some(delta) = delta.as_deref_mut() {
                *delta
                    .transitions
                    .entry((previous.clone(), command.to_owned()))
                    .or_default() += 1;
            }
        }
        if !state.seen.contains(command) && state.seen.len() < SEEN_CAP {
            for other in &state.seen {
                bump(&mut self.co_occurrence, other, command);
                bump(&mut self.co_occurrence, command, other);
                if let Some(delta) = delta.as_deref_mut() {
                    let pair = if other.as_str() < command {
                        (other.clone(), command.to_owned())
                    } else {
                        (command.to_owned(), other.clone())
                    };
                    *delta.co_occurrence.entry(pair).or_default() += 1;
                }
            }
            state.seen.insert(command.to_owned());
            if let Some(stats) = self.commands.get_mut(command) {
                stats.sessions += 1;
            }
            if let Some(delta) = delta {
                delta.new_session(command);
            }
        }
        if state.history.len() == HISTORY_CAP {
            state.history.pop_front();
        }
        state.history.push_back(command.to_owned());
    }

    /// Makes room for one more session by dropping the least recently used ones.
    fn evict_for_new_session(&mut self) {
        while self.limits.max_sessions > 0 && self.sessions.len() >= self.limits.max_sessions {
            let oldest = self
                .sessions
                .iter()
                .min_by_key(|(_, state)| state.touched)
                .map(|(name, _)| name.clone());
            match oldest {
                Some(name) => {
                    self.sessions.remove(&name);
                }
                None => break,
            }
        }
    }

    pub(super) fn last_command(&self, session: &str) -> Option<&str> {
        self.sessions
            .get(session)
            .and_then(|state| state.history.back())
            .map(String::as_str)
    }

    pub(super) fn suggested_next(&self, session: &str, limit: usize) -> Vec<Suggestion> {
        let Some(state) = self.sessions.get(session) else {
            return Vec::new();
        };
        let Some(last) = state.history.back() else {
            return Vec::new();
        };
        let mut local: HashMap<&str, u64> = HashMap::new();
        for (from, to) in state.history.iter().zip(state.history.iter().skip(1)) {
            if from == last {
                *local.entry(to.as_str()).or_default() += 1;
            }
        }
        let mut suggestions = ranked(
            local.into_iter().collect(),
            SuggestionSource::Session,
            |_, count, total| format!("followed '{last}' {count} of {total} times in this session"),
        );
        if suggestions.len() < limit {
            let global = self.next_after(last, limit + suggestions.len());
            for suggestion in global {
                if suggestions.len() >= limit {
                    break;
                }
                if !suggestions.iter().any(|s| s.command == suggestion.command) {
                    suggestions.push(suggestion);
                }
            }
        }
        suggestions.truncate(limit);
        suggestions
    }

    pub(super) fn next_after(&self, command: &str, limit: usize) -> Vec<Suggestion> {
        let Some(followers) = self.transitions.get(command) else {
            return Vec::new();
        };
        let mut suggestions = ranked(
            followers
                .iter()
                .map(|(to, count)| (to.as_str(), *count))
                .collect(),
            SuggestionSource::Global,
            |_, count, total| {
                format!("followed '{command}' in {count} of {total} recorded transitions")
            },
        );
        suggestions.truncate(limit);
        suggestions
    }

    pub(super) fn related(&self, command: &str, limit: usize) -> Vec<Suggestion> {
        let Some(partners) = self.co_occurrence.get(command) else {
            return Vec::new();
        };
        // The rate is a share of the sessions that used `command` (at least the largest
        // shared count: stores written before sessions were counted have none).
        let max_shared = partners.values().copied().max().unwrap_or(0);
        let sessions = self
            .commands
            .get(command)
            .map_or(0, |stats| stats.sessions)
            .max(max_shared);
        let mut suggestions = ranked(
            partners
                .iter()
                .map(|(other, count)| (other.as_str(), *count))
                .collect(),
            SuggestionSource::CoOccurrence,
            |_, count, _| format!("used in {count} of {sessions} sessions that used '{command}'"),
        );
        for suggestion in &mut suggestions {
            suggestion.probability = (suggestion.count as f64 / sessions.max(1) as f64) as f32;
        }
        suggestions.truncate(limit);
        suggestions
    }

    pub(super) fn popularity(&self, command: &str) -> f32 {
        let calls = self.commands.get(command).map_or(0, |stats| stats.calls);
        if calls == 0 || self.max_calls == 0 {
            return 0.0;
        }
        ((calls as f64).ln_1p() / (self.max_calls as f64).ln_1p()) as f32
    }

    pub(super) fn stats(&self, command: &str) -> Option<CommandStats> {
        self.commands.get(command).cloned()
    }

    pub(super) fn most_used(&self, limit: usize) -> Vec<(String, CommandStats)> {
        let mut all: Vec<(&String, &CommandStats)> = self.commands.iter().collect();
        all.sort_by(|a, b| b.1.calls.cmp(&a.1.calls).then_with(|| a.0.cmp(b.0)));
        all.into_iter()
            .take(limit)
            .map(|(name, stats)| (name.clone(), stats.clone()))
            .collect()
    }

    pub(super) fn forget_session(&mut self, session: &str) -> bool {
        self.sessions.remove(session).is_some()
    }

    pub(super) fn session_count(&self) -> usize {
        self.sessions.len()
    }
}
