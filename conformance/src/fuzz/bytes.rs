//! Byte cases: random and mutated bytes for `backend_api::npy::from_npy` and the JSON reader, and
//! the text mutator the JSON graph cases share.

use super::isolate::Note;
use super::summary::{CaseReport, Event};
use super::FuzzOptions;
use crate::rng::Rng;
use crate::values::any_tensor;
use backend_api::npy::{from_npy, to_npy};
use backend_api::DType;

/// Numbers a mutation writes over a number of the input, when sizes are not hostile.
const SMALL_NUMBERS: &[&str] = &["0", "1", "2", "3", "7", "16", "-1", "0.5", "1e3"];
/// Numbers a hostile mutation writes: past `u64`, at `2^62`, `usize::MAX`, huge floats.
const HUGE_NUMBERS: &[&str] = &[
    "18446744073709551615",
    "18446744073709551616",
    "4611686018427387904",
    "9223372036854775807",
    "99999999999999999999999999",
    "1e308",
    "-9223372036854775808",
    "4294967296",
];

/// 1–3 random mutations of `input`: flipped, inserted, deleted or duplicated bytes, a number
/// replaced, truncation, deep nesting. Inserted bytes stay ASCII unless `hostile`.
pub fn mutate_text(input: &[u8], rng: &mut Rng, hostile: bool) -> Vec<u8> {
    let mut b = input.to_vec();
    for _ in 0..1 + rng.below(3) {
        mutate_once(&mut b, rng, hostile);
    }
    b
}

fn random_byte(rng: &mut Rng, hostile: bool) -> u8 {
    let [x, ..] = rng.next_u64().to_le_bytes();
    if hostile {
        x
    } else {
        const ASCII: &[u8] = b" {}[]:,\"'()0123456789-.eEaz_";
        ASCII.get(usize::from(x) % ASCII.len()).copied().unwrap_or(b' ')
    }
}

fn mutate_once(b: &mut Vec<u8>, rng: &mut Rng, hostile: bool) {
    let n = b.len();
    let i = rng.below(n + 1);
    match rng.below(8) {
        0 => {
            if let Some(x) = b.get_mut(i) {
                *x = random_byte(rng, hostile);
            }
        }
        1 => {
            let k = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..k).map(|_| random_byte(rng, hostile)).collect();
            b.splice(i..i, bytes);
        }
        2 => {
            let end = i.saturating_add(1 + rng.below(16)).min(n);
            b.drain(i.min(end)..end);
        }
        3 => {
            let end = i.saturating_add(1 + rng.below(32)).min(n);
            let span: Vec<u8> = b.get(i.min(end)..end).map(<[u8]>::to_vec).unwrap_or_default();
            b.splice(end..end, span);
        }
        4 => b.truncate(i),
        5 => {
            let depth = if hostile { 1 + rng.below(100_000) } else { 1 + rng.below(300) };
            let (open, close) = if rng.chance(0.5) { (b'[', b']') } else { (b'(', b')') };
            b.splice(i..i, std::iter::repeat_n(open, depth).chain(std::iter::repeat_n(close, depth)));
        }
        _ => replace_number(b, rng, hostile),
    }
}

/// Replaces the digits of a random number in `b` by another number.
fn replace_number(b: &mut Vec<u8>, rng: &mut Rng, hostile: bool) {
    let starts: Vec<usize> = (0..b.len())
        .filter(|&i| {
            b.get(i).is_some_and(u8::is_ascii_digit) && (i == 0 || b.get(i - 1).is_some_and(|c| !c.is_ascii_digit()))
        })
        .collect();
    let Some(&start) = starts.get(rng.below(starts.len())) else { return };
    let end = (start..b.len()).find(|&j| b.get(j).is_none_or(|c| !c.is_ascii_digit())).unwrap_or(b.len());
    let with = if hostile && rng.chance(0.6) { rng.pick(HUGE_NUMBERS) } else { rng.pick(SMALL_NUMBERS) };
    b.splice(start..end, with.bytes());
}

/// One byte case: `.npy` (written by `to_npy`, then mutated, or random after the magic) or JSON
/// text (a problem's graph serialised, then mutated, or random).
pub fn case(o: &FuzzOptions, seed: u64, note: &Note) -> CaseReport {
    let mut rng = Rng::new(seed);
    let mut report = CaseReport::default();
    if rng.chance(0.6) || o.json.is_none() {
        npy_case(o, &mut rng, note, &mut report);
    } else {
        json_bytes_case(o, &mut rng, note, &mut report);
    }
    report
}

fn npy_case(o: &FuzzOptions, rng: &mut Rng, note: &Note, report: &mut CaseReport) {
    let dtype = super::graphs::any_of(rng, &DType::ALL, DType::F32);
    let dims: Vec<usize> = (0..rng.below(4)).map(|_| rng.below(5)).collect();
    let Ok(t) = any_tensor(rng, dtype, &dims, 0.1, true) else { return report.skip("no tensor for the npy case") };
    let Ok(clean) = to_npy(&t) else { return report.skip("to_npy: no NumPy dtype (BF16)") };
    if from_npy(&clean).as_ref() != Ok(&t) {
        report.push(Event::Mismatch(format!("the .npy round trip of {dtype}{dims:?} changed the tensor")));
    }
    let bytes = if rng.chance(0.8) {
        mutate_text(&clean, rng, o.hostile_sizes)
    } else {
        let mut b = clean.get(..8).map(<[u8]>::to_vec).unwrap_or_default();
        b.extend((0..rng.below(200)).map(|_| random_byte(rng, o.hostile_sizes)));
        b
    };
    note.set(format!("from_npy(b\"{}\") ({} bytes)", bytes.escape_ascii(), bytes.len()));
    let r = from_npy(&bytes);
    report.step("from_npy", &r);
}

fn json_bytes_case(o: &FuzzOptions, rng: &mut Rng, note: &Note, report: &mut CaseReport) {
    let Some(codec) = o.json else { return };
    let text = match super::graphs::problem(rng).map(|(_, p)| (codec.to_json)(&p.graph)) {
        Some(Ok(t)) => t.into_bytes(),
        _ => return report.skip("no graph to serialise for the JSON byte case"),
    };
    let bytes = if rng.chance(0.85) {
        mutate_text(&text, rng, o.hostile_sizes)
    } else {
        (0..rng.below(300)).map(|_| random_byte(rng, o.hostile_sizes)).collect()
    };
    let text = String::from_utf8_lossy(&bytes).into_owned();
    note.set(format!("from_json({text:?})"));
    let r = (codec.from_json)(&text);
    report.step("from_json-bytes", &r);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_and_change_the_input() {
        let input = br#"{"a": [1, 2, 3], "b": "x"}"#;
        let a = mutate_text(input, &mut Rng::new(7), false);
        let b = mutate_text(input, &mut Rng::new(7), false);
        assert_eq!(a, b);
        let changed = (0..32).filter(|s| mutate_text(input, &mut Rng::new(*s), true) != input).count();
        assert!(changed > 24, "{changed}");
        assert!((0..64).all(|s| mutate_text(input, &mut Rng::new(s), false).is_ascii()));
    }
}
