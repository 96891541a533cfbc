//! A one-line progress bar on stderr: `label [=====>    ] 23/50  1.2 s, ~1.4 s left`.
//!
//! Drawn only when stderr is a terminal or when `--progress` asks for it, and redrawn at most ten
//! times a second so that fast loops are not slowed by terminal output. Each redraw starts with a
//! carriage return, which also reads fine in a log file (one line per redraw there).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

const WIDTH: usize = 30;
const REDRAW_EVERY: Duration = Duration::from_millis(100);

/// A progress bar over `total` steps.
pub struct Progress {
    label: String,
    total: u64,
    done: u64,
    start: Instant,
    last_draw: Option<Instant>,
    enabled: bool,
    line_len: usize,
    drawn: u64,
}

impl Progress {
    /// A bar that draws when stderr is a terminal or when `forced`.
    pub fn new(label: &str, total: u64, forced: bool) -> Progress {
        let enabled = forced || std::io::stderr().is_terminal();
        Progress {
            label: label.to_string(),
            total,
            done: 0,
            start: Instant::now(),
            last_draw: None,
            enabled,
            line_len: 0,
            drawn: 0,
        }
    }

    /// Whether the bar is drawn.
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// One more step done; redraws if the last redraw is 100 ms old (or this is the last step).
    pub fn inc(&mut self) {
        self.done += 1;
        let due = self.last_draw.is_none_or(|t| t.elapsed() >= REDRAW_EVERY);
        if self.enabled && (due || self.done >= self.total) {
            self.draw();
        }
    }

    /// Prints `msg` on its own line above the bar (or plainly when the bar is off).
    pub fn println(&mut self, msg: &str) {
        if self.enabled && self.line_len > 0 {
            eprint!("\r{:width$}\r", "", width = self.line_len);
            eprintln!("{msg}");
            self.draw();
        } else {
            eprintln!("{msg}");
        }
    }

    /// Ends the bar's line (draws the final state first).
    pub fn finish(&mut self) {
        if self.enabled && self.last_draw.is_some() {
            if self.drawn != self.done {
                self.draw();
            }
            eprintln!();
        }
    }

    fn draw(&mut self) {
        let line = render(&self.label, self.done, self.total, self.start.elapsed());
        let pad = self.line_len.saturating_sub(line.chars().count());
        eprint!("\r{line}{:pad$}", "");
        let _ = std::io::stderr().flush();
        self.line_len = line.chars().count();
        self.last_draw = Some(Instant::now());
        self.drawn = self.done;
    }
}

/// The bar's text for `done` of `total` steps after `elapsed`.
fn render(label: &str, done: u64, total: u64, elapsed: Duration) -> String {
    let frac = if total == 0 { 1.0 } else { (done as f64 / total as f64).min(1.0) };
    let filled = (frac * WIDTH as f64) as usize;
    let mut bar = "=".repeat(filled);
    if filled < WIDTH {
        bar.push('>');
        bar.push_str(&" ".repeat(WIDTH - filled - 1));
    }
    let secs = elapsed.as_secs_f64();
    let left = match (done, done < total) {
        (0, _) | (_, false) => String::new(),
        (d, true) => format!(", ~{:.1} s left", secs / d as f64 * (total - d) as f64),
    };
    format!("{label} [{bar}] {done}/{total}  {secs:.1} s{left}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_fill_count_and_estimate() {
        let s = render("bench", 15, 30, Duration::from_secs(3));
        assert!(s.starts_with("bench [===============>"), "{s}");
        assert!(s.contains("15/30  3.0 s, ~3.0 s left"), "{s}");
        let full = render("x", 4, 4, Duration::from_secs(1));
        assert!(full.contains(&"=".repeat(WIDTH)) && !full.contains("left"), "{full}");
        assert!(render("x", 0, 0, Duration::ZERO).contains("0/0"));
    }
}
