//! What a cache or farm did during one build, read from that build's own records: ccache's
//! per-build statistics log (`CCACHE_STATSLOG`), the difference of two sccache statistics
//! snapshots, distcc's per-build log (`DISTCC_LOG`).
//!
//! Architecture invariant: pure parsers of text the tools wrote; figures are this build's own
//! (a per-build log or a difference), never a tool's lifetime totals.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// What the launcher did during one build execution (a `cmake_build` result's `acceleration`);
/// fields a launcher does not report are null.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Acceleration {
    /// `ccache`, `sccache`, `distcc` or `icecc`.
    pub launcher: &'static str,
    /// Compiles answered from the cache (caches only).
    pub hits: Option<u64>,
    /// Compiles the cache did not have (caches only).
    pub misses: Option<u64>,
    /// Calls a cache could not cache (links, preprocessing only, unsupported options).
    pub uncacheable: u64,
    /// Compiles run on farm hosts (farms, and sccache's distributed compiles).
    pub remote_jobs: Option<u64>,
    /// The farm hosts that ran them, in order of first use.
    pub hosts: Vec<String>,
    /// Compiles a farm ran on this machine (by choice or after a failure).
    pub local_jobs: Option<u64>,
    /// Farm hosts that could not be reached; their compiles ran locally.
    #[serde(rename = "unreachable_hosts")]
    pub unreachable: Vec<String>,
    /// Why figures are missing or partial (`None` when they are complete).
    pub note: Option<String>,
}

impl Acceleration {
    /// No figures, and why.
    pub fn unknown(launcher: &'static str, note: impl Into<String>) -> Acceleration {
        Acceleration { launcher, note: Some(note.into()), ..Acceleration::default() }
    }
}

/// ccache's statistics log: for each call a `# <input>` line, then the names of the counters that
/// call raised (`direct_cache_hit`, `preprocessed_cache_hit`, `cache_miss`, `called_for_link`, …).
pub fn ccache_statslog(text: &str) -> Acceleration {
    let (mut hits, mut misses, mut uncacheable) = (0, 0, 0);
    let mut call: Option<(bool, bool)> = None;
    let mut finish = |call: Option<(bool, bool)>| match call {
        Some((true, _)) => hits += 1,
        Some((false, true)) => misses += 1,
        Some((false, false)) => uncacheable += 1,
        None => {}
    };
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            finish(call.replace((false, false)));
            continue;
        }
        let Some((hit, miss)) = call.as_mut() else { continue };
        match line {
            "direct_cache_hit" | "preprocessed_cache_hit" => *hit = true,
            "cache_miss" => *miss = true,
            _ => {}
        }
    }
    finish(call);
    Acceleration { launcher: "ccache", hits: Some(hits), misses: Some(misses), uncacheable, ..Acceleration::default() }
}

/// The difference of two `sccache --show-stats --stats-format=json` outputs, C and C++ only (a
/// Rust build sharing the server is not counted).
pub fn sccache_delta(before: &str, after: &str) -> Result<Acceleration, String> {
    let parse = |text: &str| -> Result<Value, String> {
        let value: Value = serde_json::from_str(text.trim()).map_err(|err| format!("unreadable statistics: {err}"))?;
        value.get("stats").cloned().ok_or_else(|| "the statistics have no `stats`".to_owned())
    };
    let (before, after) = (parse(before)?, parse(after)?);
    let c_family = |stats: &Value, key: &str| -> u64 {
        stats.get(key).and_then(|counts| counts.get("counts").or(Some(counts))).and_then(Value::as_object).map_or(
            0,
            |counts| {
                counts.iter().filter(|(language, _)| language.starts_with("C")).filter_map(|(_, n)| n.as_u64()).sum()
            },
        )
    };
    let plain = |stats: &Value, key: &str| stats.get(key).and_then(Value::as_u64).unwrap_or(0);
    let delta = |f: &dyn Fn(&Value) -> u64| f(&after).saturating_sub(f(&before));
    let hits = delta(&|s| c_family(s, "cache_hits"));
    let misses = delta(&|s| c_family(s, "cache_misses"));
    let remote = delta(&|s| c_family(s, "dist_compiles"));
    let uncacheable = delta(&|s| plain(s, "requests_not_cacheable") + plain(s, "non_cacheable_compilations"));
    Ok(Acceleration {
        launcher: "sccache",
        hits: Some(hits),
        misses: Some(misses),
        uncacheable,
        remote_jobs: (remote > 0).then_some(remote),
        ..Acceleration::default()
    })
}

/// distcc's log of one build (`DISTCC_LOG`, default level): `compile <file> on <host> completed ok`
/// per job (`localhost` is this machine), `failed to distribute <file> to <host>, running locally
/// instead` and `nonblocking connect to <host> failed` for an unreachable host, and the host-less
/// `failed to distribute, running locally instead` while distcc backs off from one.
pub fn distcc_log(text: &str, listed_hosts: &[String]) -> Acceleration {
    let mut res =
        Acceleration { launcher: "distcc", remote_jobs: Some(0), local_jobs: Some(0), ..Acceleration::default() };
    let mut backed_off = false;
    // distcc's first error that is not about reaching a host (its lock directory, a refused job).
    let mut local_error: Option<String> = None;
    let add = |list: &mut Vec<String>, host: &str| {
        if !list.iter().any(|known| known == host) {
            list.push(host.to_owned());
        }
    };
    for line in text.lines() {
        let message = line.split_once("] ").map_or(line, |(_, rest)| rest);
        if let Some(rest) = message.strip_prefix("compile ").and_then(|rest| rest.strip_suffix(" completed ok")) {
            let host = rest.rsplit_once(" on ").map_or("", |(_, host)| host);
            let host = host.split_once('/').map_or(host, |(host, _)| host);
            if host == "localhost" {
                *res.local_jobs.get_or_insert(0) += 1;
            } else {
                *res.remote_jobs.get_or_insert(0) += 1;
                add(&mut res.hosts, host);
            }
        } else if let Some(rest) = message.split_once("failed to distribute").map(|(_, rest)| rest) {
            match rest.split_once(" to ").and_then(|(_, rest)| rest.split_once(", running locally")) {
                Some((host, _)) => add(&mut res.unreachable, host.split_once('/').map_or(host, |(host, _)| host)),
                None => backed_off = true,
            }
        } else if let Some(rest) = message.strip_prefix("ERROR: nonblocking connect to ") {
            if let Some((host, _)) = rest.split_once(" failed") {
                add(&mut res.unreachable, host);
            }
        } else if let Some((_, error)) = message.split_once("ERROR: ") {
            local_error.get_or_insert_with(|| error.trim().to_owned());
        }
    }
    if backed_off
        && res.unreachable.is_empty()
        && let Some(error) = local_error
    {
        res.note = Some(format!("distcc compiled locally after its own error: {error}"));
    } else if backed_off && res.unreachable.is_empty() {
        // distcc names no host while it backs off from one that failed earlier: name the listed
        // hosts that ran nothing in this build.
        for host in listed_hosts.iter().filter(|host| *host != "localhost" && !res.hosts.contains(host)) {
            add(&mut res.unreachable, host);
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ccache_counts_calls_of_this_log() {
        let log = "# a.cpp\ncache_miss\ndirect_cache_miss\nlocal_storage_write\n# a.cpp\ndirect_cache_hit\nlocal_storage_hit\n\
                   # b.cpp\npreprocessed_cache_hit\n# app\ncalled_for_link\n";
        let figures = ccache_statslog(log);
        assert_eq!((figures.hits, figures.misses, figures.uncacheable), (Some(2), Some(1), 1));
        assert_eq!(ccache_statslog("").hits, Some(0));
    }

    #[test]
    fn sccache_difference_counts_c_and_cxx_only() {
        let before = r#"{"stats":{"cache_hits":{"counts":{"C/C++":3,"Rust":10}},"cache_misses":{"counts":{"C/C++":1}},"requests_not_cacheable":0,"dist_compiles":{}}}"#;
        let after = r#"{"stats":{"cache_hits":{"counts":{"C/C++":40,"Rust":90}},"cache_misses":{"counts":{"C/C++":2,"Rust":5}},"requests_not_cacheable":2,"dist_compiles":{}}}"#;
        let figures = sccache_delta(before, after).unwrap();
        assert_eq!(
            (figures.hits, figures.misses, figures.uncacheable, figures.remote_jobs),
            (Some(37), Some(1), 2, None)
        );
        assert!(sccache_delta("not json", after).unwrap_err().starts_with("unreadable statistics"));
    }

    #[test]
    fn distcc_jobs_hosts_and_local_fallbacks() {
        let log = "distcc[1] compile from a.cpp to a.o\n\
                   distcc[1] exec on 127.0.0.1:3632/4: g++ -c a.cpp -o a.o\n\
                   distcc[1] compile a.cpp on 127.0.0.1:3632/4 completed ok\n\
                   distcc[2] compile b.cpp on 10.0.0.2/8 completed ok\n\
                   distcc[3] ERROR: nonblocking connect to 10.0.0.9:3632 failed: Connection refused\n\
                   distcc[3] Warning: failed to distribute c.cpp to 10.0.0.9:3632/4, running locally instead\n\
                   distcc[3] compile c.cpp on localhost completed ok\n";
        let figures = distcc_log(log, &[]);
        assert_eq!((figures.remote_jobs, figures.local_jobs), (Some(2), Some(1)));
        assert_eq!(figures.hosts, ["127.0.0.1:3632", "10.0.0.2"]);
        assert_eq!(figures.unreachable, ["10.0.0.9:3632"]);
    }

    #[test]
    fn distcc_backing_off_names_the_listed_hosts_that_ran_nothing() {
        let log = "distcc[3] (dcc_build_somewhere) Warning: failed to distribute, running locally instead\n\
                   distcc[3] compile c.cpp on localhost completed ok\n";
        let figures = distcc_log(log, &["127.0.0.1:3999".to_owned(), "localhost".to_owned()]);
        assert_eq!((figures.remote_jobs, figures.local_jobs), (Some(0), Some(1)));
        assert_eq!(figures.unreachable, ["127.0.0.1:3999"]);
        let own = format!("distcc[3] (dcc_mkdir) ERROR: mkdir '/d/lock' failed: No such file or directory\n{log}");
        let figures = distcc_log(&own, &["127.0.0.1:3999".to_owned()]);
        assert!(figures.unreachable.is_empty());
        assert_eq!(
            figures.note.as_deref(),
            Some("distcc compiled locally after its own error: mkdir '/d/lock' failed: No such file or directory")
        );
    }
}
