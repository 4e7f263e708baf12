//! The log bridge: the Lance core's records (its `log` records and its
//! `tracing` events) handed to one callback of the host's (lance.h
//! "Logging" sets it, api/logging.rs).
//!
//! One forwarder is installed as the process's `log` logger and `tracing`
//! subscriber at the first call that sets a callback.  The callback lives in
//! a slot that a later call replaces; a record clones the slot's Arc and
//! calls it with no lock held.  A thread running the callback drops the
//! records it emits meanwhile and is refused other lance-c calls (the
//! guard's callback rule), so a callback cannot re-enter the core; a
//! replacement waits for the calls of the old callback still running on
//! other threads, so once it returns the old callback is never called.

use std::cell::Cell;
use std::ffi::{c_char, c_void, CString};
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata};

use crate::boundary::error::{not_supported, CResult, CallbackScope};

/// `LanceLogCallback` in lance.h.
pub type LogFn = unsafe extern "C" fn(ctx: *mut c_void, level: i32, target: *const c_char, message: *const c_char);

/// The host's callback, its context and its level.
struct Sink {
    callback: LogFn,
    ctx: *mut c_void,
    max_level: i32,
}

// The header requires the callback to accept calls from any thread with this ctx.
unsafe impl Send for Sink {}
unsafe impl Sync for Sink {}

static SINK: RwLock<Option<Arc<Sink>>> = RwLock::new(None);
/// The current sink's level (OFF without one): the first, lock-free filter.
static MAX_LEVEL: AtomicI32 = AtomicI32::new(0);
/// Whether the forwarder is the process's logger and subscriber (decided once).
static INSTALLED: OnceLock<Result<(), &'static str>> = OnceLock::new();
static NEXT_SPAN: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The sink whose callback this thread is running, or null.
    static CALLING: Cell<*const Sink> = const { Cell::new(std::ptr::null()) };
}

/// Marks the thread as inside `sink`'s callback for its lifetime.
struct Calling {
    _scope: CallbackScope,
}

impl Calling {
    fn enter(sink: &Arc<Sink>) -> Self {
        CALLING.with(|c| c.set(Arc::as_ptr(sink)));
        Calling { _scope: CallbackScope::enter() }
    }
}

impl Drop for Calling {
    fn drop(&mut self) {
        CALLING.with(|c| c.set(std::ptr::null()));
    }
}

/// `text` as a C string (a NUL inside it, which C cannot carry, is dropped).
fn c_text(text: String) -> CString {
    CString::new(text).unwrap_or_else(|e| {
        let mut bytes = e.into_vec();
        bytes.retain(|&b| b != 0);
        CString::new(bytes).expect("no NUL left")
    })
}

/// Hands one record to the callback, if it wants that level.
fn deliver(level: i32, target: &str, message: impl FnOnce() -> String) {
    if level > MAX_LEVEL.load(Ordering::Relaxed) {
        return;
    }
    // A record the callback itself causes is dropped (and so is one emitted
    // while the thread's locals are being destroyed).
    if !matches!(CALLING.try_with(|c| c.get().is_null()), Ok(true)) {
        return;
    }
    let Some(sink) = SINK.read().unwrap_or_else(PoisonError::into_inner).clone() else { return };
    if level > sink.max_level {
        return;
    }
    let target = c_text(target.to_string());
    let message = c_text(message());
    let _calling = Calling::enter(&sink);
    unsafe { (sink.callback)(sink.ctx, level, target.as_ptr(), message.as_ptr()) };
}

/// The one forwarder: the `log` logger and the `tracing` subscriber.
struct Forwarder;

static FORWARDER: Forwarder = Forwarder;

impl log::Log for Forwarder {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() as i32 <= MAX_LEVEL.load(Ordering::Relaxed)
    }

    fn log(&self, record: &log::Record<'_>) {
        deliver(record.level() as i32, record.target(), || record.args().to_string());
    }

    fn flush(&self) {}
}

fn tracing_level(level: &Level) -> i32 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        Level::TRACE => 5,
    }
}

/// An event's text: its message, then its other fields as `name=value`.
#[derive(Default)]
struct EventText {
    message: String,
    fields: String,
}

impl EventText {
    fn put(&mut self, field: &Field, value: fmt::Arguments<'_>) {
        if field.name() == "message" {
            let _ = self.message.write_fmt(value);
        } else {
            let _ = write!(self.fields, " {}={}", field.name(), value);
        }
    }

    fn text(self) -> String {
        if self.message.is_empty() {
            self.fields.trim_start().to_string()
        } else {
            self.message + &self.fields
        }
    }
}

impl Visit for EventText {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, format_args!("{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.put(field, format_args!("{value:?}"));
    }
}

impl tracing::Subscriber for Forwarder {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // Spans carry nothing the callback receives; events are asked about
        // at each hit, as the level may change.
        if metadata.is_event() {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event() && tracing_level(metadata.level()) <= MAX_LEVEL.load(Ordering::Relaxed)
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match MAX_LEVEL.load(Ordering::Relaxed) {
            0 => LevelFilter::OFF,
            1 => LevelFilter::ERROR,
            2 => LevelFilter::WARN,
            3 => LevelFilter::INFO,
            4 => LevelFilter::DEBUG,
            _ => LevelFilter::TRACE,
        })
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(NEXT_SPAN.fetch_add(1, Ordering::Relaxed))
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        deliver(tracing_level(metadata.level()), metadata.target(), || {
            let mut text = EventText::default();
            event.record(&mut text);
            text.text()
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// Makes the forwarder the process's `log` logger and `tracing` subscriber,
/// once; fails when the host had installed either of its own.
fn install() -> CResult<()> {
    let outcome = INSTALLED.get_or_init(|| {
        log::set_logger(&FORWARDER).map_err(|_| "a `log` logger")?;
        tracing::subscriber::set_global_default(Forwarder).map_err(|_| "a `tracing` global subscriber")?;
        Ok(())
    });
    (*outcome).map_err(|taken| {
        not_supported(format!(
            "the process already has {taken} of its own (installed by Rust code in the host before lance-c's \
             first lance_set_log_callback()); the Lance core's records go to it, not to a callback"
        ))
    })
}

/// Puts `sink` in the slot, sets the levels the filters see, and waits until
/// no other thread runs the callback it replaced.
fn replace(sink: Option<Arc<Sink>>) {
    let level = sink.as_ref().map_or(0, |s| s.max_level);
    let old = {
        // Under the lock, so that concurrent calls leave the filters at the
        // level of the sink that stays.
        let mut slot = SINK.write().unwrap_or_else(PoisonError::into_inner);
        MAX_LEVEL.store(level, Ordering::Relaxed);
        if matches!(INSTALLED.get(), Some(Ok(()))) {
            log::set_max_level(match level {
                0 => log::LevelFilter::Off,
                1 => log::LevelFilter::Error,
                2 => log::LevelFilter::Warn,
                3 => log::LevelFilter::Info,
                4 => log::LevelFilter::Debug,
                _ => log::LevelFilter::Trace,
            });
            // Recomputes tracing's global level from max_level_hint().
            tracing::callsite::rebuild_interest_cache();
        }
        std::mem::replace(&mut *slot, sink)
    };
    let Some(old) = old else { return };
    // Each call in progress holds a clone; this thread's own (a callback
    // replacing itself) is not waited for.
    let own = CALLING.with(|c| c.get() == Arc::as_ptr(&old)) as usize;
    while Arc::strong_count(&old) > 1 + own {
        std::thread::sleep(Duration::from_micros(200));
    }
    // Pairs with the release of each finished call's clone: what the
    // callbacks wrote is visible to the caller, who may now free ctx.
    std::sync::atomic::fence(Ordering::Acquire);
}

/// Makes `callback` the host's callback for the records up to `max_level`
/// (a `LanceLogLevel`, checked by the caller), or removes the callback when
/// it is None or `max_level` is OFF; once this returns, the callback it
/// replaced is never called again.
pub fn set_callback(max_level: i32, callback: Option<LogFn>, ctx: *mut c_void) -> CResult<()> {
    let sink = match callback {
        Some(callback) if max_level > 0 => {
            install()?;
            Some(Arc::new(Sink { callback, ctx, max_level }))
        }
        _ => None,
    };
    replace(sink);
    Ok(())
}
