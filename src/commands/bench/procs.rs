//! Memory and process figures: resident set sizes read from `/proc` (Linux; elsewhere the figures
//! are reported as not measured), and the kit's own binary started as a child for the figures
//! that need a fresh process (`mock` start-up, its memory per task, the peak of `check`).

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// Which `/proc/PID/status` line to read.
#[derive(Debug, Clone, Copy)]
pub enum Rss {
    /// `VmRSS`: resident now.
    Current,
    /// `VmHWM`: the most that was ever resident.
    Peak,
}

/// Resident memory of `pid` (this process with `None`), in bytes; `None` where `/proc` does not
/// say (not Linux, or the process is gone).
pub fn rss(pid: Option<u32>, which: Rss) -> Option<u64> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let key = match which {
        Rss::Current => "VmRSS:",
        Rss::Peak => "VmHWM:",
    };
    status_kib(&std::fs::read_to_string(path).ok()?, key).map(|kib| kib * 1024)
}

/// The `kB` value of a `/proc/PID/status` line.
fn status_kib(status: &str, key: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with(key))?;
    let mut words = line[key.len()..].split_whitespace();
    let n = words.next()?.parse().ok()?;
    (words.next() == Some("kB")).then_some(n)
}

/// A child process of the kit's binary, killed when dropped: the bench never leaves one behind.
#[derive(Debug)]
pub struct KitProcess {
    child: Child,
    /// Kept open: a child writing to a closed pipe would fail.
    _stdout: Option<BufReader<ChildStdout>>,
}

impl KitProcess {
    pub fn id(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for KitProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(exe: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(exe);
    c.args(args).stdin(Stdio::null()).stderr(Stdio::null()).env("RUST_LOG", "a2a_conform=warn");
    c
}

/// Starts `EXE mock --port 0 ARGS...` and waits (at most `limit`) for its `listening on URL`
/// line; returns the process and the URL.
pub async fn start_mock(exe: &Path, args: &[&str], limit: Duration) -> Result<(KitProcess, String), String> {
    let mut all = vec!["mock", "--port", "0"];
    all.extend_from_slice(args);
    let mut child = command(exe, &all)
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting {} mock: {e}", exe.display()))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut process = KitProcess { child, _stdout: None };
    let read = tokio::task::spawn_blocking(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let n = reader.read_line(&mut line).map_err(|e| e.to_string())?;
        Ok::<_, String>((reader, line, n))
    });
    let (reader, line, n) = match tokio::time::timeout(limit, read).await {
        Ok(Ok(Ok(x))) => x,
        Ok(Ok(Err(e))) => return Err(format!("reading the mock's first line: {e}")),
        Ok(Err(e)) => return Err(format!("reading the mock's first line: {e}")),
        // Dropping the process kills it, which ends the blocked read.
        Err(_) => return Err(format!("the mock printed nothing within {} s", limit.as_secs())),
    };
    process._stdout = Some(reader);
    let url = line.trim().strip_prefix("listening on ").map(str::to_owned);
    match url {
        Some(u) if n > 0 => Ok((process, u)),
        _ => Err(format!("the mock's first line is not `listening on URL`: {:?}", line.trim())),
    }
}

/// How a child `check` run went: its exit status, wall time and the peak resident memory seen.
#[derive(Debug, Clone)]
pub struct CheckRun {
    pub exit: Option<i32>,
    pub wall: Duration,
    pub peak_rss: Option<u64>,
}

/// Runs `EXE check ARGS...` to its end (killed after `limit`), sampling its peak resident memory.
/// `VmHWM` only grows and disappears when the process exits, so the last sample is the peak up to
/// one sampling interval before the end.
pub async fn run_check(exe: &Path, args: &[&str], limit: Duration) -> Result<CheckRun, String> {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let started = Instant::now();
    let child = command(exe, &all)
        .stdout(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting {} check: {e}", exe.display()))?;
    let mut process = KitProcess { child, _stdout: None };
    let mut peak = None;
    loop {
        if let Some(p) = rss(Some(process.id()), Rss::Peak) {
            peak = Some(p);
        }
        match process.child.try_wait() {
            Ok(Some(status)) => return Ok(CheckRun { exit: status.code(), wall: started.elapsed(), peak_rss: peak }),
            Ok(None) if started.elapsed() > limit => {
                return Err(format!("check did not end within {} s; stopped", limit.as_secs()));
            }
            Ok(None) => tokio::time::sleep(Duration::from_millis(2)).await,
            Err(e) => return Err(format!("waiting for check: {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUS: &str =
        "Name:\ta2a-conform\nVmPeak:\t  912344 kB\nVmHWM:\t   40960 kB\nVmRSS:\t   20480 kB\nThreads:\t3\n";

    #[test]
    fn reads_kib_lines_of_proc_status() {
        assert_eq!(status_kib(STATUS, "VmRSS:"), Some(20480));
        assert_eq!(status_kib(STATUS, "VmHWM:"), Some(40960));
        assert_eq!(status_kib(STATUS, "VmSwap:"), None);
        assert_eq!(status_kib(STATUS, "Threads:"), None, "not a kB line");
    }

    #[test]
    fn reads_its_own_memory_where_proc_exists() {
        if Path::new("/proc/self/status").exists() {
            let now = rss(None, Rss::Current).expect("VmRSS");
            let peak = rss(None, Rss::Peak).expect("VmHWM");
            assert!(now > 0 && peak >= now);
        } else {
            assert_eq!(rss(None, Rss::Current), None);
        }
    }
}
