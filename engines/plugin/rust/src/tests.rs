//! The layout against the C header (compiled with the C compiler), and option parsing.

use super::abi::*;
use super::options::*;
use std::mem::{offset_of, size_of};
use std::process::Command;

/// sizeof() of the header's structs and offsets of the table's fields, from cc.
fn c_layout() -> Vec<(String, usize)> {
    let dir = std::env::temp_dir().join(format!("rust-lsmbench-abi-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("sizes.c");
    std::fs::write(
        &src,
        r#"#include <lsmbench/engine_plugin.h>
#include <stdio.h>
#include <stddef.h>
#define S(t) printf(#t " %zu\n", sizeof(t))
#define O(f) printf("api." #f " %zu\n", offsetof(lsmbench_engine_api, f))
int main(void) {
  S(lsmbench_engine_api); S(lsmbench_option); S(lsmbench_event); S(lsmbench_work);
  S(lsmbench_write); S(lsmbench_message); S(lsmbench_code);
  O(name); O(options); O(option_count); O(options_open); O(check_options); O(open);
  O(close); O(scan); O(write_batch); O(metrics); O(take_events); O(background_work);
  O(put_record); O(query_secondary);
  return 0;
}
"#,
    )
    .unwrap();
    let include = concat!(env!("CARGO_MANIFEST_DIR"), "/../include");
    let exe = dir.join("sizes");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = Command::new(cc)
        .args(["-std=c99", "-I", include, "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("a C compiler (cc) for the layout test");
    assert!(st.success());
    let out = Command::new(&exe).output().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (k, v) = l.split_once(' ').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn struct_sizes_match_the_header() {
    let ours = [
        ("lsmbench_engine_api", size_of::<lsmbench_engine_api>()),
        ("lsmbench_option", size_of::<lsmbench_option>()),
        ("lsmbench_event", size_of::<lsmbench_event>()),
        ("lsmbench_work", size_of::<lsmbench_work>()),
        ("lsmbench_write", size_of::<lsmbench_write>()),
        ("lsmbench_message", size_of::<lsmbench_message>()),
        ("lsmbench_code", size_of::<lsmbench_code>()),
        ("api.name", offset_of!(lsmbench_engine_api, name)),
        ("api.options", offset_of!(lsmbench_engine_api, options)),
        ("api.option_count", offset_of!(lsmbench_engine_api, option_count)),
        ("api.options_open", offset_of!(lsmbench_engine_api, options_open)),
        ("api.check_options", offset_of!(lsmbench_engine_api, check_options)),
        ("api.open", offset_of!(lsmbench_engine_api, open)),
        ("api.close", offset_of!(lsmbench_engine_api, close)),
        ("api.scan", offset_of!(lsmbench_engine_api, scan)),
        ("api.write_batch", offset_of!(lsmbench_engine_api, write_batch)),
        ("api.metrics", offset_of!(lsmbench_engine_api, metrics)),
        ("api.take_events", offset_of!(lsmbench_engine_api, take_events)),
        ("api.background_work", offset_of!(lsmbench_engine_api, background_work)),
        ("api.put_record", offset_of!(lsmbench_engine_api, put_record)),
        ("api.query_secondary", offset_of!(lsmbench_engine_api, query_secondary)),
    ];
    let c = c_layout();
    assert_eq!(c.len(), ours.len());
    for ((cn, cv), (rn, rv)) in c.iter().zip(ours.iter()) {
        assert_eq!(cn, rn);
        assert_eq!(cv, rv, "{cn}: C says {cv}, Rust {rv}");
    }
}

#[test]
fn the_table_reports_its_sizes() {
    let api = unsafe { &*super::lsmbench_engine_plugin() };
    assert_eq!(api.abi_version, 1);
    assert_eq!(api.api_size as usize, size_of::<lsmbench_engine_api>());
    assert_eq!(api.option_count, TABLE.len());
    assert!(api.take_events.is_none());
}

fn p(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn defaults_parse_to_fjalls_defaults() {
    // Every table default, in canonical form, parses back to Settings::default().
    let mut pairs = Vec::new();
    for o in TABLE.iter() {
        let n = unsafe { std::ffi::CStr::from_ptr(o.name) }.to_str().unwrap();
        let d = unsafe { std::ffi::CStr::from_ptr(o.default_value) }.to_str().unwrap();
        if !d.is_empty() {
            pairs.push((n.to_string(), d.to_string()));
        }
    }
    assert_eq!(Settings::parse(&pairs).unwrap(), Settings::default());
}

#[test]
fn options_parse_and_refuse_by_name() {
    let s = Settings::parse(&p(&[
        ("max_memtable_size", "1048576"),
        ("journal_persist", "sync_data"),
        ("compression", "none"),
        ("level_ratio", "4.5"),
        ("worker_threads", "2"),
    ]))
    .unwrap();
    assert_eq!(s.max_memtable_size, 1 << 20);
    assert_eq!(s.journal_persist, JournalPersist::SyncData);
    assert_eq!(s.compression, Compression::None);
    assert_eq!(s.level_ratio, 4.5);
    assert_eq!(s.worker_threads, Some(2));

    let e = Settings::parse(&p(&[("block_size", "12")])).unwrap_err();
    assert!(e.starts_with("block_size:"), "{e}");
    let e = Settings::parse(&p(&[("l0_threshold", "4.5")])).unwrap_err();
    assert!(e.starts_with("l0_threshold:"), "{e}");
    let e = Settings::parse(&p(&[("compression", "zstd")])).unwrap_err();
    assert!(e.starts_with("compression:"), "{e}");
    let e = Settings::parse(&p(&[("nope", "1")])).unwrap_err();
    assert!(e.contains("'nope'"), "{e}");
    // Between options.
    let e = Settings::parse(&p(&[("max_memtable_size", "1073741824"), ("max_journaling_size", "67108864")]))
        .unwrap_err();
    assert!(e.contains("max_memtable_size"), "{e}");
}

#[test]
fn messages_are_truncated_and_terminated() {
    let mut m = lsmbench_message { text: [1; LSMBENCH_MESSAGE_BYTES] };
    super::set_message(&mut m, &"x".repeat(5000));
    assert_eq!(m.text[LSMBENCH_MESSAGE_BYTES - 1], 0);
    assert_eq!(m.text[LSMBENCH_MESSAGE_BYTES - 2], b'x' as std::ffi::c_char);
    super::set_message(&mut m, "disk full");
    let s = unsafe { std::ffi::CStr::from_ptr(m.text.as_ptr()) };
    assert_eq!(s.to_str().unwrap(), "disk full");
}

#[test]
fn a_panic_is_a_failure_with_its_message() {
    let mut m = lsmbench_message { text: [0; LSMBENCH_MESSAGE_BYTES] };
    let code = super::guarded(&mut m, || panic!("boom"));
    assert_eq!(code, LSMBENCH_FAILED);
    let s = unsafe { std::ffi::CStr::from_ptr(m.text.as_ptr()) };
    assert_eq!(s.to_str().unwrap(), "panic: boom");
}
