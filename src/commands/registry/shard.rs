//! `--shard K/N`: which targets one of N machines checks. A target's shard is a hash of its name,
//! so that every target is in exactly one shard whatever the order of the file, and a target
//! added or removed moves no other.

use sha2::{Digest, Sha256};

/// The K-th of N shards (1-based K, as a CI matrix counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardSpec {
    pub index: u32,
    pub count: u32,
}

impl std::str::FromStr for ShardSpec {
    type Err = String;

    /// `K/N` with 1 ≤ K ≤ N.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("--shard {s:?}: expected K/N with 1 <= K <= N (e.g. 2/4)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count): (u32, u32) = (k.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if count == 0 || index == 0 || index > count {
            return Err(bad());
        }
        Ok(ShardSpec { index, count })
    }
}

impl ShardSpec {
    /// Whether the target named `name` is this shard's.
    pub fn holds(&self, name: &str) -> bool {
        shard_of(name, self.count) == self.index
    }
}

/// The shard (1-based) of `name` among `count`.
pub fn shard_of(name: &str, count: u32) -> u32 {
    let digest = Sha256::digest(name.as_bytes());
    let head = u64::from_be_bytes(digest[..8].try_into().expect("a sha256 digest has 8 leading bytes"));
    (head % u64::from(count.max(1))) as u32 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_in_exactly_one_shard_and_shards_are_balanced() {
        let names: Vec<String> = (0..4000).map(|i| format!("agent-{i}")).collect();
        let shards: Vec<ShardSpec> = (1..=4).map(|k| ShardSpec { index: k, count: 4 }).collect();
        let mut sizes = [0usize; 4];
        for n in &names {
            let holders: Vec<&ShardSpec> = shards.iter().filter(|s| s.holds(n)).collect();
            assert_eq!(holders.len(), 1, "{n}");
            sizes[holders[0].index as usize - 1] += 1;
        }
        assert!(sizes.iter().all(|&s| (850..=1150).contains(&s)), "{sizes:?}");
        // The shard depends on the name alone, so no reordering of the file moves a target.
        assert_eq!(shard_of("agent-7", 4), shard_of("agent-7", 4));
    }

    #[test]
    fn shard_specs_parse_and_refuse_nonsense() {
        assert_eq!("2/4".parse::<ShardSpec>(), Ok(ShardSpec { index: 2, count: 4 }));
        for bad in ["0/4", "5/4", "1/0", "x/2", "3"] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }
}
