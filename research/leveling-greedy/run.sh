#!/usr/bin/env bash
# research/leveling-greedy.md: leveling at the paper's scale in lsm-sim (128 MiB memory
# components, T = 10, 100 MiB/s, 800 flushes loaded). testing.txt: closed loops of 400, 1,000
# and 2,000 flushes; running-2h.txt: 95 % of fair's closed-loop maximum for 2 hours; each for
# single, fair and greedy, with full_level_waits false and true. Run from the repository root
# after `make build`; takes under a second.
set -euo pipefail
S=${S:-build/bin/lsm-sim}
OUT=$(dirname "$0")
COMMON="--policy leveling --flush-bytes 128M --size_ratio 10 --memtable_bytes 128M --load-flushes 800 --bandwidth 100M --format jsonl"
{
for waits in false true; do for n in 400 1000 2000; do for sch in fair single greedy; do
  $S $COMMON --full_level_waits $waits --flushes $n --arrival-rate 10G --merge_scheduler $sch | python3 -c "
import json,sys; r=json.loads(sys.stdin.readlines()[-1])
print('full_level_waits=$waits flushes=$n $sch max_MB_per_s', round(r['bytes_flushed']/r['time_s']/1e6,3), 'write_amp', round(r['write_amp'],1), 'max_sstables', r['max_sstables'])"
done; done; done
} > "$OUT/testing.txt"
{
for waits in false true; do for tn in 400 2000; do
  max=$($S $COMMON --full_level_waits $waits --flushes $tn --arrival-rate 10G --merge_scheduler fair | python3 -c "import json,sys; r=json.loads(sys.stdin.readlines()[-1]); print(r['bytes_flushed']/r['time_s'])")
  R=$(python3 -c "print(int(0.95*$max))"); N=$(python3 -c "print(int(0.95*$max*7200/134217728))")
  for sch in single fair greedy; do
    $S $COMMON --full_level_waits $waits --flushes $N --arrival-rate $R --write-rate 40M --merge_scheduler $sch | python3 -c "
import json,sys; r=json.loads(sys.stdin.readlines()[-1])
print('full_level_waits=$waits testing_flushes=$tn max=%.2fMB/s' % ($max/1e6), '$sch flushes', r['flushes'], 'time_s', round(r['time_s']), 'stall_s', round(r['stall_s']), 'memory_stall_s', round(r['memory_stall_s']), 'final_backlog_s', round(r['backlog_s']), 'max_backlog_s', round(r['max_backlog_s']), 'write_amp', round(r['write_amp'],2), 'max_sstables', r['max_sstables'])"
  done
done; done
} > "$OUT/running-2h.txt"
