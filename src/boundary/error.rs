//! Error codes, the thread-local last error, and the guard every exported
//! function runs inside (panics caught, callbacks kept from re-entering).

use std::cell::{Cell, RefCell};
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Once, OnceLock};

use regex::Regex;

/// Mirrors `LanceErrorCode` in lance.h; the values are part of the ABI.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Ok = 0,
    InvalidArgument = 1,
    Io = 2,
    NotFound = 3,
    DatasetAlreadyExists = 4,
    Index = 5,
    Internal = 6,
    NotSupported = 7,
    CommitConflict = 8,
    Panic = 9,
    // This library's own codes, in a range upstream's sequential codes
    // will not reach.
    Cancelled = 1000,
    NoSegments = 1001,
    DuplicateSegment = 1002,
    OverlappingSegments = 1003,
    StaleSegment = 1004,
    ModelMismatch = 1005,
    IncompleteSegment = 1006,
}

/// An error on its way to the C caller.
#[derive(Debug)]
pub struct CError {
    pub code: Code,
    pub message: String,
}

impl CError {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self { code, message: message.into() }
    }

    /// For calls of upstream lance-c's form: this library's own codes for
    /// refused input become INVALID_ARGUMENT, the code upstream's programs
    /// handle (a cancellation, which only this library's token causes,
    /// keeps its code).  The message is kept.
    pub fn in_upstream_codes(mut self) -> Self {
        if self.code as i32 >= Code::Cancelled as i32 && self.code != Code::Cancelled {
            self.code = Code::InvalidArgument;
        }
        self
    }
}

pub type CResult<T> = Result<T, CError>;

/// Shorthand for an INVALID_ARGUMENT error.
pub fn invalid(message: impl Into<String>) -> CError {
    CError::new(Code::InvalidArgument, message)
}

pub fn not_found(message: impl Into<String>) -> CError {
    CError::new(Code::NotFound, message)
}

fn code_of(err: &lance::Error) -> Code {
    use lance::Error as E;
    match err {
        E::InvalidInput { .. }
        | E::Schema { .. }
        | E::SchemaMismatch { .. }
        | E::Arrow { .. }
        | E::InvalidTableLocation { .. }
        | E::InvalidRef { .. } => Code::InvalidArgument,
        E::DatasetAlreadyExists { .. } => Code::DatasetAlreadyExists,
        E::DatasetNotFound { .. }
        | E::NotFound { .. }
        | E::IndexNotFound { .. }
        | E::VersionNotFound { .. }
        | E::RefNotFound { .. }
        | E::FieldNotFound { .. } => Code::NotFound,
        E::IO { .. } | E::CorruptFile { .. } => Code::Io,
        E::Index { .. } => Code::Index,
        E::NotSupported { .. } => Code::NotSupported,
        E::CommitConflict { .. }
        | E::RetryableCommitConflict { .. }
        | E::IncompatibleTransaction { .. }
        | E::TooMuchWriteContention { .. }
        | E::VersionConflict { .. }
        | E::RefConflict { .. } => Code::CommitConflict,
        E::Shared { source } => code_of(source),
        _ => Code::Internal,
    }
}

impl From<lance::Error> for CError {
    fn from(err: lance::Error) -> Self {
        let message = user_message(&err.to_string());
        let message = match left_out_feature(&message) {
            Some((scheme, feature)) => format!(
                "{message} ({scheme}:// needs the cargo feature \"{feature}\", which this build of lance-c leaves \
                 out: docs/building.md \"Features\")"
            ),
            None => message,
        };
        CError::new(code_of(&err), message)
    }
}

/// The object-store scheme the core found no store for, and the feature of
/// this crate (Cargo.toml) that brings it, when this build leaves it out
/// (the schemes are the core's: lance-io src/object_store/providers.rs).
fn left_out_feature(message: &str) -> Option<(&str, &'static str)> {
    const MARK: &str = "No object store provider found for scheme: '";
    let start = message.find(MARK)? + MARK.len();
    let scheme = &message[start..start + message[start..].find('\'')?];
    let (feature, built) = match scheme {
        "s3" | "s3+ddb" => ("aws", cfg!(feature = "aws")),
        "az" | "abfss" => ("azure", cfg!(feature = "azure")),
        "gs" => ("gcp", cfg!(feature = "gcp")),
        "oss" => ("oss", cfg!(feature = "oss")),
        "cos" => ("tencent", cfg!(feature = "tencent")),
        "tos" => ("tos", cfg!(feature = "tos")),
        "hf" => ("huggingface", cfg!(feature = "huggingface")),
        _ => return None,
    };
    (!built).then_some((scheme, feature))
}

/// The core's error text without what only its developers need: the
/// source location of every nested error (", /path/src/x.rs:51:31") and
/// the "LanceError(Kind): " wrappers.  The code already carries the kind.
pub fn user_message(text: &str) -> String {
    static LOCATION: OnceLock<Regex> = OnceLock::new();
    static WRAPPER: OnceLock<Regex> = OnceLock::new();
    let location =
        LOCATION.get_or_init(|| Regex::new(r"(,\s*)?(location:\s*)?[^\s,:()]*\.rs:\d+:\d+").expect("valid pattern"));
    let wrapper = WRAPPER.get_or_init(|| Regex::new(r"LanceError\(\w+\):\s*").expect("valid pattern"));
    let text = location.replace_all(text, "");
    let text = wrapper.replace_all(&text, "");
    text.trim_end_matches([',', ' ']).to_string()
}

impl From<arrow_schema::ArrowError> for CError {
    fn from(err: arrow_schema::ArrowError) -> Self {
        CError::new(Code::InvalidArgument, format!("arrow: {err}"))
    }
}

struct LastError {
    code: Code,
    message: String,
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> =
        const { RefCell::new(LastError { code: Code::Ok, message: String::new() }) };
}

pub fn set_last_error(err: &CError) {
    LAST_ERROR.with(|cell| {
        let mut last = cell.borrow_mut();
        last.code = err.code;
        last.message.clone_from(&err.message);
    });
}

pub fn clear_last_error() {
    LAST_ERROR.with(|cell| {
        let mut last = cell.borrow_mut();
        last.code = Code::Ok;
        last.message.clear();
    });
}

pub fn last_error_code() -> Code {
    LAST_ERROR.with(|cell| cell.borrow().code)
}

/// Takes the last error's message, clearing the error (upstream's rule:
/// reading the message consumes it); None when there is no error.
pub fn take_last_error_message() -> Option<String> {
    LAST_ERROR.with(|cell| {
        let mut last = cell.borrow_mut();
        if last.code == Code::Ok {
            return None;
        }
        last.code = Code::Ok;
        Some(std::mem::take(&mut last.message))
    })
}

pub fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

thread_local! {
    /// Depth of exported calls running on this thread (panics there are caught).
    static IN_CALL: Cell<u32> = const { Cell::new(0) };
    /// Set while this thread runs a caller's progress or statistics callback.
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
}

/// Marks the current thread as running a caller's callback for its lifetime.
pub struct CallbackScope(());

impl CallbackScope {
    pub fn enter() -> Self {
        IN_CALLBACK.with(|c| c.set(true));
        CallbackScope(())
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|c| c.set(false));
    }
}

/// The thread name of the library's runtime workers (see runtime.rs).
pub const RUNTIME_THREAD_NAME: &str = "lance-c";

/// Panics are caught and reported as errors; the default hook would also
/// print them on the host's stderr.  This hook stays silent for panics the
/// library catches (inside an exported call, or on its runtime's threads)
/// and hands every other panic of the process to the hook it replaced.
fn install_quiet_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let ours = IN_CALL.with(|c| c.get() > 0)
                || std::thread::current().name().is_some_and(|n| n.starts_with(RUNTIME_THREAD_NAME));
            if !ours {
                previous(info);
            }
        }));
    });
}

struct CallDepth;

impl CallDepth {
    fn enter() -> Self {
        IN_CALL.with(|c| c.set(c.get() + 1));
        CallDepth
    }
}

impl Drop for CallDepth {
    fn drop(&mut self) {
        IN_CALL.with(|c| c.set(c.get().saturating_sub(1)));
    }
}

/// Runs the body of an exported function: a success clears the last error,
/// an error or a panic records it and yields `on_error`.  Called from inside
/// a progress callback, it refuses to run the body (the build that called
/// the callback holds what the body may need).  On a CPU that lacks a feature
/// the library was compiled for, it refuses every call (`cpu.rs`).
pub fn guard<T>(on_error: T, body: impl FnOnce() -> CResult<T>) -> T {
    if let Some(refusal) = super::cpu::refusal() {
        set_last_error(&not_supported(refusal));
        return on_error;
    }
    if IN_CALLBACK.with(|c| c.get()) {
        set_last_error(&invalid(
            "lance-c functions other than lance_index_build_cancel() and lance_index_build_cancel_requested() \
             cannot be called from inside a callback that lance-c is running",
        ));
        return on_error;
    }
    guard_anywhere(on_error, body)
}

/// `guard` for the few functions a progress callback may call.
pub fn guard_anywhere<T>(on_error: T, body: impl FnOnce() -> CResult<T>) -> T {
    install_quiet_panic_hook();
    let _depth = CallDepth::enter();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => {
            clear_last_error();
            value
        }
        Ok(Err(err)) => {
            set_last_error(&err);
            on_error
        }
        Err(payload) => {
            set_last_error(&CError::new(Code::Panic, format!("internal panic: {}", panic_text(payload.as_ref()))));
            on_error
        }
    }
}

/// `guard` for functions returning the 0 / -1 status convention.
pub fn status(body: impl FnOnce() -> CResult<()>) -> i32 {
    guard(-1, || body().map(|()| 0))
}

/// Adds context in front of an error's message, keeping its code.
pub trait Context<T> {
    fn context(self, what: impl Display) -> CResult<T>;
}

impl<T, E: Into<CError>> Context<T> for Result<T, E> {
    fn context(self, what: impl Display) -> CResult<T> {
        self.map_err(|e| {
            let mut err: CError = e.into();
            err.message = format!("{what}: {}", err.message);
            err
        })
    }
}

pub fn not_supported(message: impl Into<String>) -> CError {
    CError::new(Code::NotSupported, message)
}

/// `guard` for constructors: a success is boxed into a handle the caller owns.
pub fn guard_handle<T>(body: impl FnOnce() -> CResult<T>) -> *mut T {
    guard(std::ptr::null_mut(), || body().map(|value| Box::into_raw(Box::new(value))))
}
