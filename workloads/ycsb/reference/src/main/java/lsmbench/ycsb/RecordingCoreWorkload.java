package lsmbench.ycsb;

import site.ycsb.DB;
import site.ycsb.workloads.CoreWorkload;

/**
 * YCSB's CoreWorkload, unchanged, except that its read-modify-write is bracketed so that
 * {@link RecordingDB} can write it as one {@code rmw} line: CoreWorkload.doTransactionReadModifyWrite
 * (0.17.0) picks the key and the new field values, then calls db.read(key) and db.update(key) in
 * that order, and a binding sees nothing else that tells the pair from a READ then an UPDATE of
 * the same key. Every choice (operation, key, field, value size) is still CoreWorkload's own: this
 * class only calls super.
 */
public class RecordingCoreWorkload extends CoreWorkload {
  @Override
  public void doTransactionReadModifyWrite(DB db) {
    RecordingDB.beginReadModifyWrite();
    boolean done = false;
    try {
      super.doTransactionReadModifyWrite(db);
      done = true;
    } finally {
      if (done) {
        RecordingDB.endReadModifyWrite();
      } else {
        RecordingDB.abandonReadModifyWrite();
      }
    }
  }
}
