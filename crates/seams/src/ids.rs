//! Generated ids that a replay repeats: derived from the session, not random.

use std::sync::atomic::{AtomicU64, Ordering};

/// A UUID-shaped id (version 8, RFC 9562's custom layout) derived from `key`
/// by a fixed 128-bit FNV-1a hash: the same key gives the same id in every
/// run and every build. Not a secret and not collision-proof against an
/// adversary; it only has to tell a session's own records apart.
pub fn derived_id(key: &str) -> String {
    const OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let mut hash = OFFSET;
    for byte in key.bytes() {
        hash ^= u128::from(byte);
        hash = hash.wrapping_mul(PRIME);
    }
    // FNV's low bits mix poorly for short keys that differ at the end: fold
    // the high half in before shaping.
    hash ^= hash >> 64;
    hash = hash.wrapping_mul(PRIME);
    let mut bytes = hash.to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// The ids of one session's records (tool executions, hook runs,
/// subagents), in the order they are asked for: `derived_id` of the session
/// id, the log's length when the session (or its resume) opened, and a
/// counter. So two runs of one fixture with one session id repeat them, and a
/// resume, which opens on a longer log, never reuses an earlier run's.
#[derive(Debug)]
pub struct IdSource {
    prefix: String,
    next: AtomicU64,
}

impl IdSource {
    /// Ids for `session_id`, whose log held `opened_at` events on opening.
    pub fn new(session_id: &str, opened_at: u64) -> Self {
        IdSource {
            prefix: format!("{session_id}:{opened_at}:"),
            next: AtomicU64::new(0),
        }
    }

    /// The next id.
    pub fn next_id(&self) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        derived_id(&format!("{}{n}", self.prefix))
    }
}

/// A random UUID (v4): for sinks outside a session, where nothing is replayed.
pub fn random_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn derived_ids_repeat_per_key_and_differ_between_keys() {
        assert_eq!(derived_id("s:0:1"), derived_id("s:0:1"));
        let ids: std::collections::HashSet<String> = (0..10_000)
            .map(|n| derived_id(&format!("s:0:{n}")))
            .collect();
        assert_eq!(ids.len(), 10_000);
        let id = derived_id("x");
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
        assert_eq!(id.len(), 36);
    }

    #[test]
    fn a_source_repeats_its_sequence_and_a_resume_starts_another() {
        let first = IdSource::new("sess", 1);
        let again = IdSource::new("sess", 1);
        let a: Vec<String> = (0..5).map(|_| first.next_id()).collect();
        let b: Vec<String> = (0..5).map(|_| again.next_id()).collect();
        assert_eq!(a, b);
        let resumed = IdSource::new("sess", 40);
        let c: Vec<String> = (0..5).map(|_| resumed.next_id()).collect();
        assert!(c.iter().all(|id| !a.contains(id)));
        let other = IdSource::new("other", 1);
        assert_ne!(other.next_id(), a[0]);
    }
}
