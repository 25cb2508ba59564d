//! Reading a value as an object when it is one, and as a default of its
//! own when it is anything else, without failing the document around it:
//! the lenient readers of tool schemas and MCP configuration share it.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A value read as an object when it is one, and as its [`FromMap::other`]
/// (or [`FromMap::null`]) when it is anything else, without failing the
/// document around it.
pub trait FromMap: Sized {
    /// What the value is, for serde's messages.
    const EXPECTING: &'static str;
    /// Reads the object, to its end.
    fn from_map<'de, A: MapAccess<'de>>(map: A) -> Result<Self, A::Error>;
    /// What anything but an object or `null` reads as.
    fn other() -> Self;
    /// What `null` reads as.
    fn null() -> Self {
        Self::other()
    }
}

/// The visitor of a [`FromMap`] value (`deserialize_any`).
pub struct MapOr<T>(pub PhantomData<T>);

impl<'de, T: FromMap> Visitor<'de> for MapOr<T> {
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(T::EXPECTING)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::from_map(map)
    }

    fn visit_unit<E: de::Error>(self) -> Result<T, E> {
        Ok(T::null())
    }

    fn visit_none<E: de::Error>(self) -> Result<T, E> {
        Ok(T::null())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<T, E> {
        Ok(T::other())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<T, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(T::other())
    }
}
