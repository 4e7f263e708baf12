package org.lancec.segments;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.WriteParams;

/** Deterministic clustered vectors {id: int64, vec: FixedSizeList<float32>[dim]} and brute-force k-NN. */
final class Vectors {
  final int rows;
  final int dim;
  final long firstId;
  final float[] values;

  Vectors(int rows, int dim, long firstId, long seed) {
    this.rows = rows;
    this.dim = dim;
    this.firstId = firstId;
    this.values = new float[rows * dim];
    Random rnd = new Random(seed);
    int clusters = 16;
    float[] centers = new float[clusters * dim];
    for (int i = 0; i < centers.length; i++) centers[i] = rnd.nextFloat() * 10f;
    for (int r = 0; r < rows; r++) {
      int c = rnd.nextInt(clusters);
      for (int d = 0; d < dim; d++) values[r * dim + d] = centers[c * dim + d] + (float) rnd.nextGaussian();
    }
  }

  float[] row(int r) {
    return Arrays.copyOfRange(values, r * dim, (r + 1) * dim);
  }

  static Schema schema(int dim) {
    Field item = new Field("item", FieldType.nullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null);
    Field vec = new Field("vec", FieldType.notNullable(new ArrowType.FixedSizeList(dim)), List.of(item));
    Field id = new Field("id", FieldType.notNullable(new ArrowType.Int(64, true)), null);
    return new Schema(List.of(id, vec));
  }

  /** The rows as an Arrow IPC stream (batches of `batchRows`). */
  private byte[] ipc(BufferAllocator allocator, int batchRows) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (VectorSchemaRoot root = VectorSchemaRoot.create(schema(dim), allocator);
        ArrowStreamWriter writer = new ArrowStreamWriter(root, null, Channels.newChannel(bytes))) {
      writer.start();
      for (int start = 0; start < rows; start += batchRows) {
        int n = Math.min(batchRows, rows - start);
        root.allocateNew();
        BigIntVector ids = (BigIntVector) root.getVector("id");
        FixedSizeListVector vec = (FixedSizeListVector) root.getVector("vec");
        Float4Vector items = (Float4Vector) vec.getDataVector();
        for (int i = 0; i < n; i++) {
          ids.setSafe(i, firstId + start + i);
          vec.setNotNull(i);
          for (int d = 0; d < dim; d++) items.setSafe(i * dim + d, values[(start + i) * dim + d]);
        }
        items.setValueCount(n * dim);
        root.setRowCount(n);
        writer.writeBatch();
      }
      writer.end();
    }
    return bytes.toByteArray();
  }

  /** Writes (mode CREATE) or appends the rows, `rowsPerFragment` per fragment. */
  Dataset write(BufferAllocator allocator, String uri, int rowsPerFragment, WriteParams.WriteMode mode,
      boolean stableRowIds) throws IOException {
    byte[] stream = ipc(allocator, rowsPerFragment);
    WriteParams params =
        new WriteParams.Builder()
            .withMaxRowsPerFile(rowsPerFragment)
            .withMaxRowsPerGroup(Math.min(rowsPerFragment, 1024))
            .withMode(mode)
            .withEnableStableRowIds(stableRowIds)
            .build();
    try (ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(stream), allocator);
        ArrowArrayStream out = ArrowArrayStream.allocateNew(allocator)) {
      Data.exportArrayStream(allocator, reader, out);
      return Dataset.create(allocator, out, uri, params);
    }
  }

  /** The ids of the k rows nearest `query` by squared L2 distance (ties: smaller id first). */
  static long[] bruteForce(List<Vectors> parts, float[] query, int k) {
    return bruteForce(parts, query, k, id -> true);
  }

  /** bruteForce over the rows whose id `keep` accepts. */
  static long[] bruteForce(List<Vectors> parts, float[] query, int k, java.util.function.LongPredicate keep) {
    int total = parts.stream().mapToInt(p -> p.rows).sum();
    long[] ids = new long[total];
    double[] dist = new double[total];
    int at = 0;
    for (Vectors p : parts) {
      for (int r = 0; r < p.rows; r++) {
        if (!keep.test(p.firstId + r)) continue;
        double s = 0;
        for (int d = 0; d < p.dim; d++) {
          double x = p.values[r * p.dim + d] - query[d];
          s += x * x;
        }
        ids[at] = p.firstId + r;
        dist[at] = s;
        at++;
      }
    }
    total = at;
    Integer[] order = new Integer[total];
    for (int i = 0; i < total; i++) order[i] = i;
    Arrays.sort(order, (a, b) -> dist[a] != dist[b] ? Double.compare(dist[a], dist[b]) : Long.compare(ids[a], ids[b]));
    long[] out = new long[k];
    for (int i = 0; i < k; i++) out[i] = ids[order[i]];
    return out;
  }
}
