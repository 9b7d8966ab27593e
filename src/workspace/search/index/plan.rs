//! Which trigrams a file must contain to hold a match: a boolean query planned from the search's
//! regular expression (the technique of Google Code Search), evaluated against the index.
//!
//! The pattern is parsed by `regex-syntax` with the flags the matcher is built with (case folding,
//! multi-line anchors, CRLF mode), so the plan describes exactly the matcher's language. Every
//! string the pattern matches contains the trigrams the plan requires; a plan may require less
//! than possible (then more files are read), never more.
//!
//! Architecture invariant: trigrams are taken from folded bytes on both sides (the index's files
//! and the plan's literals): ASCII lowercased, bytes from 0x80 up in 16 classes ([`fold`]), so a
//! case-insensitive literal needs no variants for ASCII letters, and a case-sensitive or
//! non-ASCII one simply asks for a superset of files.
//! Architecture invariant: a plan that cannot be computed (a parse failure, an empty-matching
//! pattern, classes too large to expand) is [`Query::All`]: every text file is read.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

/// A trigram: three folded bytes ([`fold`]), 7 bits each, big-endian in the low 21 bits.
pub type Trigram = u32;

/// Strings kept while expanding literals and small classes; past it the set is turned into a query.
const MAX_EXACT: usize = 64;
/// Characters of a class expanded into alternatives; a larger class requires nothing.
const MAX_CLASS: usize = 8;
/// Trigrams asked for one literal; a longer literal is sampled (any subset is a valid filter).
const MAX_TRIGRAMS: usize = 12;

/// A boolean query over trigrams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Every file may match.
    All,
    Trigram(Trigram),
    And(Vec<Query>),
    Or(Vec<Query>),
}

impl Query {
    fn and(parts: Vec<Query>) -> Query {
        let mut kept: Vec<Query> = Vec::new();
        for part in parts {
            match part {
                Query::All => {}
                Query::And(inner) => kept.extend(inner),
                other => kept.push(other),
            }
        }
        kept.dedup();
        match kept.len() {
            0 => Query::All,
            1 => kept.pop().unwrap_or(Query::All),
            _ => Query::And(kept),
        }
    }

    fn or(parts: Vec<Query>) -> Query {
        let mut kept = Vec::new();
        for part in parts {
            match part {
                Query::All => return Query::All,
                Query::Or(inner) => kept.extend(inner),
                other => kept.push(other),
            }
        }
        match kept.len() {
            0 => Query::All,
            1 => kept.pop().unwrap_or(Query::All),
            _ => Query::Or(kept),
        }
    }

    /// Whether a file with these trigrams (sorted) can match.
    pub fn matches_sorted(&self, trigrams: &[Trigram]) -> bool {
        match self {
            Query::All => true,
            Query::Trigram(t) => trigrams.binary_search(t).is_ok(),
            Query::And(parts) => parts.iter().all(|q| q.matches_sorted(trigrams)),
            Query::Or(parts) => parts.iter().any(|q| q.matches_sorted(trigrams)),
        }
    }
}

/// The byte map shared by indexing and planning: ASCII lowercased, and each byte from 0x80 up put
/// in one of 16 classes (by its low four bits) in the room of the ASCII capitals, which lowercasing
/// never yields; so every folded byte fits in 7 bits and a trigram in 21. Plain arithmetic, so
/// folding a buffer vectorizes.
pub const fn fold(byte: u8) -> u8 {
    match byte {
        0x80.. => b'A' + (byte & 0x0f),
        b'A'..=b'Z' => byte | 0x20,
        _ => byte,
    }
}

/// Trigrams there can be: three folded bytes of 7 bits each.
pub const TRIGRAMS: usize = 1 << 21;

/// The trigram of three (already folded) bytes.
pub fn trigram(a: u8, b: u8, c: u8) -> Trigram {
    (u32::from(a) << 14) | (u32::from(b) << 7) | u32::from(c)
}

/// Plans the query of a search: `regex` false means `query` is literal text.
pub fn plan(query: &str, regex: bool, case_sensitive: bool) -> Query {
    let pattern = if regex { query.to_owned() } else { regex_syntax::escape(query) };
    let parsed = regex_syntax::ParserBuilder::new()
        .case_insensitive(!case_sensitive)
        .multi_line(true)
        .crlf(true)
        .build()
        .parse(&pattern);
    match parsed {
        Ok(hir) => info(&hir).into_query(),
        Err(_) => Query::All,
    }
}

/// What is known of the strings a sub-pattern matches.
struct Info {
    /// Every matched string (folded) is one of these, when known.
    exact: Option<BTreeSet<Vec<u8>>>,
    /// What every matched string must contain besides.
    query: Query,
}

impl Info {
    fn exact(set: BTreeSet<Vec<u8>>) -> Info {
        Info { exact: Some(set), query: Query::All }
    }

    fn unknown(query: Query) -> Info {
        Info { exact: None, query }
    }

    fn into_query(self) -> Query {
        match self.exact {
            Some(set) => Query::and(vec![self.query, exact_query(&set)]),
            None => self.query,
        }
    }
}

/// The query "contains one of these strings".
fn exact_query(set: &BTreeSet<Vec<u8>>) -> Query {
    Query::or(set.iter().map(|s| literal_query(s)).collect())
}

/// The trigrams of one folded string (sampled when there are many); `All` when it is shorter than 3.
fn literal_query(s: &[u8]) -> Query {
    if s.len() < 3 {
        return Query::All;
    }
    let all: Vec<Trigram> = s.windows(3).map(|w| trigram(w[0], w[1], w[2])).collect();
    let step = all.len().div_ceil(MAX_TRIGRAMS);
    let mut picked: Vec<Query> = all.iter().step_by(step.max(1)).map(|t| Query::Trigram(*t)).collect();
    if let Some(last) = all.last() {
        picked.push(Query::Trigram(*last));
    }
    Query::and(picked)
}

fn folded(bytes: &[u8]) -> Vec<u8> {
    bytes.iter().map(|b| fold(*b)).collect()
}

fn single(bytes: Vec<u8>) -> BTreeSet<Vec<u8>> {
    BTreeSet::from([bytes])
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(single(Vec::new())),
        HirKind::Literal(literal) => Info::exact(single(folded(&literal.0))),
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(capture) => info(&capture.sub),
        HirKind::Repetition(rep) => match (rep.min, rep.max) {
            (0, _) => Info::unknown(Query::All),
            (1, Some(1)) => info(&rep.sub),
            _ => Info::unknown(info(&rep.sub).into_query()),
        },
        HirKind::Concat(parts) => concat_info(parts),
        HirKind::Alternation(parts) => {
            let infos: Vec<Info> = parts.iter().map(info).collect();
            let mut union = BTreeSet::new();
            let all_exact = infos.iter().all(|i| i.exact.is_some() && i.query == Query::All);
            if all_exact {
                for i in &infos {
                    union.extend(i.exact.iter().flatten().cloned());
                }
                if union.len() <= MAX_EXACT {
                    return Info::exact(union);
                }
            }
            Info::unknown(Query::or(infos.into_iter().map(Info::into_query).collect()))
        }
    }
}

fn class_info(class: &Class) -> Info {
    let mut set = BTreeSet::new();
    match class {
        Class::Unicode(class) => {
            for range in class.ranges() {
                for c in range.start()..=range.end() {
                    if set.len() >= MAX_CLASS {
                        return Info::unknown(Query::All);
                    }
                    let mut buf = [0; 4];
                    set.insert(folded(c.encode_utf8(&mut buf).as_bytes()));
                }
            }
        }
        Class::Bytes(class) => {
            for range in class.ranges() {
                for b in range.start()..=range.end() {
                    if set.len() >= MAX_CLASS {
                        return Info::unknown(Query::All);
                    }
                    set.insert(vec![fold(b)]);
                }
            }
        }
    }
    Info::exact(set)
}

fn concat_info(parts: &[Hir]) -> Info {
    let mut required = Vec::new();
    // The strings the parts since the last break can form, adjacent to each other.
    let mut run: Option<BTreeSet<Vec<u8>>> = Some(single(Vec::new()));
    // Every part so far was exact and the product stayed small: `run` is the whole concatenation.
    let mut whole = true;
    for part in parts {
        let part = info(part);
        required.push(part.query);
        run = match (run, part.exact) {
            (Some(left), Some(right)) if left.len() * right.len() <= MAX_EXACT => {
                Some(left.iter().flat_map(|l| right.iter().map(move |r| [l.as_slice(), r].concat())).collect())
            }
            (left, right) => {
                if let Some(left) = left {
                    required.push(exact_query(&left));
                }
                whole = false;
                right
            }
        };
    }
    if whole {
        return Info { exact: run, query: Query::and(required) };
    }
    if let Some(run) = run {
        required.push(exact_query(&run));
    }
    Info::unknown(Query::and(required))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Query {
        let b = s.as_bytes();
        Query::Trigram(trigram(b[0], b[1], b[2]))
    }

    #[test]
    fn literals_need_their_folded_trigrams() {
        assert_eq!(plan("Abcd", false, true), Query::And(vec![t("abc"), t("bcd")]));
        assert_eq!(plan("ABCD", false, false), Query::And(vec![t("abc"), t("bcd")]));
        assert_eq!(plan("ab", false, true), Query::All);
        assert_eq!(plan("a.c", false, true), t("a.c"));
    }

    #[test]
    fn regexes_need_what_every_match_contains() {
        assert_eq!(plan(r"\w+foo\d", true, true), t("foo"));
        assert_eq!(plan("abc|xyz", true, true), Query::Or(vec![t("abc"), t("xyz")]));
        assert_eq!(plan("ab[cd]", true, true), Query::Or(vec![t("abc"), t("abd")]));
        assert_eq!(plan(".*", true, true), Query::All);
        assert_eq!(plan("(abc)?", true, true), Query::All);
        assert_eq!(plan("x(abc)+", true, true), t("abc"));
        assert_eq!(plan("^foo$", true, true), t("foo"));
        assert_eq!(plan("[", true, true), Query::All);
        // A part that is not exact breaks adjacency: never `xyb` (`xy_bcd` matches).
        assert_eq!(plan(r"xy(\w+bcd)", true, true), t("bcd"));
        assert_eq!(plan(r"abc\w+xyz", true, true), Query::And(vec![t("abc"), t("xyz")]));
    }

    #[test]
    fn unicode_folding_keeps_non_ascii_variants() {
        // `k` folds with the Kelvin sign; both spellings must be allowed.
        let q = plan("kkk", false, false);
        assert!(q.matches_sorted(&[trigram(b'k', b'k', b'k')]));
        let kelvin = "\u{212A}kk".as_bytes();
        let mut tris: Vec<Trigram> = kelvin.windows(3).map(|w| trigram(fold(w[0]), fold(w[1]), fold(w[2]))).collect();
        tris.sort_unstable();
        assert!(q.matches_sorted(&tris));
        assert!(!q.matches_sorted(&[trigram(b'a', b'b', b'c')]));
    }
}
