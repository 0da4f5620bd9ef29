//! fjall (https://crates.io/crates/fjall) as an lsmbench engine plugin: a cdylib against
//! the public C ABI, engines/plugin/include/lsmbench/engine_plugin.h (version 1).
//!
//! One database per engine, one keyspace ("bench") in it. Every extern "C" function runs
//! its body under `catch_unwind`: a panic (fjall asserts on some inputs) becomes
//! LSMBENCH_FAILED with the panic's message, never an unwind into C.
//!
//! What fjall can tell, and what not (README.md in engines/plugin, "fjall"):
//! - events: no. fjall 3 has no flush or compaction listener; its counters
//!   (compactions_completed, table counts) say that something happened, not when it began,
//!   which levels it read or what it wrote. take_events is NULL.
//! - background work: Database::outstanding_flushes, Database::active_compactions,
//!   Database::compactions_completed; merges_pending is 1 when level 0 holds at least the
//!   leveled strategy's l0_threshold tables (its trigger).
//! - metrics: table counts per level, the active memtable's bytes, journal and disk sizes. No bytes
//!   flushed or merged (fjall does not count them), hence no write amplification and no
//!   stall counts.

pub mod abi;
pub mod options;

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

use abi::*;
use fjall::{AbstractTree, Database, Keyspace, PersistMode};
use options::{JournalPersist, Settings};

pub const ENGINE_VERSION: &str = "3.1.13";
const VERSION: &CStr = c"fjall 3.1.13 (lsmbench plugin 1)";
const KEYSPACE: &str = "bench";

pub struct Engine {
    db: Database,
    ks: Keyspace,
    settings: Settings,
}

/// Writes text into message, NUL-terminated and truncated to LSMBENCH_MESSAGE_BYTES.
pub fn set_message(message: *mut lsmbench_message, text: &str) {
    if message.is_null() {
        return;
    }
    let bytes = text.as_bytes();
    let mut n = bytes.len().min(LSMBENCH_MESSAGE_BYTES - 1);
    while n > 0 && !text.is_char_boundary(n) {
        n -= 1;
    }
    // SAFETY: the driver passes a valid lsmbench_message for the call.
    let out = unsafe { &mut (*message).text };
    for (o, b) in out.iter_mut().zip(&bytes[..n]) {
        *o = *b as c_char;
    }
    out[n] = 0;
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = p.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic".to_string()
    }
}

/// Runs f; a panic is LSMBENCH_FAILED with its message.
fn guarded(message: *mut lsmbench_message, f: impl FnOnce() -> Result<lsmbench_code, (lsmbench_code, String)>) -> lsmbench_code {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(code)) => code,
        Ok(Err((code, text))) => {
            set_message(message, &text);
            code
        }
        Err(p) => {
            set_message(message, &panic_text(p));
            LSMBENCH_FAILED
        }
    }
}

fn code_of(e: &fjall::Error) -> lsmbench_code {
    match e {
        fjall::Error::Io(_) => LSMBENCH_IO_ERROR,
        fjall::Error::Storage(fjall::LsmError::Io(_)) => LSMBENCH_IO_ERROR,
        _ => {
            let t = format!("{e:?}").to_lowercase();
            if t.contains("checksum") || t.contains("corrupt") || t.contains("decompress") {
                LSMBENCH_CORRUPTION
            } else {
                LSMBENCH_FAILED
            }
        }
    }
}

fn fail(e: fjall::Error) -> (lsmbench_code, String) {
    (code_of(&e), format!("fjall: {e}"))
}

/// # Safety
/// p points to n bytes (or n is 0).
unsafe fn bytes<'a>(p: *const c_char, n: usize) -> &'a [u8] {
    if n == 0 || p.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(p.cast::<u8>(), n)
    }
}

/// The (name, value) pairs the driver passed.
///
/// # Safety
/// names and values point to count NUL-terminated strings each.
unsafe fn pairs(names: *const *const c_char, values: *const *const c_char, count: usize) -> Vec<(String, String)> {
    (0..count)
        .map(|i| {
            let n = CStr::from_ptr(*names.add(i)).to_string_lossy().into_owned();
            let v = CStr::from_ptr(*values.add(i)).to_string_lossy().into_owned();
            (n, v)
        })
        .collect()
}

fn engine<'a>(e: *mut lsmbench_engine) -> &'a Engine {
    // SAFETY: e is the handle open made from a Box<Engine>, alive until close.
    unsafe { &*(e as *const Engine) }
}

impl Engine {
    fn open(dir: &Path, s: Settings) -> fjall::Result<Engine> {
        let mut b = Database::builder(dir)
            .cache_size(s.cache_size)
            .journal_compression(s.journal_compression)
            .manual_journal_persist(s.journal_persist != JournalPersist::Buffer)
            .max_journaling_size(s.max_journaling_size);
        if let Some(n) = s.worker_threads {
            b = b.worker_threads(n);
        }
        let db = b.open()?;
        let ks = db.keyspace(KEYSPACE, || s.keyspace_options())?;
        Ok(Engine { db, ks, settings: s })
    }

    fn after_write(&self) -> fjall::Result<()> {
        match self.settings.journal_persist {
            JournalPersist::SyncData => self.db.persist(PersistMode::SyncData),
            JournalPersist::SyncAll => self.db.persist(PersistMode::SyncAll),
            _ => Ok(()),
        }
    }

    /// Tables per level, level 0 first, as many levels as the tree has.
    fn level_tables(&self) -> Vec<usize> {
        let mut out = Vec::new();
        while let Some(n) = self.ks.tree.level_table_count(out.len()) {
            out.push(n);
        }
        out
    }
}

unsafe extern "C" fn check_options(
    names: *const *const c_char,
    values: *const *const c_char,
    count: usize,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        Settings::parse(&pairs(names, values, count)).map_err(|t| (LSMBENCH_INVALID_ARGUMENT, t))?;
        Ok(LSMBENCH_OK)
    })
}

unsafe extern "C" fn open(
    dir: *const c_char,
    names: *const *const c_char,
    values: *const *const c_char,
    count: usize,
    secondary_indexes: u32,
    out: *mut *mut lsmbench_engine,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        if secondary_indexes > 0 {
            return Err((LSMBENCH_INVALID_ARGUMENT, "keeps no secondary indexes".into()));
        }
        let s = Settings::parse(&pairs(names, values, count)).map_err(|t| (LSMBENCH_INVALID_ARGUMENT, t))?;
        let dir = CStr::from_ptr(dir).to_string_lossy().into_owned();
        std::fs::create_dir_all(&dir).map_err(|e| (LSMBENCH_IO_ERROR, format!("{dir}: {e}")))?;
        let e = Engine::open(Path::new(&dir), s).map_err(fail)?;
        *out = Box::into_raw(Box::new(e)) as *mut lsmbench_engine;
        Ok(LSMBENCH_OK)
    })
}

unsafe extern "C" fn close(e: *mut lsmbench_engine, message: *mut lsmbench_message) -> lsmbench_code {
    guarded(message, || {
        // SAFETY: the handle open made; close is the last call on it.
        let e = Box::from_raw(e as *mut Engine);
        let r = e.db.persist(PersistMode::SyncAll);
        drop(e); // fjall's Drop stops its workers
        r.map_err(fail)?;
        Ok(LSMBENCH_OK)
    })
}

unsafe extern "C" fn put(
    e: *mut lsmbench_engine,
    key: *const c_char,
    key_size: usize,
    value: *const c_char,
    value_size: usize,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        let e = engine(e);
        e.ks.insert(bytes(key, key_size), bytes(value, value_size)).map_err(fail)?;
        e.after_write().map_err(fail)?;
        Ok(LSMBENCH_OK)
    })
}

unsafe extern "C" fn del(
    e: *mut lsmbench_engine,
    key: *const c_char,
    key_size: usize,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        let e = engine(e);
        e.ks.remove(bytes(key, key_size)).map_err(fail)?;
        e.after_write().map_err(fail)?;
        Ok(LSMBENCH_OK)
    })
}

unsafe extern "C" fn get(
    e: *mut lsmbench_engine,
    key: *const c_char,
    key_size: usize,
    sink: lsmbench_value_sink,
    context: *mut c_void,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        match engine(e).ks.get(bytes(key, key_size)).map_err(fail)? {
            None => Ok(LSMBENCH_NOT_FOUND),
            Some(v) => {
                if let Some(sink) = sink {
                    sink(context, v.as_ptr().cast::<c_char>(), v.len());
                }
                Ok(LSMBENCH_OK)
            }
        }
    })
}

unsafe extern "C" fn scan(
    e: *mut lsmbench_engine,
    start: *const c_char,
    start_size: usize,
    count: usize,
    returned: *mut usize,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        let e = engine(e);
        let start = bytes(start, start_size).to_vec();
        let mut read = 0usize;
        let mut checksum = 0usize; // the values are read, as an application would
        if count > 0 {
            for guard in e.ks.range(start..) {
                let (k, v) = guard.into_inner().map_err(fail)?;
                checksum = checksum.wrapping_add(k.len()).wrapping_add(v.iter().step_by(64).map(|b| *b as usize).sum::<usize>());
                read += 1;
                if read == count {
                    break;
                }
            }
        }
        std::hint::black_box(checksum);
        *returned = read;
        Ok(LSMBENCH_OK)
    })
}

unsafe extern "C" fn metrics(
    e: *mut lsmbench_engine,
    sink: lsmbench_metric_sink,
    context: *mut c_void,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        let e = engine(e);
        let Some(sink) = sink else { return Ok(LSMBENCH_OK) };
        let put = |name: &str, v: f64| {
            let mut n = name.as_bytes().to_vec();
            n.push(0);
            sink(context, n.as_ptr().cast::<c_char>(), v);
        };
        let levels = e.level_tables();
        put("disk_components", levels.iter().sum::<usize>() as f64);
        for (i, n) in levels.iter().enumerate() {
            put(&format!("disk_components.L{i}"), *n as f64);
        }
        // The active memtable's bytes. Database::write_buffer_size is not it: fjall 3.1.13
        // adds every write to it and never subtracts a flushed memtable. Sealed memtables
        // waiting for a flush are counted (sealed_memtables), not sized: fjall does not say.
        put("memory_bytes", e.ks.tree.active_memtable().size() as f64);
        put("merges_running", e.db.active_compactions() as f64);
        put("merges_pending", merges_pending(e, &levels) as f64);
        put("flushes_pending", e.db.outstanding_flushes() as f64);
        put("sealed_memtables", e.ks.tree.sealed_memtable_count() as f64);
        put("l0_runs", e.ks.tree.l0_run_count() as f64);
        put("compactions_completed", e.db.compactions_completed() as f64);
        put("compaction_micros", e.db.time_compacting().as_micros() as f64);
        put("journal_count", e.db.journal_count() as f64);
        if let Ok(j) = e.db.journal_disk_space() {
            put("journal_bytes", j as f64);
        }
        put("keyspace_disk_bytes", e.ks.disk_space() as f64);
        put("cache_bytes", e.db.cache_size() as f64);
        Ok(LSMBENCH_OK)
    })
}

/// 1 when level 0 holds at least l0_threshold tables: the leveled strategy's trigger for a
/// merge out of level 0, mirrored (fjall does not say which merges it wants; the deeper
/// levels' size targets are not mirrored).
fn merges_pending(e: &Engine, levels: &[usize]) -> u64 {
    u64::from(levels.first().copied().unwrap_or(0) >= usize::from(e.settings.l0_threshold))
}

unsafe extern "C" fn background_work(
    e: *mut lsmbench_engine,
    work: *mut lsmbench_work,
    message: *mut lsmbench_message,
) -> lsmbench_code {
    guarded(message, || {
        let e = engine(e);
        let levels = e.level_tables();
        let sealed = e.ks.tree.sealed_memtable_count() as u64;
        let w = lsmbench_work {
            // outstanding_flushes: sealed memtables queued for the flush workers; fjall does
            // not say which of them a worker is writing now, so all count as pending.
            flushes_pending: (e.db.outstanding_flushes() as u64).max(sealed),
            flushes_running: 0,
            merges_pending: merges_pending(e, &levels),
            merges_running: e.db.active_compactions() as u64,
            // fjall counts completed compactions; flushes it does not count, so the level-0
            // table count stands in for them (it changes when a flush lands).
            completed: e.db.compactions_completed() as u64 + e.ks.table_count() as u64,
        };
        *work = w;
        Ok(LSMBENCH_OK)
    })
}

static API: lsmbench_engine_api = lsmbench_engine_api {
    abi_version: LSMBENCH_ENGINE_ABI_VERSION,
    api_size: std::mem::size_of::<lsmbench_engine_api>() as u32,
    option_size: std::mem::size_of::<lsmbench_option>() as u32,
    event_size: std::mem::size_of::<lsmbench_event>() as u32,
    work_size: std::mem::size_of::<lsmbench_work>() as u32,
    write_size: std::mem::size_of::<lsmbench_write>() as u32,
    name: c"fjall".as_ptr(),
    version: VERSION.as_ptr(),
    options: options::TABLE.as_ptr(),
    option_count: options::TABLE.len(),
    options_open: 0,
    check_options: Some(check_options),
    open: Some(open),
    close: Some(close),
    put: Some(put),
    del: Some(del),
    get: Some(get),
    scan: Some(scan),
    write_batch: None,
    metrics: Some(metrics),
    take_events: None,
    background_work: Some(background_work),
    put_record: None,
    query_secondary: None,
};

/// The one exported function: the table, of static lifetime.
#[no_mangle]
pub extern "C" fn lsmbench_engine_plugin() -> *const lsmbench_engine_api {
    &API
}

#[cfg(test)]
mod tests;
