//! Shards merged: the outputs of `check --targets` run as N shards (a CI matrix, a Kubernetes
//! Indexed Job) made into one folder with one index, as if the registry had been checked at once.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::files::{INDEX_JSON, IndexError, read_index, write_index};
use super::model::{AgentEntry, Index, Shard, valid_name};

/// Reads `DIR/index.json` of each shard output in `dirs`, copies each agent's folder `DIR/<name>/`
/// into `out/<name>/` (not when DIR is `out`), and writes one index of every agent into `out`.
/// Every index is read and checked before anything is copied: an agent named by two shards is
/// refused, as is a name that is not a folder name.
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Index, IndexError> {
    if dirs.is_empty() {
        return Err(IndexError::NoShards);
    }
    let mut from: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut shards: Vec<(&Path, Vec<AgentEntry>)> = Vec::new();
    for dir in dirs {
        let index = read_index(dir)?;
        for a in &index.agents {
            if !valid_name(&a.name) {
                return Err(IndexError::BadName { path: dir.join(INDEX_JSON), name: a.name.clone() });
            }
            if let Some(first) = from.get(&a.name) {
                return Err(IndexError::Duplicate { name: a.name.clone(), first: first.clone(), second: dir.clone() });
            }
            from.insert(a.name.clone(), dir.clone());
        }
        shards.push((dir, index.agents));
    }
    std::fs::create_dir_all(out).map_err(|source| IndexError::Write { path: out.to_path_buf(), source })?;
    let target = std::fs::canonicalize(out).map_err(|source| IndexError::Read { path: out.to_path_buf(), source })?;
    let mut agents = Vec::new();
    for (dir, entries) in shards {
        let same = std::fs::canonicalize(dir).is_ok_and(|d| d == target);
        for a in entries {
            let src = dir.join(&a.name);
            if !same && src.is_dir() {
                copy_dir(&src, &out.join(&a.name))?;
            }
            agents.push(a);
        }
    }
    let index = Index::build(agents, None);
    write_index(out, &index).map_err(|source| IndexError::Write { path: out.to_path_buf(), source })?;
    Ok(index)
}

/// The shards missing from a set that says it is `N` shards: each K of 1..=N no index names, with
/// N (the largest count named). `None` when no index names a shard, or none is missing.
pub fn missing_shards(shards: &[Option<Shard>]) -> Option<(Vec<u32>, u32)> {
    let count = shards.iter().flatten().map(|s| s.count).max()?;
    let missing: Vec<u32> = (1..=count).filter(|k| !shards.iter().flatten().any(|s| s.index == *k)).collect();
    (!missing.is_empty()).then_some((missing, count))
}

/// Copies the files and folders under `src` into `dst` (created), replacing files of the same
/// name. Symbolic links are not followed: a shard's folder holds report files only.
fn copy_dir(src: &Path, dst: &Path) -> Result<(), IndexError> {
    let read = |path: &Path, source: io::Error| IndexError::Read { path: path.to_path_buf(), source };
    let write = |path: &Path, source: io::Error| IndexError::Write { path: path.to_path_buf(), source };
    std::fs::create_dir_all(dst).map_err(|e| write(dst, e))?;
    for entry in std::fs::read_dir(src).map_err(|e| read(src, e))? {
        let entry = entry.map_err(|e| read(src, e))?;
        let kind = entry.file_type().map_err(|e| read(&entry.path(), e))?;
        let to = dst.join(entry.file_name());
        if kind.is_dir() {
            copy_dir(&entry.path(), &to)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &to).map_err(|e| write(&to, e))?;
        }
    }
    Ok(())
}
