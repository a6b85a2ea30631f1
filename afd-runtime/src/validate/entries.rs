//! The entries of an input object as a serde `MapAccess`, for [`InputDeserializer`]:
//! struct field names and map keys read the way serde_json reads them, and the key of the
//! entry that failed written down for the error.
//!
//! [`InputDeserializer`]: super::de::InputDeserializer

use std::marker::PhantomData;

use serde::Deserializer;
use serde::de::value::StrDeserializer;
use serde::de::{DeserializeSeed, Expected, IgnoredAny, MapAccess, Unexpected, Visitor};
use serde_json::{Map, Value};

/// How [`Entries`] reads keys: as plain strings for a struct's field names, or as
/// serde_json reads a map's keys (numbers and booleans in quotes too).
pub(super) trait KeyMode {
    fn key<'de, S: DeserializeSeed<'de>>(key: &str, seed: S)
    -> Result<S::Value, serde_json::Error>;
}

/// A struct's field names: strings.
pub(super) enum StructKeys {}

impl KeyMode for StructKeys {
    fn key<'de, S: DeserializeSeed<'de>>(
        key: &str,
        seed: S,
    ) -> Result<S::Value, serde_json::Error> {
        seed.deserialize(StrDeserializer::new(key))
    }
}

/// A map's keys, through serde_json's map-key deserializer (reached through a one-entry
/// map, since it is not public).
pub(super) enum MapKeys {}

impl KeyMode for MapKeys {
    fn key<'de, S: DeserializeSeed<'de>>(
        key: &str,
        seed: S,
    ) -> Result<S::Value, serde_json::Error> {
        struct FirstKey<S>(S);

        impl<'de, S: DeserializeSeed<'de>> Visitor<'de> for FirstKey<S> {
            type Value = S::Value;

            fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                formatter.write_str("a map key")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<S::Value, A::Error> {
                match map.next_key_seed(self.0)? {
                    Some(key) => {
                        map.next_value::<IgnoredAny>()?;
                        Ok(key)
                    }
                    None => Err(serde::de::Error::custom("a map key is missing")),
                }
            }
        }

        let mut single = Map::new();
        single.insert(key.to_owned(), Value::Null);
        single.deserialize_any(FirstKey(seed))
    }
}

/// The entries of an input object, remembering the key of the one that failed.
///
/// Everything that does not depend on the visitor or the seed is in non-generic
/// `#[inline(never)]` methods, so that the code per input type stays small.
pub(super) struct Entries<'a, K> {
    len: usize,
    iter: serde_json::map::IntoIter,
    /// The key of the entry being read.
    key: Option<String>,
    /// Its value, until `next_value_seed` takes it.
    value: Option<Value>,
    failed: &'a mut Option<String>,
    keys: PhantomData<K>,
}

impl<'a, K: KeyMode> Entries<'a, K> {
    /// The entries of `object`.
    #[inline(never)]
    pub(super) fn new(object: Map<String, Value>, failed: &'a mut Option<String>) -> Self {
        Entries {
            len: object.len(),
            iter: object.into_iter(),
            key: None,
            value: None,
            failed,
            keys: PhantomData,
        }
    }

    /// The entries of `input`, or the error for a non-object where `expected` was wanted.
    #[inline(never)]
    pub(super) fn of(
        input: Value,
        failed: &'a mut Option<String>,
        expected: &dyn Expected,
    ) -> Result<Self, serde_json::Error> {
        match input {
            Value::Object(object) => Ok(Entries::new(object, failed)),
            other => Err(invalid_type(&other, expected)),
        }
    }

    /// `visitor.visit_map` over the entries, then serde_json's check that all were read.
    pub(super) fn visit<'de, V: Visitor<'de>>(
        mut self,
        visitor: V,
    ) -> Result<V::Value, serde_json::Error> {
        let value = visitor.visit_map(&mut self)?;
        self.finish()?;
        Ok(value)
    }

    /// serde_json's check after `visit_map`: every entry was read.
    #[inline(never)]
    fn finish(self) -> Result<(), serde_json::Error> {
        check_consumed(self.len, self.iter.len())
    }

    /// The next entry's key (its value kept for `next_value_seed`), if any.
    #[inline(never)]
    fn advance(&mut self) -> Option<&str> {
        let (key, value) = self.iter.next()?;
        self.value = Some(value);
        Some(self.key.insert(key))
    }

    /// The current entry's value (its key stays, for [`Entries::fail_key`]).
    #[inline(never)]
    fn take_value(&mut self) -> Result<Value, serde_json::Error> {
        self.value.take().ok_or_else(value_missing)
    }

    /// `error`, after noting that the current entry's key or value failed.
    #[cold]
    #[inline(never)]
    fn fail_key(&mut self, error: serde_json::Error) -> serde_json::Error {
        if let Some(key) = self.key.take() {
            *self.failed = Some(key);
        }
        error
    }
}

impl<'de, K: KeyMode> MapAccess<'de> for Entries<'_, K> {
    type Error = serde_json::Error;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Self::Error> {
        let Some(key) = self.advance() else {
            return Ok(None);
        };
        match K::key(key, seed) {
            Ok(field) => Ok(Some(field)),
            Err(error) => Err(self.fail_key(error)),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        let value = self.take_value()?;
        match seed.deserialize(value) {
            Ok(value) => Ok(value),
            Err(error) => Err(self.fail_key(error)),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        match self.iter.size_hint() {
            (lower, Some(upper)) if lower == upper => Some(upper),
            _ => None,
        }
    }
}

/// serde_json's error for `next_value` before `next_key`.
#[cold]
#[inline(never)]
fn value_missing() -> serde_json::Error {
    serde::de::Error::custom("value is missing")
}

/// serde_json's check after `visit_map`: every entry was read.
#[inline(never)]
fn check_consumed(len: usize, remaining: usize) -> Result<(), serde_json::Error> {
    if remaining == 0 {
        Ok(())
    } else {
        Err(serde::de::Error::invalid_length(
            len,
            &"fewer elements in map",
        ))
    }
}

/// What serde expected, for an error about `value` (serde_json's `Value::unexpected`).
fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => {
            if let Some(n) = n.as_u64() {
                Unexpected::Unsigned(n)
            } else if let Some(n) = n.as_i64() {
                Unexpected::Signed(n)
            } else {
                Unexpected::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

/// The error for `value` where `expected` was wanted.
#[cold]
#[inline(never)]
pub(super) fn invalid_type(value: &Value, expected: &dyn Expected) -> serde_json::Error {
    serde::de::Error::invalid_type(unexpected(value), expected)
}
