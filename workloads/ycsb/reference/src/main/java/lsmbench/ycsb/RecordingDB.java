package lsmbench.ycsb;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.HashMap;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * A YCSB binding that stores nothing and writes every operation YCSB's client issues to it as
 * one line of an lsmbench op stream (workloads/ycsb/README.md, "The op stream"):
 *
 * <pre>
 * # lsmbench op stream v1: FREE TEXT
 * seq,time_us,op,key,value_size,scan_length
 * </pre>
 *
 * <p>Properties (-p): {@code lsmbench.out} the file to write (required); {@code lsmbench.label}
 * what the header names after "YCSB VERSION CoreWorkload " (default: the phase, load or run);
 * {@code lsmbench.source} the header's whole free text instead.
 *
 * <p>A read-modify-write of CoreWorkload reaches a DB as db.read(key) then db.update(key), which a
 * binding alone cannot tell apart from a READ followed by an UPDATE of the same key (a zipfian
 * picks the same key twice in a row often enough). {@link RecordingCoreWorkload} marks the thread
 * while CoreWorkload's doTransactionReadModifyWrite runs; the read and the update inside that
 * mark are written as one {@code rmw} line. A workload with readmodifywriteproportion &gt; 0 run
 * without that class is refused.
 */
public class RecordingDB extends DB {
  public static final String OUT_PROPERTY = "lsmbench.out";
  public static final String SOURCE_PROPERTY = "lsmbench.source";
  public static final String LABEL_PROPERTY = "lsmbench.label";
  public static final String HEADER_PREFIX = "# lsmbench op stream v1: ";
  public static final String COLUMNS = "seq,time_us,op,key,value_size,scan_length";

  /** The read-modify-write under way in this thread, if any. */
  private static final class Rmw {
    String readKey;
    boolean updated;
  }

  private static final ThreadLocal<Rmw> RMW = new ThreadLocal<>();

  /** Called by {@link RecordingCoreWorkload} before CoreWorkload's read-modify-write. */
  static void beginReadModifyWrite() {
    if (RMW.get() != null) {
      throw new IllegalStateException("nested read-modify-write");
    }
    RMW.set(new Rmw());
  }

  /** Called by {@link RecordingCoreWorkload} after it: the pair must have been seen whole. */
  static void endReadModifyWrite() {
    Rmw rmw = RMW.get();
    RMW.remove();
    if (rmw == null || rmw.readKey == null || !rmw.updated) {
      throw new IllegalStateException(
          "a read-modify-write did not issue one read then one update of the same key");
    }
  }

  /** After an exception inside the read-modify-write: clears the mark, lets that one propagate. */
  static void abandonReadModifyWrite() {
    RMW.remove();
  }

  private BufferedWriter out;
  private long seq;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String path = p.getProperty(OUT_PROPERTY);
    if (path == null || path.isEmpty()) {
      throw new DBException("RecordingDB: set -p " + OUT_PROPERTY + "=FILE");
    }
    if (!"1".equals(p.getProperty("threadcount", "1").trim())) {
      throw new DBException("RecordingDB writes one ordered stream: run with -p threadcount=1");
    }
    double rmwProportion = Double.parseDouble(p.getProperty("readmodifywriteproportion", "0"));
    String workload = p.getProperty("workload", "");
    if (rmwProportion > 0 && !RecordingCoreWorkload.class.getName().equals(workload)) {
      throw new DBException("RecordingDB: readmodifywriteproportion > 0 needs -p workload="
          + RecordingCoreWorkload.class.getName() + " (else a read-modify-write is recorded"
          + " as a read and an update), not " + workload);
    }
    boolean transactions = Boolean.parseBoolean(p.getProperty("dotransactions", "true"));
    String label = p.getProperty(LABEL_PROPERTY, transactions ? "run" : "load");
    String source = p.getProperty(SOURCE_PROPERTY, "YCSB " + ycsbVersion() + " CoreWorkload " + label);
    try {
      out = Files.newBufferedWriter(Paths.get(path), StandardCharsets.UTF_8);
      out.write(HEADER_PREFIX + source.replace('\n', ' ') + "\n");
      out.write(COLUMNS + "\n");
    } catch (IOException e) {
      throw new DBException("RecordingDB: cannot write " + path, e);
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (RMW.get() != null) {
      throw new DBException("RecordingDB: the run ended inside a read-modify-write");
    }
    try {
      if (out != null) {
        out.close();
      }
    } catch (IOException e) {
      throw new DBException("RecordingDB: cannot close the op stream", e);
    }
  }

  /** The version in site.ycsb:core's project.properties ("unknown" if absent). */
  static String ycsbVersion() {
    try (InputStream in = DB.class.getClassLoader().getResourceAsStream("project.properties")) {
      if (in != null) {
        Properties v = new Properties();
        v.load(in);
        return v.getProperty("version", "unknown");
      }
    } catch (IOException e) {
      // fall through
    }
    return "unknown";
  }

  /** Lowercase hex of the key's UTF-8 bytes. */
  static String hexKey(String key) {
    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
    StringBuilder sb = new StringBuilder(bytes.length * 2);
    for (byte b : bytes) {
      sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
    }
    return sb.toString();
  }

  /** The bytes of the field values, as a store would write them (the iterators are consumed). */
  static long valueBytes(Map<String, ByteIterator> values) {
    long n = 0;
    for (ByteIterator v : values.values()) {
      n += v.toArray().length;
    }
    return n;
  }

  private void line(String op, String key, String valueSize, String scanLength) {
    try {
      out.write(seq++ + ",," + op + "," + hexKey(key) + "," + valueSize + "," + scanLength + "\n");
    } catch (IOException e) {
      throw new RuntimeException("RecordingDB: cannot write the op stream", e);
    }
  }

  @Override
  public Status read(String table, String key, Set<String> fields,
                     Map<String, ByteIterator> result) {
    Rmw rmw = RMW.get();
    if (rmw != null) {
      if (rmw.readKey != null) {
        throw new IllegalStateException("two reads in one read-modify-write");
      }
      rmw.readKey = key;  // written with the update
      return Status.OK;
    }
    line("read", key, "", "");
    return Status.OK;
  }

  @Override
  public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    if (RMW.get() != null) {
      throw new IllegalStateException("a scan inside a read-modify-write");
    }
    line("scan", startkey, "", Integer.toString(recordcount));
    return Status.OK;
  }

  @Override
  public Status update(String table, String key, Map<String, ByteIterator> values) {
    Rmw rmw = RMW.get();
    if (rmw != null) {
      if (rmw.readKey == null || rmw.updated || !rmw.readKey.equals(key)) {
        throw new IllegalStateException("a read-modify-write's update is not of the key it read");
      }
      rmw.updated = true;
      line("rmw", key, Long.toString(valueBytes(values)), "");
      return Status.OK;
    }
    line("update", key, Long.toString(valueBytes(values)), "");
    return Status.OK;
  }

  @Override
  public Status insert(String table, String key, Map<String, ByteIterator> values) {
    if (RMW.get() != null) {
      throw new IllegalStateException("an insert inside a read-modify-write");
    }
    line("insert", key, Long.toString(valueBytes(values)), "");
    return Status.OK;
  }

  @Override
  public Status delete(String table, String key) {
    if (RMW.get() != null) {
      throw new IllegalStateException("a delete inside a read-modify-write");
    }
    line("delete", key, "", "");
    return Status.OK;
  }
}
