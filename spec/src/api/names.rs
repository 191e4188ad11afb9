//! Name generation (`generateName`).
//!
//! staging/src/k8s.io/apiserver/pkg/storage/names/generate.go `simpleNameGenerator`: the prefix
//! plus five characters from an alphabet without vowels. The real suffix is random; the model
//! derives it from the object's UID so that a name is a creation index, stable across runs.

/// The alphabet of `utilrand.String` (staging/src/k8s.io/apimachinery/pkg/util/rand/rand.go).
pub const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
/// Length of the random suffix.
pub const SUFFIX_LEN: usize = 5;

/// The deterministic stand-in for the random suffix of the object with this UID.
pub fn suffix_for(uid: u32) -> String {
    // Spread consecutive UIDs over the alphabet so generated names do not look alike.
    let mut n = (uid as u64).wrapping_mul(2_654_435_761) % (ALPHABET.len() as u64).pow(5);
    let mut out = [0u8; SUFFIX_LEN];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n % ALPHABET.len() as u64) as usize];
        n /= ALPHABET.len() as u64;
    }
    String::from_utf8(out.to_vec()).expect("alphabet is ASCII")
}

/// `generateName` + suffix.
pub fn generate(prefix: &str, uid: u32) -> String {
    format!("{prefix}{}", suffix_for(uid))
}

/// Whether `name` has the shape of a generated name: a prefix ending in `-` and a suffix of
/// [`SUFFIX_LEN`] characters of [`ALPHABET`]. Bare pods may not have such names (the
/// configuration rejects them), so the model can tell its generated pods by name alone.
pub fn looks_generated(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes.len() > SUFFIX_LEN + 1
        && bytes[bytes.len() - SUFFIX_LEN - 1] == b'-'
        && bytes[bytes.len() - SUFFIX_LEN..]
            .iter()
            .all(|c| ALPHABET.contains(c))
}

/// Whether `name` is a valid DNS-1123 subdomain (apimachinery pkg/util/validation
/// `IsDNS1123Subdomain`): lower-case alphanumerics, '-' and '.', starting and ending
/// alphanumeric, at most 253 characters.
pub fn is_dns1123_subdomain(name: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !name.is_empty()
        && name.len() <= 253
        && name.chars().all(ok_char)
        && name.chars().next().is_some_and(alnum)
        && name.chars().last().is_some_and(alnum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_names_use_the_api_alphabet_and_differ() {
        let a = generate("frontend-", 3);
        let b = generate("frontend-", 4);
        assert_ne!(a, b);
        assert_eq!(a.len(), "frontend-".len() + SUFFIX_LEN);
        assert!(a["frontend-".len()..]
            .bytes()
            .all(|c| ALPHABET.contains(&c)));
    }

    #[test]
    fn generated_names_are_recognised_and_bare_ones_not() {
        assert!(looks_generated(&generate("frontend-", 7)));
        assert!(!looks_generated("pod1"));
        assert!(
            !looks_generated("frontend-abcde"),
            "vowels are not in the alphabet"
        );
        assert!(!looks_generated("-bcdfg"));
    }

    #[test]
    fn dns_subdomain_rules() {
        assert!(is_dns1123_subdomain("frontend"));
        assert!(is_dns1123_subdomain("a.b-c"));
        assert!(!is_dns1123_subdomain("Frontend"));
        assert!(!is_dns1123_subdomain("-x"));
        assert!(!is_dns1123_subdomain(""));
    }
}
