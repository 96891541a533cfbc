//! One case on its own thread: its panic caught, its deadline enforced, and a note of what it was
//! doing kept for the report (a panic or hang loses the case's own return value).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a case writes before each risky step, so that a panic or a hang can say where it was.
#[derive(Clone, Default)]
pub struct Note(Arc<Mutex<String>>);

impl Note {
    /// Replaces the note.
    pub fn set(&self, text: impl Into<String>) {
        if let Ok(mut s) = self.0.lock() {
            *s = text.into();
        }
    }

    /// The current note (empty when the lock was poisoned by the case's panic mid-write).
    pub fn get(&self) -> String {
        self.0.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// How an isolated case ended.
#[derive(Debug)]
pub enum Isolated<T> {
    /// It returned.
    Done(T),
    /// It panicked: the payload's text and the case's last note.
    Panic {
        /// The panic message.
        message: String,
        /// What the case was doing.
        note: String,
    },
    /// It was still running at the deadline (its thread is left behind): the case's last note.
    Hang {
        /// What the case was doing.
        note: String,
    },
}

/// Runs `f` on a new thread with a [`Note`]; waits at most `timeout`.
pub fn run<T: Send + 'static>(timeout: Duration, f: impl FnOnce(&Note) -> T + Send + 'static) -> Isolated<T> {
    let note = Note::default();
    let (tx, rx) = mpsc::channel();
    let theirs = note.clone();
    let spawned = std::thread::Builder::new().name("fuzz-case".into()).spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(|| f(&theirs)));
        // The receiver is gone only when the case already timed out; nothing to tell then.
        let _ = tx.send(r.map_err(|p| panic_text(p.as_ref())));
    });
    if let Err(e) = spawned {
        return Isolated::Panic { message: format!("could not start the case's thread: {e}"), note: String::new() };
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(v)) => Isolated::Done(v),
        Ok(Err(message)) => Isolated::Panic { message, note: note.get() },
        Err(mpsc::RecvTimeoutError::Timeout) => Isolated::Hang { note: note.get() },
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            Isolated::Panic { message: "the case's thread ended without a result".into(), note: note.get() }
        }
    }
}

/// The text of a panic payload (`&str` or `String`, as `panic!` makes them).
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_and_hangs_are_reported_with_the_note() {
        let t = Duration::from_secs(5);
        assert!(matches!(run(t, |_| 3), Isolated::Done(3)));
        let p = run(t, |n: &Note| -> () {
            n.set("step 2");
            panic!("boom {}", 1)
        });
        assert!(matches!(p, Isolated::Panic { ref message, ref note } if message == "boom 1" && note == "step 2"));
        let h = run(Duration::from_millis(50), |n: &Note| {
            n.set("sleeping");
            std::thread::sleep(Duration::from_millis(500));
        });
        assert!(matches!(h, Isolated::Hang { ref note } if note == "sleeping"));
    }
}
