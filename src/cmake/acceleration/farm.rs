//! A build farm's slots: how many compiles a build through distcc or icecc may run at once when the
//! request gives no `parallel`.
//!
//! Architecture invariant: pure functions of the profile's `env=` entries; an unreadable host list
//! gives no figure (CMake's default parallelism), never a guess.

use super::Launcher;
use crate::cmake::options::ProfileEnv;

/// distcc's own defaults: two jobs on `localhost`, four on any other host.
const LOCALHOST_LIMIT: u32 = 2;
const HOST_LIMIT: u32 = 4;

/// The farm's slots for `launcher`: distcc's sum of the `DISTCC_HOSTS` limits of the profile's
/// `env=`; icecream's scheduler count is read by the caller where it can be.
pub fn slots(launcher: Launcher, env: &[ProfileEnv]) -> Option<u32> {
    match launcher {
        Launcher::Distcc => distcc_slots(&env.iter().find(|env| env.name == "DISTCC_HOSTS")?.value),
        Launcher::Ccache | Launcher::Sccache | Launcher::Icecc => None,
    }
}

/// The sum of the limits of a `DISTCC_HOSTS` value (`HOST[:PORT][/LIMIT][,OPTIONS]`, `@HOST`,
/// `localhost[/LIMIT]`; options such as `--randomize` are skipped). `None` for an empty list or a
/// zeroconf one, whose size is known only to distcc.
pub fn distcc_slots(hosts: &str) -> Option<u32> {
    let mut total: u32 = 0;
    for entry in hosts.split_whitespace() {
        if entry.starts_with("--") {
            continue;
        }
        if entry.starts_with('+') {
            return None;
        }
        let host = entry.split(',').next().unwrap_or_default();
        let limit = match host.split_once('/') {
            Some((_, limit)) => limit.parse::<u32>().ok()?,
            None if host == "localhost" => LOCALHOST_LIMIT,
            None => HOST_LIMIT,
        };
        total = total.saturating_add(limit);
    }
    (total > 0).then_some(total)
}

/// The names of the hosts of a `DISTCC_HOSTS` value as distcc's log names them (`HOST:PORT` stays
/// whole, `@HOST` loses the `@`, limits and options are dropped).
pub fn distcc_hosts(hosts: &str) -> Vec<String> {
    hosts
        .split_whitespace()
        .filter(|entry| !entry.starts_with("--") && !entry.starts_with('+'))
        .map(|entry| {
            let host = entry.split(',').next().unwrap_or_default();
            let host = host.split_once('/').map_or(host, |(host, _)| host);
            host.trim_start_matches('@').to_owned()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distcc_limits_add_up_with_distcc_defaults() {
        assert_eq!(distcc_slots("127.0.0.1:3632/4"), Some(4));
        assert_eq!(distcc_slots("localhost/2 buildbox1/16 buildbox2/16"), Some(34));
        assert_eq!(distcc_slots("--randomize localhost a b:4000,lzo @c/3,lzo,cpp"), Some(2 + 4 + 4 + 3));
        assert_eq!(distcc_slots(""), None);
        assert_eq!(distcc_slots("+zeroconf"), None);
        assert_eq!(distcc_slots("a/x"), None);
    }

    #[test]
    fn distcc_host_names() {
        assert_eq!(
            distcc_hosts("--randomize localhost/2 127.0.0.1:3632/4,lzo @c/3"),
            ["localhost", "127.0.0.1:3632", "c"]
        );
    }

    #[test]
    fn only_distcc_reads_its_hosts() {
        let env = [ProfileEnv { name: "DISTCC_HOSTS".into(), value: "a/8 b/8".into() }];
        assert_eq!(slots(Launcher::Distcc, &env), Some(16));
        assert_eq!(slots(Launcher::Ccache, &env), None);
        assert_eq!(slots(Launcher::Distcc, &[]), None);
    }
}
