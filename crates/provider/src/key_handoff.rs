//! Keeping provider keys out of dsh's own environment block.
//!
//! Children never see the key variables (the process layer scrubs them),
//! but `/proc/<dsh pid>/environ` shows the environment dsh was *executed*
//! with, and any same-user process (a hook, the bash tool) can read it.
//! Removing a variable at run time does not change that block. So at
//! start-up [`keep_keys_out_of_environment`] re-executes dsh once:
//!
//! 1. The key variables are `DSH_API_KEY`, `DEEPSEEK_API_KEY`, the
//!    variable `[provider] api_key_env` names in `config.toml` and the key
//!    variable of the API the settings select (`ANTHROPIC_API_KEY` when
//!    only that key is set; read leniently here: a broken file is reported
//!    later, by the normal load).
//! 2. If any is set, their names and values go into a fresh pipe (created
//!    close-on-exec; only its read end is made inheritable), and dsh
//!    `exec`s `/proc/self/exe` with the same argv (bytes, `argv[0]`
//!    included) and the environment minus those variables plus
//!    `DSH_KEY_FD=<fd>:<pid>:<nonce>`. `config.toml`, read in step 1,
//!    travels in the same pipe (its text, or that there is none), so the
//!    new image does not open it again: [`crate::read_config_text`] takes
//!    it from here, once. `exec` keeps the process id, the
//!    open terminal and the signal dispositions; the process name (`comm`,
//!    what `ps` and `pgrep` show) travels in the pipe too and is set again,
//!    since exec'ing `/proc/self/exe` would rename the process `exe`.
//! 3. The new image finds the marker, honours it only when `<pid>` is its
//!    own (a marker inherited from another dsh names that dsh's pid) and
//!    `<fd>` is a pipe whose contents start with the nonce, reads the keys
//!    without ever blocking, and closes the fd. [`crate::ProviderSettings::load`]
//!    then takes the keys from here before the environment.
//!
//! The hand-off cannot lose a key:
//!
//! - The process name is read from `/proc/thread-self/comm`, never through
//!   `prctl(PR_GET_NAME)` wrappers: nix 0.31's `get_name` lets the kernel
//!   write into an immutable buffer, and the optimized build then read the
//!   name as zeros, which broke the payload for every odd-length name.
//! - Before `exec`, the payload is decoded again and must give back exactly
//!   the keys (and name) that went in. A name that does not survive is
//!   dropped; if the keys do not survive, dsh does not re-execute at all
//!   and keeps them in its environment (a warning says so).
//! - A re-executed image that still cannot read its keys does not run
//!   keyless: [`StartupKeys::Lost`] makes `main` report once and exit.
//!
//! `DSH_KEY_FD` stays in the new environment block (changing it would need
//! `unsafe`); it names a closed fd and a nonce that is useless without it,
//! and the process layer scrubs it from every child. A failed re-exec is a
//! warning: dsh then runs as before, with the key in its environment.
//! Only Linux re-executes (elsewhere `/proc/<pid>/environ` does not exist).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, PoisonError};

use crate::settings::{
    DEFAULT_API_KEY_ENV, ENV_API_KEY, configured_api_key_env, selected_api_key_env,
};

/// The marker variable: `<fd>:<pid>:<nonce>`.
pub const ENV_KEY_FD: &str = "DSH_KEY_FD";

/// The most a hand-off may carry: well under a pipe's buffer, so the write
/// before `exec` never blocks.
const MAX_PAYLOAD: usize = 32 * 1024;

/// The keys this process received from its pre-exec self.
static RECEIVED: OnceLock<Vec<(String, String)>> = OnceLock::new();

/// `config.toml` as the pre-exec image read it, until the new image's first
/// read of that path takes it.
static CONFIG: std::sync::Mutex<Option<HandedConfig>> = std::sync::Mutex::new(None);

/// `config.toml` as read before a re-exec: its path and its text (`None`:
/// there was no file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HandedConfig {
    pub(crate) path: PathBuf,
    pub(crate) text: Option<String>,
}

/// The text of `path` if the pre-exec image read it and handed it over
/// (`Some(None)`: there was no file); `None` otherwise. Taken once: a
/// later read of the file (a session that reloads its configuration) reads
/// the disk again.
pub(crate) fn take_handed_off_config(path: &Path) -> Option<Option<String>> {
    let mut handed = CONFIG.lock().unwrap_or_else(PoisonError::into_inner);
    if handed.as_ref().is_some_and(|config| config.path == path) {
        return handed.take().map(|config| config.text);
    }
    None
}

/// The key handed over for variable `name`, if dsh re-executed itself with
/// it; `None` before (or without) a hand-off.
pub fn handed_off_key(name: &str) -> Option<String> {
    RECEIVED
        .get()?
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.clone())
}

/// The variable the Codex SDK passes its `apiKey` in (`dsh exec` reads it
/// when no dsh key is set).
pub const CODEX_API_KEY_ENV: &str = "CODEX_API_KEY";

/// The variables whose values are provider keys: `DSH_API_KEY`,
/// `DEEPSEEK_API_KEY`, the configured `api_key_env` (when `config.toml` is
/// readable), the selected API's key variable, and `CODEX_API_KEY` when it
/// is set. `env` looks variables up.
pub fn key_variable_names(env: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    key_variable_names_with(env, read_dsh_config(env).as_ref())
}

/// `$DSH_HOME/config.toml`, read leniently for the key hand-off: `None`
/// when there is no home or the file cannot be read (the normal load
/// reads it again and reports why).
fn read_dsh_config(env: &dyn Fn(&str) -> Option<String>) -> Option<HandedConfig> {
    let path = crate::settings::resolve_dsh_home(env)?.join(crate::CONFIG_FILE_NAME);
    let text = crate::settings::read_config_from_disk(&path).ok()?;
    Some(HandedConfig { path, text })
}

/// [`key_variable_names`] over `config.toml` as already read (`None`: not
/// readable), so that one read serves both lookups and the hand-off.
fn key_variable_names_with(
    env: &dyn Fn(&str) -> Option<String>,
    config: Option<&HandedConfig>,
) -> Vec<String> {
    let mut names = vec![ENV_API_KEY.to_owned(), DEFAULT_API_KEY_ENV.to_owned()];
    if env(CODEX_API_KEY_ENV).is_some() {
        names.push(CODEX_API_KEY_ENV.to_owned());
    }
    // The configured variable, and the selected API's own (ANTHROPIC_API_KEY
    // when only that key is set).
    let from_config = config.map(|config| {
        let text = config.text.as_deref();
        [
            configured_api_key_env(&config.path, text),
            selected_api_key_env(&config.path, text, env),
        ]
    });
    for name in from_config.into_iter().flatten().flatten() {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// What [`keep_keys_out_of_environment`] did, as far as `main` must know.
#[derive(Debug, PartialEq, Eq)]
pub enum StartupKeys {
    /// Nothing to hand off, or this image received its keys.
    Ready,
    /// The keys could not leave the environment block (re-executing failed,
    /// or the payload would not carry them); dsh runs with them there. The
    /// text is a warning for the user.
    KeptInEnvironment(String),
    /// This is the re-executed image and its keys did not arrive. dsh must
    /// not run without them: `main` reports the text and exits.
    Lost(String),
}

/// Run first thing in `main`: moves provider keys out of this process's
/// environment block by re-executing dsh (see the module docs), or, in the
/// re-executed process, takes them from the hand-off. Returns only when
/// there is nothing (more) to do.
pub fn keep_keys_out_of_environment() -> StartupKeys {
    #[cfg(target_os = "linux")]
    {
        linux::run()
    }
    #[cfg(not(target_os = "linux"))]
    {
        StartupKeys::Ready
    }
}

/// Before dsh `exec`s itself again (a restart inside a session): puts the
/// handed-off keys back into `command`'s environment and drops the stale
/// marker, so that the next image hands them off anew.
pub fn restore_keys_for_exec(command: &mut std::process::Command) {
    command.env_remove(ENV_KEY_FD);
    if let Some(keys) = RECEIVED.get() {
        for (name, value) in keys {
            command.env(name, value);
        }
    }
}

/// A parsed `DSH_KEY_FD` value.
#[derive(Debug, PartialEq, Eq)]
struct Marker {
    fd: i32,
    pid: u32,
    nonce: String,
}

impl Marker {
    fn parse(value: &OsStr) -> Option<Marker> {
        let mut parts = value.to_str()?.splitn(3, ':');
        // 0–2 are stdio: never ours.
        let fd = parts.next()?.parse::<i32>().ok().filter(|fd| *fd > 2)?;
        let pid = parts.next()?.parse::<u32>().ok()?;
        let nonce = parts.next()?.to_owned();
        let plain = !nonce.is_empty() && nonce.chars().all(|c| c.is_ascii_alphanumeric());
        plain.then_some(Marker { fd, pid, nonce })
    }

    fn value(&self) -> String {
        format!("{}:{}:{}", self.fd, self.pid, self.nonce)
    }
}

/// What a hand-off carries.
#[derive(Debug, PartialEq, Eq)]
struct Payload {
    /// The process name before the exec.
    comm: Vec<u8>,
    /// `config.toml` as read before the exec, if it travels.
    config: Option<HandedConfig>,
    /// Key variables and their values.
    keys: Vec<(String, String)>,
}

/// `nonce NUL comm NUL config (name NUL value NUL)*`, where `config` is
/// `NUL` (not handed over), `absent NUL path NUL` (no file) or
/// `text NUL path NUL text NUL`: process names, environment names and
/// values, paths and (carried) file texts never contain NUL.
fn encode(
    nonce: &str,
    comm: &[u8],
    config: Option<&HandedConfig>,
    keys: &[(String, String)],
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut field = |bytes: &[u8]| {
        out.extend_from_slice(bytes);
        out.push(0);
    };
    field(nonce.as_bytes());
    field(comm);
    match config {
        None => field(b""),
        Some(config) => {
            field(if config.text.is_some() {
                b"text"
            } else {
                b"absent"
            });
            field(config.path.to_string_lossy().as_bytes());
            if let Some(text) = &config.text {
                field(text.as_bytes());
            }
        }
    }
    for (name, value) in keys {
        field(name.as_bytes());
        field(value.as_bytes());
    }
    out
}

/// The payload written by [`encode`] with `nonce`. A key value that is not
/// UTF-8 is dropped (as `std::env::var` would not read it either).
fn decode(nonce: &str, bytes: &[u8]) -> Result<Payload, String> {
    let incomplete = || "the hand-off is incomplete".to_owned();
    let Some(body) = bytes.strip_suffix(&[0]) else {
        return Err(incomplete());
    };
    let mut fields = body.split(|byte| *byte == 0);
    if fields.next() != Some(nonce.as_bytes()) {
        return Err("the hand-off does not carry the expected nonce".to_owned());
    }
    let comm = fields.next().ok_or_else(incomplete)?.to_vec();
    let utf8 = |bytes: &[u8]| {
        String::from_utf8(bytes.to_vec())
            .map_err(|_| "the hand-off's config.toml is not UTF-8".to_owned())
    };
    let config = match fields.next().ok_or_else(incomplete)? {
        b"" => None,
        kind @ (b"absent" | b"text") => {
            let path = PathBuf::from(utf8(fields.next().ok_or_else(incomplete)?)?);
            let text = match kind {
                b"text" => Some(utf8(fields.next().ok_or_else(incomplete)?)?),
                _ => None,
            };
            Some(HandedConfig { path, text })
        }
        _ => return Err("the hand-off's config.toml record is malformed".to_owned()),
    };
    let mut keys = Vec::new();
    loop {
        let Some(name) = fields.next() else {
            return Ok(Payload { comm, config, keys });
        };
        let Some(value) = fields.next() else {
            return Err("the hand-off has a name without a value".to_owned());
        };
        if let (Ok(name), Ok(value)) = (std::str::from_utf8(name), std::str::from_utf8(value)) {
            keys.push((name.to_owned(), value.to_owned()));
        }
    }
}

/// The payload to hand `keys` over in, checked by decoding it again: the
/// keys must come back exactly, and so should the process name `comm` and
/// `config`. A name or a config that does not survive (or does not fit
/// [`MAX_PAYLOAD`]) is left out (the process is then named as the kernel
/// names it after `exec`; the new image reads `config.toml` itself); keys
/// that do not survive are an error, and dsh must not re-execute with that
/// payload.
fn checked_payload(
    nonce: &str,
    comm: &[u8],
    config: Option<&HandedConfig>,
    keys: &[(String, String)],
) -> Result<Vec<u8>, String> {
    let nameless: &[u8] = b"";
    let attempts = [
        (comm, config),
        (nameless, config),
        (comm, None),
        (nameless, None),
    ];
    for (comm, config) in attempts {
        let bytes = encode(nonce, comm, config, keys);
        let survives = decode(nonce, &bytes).is_ok_and(|payload| {
            payload.comm == comm && payload.config.as_ref() == config && payload.keys == keys
        });
        if survives && (bytes.len() <= MAX_PAYLOAD || config.is_none()) {
            return Ok(bytes);
        }
    }
    Err("the key variables cannot be passed on intact".to_owned())
}

/// This thread's name as the kernel keeps it (`comm`; for the main thread,
/// the process name), without the newline `/proc` adds. Empty when it
/// cannot be read.
fn current_name() -> Vec<u8> {
    ["/proc/thread-self/comm", "/proc/self/comm"]
        .into_iter()
        .find_map(|path| fs_err::read(path).ok())
        .map(|mut name| {
            if name.last() == Some(&b'\n') {
                name.pop();
            }
            name
        })
        .unwrap_or_default()
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::{ErrorKind, Read as _, Write as _};
    use std::os::fd::AsRawFd as _;
    use std::os::unix::fs::FileTypeExt as _;
    use std::os::unix::process::CommandExt as _;

    use fs_err::os::unix::fs::OpenOptionsExt as _;
    use nix::fcntl::{FcntlArg, FdFlag, OFlag, fcntl};

    use super::{
        CONFIG, ENV_KEY_FD, HandedConfig, MAX_PAYLOAD, Marker, Payload, PoisonError, RECEIVED,
        StartupKeys, checked_payload, current_name, decode, key_variable_names_with,
        read_dsh_config,
    };

    /// Leaves `config` for this image's first read of `config.toml`.
    fn hand_on(config: Option<HandedConfig>) {
        *CONFIG.lock().unwrap_or_else(PoisonError::into_inner) = config;
    }

    pub(super) fn run() -> StartupKeys {
        let marker = std::env::var_os(ENV_KEY_FD);
        if let Some(marker) = marker.as_deref().and_then(Marker::parse)
            && marker.pid == std::process::id()
        {
            // This image is the re-executed one: never exec again.
            return match receive(&marker) {
                Ok(payload) => {
                    restore_name(payload.comm);
                    let _ = RECEIVED.set(payload.keys);
                    hand_on(payload.config);
                    StartupKeys::Ready
                }
                Err(problem) => StartupKeys::Lost(format!(
                    "the API key did not survive dsh's start-up ({problem}); \
                     nothing was run. Run dsh again; if this repeats, report it"
                )),
            };
        }
        let env = |name: &str| std::env::var(name).ok();
        let config = read_dsh_config(&env);
        let names = key_variable_names_with(&env, config.as_ref());
        // Only values dsh can read travel (`std::env::var` reads UTF-8); any
        // other value stays where it is, in the environment.
        let present: Vec<(String, String)> = names
            .into_iter()
            .filter_map(|name| std::env::var(&name).ok().map(|value| (name, value)))
            .collect();
        if present.is_empty() {
            // No re-exec: this image's own load takes what was read here.
            hand_on(config);
            return StartupKeys::Ready;
        }
        let problem = reexec(&present, config.as_ref());
        hand_on(config);
        StartupKeys::KeptInEnvironment(format!(
            "could not keep the API key out of dsh's own environment \
             (re-executing dsh failed: {problem}); continuing with it there"
        ))
    }

    /// Hands `keys` over and replaces this image; returns only on failure,
    /// before anything was removed from the environment.
    fn reexec(keys: &[(String, String)], config: Option<&HandedConfig>) -> String {
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let payload = match checked_payload(&nonce, &current_name(), config, keys) {
            Ok(payload) => payload,
            Err(problem) => return problem,
        };
        if payload.len() > MAX_PAYLOAD {
            return format!("the key variables hold more than {MAX_PAYLOAD} bytes");
        }
        // Both ends close-on-exec and non-blocking: a full pipe fails the
        // write instead of hanging start-up.
        let (read_end, write_end) = match nix::unistd::pipe2(OFlag::O_CLOEXEC | OFlag::O_NONBLOCK) {
            Ok(ends) => ends,
            Err(errno) => return format!("cannot create a pipe: {errno}"),
        };
        let mut writer = std::fs::File::from(write_end);
        if let Err(error) = writer.write_all(&payload) {
            return format!("cannot write the hand-off: {error}");
        }
        drop(writer);
        // Only the read end crosses the exec.
        if let Err(errno) = fcntl(&read_end, FcntlArg::F_SETFD(FdFlag::empty())) {
            return format!("cannot pass the pipe on: {errno}");
        }
        let marker = Marker {
            fd: read_end.as_raw_fd(),
            pid: std::process::id(),
            nonce,
        };
        let mut command = std::process::Command::new("/proc/self/exe");
        let mut args = std::env::args_os();
        if let Some(arg0) = args.next() {
            command.arg0(arg0);
        }
        command.args(args);
        for (name, _) in keys {
            command.env_remove(name);
        }
        command.env(ENV_KEY_FD, marker.value());
        let error = command.exec();
        // Still here: the read end closes on drop.
        drop(read_end);
        error.to_string()
    }

    /// Reads the hand-off named by `marker` (this process's own) and closes
    /// its fd. Never blocks: the pipe is reopened non-blocking, and the
    /// payload was written whole before the exec.
    fn receive(marker: &Marker) -> Result<Payload, String> {
        let path = format!("/proc/self/fd/{}", marker.fd);
        let is_pipe = fs_err::metadata(&path).is_ok_and(|meta| meta.file_type().is_fifo());
        if !is_pipe {
            return Err(format!("fd {} is not the hand-off pipe", marker.fd));
        }
        let read = read_all(&path);
        // The fd has no close-on-exec flag: no child may inherit it.
        if let Err(errno) = nix::unistd::close(marker.fd) {
            tracing::debug!(%errno, fd = marker.fd, "closing the key hand-off fd");
        }
        decode(&marker.nonce, &read?)
    }

    /// Names the process as before the exec (`ps`, `pgrep dsh`).
    fn restore_name(comm: Vec<u8>) {
        if comm.is_empty() {
            return;
        }
        if let Ok(name) = std::ffi::CString::new(comm)
            && let Err(errno) = nix::sys::prctl::set_name(&name)
        {
            tracing::debug!(%errno, "restoring the process name");
        }
    }

    fn read_all(path: &str) -> Result<Vec<u8>, String> {
        let mut file = fs_err::OpenOptions::new()
            .read(true)
            .custom_flags(OFlag::O_NONBLOCK.bits())
            .open(path)
            .map_err(|error| error.to_string())?;
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            match file.read(&mut chunk) {
                Ok(0) => return Ok(bytes),
                Ok(read) => {
                    bytes.extend_from_slice(chunk.get(..read).unwrap_or_default());
                    if bytes.len() > MAX_PAYLOAD {
                        return Err("the hand-off is too long".to_owned());
                    }
                }
                Err(error) if error.kind() == ErrorKind::WouldBlock => return Ok(bytes),
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => return Err(error.to_string()),
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn markers_parse_only_in_their_own_shape() {
        let marker = Marker::parse(OsStr::new("7:1234:abc123")).unwrap();
        assert_eq!(
            marker,
            Marker {
                fd: 7,
                pid: 1234,
                nonce: "abc123".to_owned()
            }
        );
        assert_eq!(marker.value(), "7:1234:abc123");
        for bad in [
            "",
            "7",
            "7:1234",
            "7:1234:",
            "1:1234:abc",
            "x:1:abc",
            "7:1:a-b",
        ] {
            assert_eq!(Marker::parse(OsStr::new(bad)), None, "{bad:?}");
        }
    }

    #[test]
    fn payloads_round_trip_and_check_the_nonce() {
        let keys = vec![
            ("DSH_API_KEY".to_owned(), "sk-1".to_owned()),
            ("MY_KEY".to_owned(), "with = and spaces".to_owned()),
        ];
        let bytes = encode("n1", b"dsh", None, &keys);
        assert_eq!(
            decode("n1", &bytes).unwrap(),
            Payload {
                comm: b"dsh".to_vec(),
                config: None,
                keys: vec![
                    ("DSH_API_KEY".to_owned(), "sk-1".to_owned()),
                    ("MY_KEY".to_owned(), "with = and spaces".to_owned()),
                ]
            }
        );
        assert!(decode("n2", &bytes).is_err());
        assert!(decode("n1", &bytes[..bytes.len() - 1]).is_err());
        assert!(decode("n1", b"n1\0dsh\0NAME\0").is_err());
        assert!(decode("n1", b"n1\0").is_err());
        assert!(decode("n1", b"n1\0\0").is_err());
        assert!(decode("n1", b"n1\0\0text\0/p\0").is_err());
        assert_eq!(
            decode("n1", b"n1\0\0\0").unwrap(),
            Payload {
                comm: Vec::new(),
                config: None,
                keys: Vec::new()
            }
        );
    }

    #[test]
    fn a_name_that_cannot_travel_is_dropped_never_the_keys() {
        let keys = vec![("DSH_API_KEY".to_owned(), "sk-test".to_owned())];
        // The shape of the release-build defect: a name read as NULs.
        let payload = checked_payload("n1", b"\0\0\0", None, &keys).unwrap();
        assert_eq!(
            decode("n1", &payload).unwrap(),
            Payload {
                comm: Vec::new(),
                config: None,
                keys: keys.clone()
            }
        );
        let payload = checked_payload("n1", b"dsh", None, &keys).unwrap();
        assert_eq!(decode("n1", &payload).unwrap().comm, b"dsh");
        // Keys that would not come back whole stop the re-exec.
        let broken = vec![("NAME\0X".to_owned(), "v".to_owned())];
        assert!(checked_payload("n1", b"dsh", None, &broken).is_err());
    }

    /// The hand-off as the start-up builds it, from the name the kernel
    /// holds for this thread: odd and even lengths, any bytes `comm` takes,
    /// any set of keys. CI runs it under the release profile too, where the
    /// old `prctl(PR_GET_NAME)` read broke every odd-length name.
    #[cfg(target_os = "linux")]
    mod handoff_property {
        use proptest::prelude::*;

        use super::super::{checked_payload, current_name, decode};

        fn key_name() -> impl Strategy<Value = String> {
            "[A-Z_][A-Z0-9_]{0,30}"
        }

        fn key_value() -> impl Strategy<Value = String> {
            // Anything an environment value holds except NUL.
            "[^\u{0}]{0,64}"
        }

        proptest! {
            #[test]
            fn every_name_and_key_set_survives(
                name in proptest::collection::vec(1u8..=255, 1..=15),
                keys in proptest::collection::vec((key_name(), key_value()), 0..6),
            ) {
                let name = std::ffi::CString::new(name).unwrap();
                nix::sys::prctl::set_name(&name).unwrap();
                let comm = current_name();
                // The kernel keeps the name byte for byte (it is at most 15).
                prop_assert_eq!(&comm, &name.as_bytes().to_vec());
                let payload = checked_payload("nonce1", &comm, None, &keys).unwrap();
                let decoded = decode("nonce1", &payload).unwrap();
                prop_assert_eq!(decoded.keys, keys);
                prop_assert_eq!(decoded.comm, comm);
            }
        }
    }

    #[test]
    fn config_toml_travels_with_the_keys_or_stays_behind() {
        let keys = vec![("DSH_API_KEY".to_owned(), "sk-1".to_owned())];
        let text = HandedConfig {
            path: PathBuf::from("/home/u/.dsh/config.toml"),
            text: Some("[provider]\nmodel = \"m\"\n".to_owned()),
        };
        let absent = HandedConfig {
            path: PathBuf::from("/home/u/.dsh/config.toml"),
            text: None,
        };
        for config in [&text, &absent] {
            let payload = checked_payload("n1", b"dsh", Some(config), &keys).unwrap();
            let decoded = decode("n1", &payload).unwrap();
            assert_eq!(decoded.config.as_ref(), Some(config));
            assert_eq!(decoded.keys, keys);
            assert_eq!(decoded.comm, b"dsh");
        }
        // A text that cannot travel (a NUL; too long for the pipe) stays
        // behind: the keys still go, and the new image reads the file.
        for bad in ["a\0b".to_owned(), "#".repeat(MAX_PAYLOAD)] {
            let config = HandedConfig {
                path: text.path.clone(),
                text: Some(bad),
            };
            let payload = checked_payload("n1", b"dsh", Some(&config), &keys).unwrap();
            let decoded = decode("n1", &payload).unwrap();
            assert_eq!(decoded.config, None);
            assert_eq!(decoded.keys, keys);
        }
    }

    #[test]
    fn a_handed_off_config_serves_the_first_read_of_its_path_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        fs_err::write(&path, "# on disk\n").unwrap();
        *CONFIG.lock().unwrap() = Some(HandedConfig {
            path: path.clone(),
            text: Some("# handed over\n".to_owned()),
        });
        // Another path does not take it.
        let other = dir.path().join("other.toml");
        assert_eq!(crate::read_config_text(&other).unwrap(), None);
        assert_eq!(
            crate::read_config_text(&path).unwrap().as_deref(),
            Some("# handed over\n")
        );
        // The next read is the disk's.
        assert_eq!(
            crate::read_config_text(&path).unwrap().as_deref(),
            Some("# on disk\n")
        );
        // "No file" is handed over too.
        *CONFIG.lock().unwrap() = Some(HandedConfig {
            path: path.clone(),
            text: None,
        });
        assert_eq!(crate::read_config_text(&path).unwrap(), None);
    }

    #[test]
    fn a_restart_drops_the_stale_marker() {
        let mut command = std::process::Command::new("true");
        command.env(ENV_KEY_FD, "3:1:abc");
        restore_keys_for_exec(&mut command);
        let marker: Vec<_> = command
            .get_envs()
            .filter(|(name, _)| *name == ENV_KEY_FD)
            .collect();
        assert_eq!(marker, [(OsStr::new(ENV_KEY_FD), None)]);
    }

    #[test]
    fn key_names_include_the_configured_variable() {
        let home = tempfile::tempdir().unwrap();
        fs_err::write(
            home.path().join("config.toml"),
            "[provider]\napi_key_env = \"LOCAL_KEY\"\n",
        )
        .unwrap();
        let dsh_home = home.path().display().to_string();
        let env = |name: &str| (name == "DSH_HOME").then(|| dsh_home.clone());
        assert_eq!(
            key_variable_names(&env),
            ["DSH_API_KEY", "DEEPSEEK_API_KEY", "LOCAL_KEY"]
        );
        // With only an Anthropic key, that API's key variable is one too.
        let env_anthropic = |name: &str| match name {
            "DSH_HOME" => Some(dsh_home.clone()),
            "ANTHROPIC_API_KEY" => Some("sk-ant".to_owned()),
            _ => None,
        };
        fs_err::write(home.path().join("config.toml"), "").unwrap();
        assert_eq!(
            key_variable_names(&env_anthropic),
            ["DSH_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY"]
        );
        // A broken file leaves the defaults (the normal load reports it).
        fs_err::write(home.path().join("config.toml"), "[provider\n").unwrap();
        assert_eq!(
            key_variable_names(&env),
            ["DSH_API_KEY", "DEEPSEEK_API_KEY"]
        );
        // The Codex SDK's key, when it is set.
        let env_codex = |name: &str| (name == "CODEX_API_KEY").then(|| "sk-codex".to_owned());
        assert_eq!(
            key_variable_names(&env_codex),
            ["DSH_API_KEY", "DEEPSEEK_API_KEY", "CODEX_API_KEY"]
        );
    }
}
