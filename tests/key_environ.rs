//! The provider key is not in dsh's own environment block: a
//! hook or the bash tool reading `/proc/<dsh pid>/environ` finds no key,
//! while the requests still carry it and the session log never holds it.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use dsh_provider::mock::{MockProvider, MockReply, MockResponse, MockToolCall};
use serde_json::json;

use crate::support::TestContext;

/// A key no other process of the test run holds.
fn secret() -> String {
    format!("secret-XYZ-{}-{}", std::process::id(), uuid_like())
}

fn uuid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Waits (bounded) until the mock has received `count` requests.
fn wait_for_requests(mock: &MockProvider, count: usize, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while mock.recorded().len() < count {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("dsh exited early ({status})");
        }
        assert!(Instant::now() < deadline, "no request {count} within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Kills and reaps the child if the test failed before it exited.
struct Reaper(Option<Child>);

impl Reaper {
    fn child(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }

    /// Waits for the child's exit and collects its output.
    fn finish(mut self) -> std::process::Output {
        self.0.take().unwrap().wait_with_output().unwrap()
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(child) = &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Every file under `dir`, read as bytes.
fn files_under(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            out.push((path, bytes));
        }
    }
    out
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

/// Walks up from the shell through its ancestors (ppid from
/// `/proc/<pid>/stat`), printing `== <pid> <comm>` and that process's
/// environment block, as a hook or the bash tool could.
const DUMP_ANCESTORS: &str = r#"p=$$; while [ "$p" -gt 1 ]; do echo "== $p $(cat /proc/$p/comm)"; tr '\0' '\n' < /proc/$p/environ 2>/dev/null; p=$(cut -d' ' -f4 /proc/$p/stat); done; echo "== end""#;

#[test]
fn neither_the_bash_tool_nor_the_test_finds_the_key_in_dsh_s_environ() {
    let ctx = TestContext::new();
    let key = secret();
    // The tool call arrives slowly, so that dsh is alive while the test
    // reads its environment block itself.
    let first = MockReply::text("Looking. ")
        .with_tool_call(MockToolCall::new(
            "call_1",
            "bash",
            &json!({"command": DUMP_ANCESTORS}),
        ))
        .with_delay(Duration::from_millis(400));
    let mock = MockProvider::start_blocking(vec![
        MockResponse::Reply(first),
        MockResponse::text("Done."),
    ])
    .unwrap();
    let child = ctx
        .dsh_std()
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", &key)
        .args([
            "-p",
            "Read the environment",
            "--permission-mode",
            "bypassPermissions",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut child = Reaper(Some(child));
    wait_for_requests(&mock, 1, child.child());

    // Read directly, as any same-user process could, while dsh runs.
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    assert!(!contains(&environ, &key), "the key is in dsh's environ");
    assert!(!contains(&environ, "DSH_API_KEY="));
    assert!(contains(&environ, "DSH_BASE_URL="), "not dsh's environ");
    assert!(contains(&environ, "DSH_KEY_FD="), "dsh did not hand off");

    let output = child.finish();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert!(!stderr.contains("could not"), "stderr: {stderr}");

    // Both requests carried the key.
    let recorded = mock.recorded();
    assert_eq!(recorded.len(), 2);
    for request in &recorded {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {key}").as_str())
        );
    }

    // What the bash tool saw, walking up from its shell to dsh and beyond.
    let messages = mock.requests()[1]["messages"].as_array().unwrap().clone();
    let tool = messages
        .iter()
        .find(|message| message["role"] == "tool")
        .expect("the tool result");
    let dump = tool["content"].as_str().unwrap();
    assert!(!dump.contains(&key), "the bash tool read the key: {dump}");
    let sections: Vec<&str> = dump.split("== ").skip(1).collect();
    let dsh_section = sections
        .iter()
        .find(|section| section.starts_with(&format!("{pid} ")))
        .unwrap_or_else(|| panic!("dsh ({pid}) is not among the ancestors: {dump}"));
    assert!(
        dsh_section.starts_with(&format!("{pid} dsh")),
        "{dsh_section}"
    );
    assert!(dsh_section.contains("DSH_BASE_URL="), "{dsh_section}");
    assert!(dsh_section.contains("DSH_KEY_FD="), "{dsh_section}");
    // The shell itself has neither the key nor the hand-off marker.
    assert!(!sections[0].contains("DSH_KEY_FD"), "{}", sections[0]);
    assert!(dump.trim_end().ends_with("== end"), "{dump}");

    // The key is nowhere in dsh's home (session log included).
    let files = files_under(&ctx.home().join(".dsh"));
    assert!(
        files
            .iter()
            .any(|(path, _)| path.extension().is_some_and(|ext| ext == "jsonl")),
        "no session log"
    );
    for (path, bytes) in files {
        assert!(!contains(&bytes, &key), "{} holds the key", path.display());
    }
}

#[test]
fn a_renamed_key_variable_is_handed_off_and_argv_survives_byte_for_byte() {
    let ctx = TestContext::new();
    let key = secret();
    std::fs::create_dir_all(ctx.home().join(".dsh")).unwrap();
    std::fs::write(
        ctx.home().join(".dsh").join("config.toml"),
        "[provider]\napi_key_env = \"MY_LLM_KEY\"\n",
    )
    .unwrap();
    // A settings file whose name is not UTF-8, passed on the command line.
    let mut name = b"settings-".to_vec();
    name.extend_from_slice(&[0xff, 0xfe]);
    name.extend_from_slice(b".json");
    let settings = ctx.project().join(OsString::from_vec(name));
    std::fs::write(&settings, "{}").unwrap();
    let slow = MockReply::chunks(["Hello ", "there."]).with_delay(Duration::from_millis(800));
    let mock = MockProvider::start_blocking(vec![MockResponse::Reply(slow)]).unwrap();
    let args: Vec<OsString> = vec![
        "-p".into(),
        "Say hello, é".into(),
        "--settings".into(),
        settings.clone().into_os_string(),
    ];
    let child = ctx
        .dsh_std()
        .env("DSH_BASE_URL", mock.base_url())
        .env("MY_LLM_KEY", &key)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut child = Reaper(Some(child));
    wait_for_requests(&mock, 1, child.child());

    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    assert!(!contains(&environ, &key), "the key is in dsh's environ");
    assert!(!contains(&environ, "MY_LLM_KEY="));
    assert!(contains(&environ, "DSH_KEY_FD="), "dsh did not hand off");
    // argv after the exec: argv[0], then the arguments, byte for byte.
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv: Vec<&[u8]> = cmdline
        .strip_suffix(&[0])
        .unwrap()
        .split(|b| *b == 0)
        .collect();
    let expected: Vec<&[u8]> = args.iter().map(|arg| arg.as_bytes()).collect();
    assert_eq!(&argv[1..], expected.as_slice());
    assert!(
        argv[0].ends_with(b"dsh"),
        "{:?}",
        String::from_utf8_lossy(argv[0])
    );
    // Still called dsh (exec'ing /proc/self/exe alone would name it `exe`).
    assert_eq!(
        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap(),
        "dsh\n"
    );

    let output = child.finish();
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&output.stdout), "Hello there.\n");
    assert_eq!(
        mock.recorded()[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    let messages = mock.requests()[0]["messages"].as_array().unwrap().clone();
    assert_eq!(messages.last().unwrap()["content"], "Say hello, é");
}

#[test]
fn an_inherited_marker_is_not_trusted_and_config_errors_still_show() {
    let ctx = TestContext::new();
    let key = secret();
    // A marker naming another process (pid 1) and stdin's fd-like number.
    let mock = MockProvider::start_blocking(vec![MockResponse::text("ok")]).unwrap();
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", &key)
        .env("DSH_KEY_FD", "3:1:0123abcd")
        .args(["-p", "Hello"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    assert!(!stderr.contains("could not"), "stderr: {stderr}");
    assert_eq!(
        mock.recorded()[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );

    // A broken config.toml is reported as before, after the re-exec.
    std::fs::create_dir_all(ctx.home().join(".dsh")).unwrap();
    std::fs::write(
        ctx.home().join(".dsh").join("config.toml"),
        "[provider]\nbogus_key = 1\n",
    )
    .unwrap();
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .env("DSH_API_KEY", &key)
        .args(["-p", "Hello"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("bogus_key"), "stderr: {stderr}");
    assert!(stderr.contains("config.toml"), "stderr: {stderr}");
    assert!(!stderr.contains(&key), "stderr: {stderr}");
}

/// Counts the opens of `files` (inotify `IN_OPEN`) while it lives. Closes
/// are watched too: inotify merges an event into an identical one still
/// unread, so two opens in a row would count once.
struct OpenCounter {
    inotify: nix::sys::inotify::Inotify,
    watches: Vec<(nix::sys::inotify::WatchDescriptor, std::path::PathBuf)>,
}

impl OpenCounter {
    fn watch(files: &[std::path::PathBuf]) -> OpenCounter {
        use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).unwrap();
        let watches = files
            .iter()
            .map(|file| {
                let flags = AddWatchFlags::IN_OPEN | AddWatchFlags::IN_CLOSE;
                let watch = inotify.add_watch(file, flags).unwrap();
                (watch, file.clone())
            })
            .collect();
        OpenCounter { inotify, watches }
    }

    /// Each watched file with how often it was opened.
    fn opens(&self) -> Vec<(std::path::PathBuf, usize)> {
        let mut counts: Vec<(std::path::PathBuf, usize)> = self
            .watches
            .iter()
            .map(|(_, file)| (file.clone(), 0))
            .collect();
        while let Ok(events) = self.inotify.read_events() {
            if events.is_empty() {
                break;
            }
            for event in events {
                if !event
                    .mask
                    .contains(nix::sys::inotify::AddWatchFlags::IN_OPEN)
                {
                    continue;
                }
                let at = self.watches.iter().position(|(wd, _)| *wd == event.wd);
                if let Some(at) = at {
                    counts[at].1 += 1;
                }
            }
        }
        counts
    }
}

/// One `dsh -p` start opens each configuration file once, `config.toml`
/// included: the key hand-off reads it before re-executing dsh and hands
/// the text over with the keys, so the new image does not open it again.
#[test]
fn a_start_with_a_key_opens_each_configuration_file_once() {
    let ctx = TestContext::new();
    let key = secret();
    let dsh_home = ctx.home().join(".dsh");
    std::fs::create_dir_all(&dsh_home).unwrap();
    std::fs::create_dir_all(ctx.home().join(".claude")).unwrap();
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    let files = [
        dsh_home.join("config.toml"),
        ctx.home().join(".claude").join("settings.json"),
        ctx.home().join(".claude.json"),
        ctx.project().join(".claude").join("settings.json"),
        ctx.project().join(".claude").join("settings.local.json"),
    ];
    std::fs::write(&files[0], "[provider]\napi_key_env = \"MY_LLM_KEY\"\n").unwrap();
    for file in &files[1..] {
        std::fs::write(file, "{}").unwrap();
    }
    let mock = MockProvider::start_blocking(vec![MockResponse::text("ok")]).unwrap();
    let counter = OpenCounter::watch(&files);
    let output = ctx
        .dsh()
        .env("DSH_BASE_URL", mock.base_url())
        .env("MY_LLM_KEY", &key)
        .args(["-p", "Hello"])
        .output()
        .unwrap();
    let opens = counter.opens();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stderr: {stderr}");
    // The key came through the hand-off, named by config.toml.
    assert_eq!(
        mock.recorded()[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    let expected: Vec<(std::path::PathBuf, usize)> =
        files.iter().map(|file| (file.clone(), 1)).collect();
    assert_eq!(opens, expected);
}

/// `dsh hooks list` and `dsh mcp list` resolve the directory through
/// core's one entry (`Workspace::resolve`): each configuration file is
/// opened once, though hooks, their trust, the permission layers and the
/// MCP servers all read it.
#[test]
fn the_reading_commands_open_each_configuration_file_once() {
    let ctx = TestContext::new();
    let dsh_home = ctx.home().join(".dsh");
    std::fs::create_dir_all(&dsh_home).unwrap();
    std::fs::create_dir_all(ctx.home().join(".claude")).unwrap();
    std::fs::create_dir_all(ctx.project().join(".claude")).unwrap();
    let files = [
        ctx.home().join(".claude").join("settings.json"),
        ctx.home().join(".claude.json"),
        ctx.project().join(".claude").join("settings.json"),
        ctx.project().join(".claude").join("settings.local.json"),
        ctx.project().join(".mcp.json"),
        dsh_home.join("trust.json"),
    ];
    std::fs::write(
        &files[2],
        r#"{"permissions":{"allow":["Bash(ls:*)"]},"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"echo hi"}]}]}}"#,
    )
    .unwrap();
    std::fs::write(
        &files[4],
        r#"{"mcpServers":{"echo":{"command":"python3","args":["s.py"]}}}"#,
    )
    .unwrap();
    std::fs::write(&files[5], r#"{"version":1,"hooks":{}}"#).unwrap();
    for file in [&files[0], &files[1], &files[3]] {
        std::fs::write(file, "{}").unwrap();
    }
    for args in [&["hooks", "list"][..], &["mcp", "list"][..]] {
        let counter = OpenCounter::watch(&files);
        let output = ctx.dsh().args(args).output().unwrap();
        let opens = counter.opens();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{args:?}: {output:?}");
        assert!(stdout.contains("echo"), "{args:?}: {stdout}");
        let expected: Vec<(std::path::PathBuf, usize)> =
            files.iter().map(|file| (file.clone(), 1)).collect();
        assert_eq!(opens, expected, "{args:?}");
    }
}
