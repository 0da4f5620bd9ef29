// Package main is lsmbench's engine plugin for Pebble (github.com/cockroachdb/pebble/v2),
// built with -buildmode=c-shared as lsmbench-pebble.so. The contract is
// engines/plugin/include/lsmbench/engine_plugin.h; the table and the option table are C
// (api.c), the engine is here.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../include
#include <lsmbench/engine_plugin.h>
#include <stdlib.h>
#include <string.h>

int64_t lsmbench_pebble_now_ns(void);
lsmbench_engine *lsmbench_pebble_handle(uintptr_t id);
void lsmbench_pebble_value(lsmbench_value_sink sink, void *context, const char *value,
                           size_t size);
void lsmbench_pebble_metric(lsmbench_metric_sink sink, void *context, const char *name,
                            double value);
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

func main() {}

func nowNs() int64 { return int64(C.lsmbench_pebble_now_ns()) }

// say writes text into message (truncated, NUL-terminated) and returns code.
func say(message *C.lsmbench_message, code C.lsmbench_code, text string) C.lsmbench_code {
	if message == nil {
		return code
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&message.text[0])), C.LSMBENCH_MESSAGE_BYTES)
	n := copy(buf[:C.LSMBENCH_MESSAGE_BYTES-1], text)
	buf[n] = 0
	return code
}

func codeOf(err error) C.lsmbench_code {
	switch {
	case errors.Is(err, pebble.ErrCorruption):
		return C.LSMBENCH_CORRUPTION
	case errors.Is(err, os.ErrNotExist), errors.Is(err, os.ErrPermission):
		return C.LSMBENCH_IO_ERROR
	}
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		return C.LSMBENCH_IO_ERROR
	}
	return C.LSMBENCH_FAILED
}

func fail(message *C.lsmbench_message, err error) C.lsmbench_code {
	return say(message, codeOf(err), err.Error())
}

// bytesOf views C memory as a []byte, without copying (valid during the call only).
func bytesOf(p *C.char, n C.size_t) []byte {
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n))
}

// ------------------------------------------------------------------ engines

// engine is one open Pebble DB. The driver holds it as an integer id cast to a pointer
// (never a Go pointer).
type engine struct {
	db      *pebble.DB
	noWAL   bool
	write   *pebble.WriteOptions
	userB   atomic.Uint64 // key + value bytes put, key bytes deleted
	done    atomic.Uint64 // flushes and compactions completed (the listener)
	flushed atomic.Uint64 // flush output bytes (the listener)

	mu          sync.Mutex
	events      []C.lsmbench_event // completed, not yet taken; end_ns stamped under mu
	lastEnd     int64
	stalls      uint64
	stallNs     int64
	stallSince  int64 // 0: no stall under way
	backgroundE error // the first background error Pebble reported
}

var (
	enginesMu sync.RWMutex
	engines   = map[uintptr]*engine{}
	nextID    uintptr
)

func of(h *C.lsmbench_engine) *engine {
	enginesMu.RLock()
	defer enginesMu.RUnlock()
	return engines[uintptr(unsafe.Pointer(h))]
}

// push queues e, stamping end_ns under the lock so the queue stays in completion order
// however the listener's goroutines race; start_ns = end_ns - took.
func (e *engine) push(ev C.lsmbench_event, took int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	end := nowNs()
	if end < e.lastEnd {
		end = e.lastEnd
	}
	e.lastEnd = end
	start := end - took
	if took < 0 || start <= 0 {
		start = end
	}
	ev.end_ns = C.int64_t(end)
	ev.start_ns = C.int64_t(start)
	e.events = append(e.events, ev)
}

func tablesSize(tables []pebble.TableInfo) uint64 {
	var n uint64
	for _, t := range tables {
		n += t.Size
	}
	return n
}

func (e *engine) listener() *pebble.EventListener {
	return &pebble.EventListener{
		FlushEnd: func(info pebble.FlushInfo) {
			if info.Err != nil { // failed (retried) or empty: nothing written
				return
			}
			e.done.Add(1)
			if info.Ingest { // ingested tables queued as a flushable: no memtable written
				return
			}
			out := tablesSize(info.Output)
			e.flushed.Add(out)
			e.push(C.lsmbench_event{
				kind:         C.LSMBENCH_EVENT_FLUSH,
				output_level: 0,
				output_bytes: C.uint64_t(out),
			}, info.TotalDuration.Nanoseconds())
		},
		CompactionEnd: func(info pebble.CompactionInfo) {
			if info.Err != nil { // cancelled or failed: its outputs were discarded
				return
			}
			e.done.Add(1)
			if strings.Contains(info.Reason, "delete-only") {
				return // only dropped files: nothing read or written
			}
			var inputs, inBytes uint64
			deepest := -1
			for _, l := range info.Input {
				if len(l.Tables) == 0 {
					continue // the output level, listed empty (a move)
				}
				inputs += uint64(len(l.Tables))
				inBytes += tablesSize(l.Tables)
				deepest = max(deepest, l.Level)
			}
			if inputs == 0 || info.Output.Level < deepest {
				return // e.g. a blob-file rewrite: no sstables read
			}
			ev := C.lsmbench_event{
				kind:                C.LSMBENCH_EVENT_MERGE,
				output_level:        C.int32_t(info.Output.Level),
				deepest_input_level: C.int32_t(deepest),
				inputs:              C.uint64_t(inputs),
				input_bytes:         C.uint64_t(inBytes),
				output_bytes:        C.uint64_t(tablesSize(info.Output.Tables)),
			}
			if strings.HasSuffix(info.Reason, "move") {
				ev.flags = C.LSMBENCH_EVENT_MOVED
				ev.output_bytes = 0
			}
			e.push(ev, info.TotalDuration.Nanoseconds())
		},
		WriteStallBegin: func(pebble.WriteStallBeginInfo) {
			e.mu.Lock()
			defer e.mu.Unlock()
			e.stalls++
			if e.stallSince == 0 {
				e.stallSince = nowNs()
			}
		},
		WriteStallEnd: func() {
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.stallSince != 0 {
				e.stallNs += nowNs() - e.stallSince
				e.stallSince = 0
			}
		},
		BackgroundError: func(err error) {
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.backgroundE == nil {
				e.backgroundE = err
			}
		},
	}
}

// ------------------------------------------------------------------ options

// settings are the option table's values (api.c), Pebble's defaults unless set.
type settings struct {
	memtableSize, lbaseMaxBytes, targetFileSize, blockSize, cacheSize int64
	bytesPerSync, walBytesPerSync                                     int64
	memtableStop, l0Compaction, l0CompactionFiles, l0Stop             int
	levelMultiplier, maxCompactions, bloomBits, maxOpenFiles          int
	compression                                                       string
	disableWAL, sync                                                  bool
}

func defaults() settings {
	return settings{
		memtableSize: 4 << 20, lbaseMaxBytes: 64 << 20, targetFileSize: 2 << 20,
		blockSize: 4096, cacheSize: 8 << 20, bytesPerSync: 512 << 10,
		memtableStop: 2, l0Compaction: 4, l0CompactionFiles: 500, l0Stop: 12,
		levelMultiplier: 10, maxCompactions: 1, maxOpenFiles: 1000, compression: "snappy",
	}
}

// parse reads the options (the driver has checked names, kinds and ranges) and the rules
// between them; "" or what is wrong.
func parse(names, values **C.char, count C.size_t) (settings, string) {
	s := defaults()
	if count == 0 {
		return s, ""
	}
	ns := unsafe.Slice(names, int(count))
	vs := unsafe.Slice(values, int(count))
	var problems []string
	for i := range ns {
		name, value := C.GoString(ns[i]), C.GoString(vs[i])
		integer := func(p *int64) {
			v, err := strconv.ParseInt(value, 10, 64)
			if err != nil {
				problems = append(problems, fmt.Sprintf("engine option '%s': bad value '%s'", name, value))
			}
			*p = v
		}
		small := func(p *int) {
			var v int64
			integer(&v)
			*p = int(v)
		}
		switch name {
		case "memtable_size":
			integer(&s.memtableSize)
		case "memtable_stop_writes_threshold":
			small(&s.memtableStop)
		case "l0_compaction_threshold":
			small(&s.l0Compaction)
		case "l0_compaction_file_threshold":
			small(&s.l0CompactionFiles)
		case "l0_stop_writes_threshold":
			small(&s.l0Stop)
		case "lbase_max_bytes":
			integer(&s.lbaseMaxBytes)
		case "level_multiplier":
			small(&s.levelMultiplier)
		case "max_concurrent_compactions":
			small(&s.maxCompactions)
		case "target_file_size":
			integer(&s.targetFileSize)
		case "block_size":
			integer(&s.blockSize)
		case "compression":
			s.compression = value
		case "bloom_bits_per_key":
			small(&s.bloomBits)
		case "cache_size":
			integer(&s.cacheSize)
		case "bytes_per_sync":
			integer(&s.bytesPerSync)
		case "wal_bytes_per_sync":
			integer(&s.walBytesPerSync)
		case "max_open_files":
			small(&s.maxOpenFiles)
		case "disable_wal":
			s.disableWAL = value == "true"
		case "sync":
			s.sync = value == "true"
		default:
			problems = append(problems, fmt.Sprintf("unknown engine option '%s'", name))
		}
	}
	if s.l0Stop < s.l0Compaction {
		problems = append(problems, fmt.Sprintf(
			"l0_stop_writes_threshold (%d) must be >= l0_compaction_threshold (%d): writes "+
				"would stop before L0 is compacted", s.l0Stop, s.l0Compaction))
	}
	if s.disableWAL && s.sync {
		problems = append(problems, "sync=true needs the WAL: it cannot go with disable_wal=true")
	}
	return s, strings.Join(problems, "; ")
}

// quietLogger drops Pebble's informational lines (the driver's stderr is the point's log).
type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{}) {}
func (quietLogger) Errorf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "pebble: fatal: "+format+"\n", args...)
	os.Exit(1)
}

func (s settings) options(listener *pebble.EventListener) *pebble.Options {
	o := &pebble.Options{
		MemTableSize:                uint64(s.memtableSize),
		MemTableStopWritesThreshold: s.memtableStop,
		L0CompactionThreshold:       s.l0Compaction,
		L0CompactionFileThreshold:   s.l0CompactionFiles,
		L0StopWritesThreshold:       s.l0Stop,
		LBaseMaxBytes:               s.lbaseMaxBytes,
		CacheSize:                   s.cacheSize,
		BytesPerSync:                int(s.bytesPerSync),
		WALBytesPerSync:             int(s.walBytesPerSync),
		MaxOpenFiles:                s.maxOpenFiles,
		DisableWAL:                  s.disableWAL,
		FormatMajorVersion:          pebble.FormatNewest,
		Logger:                      quietLogger{},
		EventListener:               listener,
	}
	o.Experimental.LevelMultiplier = s.levelMultiplier
	upper := s.maxCompactions
	o.CompactionConcurrencyRange = func() (int, int) { return 1, upper }
	o.TargetFileSizes[0] = s.targetFileSize
	profile := map[string]*sstable.CompressionProfile{
		"none": sstable.NoCompression, "snappy": sstable.SnappyCompression,
		"zstd": sstable.ZstdCompression, "minlz": sstable.MinLZCompression,
	}[s.compression]
	for i := range o.Levels {
		o.Levels[i].BlockSize = int(s.blockSize)
		o.Levels[i].Compression = func() *sstable.CompressionProfile { return profile }
		if s.bloomBits > 0 {
			o.Levels[i].FilterPolicy = bloom.FilterPolicy(s.bloomBits)
		}
	}
	o.EnsureDefaults()
	return o
}

//export pebbleCheckOptions
func pebbleCheckOptions(names, values **C.char, count C.size_t, message *C.lsmbench_message) C.lsmbench_code {
	s, bad := parse(names, values, count)
	if bad != "" {
		return say(message, C.LSMBENCH_INVALID_ARGUMENT, bad)
	}
	if err := s.options(&pebble.EventListener{}).Validate(); err != nil {
		return say(message, C.LSMBENCH_INVALID_ARGUMENT, strings.TrimSpace(err.Error()))
	}
	return C.LSMBENCH_OK
}

// ------------------------------------------------------------------ the calls

//export pebbleOpen
func pebbleOpen(dir *C.char, names, values **C.char, count C.size_t, secondary C.uint32_t,
	out **C.lsmbench_engine, message *C.lsmbench_message) C.lsmbench_code {
	if secondary > 0 {
		return say(message, C.LSMBENCH_NOT_SUPPORTED, "no secondary indexes")
	}
	s, bad := parse(names, values, count)
	if bad != "" {
		return say(message, C.LSMBENCH_INVALID_ARGUMENT, bad)
	}
	e := &engine{write: pebble.NoSync, noWAL: s.disableWAL}
	if s.sync {
		e.write = pebble.Sync
	}
	db, err := pebble.Open(C.GoString(dir), s.options(e.listener()))
	if err != nil {
		return fail(message, err)
	}
	e.db = db
	enginesMu.Lock()
	nextID++
	id := nextID
	engines[id] = e
	enginesMu.Unlock()
	*out = C.lsmbench_pebble_handle(C.uintptr_t(id)) // an id, never dereferenced
	return C.LSMBENCH_OK
}

//export pebbleClose
func pebbleClose(h *C.lsmbench_engine, message *C.lsmbench_message) C.lsmbench_code {
	enginesMu.Lock()
	e := engines[uintptr(unsafe.Pointer(h))]
	delete(engines, uintptr(unsafe.Pointer(h)))
	enginesMu.Unlock()
	if e == nil {
		return say(message, C.LSMBENCH_INVALID_ARGUMENT, "no such engine")
	}
	if !e.write.Sync && !e.noWAL {
		if err := e.db.LogData(nil, pebble.Sync); err != nil { // make the WAL durable
			e.db.Close()
			return fail(message, err)
		}
	}
	if err := e.db.Close(); err != nil {
		return fail(message, err)
	}
	return C.LSMBENCH_OK
}

//export pebblePut
func pebblePut(h *C.lsmbench_engine, key *C.char, keySize C.size_t, value *C.char,
	valueSize C.size_t, message *C.lsmbench_message) C.lsmbench_code {
	e := of(h)
	if err := e.db.Set(bytesOf(key, keySize), bytesOf(value, valueSize), e.write); err != nil {
		return fail(message, err)
	}
	e.userB.Add(uint64(keySize) + uint64(valueSize))
	return C.LSMBENCH_OK
}

//export pebbleDel
func pebbleDel(h *C.lsmbench_engine, key *C.char, keySize C.size_t,
	message *C.lsmbench_message) C.lsmbench_code {
	e := of(h)
	if err := e.db.Delete(bytesOf(key, keySize), e.write); err != nil {
		return fail(message, err)
	}
	e.userB.Add(uint64(keySize))
	return C.LSMBENCH_OK
}

//export pebbleGet
func pebbleGet(h *C.lsmbench_engine, key *C.char, keySize C.size_t, sink C.lsmbench_value_sink,
	context unsafe.Pointer, message *C.lsmbench_message) C.lsmbench_code {
	e := of(h)
	value, closer, err := e.db.Get(bytesOf(key, keySize))
	if errors.Is(err, pebble.ErrNotFound) {
		return C.LSMBENCH_NOT_FOUND
	}
	if err != nil {
		return fail(message, err)
	}
	defer closer.Close()
	var p *C.char
	if len(value) > 0 {
		p = (*C.char)(unsafe.Pointer(&value[0]))
	}
	C.lsmbench_pebble_value(sink, context, p, C.size_t(len(value)))
	return C.LSMBENCH_OK
}

var checksum atomic.Uint64 // the values a scan reads, so that reading them is not elided

//export pebbleScan
func pebbleScan(h *C.lsmbench_engine, start *C.char, startSize C.size_t, count C.size_t,
	returned *C.size_t, message *C.lsmbench_message) C.lsmbench_code {
	e := of(h)
	*returned = 0
	it, err := e.db.NewIter(nil)
	if err != nil {
		return fail(message, err)
	}
	var n C.size_t
	var sum uint64
	for ok := it.SeekGE(bytesOf(start, startSize)); ok && n < count; ok = it.Next() {
		k := it.Key()
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return fail(message, err)
		}
		sum += uint64(len(k))
		for i := 0; i < len(v); i += 64 {
			sum += uint64(v[i])
		}
		n++
	}
	if err := it.Close(); err != nil {
		return fail(message, err)
	}
	checksum.Add(sum)
	*returned = n
	return C.LSMBENCH_OK
}

// pendingMerges: the levels Pebble's picker would compact now (a nonzero Score: Pebble
// sets a level's score only when its compensated score reaches 1), the last level left
// out: its score is its fill factor, which reaches 1 once the data outgrows the level's
// target, and the picker never compacts the last level by score (pickAutoScore skips it),
// so counting it would keep a settle waiting for ever. Metrics.Compact.EstimatedDebt is
// not it either: it stays above zero while L0 and Lbase both hold data, below any
// compaction's threshold.
func pendingMerges(m *pebble.Metrics) uint64 {
	var n uint64
	for i := 0; i < len(m.Levels)-1; i++ {
		if m.Levels[i].Score >= 1 {
			n++
		}
	}
	return n
}

//export pebbleMetrics
func pebbleMetrics(h *C.lsmbench_engine, sink C.lsmbench_metric_sink, context unsafe.Pointer,
	message *C.lsmbench_message) C.lsmbench_code {
	e := of(h)
	m := e.db.Metrics()
	emit := func(name string, v float64) {
		cs := C.CString(name)
		C.lsmbench_pebble_metric(sink, context, cs, C.double(v))
		C.free(unsafe.Pointer(cs))
	}
	var files, diskBytes, flushed, compacted int64
	for level := range m.Levels {
		l := &m.Levels[level]
		emit(fmt.Sprintf("disk_components.L%d", level), float64(l.TablesCount))
		emit(fmt.Sprintf("disk_bytes.L%d", level), float64(l.TablesSize))
		files += l.TablesCount
		diskBytes += l.TablesSize
		flushed += int64(l.TableBytesFlushed + l.BlobBytesFlushed)
		compacted += int64(l.TableBytesCompacted + l.BlobBytesCompacted)
	}
	emit("disk_components", float64(files))
	emit("disk_bytes", float64(diskBytes))
	emit("l0_sublevels", float64(m.Levels[0].Sublevels))
	emit("bytes_flushed", float64(flushed))
	emit("bytes_merged", float64(compacted))
	user := e.userB.Load()
	emit("user_bytes", float64(user))
	wa := 0.0
	if user > 0 {
		wa = float64(flushed+compacted) / float64(user)
	}
	emit("write_amplification", wa)
	emit("wal_bytes", float64(m.WAL.BytesWritten))
	emit("flushes", float64(m.Flush.Count))
	emit("merges", float64(m.Compact.Count))
	emit("moves", float64(m.Compact.MoveCount))
	emit("flushes_running", float64(m.Flush.NumInProgress))
	emit("merges_running", float64(m.Compact.NumInProgress))
	emit("merges_pending", float64(pendingMerges(m)))
	emit("pending_merge_bytes", float64(m.Compact.EstimatedDebt))
	emit("memory_bytes", float64(m.MemTable.Size))
	emit("memory_components", float64(m.MemTable.Count))
	emit("block_cache_bytes", float64(m.BlockCache.Size))
	emit("block_cache_hits", float64(m.BlockCache.Hits))
	emit("block_cache_misses", float64(m.BlockCache.Misses))
	e.mu.Lock()
	stalls, stallNs := e.stalls, e.stallNs
	if e.stallSince != 0 {
		stallNs += nowNs() - e.stallSince
	}
	e.mu.Unlock()
	emit("stall_count", float64(stalls))
	emit("stall_micros", float64(stallNs/1000))
	return C.LSMBENCH_OK
}

//export pebbleTakeEvents
func pebbleTakeEvents(h *C.lsmbench_engine, events *C.lsmbench_event, capacity C.size_t) C.size_t {
	e := of(h)
	e.mu.Lock()
	defer e.mu.Unlock()
	n := min(len(e.events), int(capacity))
	if n == 0 {
		return 0
	}
	copy(unsafe.Slice(events, n), e.events[:n])
	e.events = append(e.events[:0], e.events[n:]...)
	return C.size_t(n)
}

//export pebbleBackgroundWork
func pebbleBackgroundWork(h *C.lsmbench_engine, work *C.lsmbench_work,
	message *C.lsmbench_message) C.lsmbench_code {
	e := of(h)
	e.mu.Lock()
	bg := e.backgroundE
	e.mu.Unlock()
	if bg != nil {
		return fail(message, bg)
	}
	m := e.db.Metrics()
	// MemTable.Count: the mutable memtable and the sealed ones queued behind it (the one
	// being flushed stays queued until its flush is done).
	queued := max(m.MemTable.Count-1-m.Flush.NumInProgress, 0)
	work.flushes_pending = C.uint64_t(queued)
	work.flushes_running = C.uint64_t(m.Flush.NumInProgress)
	work.merges_pending = C.uint64_t(pendingMerges(m))
	work.merges_running = C.uint64_t(m.Compact.NumInProgress)
	work.completed = C.uint64_t(e.done.Load())
	return C.LSMBENCH_OK
}
