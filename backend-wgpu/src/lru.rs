//! A small least-recently-used map for compiled variants (a handful of entries: a vector is
//! faster and simpler than a linked hash map at this size).

use backend_api::Result;

/// At most `cap` entries; the most recently used first.
pub(crate) struct Lru<K, V> {
    cap: usize,
    items: Vec<(K, V)>,
}

impl<K: PartialEq + Clone, V> Lru<K, V> {
    /// An empty map holding at most `cap` (≥ 1) entries.
    pub fn new(cap: usize) -> Lru<K, V> {
        Lru { cap: cap.max(1), items: Vec::new() }
    }

    /// The entry for `key`, made with `make` on a miss (evicting the least recently used entry
    /// when full); either way it becomes the most recently used.
    pub fn get_or_try_insert(&mut self, key: &K, make: impl FnOnce() -> Result<V>) -> Result<&mut V> {
        match self.items.iter().position(|(k, _)| k == key) {
            Some(i) => {
                let item = self.items.remove(i);
                self.items.insert(0, item);
            }
            None => {
                let v = make()?;
                self.items.truncate(self.cap - 1);
                self.items.insert(0, (key.clone(), v));
            }
        }
        match self.items.first_mut() {
            Some((_, v)) => Ok(v),
            None => backend_api::bail!(Device, "variant cache is empty right after an insert"),
        }
    }

    /// The most recently used value.
    pub fn most_recent(&self) -> Option<&V> {
        self.items.first().map(|(_, v)| v)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.items.len()
    }
}

#[cfg(test)]
mod tests {
    use super::Lru;

    #[test]
    fn evicts_least_recently_used() {
        let mut l: Lru<u32, u32> = Lru::new(2);
        let mut made = 0;
        for k in [1, 2, 1, 3, 2, 1] {
            l.get_or_try_insert(&k, || {
                made += 1;
                Ok(k * 10)
            })
            .unwrap();
        }
        // 1, 2 made; 1 hit; 3 made (evicts 2); 2 made (evicts 1); 1 made (evicts 3).
        assert_eq!(made, 5);
        assert_eq!(l.len(), 2);
        assert_eq!(l.most_recent(), Some(&10));
    }
}
