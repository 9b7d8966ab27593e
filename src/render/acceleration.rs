//! The `cmake_build` line of what a compiler cache or build farm did in one build:
//! `ccache: 118 hits, 2 misses (98%)`, `distcc: 42 jobs on 2 hosts, 3 local`.
//!
//! Architecture invariant: a pure function of the figures; a host that could not be reached is
//! always named, and missing figures always say why.

use crate::cmake::acceleration::figures::Acceleration;
use crate::text::plural;

/// One line, without the indentation of the result it belongs to.
pub fn line(a: &Acceleration) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let (Some(hits), Some(misses)) = (a.hits, a.misses) {
        let calls = hits + misses;
        let rate = (hits * 100).checked_div(calls).map_or_else(String::new, |rate| format!(" ({rate}%)"));
        parts.push(format!("{}, {}{rate}", plural(hits, "hit", "hits"), plural(misses, "miss", "misses")));
    }
    if a.uncacheable > 0 {
        parts.push(format!("{} not cacheable", plural(a.uncacheable, "call", "calls")));
    }
    if let (Some(remote), None) = (a.remote_jobs, a.local_jobs) {
        parts.push(format!("{remote} distributed"));
    } else if let Some(remote) = a.remote_jobs {
        let hosts = a.hosts.len() as u64;
        let mut jobs = format!("{} on {}", plural(remote, "job", "jobs"), plural(hosts, "host", "hosts"));
        if let Some(local) = a.local_jobs {
            jobs.push_str(&format!(", {local} local"));
        }
        parts.push(jobs);
    }
    let mut res =
        format!("{}: {}", a.launcher, if parts.is_empty() { "no figures".to_owned() } else { parts.join(", ") });
    if !a.unreachable.is_empty() {
        let verb = if a.unreachable.len() == 1 { "was" } else { "were" };
        res.push_str(&format!("; {} {verb} unreachable, so its compiles ran locally", a.unreachable.join(", ")));
        if a.unreachable.len() > 1 {
            res = res.replace("so its compiles", "so their compiles");
        }
    }
    if let Some(note) = &a.note {
        res.push_str(&format!(" ({note})"));
    }
    res
}

#[cfg(test)]
mod tests {
    use expect_test::expect;

    use super::*;

    #[test]
    fn caches_and_farms() {
        let ccache = Acceleration { launcher: "ccache", hits: Some(118), misses: Some(2), ..Acceleration::default() };
        expect!["ccache: 118 hits, 2 misses (98%)"].assert_eq(&line(&ccache));
        let empty = Acceleration { launcher: "ccache", hits: Some(0), misses: Some(0), ..Acceleration::default() };
        expect!["ccache: 0 hits, 0 misses"].assert_eq(&line(&empty));
        let distcc = Acceleration {
            launcher: "distcc",
            remote_jobs: Some(42),
            hosts: vec!["a".into(), "b".into()],
            local_jobs: Some(3),
            ..Acceleration::default()
        };
        expect!["distcc: 42 jobs on 2 hosts, 3 local"].assert_eq(&line(&distcc));
        let down = Acceleration {
            launcher: "distcc",
            remote_jobs: Some(0),
            local_jobs: Some(12),
            unreachable: vec!["127.0.0.1:3999".into()],
            ..Acceleration::default()
        };
        expect!["distcc: 0 jobs on 0 hosts, 12 local; 127.0.0.1:3999 was unreachable, so its compiles ran locally"]
            .assert_eq(&line(&down));
        let sccache = Acceleration {
            launcher: "sccache",
            hits: Some(1),
            misses: Some(1),
            uncacheable: 1,
            remote_jobs: Some(1),
            ..Acceleration::default()
        };
        expect!["sccache: 1 hit, 1 miss (50%), 1 call not cacheable, 1 distributed"].assert_eq(&line(&sccache));
        expect!["icecc: no figures (icecream keeps no record)"]
            .assert_eq(&line(&Acceleration::unknown("icecc", "icecream keeps no record")));
    }
}
