//! The ids the mock mints (tasks, contexts, messages, push configs): random v4 UUIDs drawn from a
//! generator per thread that the OS seeds once. Asking the OS for each id cost a system call,
//! three per SendMessage. Not for secrets: a caller's tasks are kept from others by ownership,
//! not by the difficulty of guessing their ids.

use std::cell::Cell;

thread_local! {
    static STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let b = uuid::Uuid::new_v4().into_bytes();
    u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[8]])
}

/// SplitMix64: every state gives a distinct output, and a 64-bit state per thread keeps two
/// threads' sequences apart.
fn next() -> u64 {
    STATE.with(|s| {
        let x = s.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        s.set(x);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    })
}

/// A fresh random (v4) UUID.
pub fn uuid() -> uuid::Uuid {
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&next().to_le_bytes());
    bytes[8..].copy_from_slice(&next().to_le_bytes());
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

/// A fresh id: a v4 UUID, hyphenated and lower case.
pub fn new_id() -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    uuid().hyphenated().encode_lower(&mut buf).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_distinct_v4_uuids() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| new_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in ids.iter().take(100) {
            let u = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(u.get_version_num(), 4);
            assert_eq!(u.get_variant(), uuid::Variant::RFC4122);
            assert_eq!(id, &u.hyphenated().to_string());
        }
    }

    #[test]
    fn threads_draw_different_ids() {
        let other = std::thread::spawn(|| (0..1000).map(|_| new_id()).collect::<Vec<_>>()).join().unwrap();
        let mine: std::collections::HashSet<String> = (0..1000).map(|_| new_id()).collect();
        assert!(other.iter().all(|id| !mine.contains(id)));
    }
}
