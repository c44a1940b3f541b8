//! Info objects: ordered (key, value) string pairs.
#![forbid(unsafe_code)]

use std::sync::{Mutex, MutexGuard};

use crate::error::{fail, ErrorClass, MpiResult};

/// Longest key and value the ABI's `MPI_MAX_INFO_KEY`/`MPI_MAX_INFO_VAL` allow (without NUL).
pub const MAX_KEY: usize = 255;
pub const MAX_VALUE: usize = 1023;

#[derive(Debug, Default)]
pub struct Info {
    entries: Mutex<Vec<(String, String)>>,
}

impl Info {
    pub fn new() -> Info {
        Info::default()
    }

    pub fn from_pairs(pairs: Vec<(String, String)>) -> Info {
        Info {
            entries: Mutex::new(pairs),
        }
    }

    fn entries(&self) -> MutexGuard<'_, Vec<(String, String)>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A copy with the same pairs.
    pub fn duplicate(&self) -> Info {
        Info::from_pairs(self.entries().clone())
    }

    pub fn set(&self, func: &str, key: &str, value: &str) -> MpiResult<()> {
        check_key(func, key)?;
        if value.len() > MAX_VALUE {
            return fail(
                ErrorClass::InfoValue,
                format!("{func}(value): longer than MPI_MAX_INFO_VAL"),
            );
        }
        let mut entries = self.entries();
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value.to_owned(),
            None => entries.push((key.to_owned(), value.to_owned())),
        }
        Ok(())
    }

    pub fn get(&self, key: &str) -> Option<String> {
        self.entries()
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    pub fn delete(&self, func: &str, key: &str) -> MpiResult<()> {
        check_key(func, key)?;
        let mut entries = self.entries();
        match entries.iter().position(|(k, _)| k == key) {
            Some(i) => {
                entries.remove(i);
                Ok(())
            }
            None => fail(
                ErrorClass::InfoNokey,
                format!("{func}(key={key:?}): no such key"),
            ),
        }
    }

    pub fn len(&self) -> usize {
        self.entries().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every (key, value) pair, in order.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.entries().clone()
    }

    pub fn nth_key(&self, n: usize) -> Option<String> {
        self.entries().get(n).map(|(k, _)| k.clone())
    }
}

fn check_key(func: &str, key: &str) -> MpiResult<()> {
    if key.is_empty() || key.len() > MAX_KEY {
        return fail(
            ErrorClass::InfoKey,
            format!("{func}(key): empty or longer than MPI_MAX_INFO_KEY"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_delete_in_order() {
        let info = Info::new();
        info.set("t", "b", "1").unwrap();
        info.set("t", "a", "2").unwrap();
        info.set("t", "b", "3").unwrap();
        assert_eq!(info.len(), 2);
        assert_eq!(info.nth_key(0).as_deref(), Some("b"));
        assert_eq!(info.get("b").as_deref(), Some("3"));
        let copy = info.duplicate();
        info.delete("t", "b").unwrap();
        assert_eq!(info.get("b"), None);
        assert_eq!(copy.get("b").as_deref(), Some("3"));
        assert_eq!(
            info.delete("t", "b").unwrap_err().code,
            ErrorClass::InfoNokey as i32
        );
        assert_eq!(
            info.set("t", "", "x").unwrap_err().code,
            ErrorClass::InfoKey as i32
        );
        assert_eq!(
            info.set("t", &"k".repeat(256), "x").unwrap_err().code,
            ErrorClass::InfoKey as i32
        );
    }
}
