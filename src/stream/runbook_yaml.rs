//! A runbook's YAML as a [`Value`] tree, with every number kept. serde_norway's own `Value`
//! refuses an integer beyond 64 bits with the whole document (`invalid type: integer ... as
//! u128, expected any YAML value`), which names no entry, step or key; here such an integer
//! becomes [`BIG`]-tagged digits, so the reader refuses it where it stands, with its range.

use serde::de::{self, Deserialize, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess};
use serde_norway::value::{Tag, TaggedValue};
use serde_norway::{Mapping, Value};
use std::fmt;

/// The tag of an integer beyond 64 bits (its value: the digits as written).
const BIG: &str = "annbench-integer-beyond-64-bits";

/// A number as the reader sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Num {
    /// A YAML integer, however large (beyond 128 bits YAML reads it as a float; beyond i128,
    /// saturated).
    Int(i128),
    Float(f64),
}

/// The number `v` holds, if it is one.
pub(super) fn number(v: &Value) -> Option<Num> {
    match v {
        Value::Number(n) => n
            .as_u64()
            .map(|u| Num::Int(u.into()))
            .or_else(|| n.as_i64().map(|i| Num::Int(i.into())))
            .or_else(|| n.as_f64().map(Num::Float)),
        Value::Tagged(t) if t.tag == Tag::new(BIG) => match &t.value {
            // Beyond i128 (up to u128::MAX) it is out of every range all the same.
            Value::String(digits) => Some(Num::Int(digits.parse().unwrap_or(
                if digits.starts_with('-') {
                    i128::MIN
                } else {
                    i128::MAX
                },
            ))),
            _ => None,
        },
        _ => None,
    }
}

/// A scalar as it would be written (strings bare, numbers as digits, however large).
pub(super) fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        Value::Tagged(t) if t.tag == Tag::new(BIG) => scalar_text(&t.value),
        other => format!("{other:?}"),
    }
}

/// Parse `text` (one YAML document). Duplicate keys are refused, as serde_norway's `Value`
/// refuses them.
pub(super) fn parse(text: &str) -> Result<Value, serde_norway::Error> {
    serde_norway::from_str::<Lenient>(text).map(|l| l.0)
}

struct Lenient(Value);

impl<'de> Deserialize<'de> for Lenient {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LenientVisitor).map(Lenient)
    }
}

struct LenientVisitor;

fn big(digits: String) -> Value {
    Value::Tagged(Box::new(TaggedValue {
        tag: Tag::new(BIG),
        value: Value::String(digits),
    }))
}

impl<'de> de::Visitor<'de> for LenientVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Number(i.into()))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(Value::Number(u.into()))
    }

    fn visit_i128<E>(self, i: i128) -> Result<Value, E> {
        Ok(big(i.to_string()))
    }

    fn visit_u128<E>(self, u: u128) -> Result<Value, E> {
        Ok(big(u.to_string()))
    }

    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Number(f.into()))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Lenient::deserialize(d).map(|l| l.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Lenient(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Sequence(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut m = Mapping::new();
        while let Some(Lenient(k)) = map.next_key()? {
            if m.contains_key(&k) {
                return Err(de::Error::custom(format!(
                    "the key '{}' is given twice in one mapping (keep one)",
                    scalar_text(&k)
                )));
            }
            let Lenient(v) = map.next_value()?;
            m.insert(k, v);
        }
        Ok(Value::Mapping(m))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        let (tag, contents): (String, _) = data.variant()?;
        if tag.is_empty() {
            return Err(de::Error::custom("an empty YAML tag"));
        }
        let Lenient(value) = contents.newtype_variant()?;
        Ok(Value::Tagged(Box::new(TaggedValue {
            tag: Tag::new(tag),
            value,
        })))
    }
}
