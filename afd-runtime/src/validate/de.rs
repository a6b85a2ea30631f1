//! Decoding a validated input into the handler's input type: [`deserialize_input`] and
//! the small `serde::Deserializer` behind it, [`InputDeserializer`], which remembers the
//! top-level field whose value did not fit so that the error can name it.

use serde::Deserializer;
use serde::de::{DeserializeOwned, Visitor};
use serde_json::Value;

use super::entries::{Entries, MapKeys, StructKeys};
use super::explain::{Violation, validation_failure};
use crate::error::CommandError;

/// Deserialises a command's input, naming the field whose value did not fit.
///
/// `null` is read as `{}`, so commands whose fields are all optional accept no input.
///
/// The input object is read by this module's own small deserializer, not through
/// `serde_path_to_error`: per input type, only the derive's `visit_map` and its field-name
/// visitor are compiled (compile cost per command, BENCHMARKS.md), while the fields'
/// values are decoded from plain `serde_json::Value`s by code shared between commands. So
/// a mismatch is reported at the top-level field whose value failed (`Field 'items'`,
/// pointer `/items`), not below it (`items[1]`): the JSON Schema validation that runs
/// before this reports exact pointers for anything the schema describes.
///
/// # Errors
///
/// `VALIDATION_ERROR` naming the field and what serde expected.
pub fn deserialize_input<T: DeserializeOwned>(
    command: &str,
    input: Value,
) -> Result<T, CommandError> {
    let mut failed = None;
    match T::deserialize(InputDeserializer::new(object_if_null(input), &mut failed)) {
        Ok(input) => Ok(input),
        Err(error) => Err(field_failure(command, failed, error)),
    }
}

/// `null` as `{}`; anything else as it is. (Apart from the generic function above so that
/// each input type does not get its own copy.)
#[inline(never)]
fn object_if_null(input: Value) -> Value {
    if input.is_null() {
        Value::Object(Default::default())
    } else {
        input
    }
}

/// The `VALIDATION_ERROR` for a deserialisation error, at the field `field` (`None`: the
/// input itself).
#[cold]
#[inline(never)]
fn field_failure(command: &str, field: Option<String>, error: serde_json::Error) -> CommandError {
    let (pointer, field) = match field {
        Some(key) => (format!("/{key}"), key),
        None => (String::new(), "input".to_owned()),
    };
    let violation = Violation {
        pointer,
        keyword: "type".to_owned(),
        message: format!("Field '{field}': {error}"),
    };
    validation_failure(command, &[violation])
}

/// A `serde::Deserializer` for a command's input, cheaper to compile per input type than
/// `serde_path_to_error` over a `serde_json::Value`.
///
/// - A struct (or a map, or anything read with `deserialize_any`) is read from a JSON
///   object with `visit_map` over its entries: keys as strings ([`StrDeserializer`]; for
///   anything but a struct, through serde_json's own key deserializer, so that integer and
///   boolean keys still parse), values with the plain
///   `serde_json::Value` deserializer. A struct is never read from an array (no
///   `visit_seq`): the schema of a struct requires an object, and the input has been
///   validated against it.
/// - The key of the entry whose key or value failed is written to `failed`, so the error
///   can name the field. Paths below that key are not tracked.
/// - `Option` and newtype structs see this deserializer again (as with serde_json);
///   everything else is forwarded to the `serde_json::Value`.
///
/// [`StrDeserializer`]: serde::de::value::StrDeserializer
pub(crate) struct InputDeserializer<'a> {
    input: Value,
    failed: &'a mut Option<String>,
}

impl<'a> InputDeserializer<'a> {
    /// A deserializer for `input` that writes the key of a failed entry to `failed`.
    pub(crate) fn new(input: Value, failed: &'a mut Option<String>) -> Self {
        InputDeserializer { input, failed }
    }
}

impl<'de> Deserializer<'de> for InputDeserializer<'_> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.input {
            Value::Object(object) => Entries::<MapKeys>::new(object, self.failed).visit(visitor),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        let entries = Entries::<StructKeys>::of(self.input, self.failed, &visitor)?;
        entries.visit(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        let entries = Entries::<MapKeys>::of(self.input, self.failed, &visitor)?;
        entries.visit(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.input {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_bool(visitor)
    }

    fn deserialize_i8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i8(visitor)
    }

    fn deserialize_i16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i16(visitor)
    }

    fn deserialize_i32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i32(visitor)
    }

    fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i64(visitor)
    }

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_i128(visitor)
    }

    fn deserialize_u8<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u8(visitor)
    }

    fn deserialize_u16<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u16(visitor)
    }

    fn deserialize_u32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u32(visitor)
    }

    fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u64(visitor)
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_u128(visitor)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_f32(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_f64(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_char(visitor)
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_str(visitor)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_string(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_bytes(visitor)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_byte_buf(visitor)
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_unit(visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_seq(visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.input.deserialize_enum(name, variants, visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_identifier(visitor)
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.input.deserialize_ignored_any(visitor)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::error::codes;

    #[test]
    fn deserialisation_errors_name_the_field() {
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Input {
            items: Vec<u8>,
        }
        // The path stops at the top-level field (JSON Schema validation, which runs first,
        // has the exact pointer).
        let err = deserialize_input::<Input>("x", json!({"items": [1, 300]})).unwrap_err();
        assert_eq!(
            err.message,
            "Invalid input for 'x': Field 'items': invalid value: integer `300`, expected u8"
        );
        assert_eq!(err.details.unwrap()["errors"][0]["path"], "/items");
    }

    /// What `deserialize_input` reported through `serde_path_to_error`: the message and
    /// the pointer.
    fn with_path_to_error<T: DeserializeOwned + std::fmt::Debug>(input: Value) -> (String, String) {
        let error = serde_path_to_error::deserialize::<_, T>(object_if_null(input)).unwrap_err();
        let path = error.path().to_string();
        let (pointer, field) = if path == "." {
            (String::new(), "input".to_owned())
        } else {
            (format!("/{path}"), path)
        };
        (
            format!("Invalid input for 'x': Field '{field}': {}", error.inner()),
            pointer,
        )
    }

    fn with_input_deserializer<T: DeserializeOwned + std::fmt::Debug>(
        input: Value,
    ) -> (String, String) {
        let err = deserialize_input::<T>("x", input).unwrap_err();
        assert_eq!(err.code, codes::VALIDATION_ERROR);
        let pointer = err.details.unwrap()["errors"][0]["path"]
            .as_str()
            .unwrap()
            .to_owned();
        (err.message, pointer)
    }

    #[test]
    fn top_level_errors_read_as_with_serde_path_to_error() {
        use std::collections::BTreeMap;

        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Input {
            user_id: String,
            limit: Option<u32>,
            #[serde(default)]
            tags: Vec<String>,
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Wrapper(Input);
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        #[serde(tag = "kind", rename_all = "lowercase")]
        enum Shape {
            Circle { radius: f64 },
            Square { side: f64 },
        }
        #[derive(serde::Deserialize, Debug)]
        #[allow(dead_code)]
        struct Flat {
            name: String,
            #[serde(flatten)]
            rest: BTreeMap<String, u8>,
        }

        let same = |a: (String, String), b: (String, String)| assert_eq!(a, b);
        for input in [
            json!({"userId": "u", "limit": -1}),
            json!({"userId": "u", "limit": "ten"}),
            json!({"userId": 5}),
            json!({"limit": 3}),
            json!({"userId": "u", "extra": 1}),
            json!({"userId": "u", "tags": "one"}),
            json!(null),
            json!(7),
        ] {
            same(
                with_input_deserializer::<Input>(input.clone()),
                with_path_to_error::<Input>(input.clone()),
            );
            same(
                with_input_deserializer::<Wrapper>(input.clone()),
                with_path_to_error::<Wrapper>(input),
            );
        }
        for input in [
            json!({"kind": "circle"}),
            json!({"kind": "hexagon"}),
            json!({}),
        ] {
            same(
                with_input_deserializer::<Shape>(input.clone()),
                with_path_to_error::<Shape>(input),
            );
        }
        same(
            with_input_deserializer::<BTreeMap<u32, u8>>(json!({"1": 300})),
            with_path_to_error::<BTreeMap<u32, u8>>(json!({"1": 300})),
        );
        // A key that does not parse is named (serde_path_to_error said `?`).
        assert_eq!(
            with_input_deserializer::<BTreeMap<u32, u8>>(json!({"1": 1, "x": 2})),
            (
                "Invalid input for 'x': Field 'x': invalid value: expected key to be a number in quotes"
                    .to_owned(),
                "/x".to_owned()
            )
        );
        same(
            with_input_deserializer::<Flat>(json!({"name": "n", "a": 300})),
            with_path_to_error::<Flat>(json!({"name": "n", "a": 300})),
        );
    }

    #[test]
    fn inputs_decode_as_from_a_value() {
        use std::collections::BTreeMap;

        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Input {
            name: String,
            #[serde(default)]
            limit: Option<u32>,
        }
        #[derive(serde::Deserialize, Debug, PartialEq)]
        #[serde(untagged)]
        enum Either {
            Named { name: String },
            Id { id: u32 },
        }
        assert_eq!(
            deserialize_input::<Input>("x", json!({"name": "a", "limit": 2, "other": true}))
                .unwrap(),
            Input {
                name: "a".into(),
                limit: Some(2)
            }
        );
        assert_eq!(
            deserialize_input::<Option<Input>>("x", json!({"name": "a"})).unwrap(),
            Some(Input {
                name: "a".into(),
                limit: None
            })
        );
        assert_eq!(
            deserialize_input::<Either>("x", json!({"id": 3})).unwrap(),
            Either::Id { id: 3 }
        );
        assert_eq!(
            deserialize_input::<BTreeMap<u32, bool>>("x", json!({"1": true})).unwrap(),
            BTreeMap::from([(1, true)])
        );
        assert_eq!(
            deserialize_input::<BTreeMap<String, u8>>("x", Value::Null).unwrap(),
            BTreeMap::new()
        );
        assert_eq!(
            deserialize_input::<Value>("x", json!({"a": [1]})).unwrap(),
            json!({"a": [1]})
        );
    }
}
