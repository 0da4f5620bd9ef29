//! The option table (fjall's main knobs, with fjall 3.1.13's defaults) and its parser.
//! The driver checks names, kinds and ranges against TABLE and passes values in canonical
//! form (sizes as decimal bytes, booleans "true"/"false"); `Settings::parse` still refuses
//! what it cannot read, naming the option, and checks the rules between options.

use std::sync::Arc;

use crate::abi::*;
use fjall::compaction::Leveled;
use fjall::config::{BlockSizePolicy, CompressionPolicy};
use fjall::{CompressionType, KeyspaceCreateOptions};

const KIB: f64 = 1024.0;
const MIB: f64 = 1024.0 * 1024.0;
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

const fn opt(
    name: &'static std::ffi::CStr,
    kind: u32,
    min: f64,
    max: f64,
    choices: &'static std::ffi::CStr,
    unit: &'static std::ffi::CStr,
    doc: &'static std::ffi::CStr,
    default_value: &'static std::ffi::CStr,
) -> lsmbench_option {
    lsmbench_option {
        name: name.as_ptr(),
        kind,
        min,
        max,
        choices: choices.as_ptr(),
        unit: unit.as_ptr(),
        doc: doc.as_ptr(),
        default_value: default_value.as_ptr(),
    }
}

pub static TABLE: [lsmbench_option; 11] = [
    opt(c"max_memtable_size", LSMBENCH_OPTION_SIZE, 64.0 * KIB, 1.0 * GIB, c"", c"bytes",
        c"The keyspace's memtable size: a memtable past it is sealed and flushed (KeyspaceCreateOptions::max_memtable_size).",
        c"67108864"),
    opt(c"block_size", LSMBENCH_OPTION_SIZE, 1.0 * KIB, 1.0 * MIB, c"", c"bytes",
        c"Data block size, every level (KeyspaceCreateOptions::data_block_size_policy).", c"4096"),
    opt(c"l0_threshold", LSMBENCH_OPTION_INT, 1.0, 64.0, c"", c"tables",
        c"Level-0 tables that trigger a merge into level 1 (leveled compaction's l0_threshold).", c"4"),
    opt(c"table_target_size", LSMBENCH_OPTION_SIZE, 1.0 * MIB, 4.0 * GIB, c"", c"bytes",
        c"The size of the tables a merge writes (leveled compaction's table_target_size); level 1 holds l0_threshold of them.",
        c"67108864"),
    opt(c"level_ratio", LSMBENCH_OPTION_REAL, 2.0, 100.0, c"", c"",
        c"Size ratio between adjacent levels (leveled compaction's level_ratio_policy, one ratio for every level).",
        c"10"),
    opt(c"compression", LSMBENCH_OPTION_CHOICE, 0.0, 0.0, c"deep_lz4,lz4,none", c"",
        c"Data block compression: deep_lz4 leaves levels 0 and 1 uncompressed and LZ4-compresses the deeper ones (fjall's default); lz4 every level; none.",
        c"deep_lz4"),
    opt(c"journal_compression", LSMBENCH_OPTION_CHOICE, 0.0, 0.0, c"lz4,none", c"",
        c"Compression of journal entries (of 4 KiB and more).", c"lz4"),
    opt(c"journal_persist", LSMBENCH_OPTION_CHOICE, 0.0, 0.0, c"buffer,none,sync_data,sync_all", c"",
        c"What each write does with the journal: buffer hands it to the OS (fjall's default); none leaves it in fjall's buffer (manual_journal_persist); sync_data and sync_all persist it with fdatasync or fsync after every write.",
        c"buffer"),
    opt(c"cache_size", LSMBENCH_OPTION_SIZE, 0.0, 64.0 * GIB, c"", c"bytes",
        c"The block cache shared by the database's keyspaces.", c"33554432"),
    opt(c"max_journaling_size", LSMBENCH_OPTION_SIZE, 64.0 * MIB, 64.0 * GIB, c"", c"bytes",
        c"Journal bytes kept before fjall flushes memtables to release the oldest journal.",
        c"536870912"),
    // No fixed default: fjall takes the cores, at most 4.
    opt(c"worker_threads", LSMBENCH_OPTION_INT, 1.0, 64.0, c"", c"threads",
        c"Background threads for flushes and compactions (fjall's default: the cores, at most 4).", c""),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JournalPersist {
    Buffer,
    None,
    SyncData,
    SyncAll,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    DeepLz4,
    Lz4,
    None,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub max_memtable_size: u64,
    pub block_size: u32,
    pub l0_threshold: u8,
    pub table_target_size: u64,
    pub level_ratio: f32,
    pub compression: Compression,
    pub journal_compression: CompressionType,
    pub journal_persist: JournalPersist,
    pub cache_size: u64,
    pub max_journaling_size: u64,
    pub worker_threads: Option<usize>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            max_memtable_size: 64 << 20,
            block_size: 4096,
            l0_threshold: 4,
            table_target_size: 64 << 20,
            level_ratio: 10.0,
            compression: Compression::DeepLz4,
            journal_compression: CompressionType::Lz4,
            journal_persist: JournalPersist::Buffer,
            cache_size: 32 << 20,
            max_journaling_size: 512 << 20,
            worker_threads: None,
        }
    }
}

fn number<T: std::str::FromStr>(name: &str, v: &str, min: f64, max: f64) -> Result<T, String> {
    let x: f64 = v.parse().map_err(|_| format!("{name}: '{v}' is not a number"))?;
    if !(x.is_finite() && x >= min && x <= max) {
        return Err(format!("{name}: {v} is outside [{min}, {max}]"));
    }
    v.parse::<T>().map_err(|_| format!("{name}: '{v}' is not of the option's kind"))
}

fn find(name: &str) -> Option<&'static lsmbench_option> {
    TABLE.iter().find(|o| {
        // SAFETY: static NUL-terminated names.
        unsafe { std::ffi::CStr::from_ptr(o.name) }.to_bytes() == name.as_bytes()
    })
}

impl Settings {
    /// The settings of the (name, value) pairs; an error names the option.
    pub fn parse(pairs: &[(String, String)]) -> Result<Settings, String> {
        let mut s = Settings::default();
        for (name, v) in pairs {
            let Some(o) = find(name) else {
                return Err(format!("unknown option '{name}'"));
            };
            let (lo, hi) = (o.min, o.max);
            match name.as_str() {
                "max_memtable_size" => s.max_memtable_size = number(name, v, lo, hi)?,
                "block_size" => s.block_size = number(name, v, lo, hi)?,
                "l0_threshold" => s.l0_threshold = number(name, v, lo, hi)?,
                "table_target_size" => s.table_target_size = number(name, v, lo, hi)?,
                "level_ratio" => s.level_ratio = number(name, v, lo, hi)?,
                "cache_size" => s.cache_size = number(name, v, lo, hi)?,
                "max_journaling_size" => s.max_journaling_size = number(name, v, lo, hi)?,
                "worker_threads" => s.worker_threads = Some(number(name, v, lo, hi)?),
                "compression" => {
                    s.compression = match v.as_str() {
                        "deep_lz4" => Compression::DeepLz4,
                        "lz4" => Compression::Lz4,
                        "none" => Compression::None,
                        _ => return Err(format!("{name}: '{v}' is not one of deep_lz4, lz4, none")),
                    }
                }
                "journal_compression" => {
                    s.journal_compression = match v.as_str() {
                        "lz4" => CompressionType::Lz4,
                        "none" => CompressionType::None,
                        _ => return Err(format!("{name}: '{v}' is not one of lz4, none")),
                    }
                }
                "journal_persist" => {
                    s.journal_persist = match v.as_str() {
                        "buffer" => JournalPersist::Buffer,
                        "none" => JournalPersist::None,
                        "sync_data" => JournalPersist::SyncData,
                        "sync_all" => JournalPersist::SyncAll,
                        _ => {
                            return Err(format!(
                                "{name}: '{v}' is not one of buffer, none, sync_data, sync_all"
                            ))
                        }
                    }
                }
                _ => return Err(format!("unknown option '{name}'")),
            }
        }
        // Rules between options (the table's ranges keep block_size <= table_target_size).
        if s.max_memtable_size > s.max_journaling_size {
            return Err(format!(
                "max_memtable_size ({}) is larger than max_journaling_size ({}): every memtable would be flushed early to release its journal",
                s.max_memtable_size, s.max_journaling_size
            ));
        }
        Ok(s)
    }

    pub fn keyspace_options(&self) -> KeyspaceCreateOptions {
        let strategy = Leveled::default()
            .with_l0_threshold(self.l0_threshold)
            .with_table_target_size(self.table_target_size)
            .with_level_ratio_policy(vec![self.level_ratio]);
        let compression = match self.compression {
            Compression::DeepLz4 => CompressionPolicy::new([
                CompressionType::None,
                CompressionType::None,
                CompressionType::Lz4,
            ]),
            Compression::Lz4 => CompressionPolicy::all(CompressionType::Lz4),
            Compression::None => CompressionPolicy::all(CompressionType::None),
        };
        KeyspaceCreateOptions::default()
            .max_memtable_size(self.max_memtable_size)
            .data_block_size_policy(BlockSizePolicy::all(self.block_size))
            .data_block_compression_policy(compression)
            .compaction_strategy(Arc::new(strategy))
            .manual_journal_persist(self.journal_persist != JournalPersist::Buffer)
    }
}
