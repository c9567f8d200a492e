//! The embedded store's vectors in memory: one flat `f32` array, scanned by dot product
//! (the vectors are L2-normalised, so the dot product is the cosine). Brute force is exact
//! and fast enough for a learner's memories (10k × 384 is ~4M multiply-adds per query).

use std::collections::HashMap;

use paige_core::memory::MemoryError;
use rusqlite::Connection;

/// Little-endian `f32`s, as stored in `memory_vectors.vector`.
pub(crate) fn to_blob(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|value| value.to_le_bytes()).collect()
}

fn from_blob(blob: &[u8], dimension: usize) -> Option<Vec<f32>> {
    if dimension == 0 || blob.len() != dimension * 4 {
        return None;
    }
    let vector: Vec<f32> = blob.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    vector.iter().all(|value| value.is_finite()).then_some(vector)
}

#[derive(Default)]
pub(crate) struct VectorIndex {
    /// The dimension of every vector here (the first one loaded or added decides).
    dimension: usize,
    ids: Vec<String>,
    projects: Vec<u32>,
    vectors: Vec<f32>,
    slot_of: HashMap<String, usize>,
    project_names: Vec<String>,
    project_of: HashMap<String, u32>,
}

impl VectorIndex {
    /// Every stored vector. A row that is not a vector of the index's dimension (a corrupt
    /// blob, another model's) is left out with a warning: the memory stays findable by
    /// keywords.
    pub(crate) fn load(conn: &Connection) -> Result<VectorIndex, MemoryError> {
        let store_err = |err: rusqlite::Error| MemoryError::Store(format!("memory database: {err}"));
        let mut statement = conn
            .prepare(
                "SELECT v.id, m.project, v.dimension, v.vector FROM memory_vectors v JOIN memories m ON m.id = v.id",
            )
            .map_err(store_err)?;
        let mut rows = statement.query([]).map_err(store_err)?;
        let mut index = VectorIndex::default();
        let mut skipped = Vec::new();
        while let Some(row) = rows.next().map_err(store_err)? {
            let id: String = row.get(0).map_err(store_err)?;
            let project: String = row.get(1).map_err(store_err)?;
            let dimension: i64 = row.get(2).map_err(store_err)?;
            let blob: Vec<u8> = row.get(3).unwrap_or_default();
            match from_blob(&blob, usize::try_from(dimension).unwrap_or(0)) {
                Some(vector) if index.dimension == 0 || vector.len() == index.dimension => {
                    index.upsert(&id, &project, Some(&vector));
                }
                _ => skipped.push(id),
            }
        }
        if !skipped.is_empty() {
            tracing::warn!(
                count = skipped.len(),
                first = %skipped[0],
                "memory vectors that are not {}-d float vectors are left out of semantic search",
                index.dimension
            );
        }
        Ok(index)
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    fn project_id(&mut self, project: &str) -> u32 {
        if let Some(id) = self.project_of.get(project) {
            return *id;
        }
        let id = self.project_names.len() as u32;
        self.project_names.push(project.to_owned());
        self.project_of.insert(project.to_owned(), id);
        id
    }

    /// Sets (or, with `None` or a vector of another dimension, removes) the vector of `id`.
    pub(crate) fn upsert(&mut self, id: &str, project: &str, vector: Option<&[f32]>) {
        let vector = vector.filter(|v| !v.is_empty() && (self.dimension == 0 || v.len() == self.dimension));
        match (self.slot_of.get(id).copied(), vector) {
            (Some(slot), Some(vector)) => {
                let project = self.project_id(project);
                self.projects[slot] = project;
                self.vectors[slot * self.dimension..(slot + 1) * self.dimension].copy_from_slice(vector);
            }
            (None, Some(vector)) => {
                self.dimension = vector.len();
                let project = self.project_id(project);
                self.slot_of.insert(id.to_owned(), self.ids.len());
                self.ids.push(id.to_owned());
                self.projects.push(project);
                self.vectors.extend_from_slice(vector);
            }
            (Some(slot), None) => self.remove(slot),
            (None, None) => {}
        }
    }

    /// Removes a slot by moving the last one into it.
    fn remove(&mut self, slot: usize) {
        let last = self.ids.len() - 1;
        let d = self.dimension;
        if slot != last {
            self.vectors.copy_within(last * d..(last + 1) * d, slot * d);
            self.ids.swap(slot, last);
            self.projects.swap(slot, last);
            self.slot_of.insert(self.ids[slot].clone(), slot);
        }
        self.slot_of.remove(&self.ids[last]);
        self.ids.pop();
        self.projects.pop();
        self.vectors.truncate(last * d);
    }

    /// The `n` nearest vectors to `query` (best first) as `(id, 1 − cosine)`, within
    /// `project` when given. A query of another dimension finds nothing.
    pub(crate) fn nearest(&self, query: &[f32], n: usize, project: Option<&str>) -> Vec<(String, f32)> {
        if query.len() != self.dimension || n == 0 {
            return Vec::new();
        }
        let wanted = match project {
            Some(name) => match self.project_of.get(name) {
                Some(id) => Some(*id),
                None => return Vec::new(),
            },
            None => None,
        };
        let mut scored: Vec<(f32, usize)> = self
            .vectors
            .chunks_exact(self.dimension)
            .enumerate()
            .filter(|(slot, _)| wanted.is_none_or(|id| self.projects[*slot] == id))
            .map(|(slot, vector)| (dot(query, vector), slot))
            .collect();
        let keep = n.min(scored.len());
        if keep == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(keep);
        scored.sort_unstable_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(score, slot)| (self.ids[slot].clone(), 1.0 - score)).collect()
    }
}

/// Eight independent sums, so the compiler vectorises the loop.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut sums = [0.0f32; 8];
    let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a_chunks.remainder().iter().zip(b_chunks.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in a_chunks.zip(b_chunks) {
        for i in 0..8 {
            sums[i] += x[i] * y[i];
        }
    }
    sums.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(hot: usize) -> Vec<f32> {
        let mut v = vec![0.0; 16];
        v[hot] = 1.0;
        v
    }

    #[test]
    fn nearest_ranks_by_cosine_and_filters_by_project() {
        let mut index = VectorIndex::default();
        index.upsert("a", "alpha", Some(&unit(0)));
        index.upsert("b", "beta", Some(&unit(1)));
        let mut mixed = unit(0);
        mixed[1] = 1.0;
        let norm = 2f32.sqrt();
        mixed.iter_mut().for_each(|v| *v /= norm);
        index.upsert("c", "alpha", Some(&mixed));
        let hits = index.nearest(&unit(0), 10, None);
        assert_eq!(hits.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["a", "c", "b"]);
        assert!((hits[0].1 - 0.0).abs() < 1e-6 && (hits[2].1 - 1.0).abs() < 1e-6);
        assert_eq!(index.nearest(&unit(1), 10, Some("alpha")).len(), 2);
        assert!(index.nearest(&unit(1), 10, Some("gamma")).is_empty());
        assert_eq!(index.nearest(&unit(0), 1, None).len(), 1);
    }

    #[test]
    fn upsert_replaces_and_none_removes_keeping_the_others_intact() {
        let mut index = VectorIndex::default();
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            index.upsert(id, "p", Some(&unit(i)));
        }
        index.upsert("a", "p", None);
        assert_eq!(index.len(), 2);
        assert_eq!(index.nearest(&unit(2), 1, None)[0].0, "c");
        index.upsert("b", "p", Some(&unit(5)));
        assert_eq!(index.nearest(&unit(5), 1, None)[0].0, "b");
        assert_eq!(index.len(), 2);
        // Another dimension is not mixed in.
        index.upsert("d", "p", Some(&[1.0, 0.0]));
        assert_eq!(index.len(), 2);
        assert!(index.nearest(&[1.0, 0.0], 5, None).is_empty());
    }

    #[test]
    fn blobs_round_trip_and_bad_ones_are_refused() {
        let v = vec![0.5, -1.25, 3.0];
        assert_eq!(from_blob(&to_blob(&v), 3), Some(v));
        assert_eq!(from_blob(&[0, 0, 128], 1), None);
        assert_eq!(from_blob(&to_blob(&[f32::NAN]), 1), None);
        assert_eq!(from_blob(&to_blob(&[1.0, 2.0]), 3), None);
    }
}
