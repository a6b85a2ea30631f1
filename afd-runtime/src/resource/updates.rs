//! Subscriptions to resources and the news that one changed: a surface subscribes a client
//! (an MCP session) to a URI with a way to tell it; the app says `updated(uri)`, and every
//! client subscribed to that URI, and no other, is told.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Tells one subscriber that the resource at a URI changed.
type Notify = Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// Who subscribed: one per client connection, from [`SubscriberId::next`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SubscriberId(u64);

impl SubscriberId {
    /// A subscriber id not given out before in this process.
    pub fn next() -> SubscriberId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        SubscriberId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// The subscriptions of every client, by URI. Cheap to clone: clones share them.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use std::sync::{Arc, Mutex};
/// use afd_runtime::resource::{ResourceUpdates, SubscriberId};
///
/// let updates = ResourceUpdates::default();
/// let told = Arc::new(Mutex::new(Vec::new()));
/// let client = SubscriberId::next();
/// let log = told.clone();
/// updates.subscribe(client, "test://watched", move |uri| {
///     let log = log.clone();
///     async move { log.lock().unwrap().push(uri) }
/// });
/// assert_eq!(updates.updated("test://watched").await, 1);
/// assert_eq!(updates.updated("test://other").await, 0);
/// updates.unsubscribe(client, "test://watched");
/// assert_eq!(updates.updated("test://watched").await, 0);
/// assert_eq!(*told.lock().unwrap(), ["test://watched"]);
/// # });
/// ```
#[derive(Clone, Default)]
pub struct ResourceUpdates {
    by_uri: Arc<Mutex<BTreeMap<String, BTreeMap<SubscriberId, Notify>>>>,
}

impl fmt::Debug for ResourceUpdates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let by_uri = self.lock();
        f.debug_map()
            .entries(
                by_uri
                    .iter()
                    .map(|(uri, subscribers)| (uri, subscribers.len())),
            )
            .finish()
    }
}

impl ResourceUpdates {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, BTreeMap<SubscriberId, Notify>>> {
        // The map stays consistent whatever panicked while it was held: each change is
        // one insert or remove.
        self.by_uri
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Subscribes `subscriber` to `uri`: `notify(uri)` runs at each [`updated`](Self::updated)
    /// of it. Subscribing again replaces the earlier `notify`.
    pub fn subscribe<F, Fut>(&self, subscriber: SubscriberId, uri: impl Into<String>, notify: F)
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let notify: Notify = Arc::new(move |uri| Box::pin(notify(uri)));
        self.lock()
            .entry(uri.into())
            .or_default()
            .insert(subscriber, notify);
    }

    /// Ends `subscriber`'s subscription to `uri`; whether it had one.
    pub fn unsubscribe(&self, subscriber: SubscriberId, uri: &str) -> bool {
        let mut by_uri = self.lock();
        let Some(subscribers) = by_uri.get_mut(uri) else {
            return false;
        };
        let had = subscribers.remove(&subscriber).is_some();
        if subscribers.is_empty() {
            by_uri.remove(uri);
        }
        had
    }

    /// Ends every subscription of `subscriber` (its client went away).
    pub fn forget(&self, subscriber: SubscriberId) {
        self.lock().retain(|_, subscribers| {
            subscribers.remove(&subscriber);
            !subscribers.is_empty()
        });
    }

    /// How many subscribers `uri` has.
    pub fn subscribers(&self, uri: &str) -> usize {
        self.lock().get(uri).map_or(0, BTreeMap::len)
    }

    /// Tells every subscriber of `uri` that it changed, and waits until each was told;
    /// how many were.
    pub async fn updated(&self, uri: &str) -> usize {
        let notify: Vec<Notify> = self
            .lock()
            .get(uri)
            .map(|subscribers| subscribers.values().cloned().collect())
            .unwrap_or_default();
        futures_util::future::join_all(notify.iter().map(|notify| notify(uri.to_owned()))).await;
        notify.len()
    }
}
