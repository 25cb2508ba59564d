//! The log under hostile conditions: failing disks, FIFOs, symlinks, a
//! second writer, file modes.

use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use dsh_protocol::{
    EventBody, SessionHeaderEvent, TurnEndEvent, TurnEndReason, TurnStartEvent, UserMessageEvent,
};
use dsh_session::{LockWait, LogError, LogWriter, SessionLog, load};

fn header() -> EventBody {
    EventBody::SessionHeader(SessionHeaderEvent {
        session_id: "s1".into(),
        cwd: "/tmp".into(),
        version: "test".into(),
        notices: vec![],
        provider_api: None,
    })
}

fn user(turn: u64, text: &str) -> EventBody {
    EventBody::UserMessage(UserMessageEvent {
        turn,
        content: text.into(),
        source: "user".into(),
        original_content: None,
    })
}

/// A file whose next write, once armed, stops half-way with ENOSPC — what a
/// full disk does to a line.
#[derive(Debug)]
struct FullDisk {
    file: std::fs::File,
    armed: Arc<AtomicBool>,
}

impl LogWriter for FullDisk {
    fn write_line(&mut self, line: &[u8]) -> std::io::Result<()> {
        if self.armed.swap(false, Ordering::SeqCst) {
            self.file.write_all(&line[..line.len() / 2])?;
            return Err(std::io::Error::from_raw_os_error(libc_enospc()));
        }
        self.file.write_all(line)
    }
    fn truncate_to(&mut self, len: u64) -> std::io::Result<()> {
        self.file.truncate_to(len)
    }
}

fn libc_enospc() -> i32 {
    28
}

#[test]
fn a_failed_append_is_cut_back_and_later_events_stay_readable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let armed = Arc::new(AtomicBool::new(false));
    let file = std::fs::File::create(&path).unwrap();
    let mut log = SessionLog::over_writer(
        &path,
        Box::new(FullDisk {
            file,
            armed: Arc::clone(&armed),
        }),
        header(),
    )
    .unwrap();
    log.append(EventBody::TurnStart(TurnStartEvent { turn: 1 }))
        .unwrap();
    armed.store(true, Ordering::SeqCst);
    let err = log.append(user(1, "lost to a full disk")).unwrap_err();
    assert!(
        matches!(
            err,
            LogError::AppendFailed {
                recovered: true,
                seq: 2,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        log.events().len(),
        2,
        "the failed event is not acknowledged"
    );
    // The log goes on where it left off: same seq, no glued line.
    log.append(user(1, "after the disk had room")).unwrap();
    log.append(EventBody::TurnEnd(TurnEndEvent {
        turn: 1,
        reason: TurnEndReason::Error,
        message: None,
    }))
    .unwrap();
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.torn_tail, None);
    assert_eq!(loaded.events.len(), 4);
    assert_eq!(loaded.events, log.events());
}

#[test]
fn logs_are_private_and_never_written_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = dir.path().join("home/sessions");
    let path = sessions.join("s.jsonl");
    SessionLog::create(&path, header()).unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&sessions), 0o700);
    assert_eq!(mode(&dir.path().join("home")), 0o700);

    let target = dir.path().join("target.jsonl");
    std::fs::copy(&path, &target).unwrap();
    let link = sessions.join("link.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    assert!(SessionLog::open(&link).is_err());
    let planted = sessions.join("planted.jsonl");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &planted).unwrap();
    assert!(SessionLog::create(&planted, header()).is_err());
    assert!(!dir.path().join("elsewhere").exists());
}

#[test]
fn loading_a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("x.jsonl");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let err = load(&fifo).unwrap_err();
    assert!(matches!(err, LogError::NotRegular { .. }), "{err}");
    assert!(err.to_string().contains("FIFO"), "{err}");
}

#[test]
fn a_second_writer_is_refused_naming_the_session_and_holder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("abc-123.jsonl");
    let first = SessionLog::create(&path, header()).unwrap();
    let err = SessionLog::open(&path).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("abc-123"), "{text}");
    assert!(
        text.contains(&format!("pid {}", std::process::id())),
        "{text}"
    );
    // Waiting succeeds once the holder lets go.
    let waiter = std::thread::spawn({
        let path = path.clone();
        move || SessionLog::open_with(&path, LockWait::Wait).map(|(log, _)| log.events().len())
    });
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert!(!waiter.is_finished(), "the waiter must wait for the holder");
    drop(first);
    assert_eq!(waiter.join().unwrap().unwrap(), 1);
}

#[test]
fn a_new_log_appears_with_its_header_and_leaves_no_staging_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("abc.jsonl");
    // A create killed before it cleaned up left its staging file behind.
    std::fs::write(dir.path().join("abc.jsonl.new"), "stale").unwrap();
    let log = SessionLog::create(&path, header()).unwrap();
    assert_eq!(load(&path).unwrap().events, log.events());
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["abc.jsonl", "abc.lock"]);
    drop(log);

    // An existing log is never replaced, and the failed create cleans up.
    let before = std::fs::read(&path).unwrap();
    let err = SessionLog::create(&path, header()).unwrap_err();
    assert!(err.to_string().contains("abc.jsonl"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert!(!dir.path().join("abc.jsonl.new").exists());
}
