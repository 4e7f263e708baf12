//! Error codes, the thread-local last error, and the panic guard every
//! exported function runs inside.

use std::cell::RefCell;
use std::ffi::CString;
use std::fmt::Display;
use std::panic::{catch_unwind, AssertUnwindSafe};

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
    Cancelled = 9,
    NoSegments = 10,
    DuplicateSegment = 11,
    OverlappingSegments = 12,
    StaleSegment = 13,
    ModelMismatch = 14,
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
        CError::new(code_of(&err), err.to_string())
    }
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

/// The last message as a fresh C string (NULL when there is no error).
pub fn last_error_message() -> Option<CString> {
    LAST_ERROR.with(|cell| {
        let last = cell.borrow();
        if last.code == Code::Ok {
            None
        } else {
            // Interior NULs cannot cross as C text; show them as spaces.
            Some(CString::new(last.message.replace('\0', " ")).expect("NULs were replaced"))
        }
    })
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs the body of an exported function: a success clears the last error,
/// an error or a panic records it and yields `on_error`.
pub fn guard<T>(on_error: T, body: impl FnOnce() -> CResult<T>) -> T {
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
            set_last_error(&CError::new(
                Code::Internal,
                format!("internal panic: {}", panic_text(payload.as_ref())),
            ));
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
