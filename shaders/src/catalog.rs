//! Names of rendered kernels, for profiles and diagnostics: the `.wgsl` file that holds a
//! module's entry point, and a short hash that tells its rendered variants apart.

include!(concat!(env!("OUT_DIR"), "/wgsl_files.rs"));

/// The first line of a file that declares an entry point (`@compute`): every family file starts
/// with its own comment line, which rendering keeps (slots never sit on the first line).
fn entry_files() -> impl Iterator<Item = (&'static str, &'static str)> {
    // Found once: scanning every file for `@compute` on every call cost more than the lookup.
    static ENTRIES: std::sync::OnceLock<Vec<(&'static str, &'static str)>> = std::sync::OnceLock::new();
    ENTRIES
        .get_or_init(|| {
            WGSL_FILES
                .iter()
                .filter(|(_, text)| text.contains("@compute"))
                .filter_map(|(name, text)| Some((*name, text.lines().next().filter(|l| !l.trim().is_empty())?)))
                .collect()
        })
        .iter()
        .copied()
}

/// The `.wgsl` file whose entry point the rendered module `source` runs, found by that file's
/// first line; `None` for a module not rendered from this crate's files.
pub fn kernel_file(source: &str) -> Option<&'static str> {
    // The source's lines are read once into a set, not once per entry file: a compile names
    // every distinct kernel it renders, each tens of kilobytes.
    let lines: std::collections::HashSet<&str> = source.lines().collect();
    entry_files().filter(|(_, first)| lines.contains(first)).max_by_key(|(_, first)| first.len()).map(|(name, _)| name)
}

/// 32 bits of the FNV-1a hash of `source`, as 8 hex digits: the same rendered variant always
/// gets the same tag, on every machine.
pub fn variant_tag(source: &str) -> String {
    let h =
        source.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3));
    format!("{:08x}", (h >> 32) ^ (h & 0xffff_ffff))
}

/// `file:main#tag`, the name a profile shows for the kernel `source` (`?` for the file where it
/// is not one of this crate's).
pub fn kernel_name(source: &str) -> String {
    format!("{}:main#{}", kernel_file(source).unwrap_or("?"), variant_tag(source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_files_have_distinct_first_lines() {
        let firsts: Vec<(&str, &str)> = entry_files().collect();
        assert!(firsts.len() > 10, "{firsts:?}");
        for (i, (a, fa)) in firsts.iter().enumerate() {
            assert!(fa.starts_with("//"), "{a} starts with code, not its comment: {fa:?}");
            for (b, fb) in &firsts[i + 1..] {
                assert_ne!(fa, fb, "{a} and {b} start with the same line");
            }
        }
    }

    #[test]
    fn rendered_kernels_are_named_by_their_file() {
        assert_eq!(kernel_file(&crate::zero_module()), Some("zero.wgsl"));
        assert!(kernel_name(&crate::zero_module()).starts_with("zero.wgsl:main#"));
        assert_eq!(kernel_file("fn main() {}"), None);
        assert_ne!(variant_tag("a"), variant_tag("b"));
        assert_eq!(variant_tag("a").len(), 8);
    }
}
