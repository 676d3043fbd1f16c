//! The page's notices: which unknown link parameters are listed as "ignored, and kept".

/// The unknown parameters the page lists as "ignored, and kept": every one but those with a
/// notice of their own (a newer `v`, an unknown `version=`), which are not listed twice.
pub fn unlisted<'a>(
    unknown: &'a [(String, String)],
    notices: &'a [(String, String)],
) -> impl Iterator<Item = &'a (String, String)> {
    unknown
        .iter()
        .filter(move |(k, _)| !notices.iter().any(|(n, _)| n == k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_parameters_with_their_own_notice_are_not_listed_twice() {
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        let unknown = vec![pair("colour", "blue"), pair("v", "9"), pair("version", "x")];
        let notices = vec![pair("v", "newer"), pair("version", "unknown")];
        let listed: Vec<_> = unlisted(&unknown, &notices).collect();
        assert_eq!(listed, vec![&pair("colour", "blue")]);
        assert_eq!(unlisted(&unknown, &[]).count(), 3);
        assert_eq!(unlisted(&[], &notices).count(), 0);
    }
}
