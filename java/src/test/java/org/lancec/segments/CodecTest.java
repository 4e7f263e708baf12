package org.lancec.segments;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.lance.Dataset;
import org.lance.WriteParams;
import org.lance.index.DistanceType;
import org.lance.index.Index;
import org.lance.index.IndexOptions;
import org.lance.index.IndexParams;
import org.lance.index.IndexType;
import org.lance.index.vector.IvfBuildParams;
import org.lance.index.vector.VectorIndexParams;
import org.lance.index.vector.VectorTrainer;

/** The codec between lance-c's segment metadata bytes and the SDK's Index, both ways, and its refusals. */
class CodecTest extends ToolTest {
  static Vectors data() {
    return new Vectors(4000, 16, 0, 7);
  }

  static byte[] concat(byte[] a, byte[] b) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.writeBytes(a);
    out.writeBytes(b);
    return out.toByteArray();
  }

  /** C-built segment bytes of three index types over one dataset written by the SDK. */
  static final class Built {
    String uri;
    long version;
    byte[] flat;
    UUID flatUuid;
    byte[] pq;
    byte[] btree;
  }

  static Built build(Path dir) throws Exception {
    Built b = new Built();
    b.uri = dir.resolve("codec.lance").toString();
    Vectors v = data();
    List<String> model;
    try (Dataset ds = v.write(allocator, b.uri, 1000, WriteParams.WriteMode.CREATE, false)) {
      b.version = ds.version();
      model = CoordinatorFlowTest.trainModelFor(ds, dir, 4, 4);
    }
    b.flatUuid = UUID.randomUUID();
    Path flat = dir.resolve("flat.seg");
    List<String> args = new ArrayList<>(List.of("build", b.uri, "--column", "vec", "--type", "IVF_FLAT",
        "--fragments", "0,1", "--uuid", b.flatUuid.toString(), "--name", "vec_idx", "--quiet", "-o", flat.toString()));
    args.addAll(model.subList(0, 4));
    Tool.run(args.toArray(new String[0]));
    Path pq = dir.resolve("pq.seg");
    args = new ArrayList<>(List.of("build", b.uri, "--column", "vec", "--fragments", "2", "--quiet", "-o",
        pq.toString()));
    args.addAll(model);
    Tool.run(args.toArray(new String[0]));
    Path btree = dir.resolve("btree.seg");
    Tool.run("build", b.uri, "--column", "id", "--scalar", "BTREE", "--fragments", "2,3", "--quiet", "-o",
        btree.toString());
    b.flat = Files.readAllBytes(flat);
    b.pq = Files.readAllBytes(pq);
    b.btree = Files.readAllBytes(btree);
    return b;
  }

  /** Test 2: lance-c's bytes -> Index -> bytes are the same bytes, and lance-c commits and lists them. */
  @Test
  void roundTripOfLanceCBytesForEveryTypeTheSdkCarries(@TempDir Path dir) throws Exception {
    Built b = build(dir);
    for (byte[] bytes : List.of(b.flat, b.pq, b.btree)) {
      Segment s = SegmentCodec.decode(bytes);
      assertArrayEquals(bytes, SegmentCodec.encode(s), "decode then encode gives lance-c's bytes back");
      assertFalse(s.files().isEmpty(), "lance-c's segments list their files");
      for (IndexFile f : s.files()) {
        Path file = Path.of(b.uri, "_indices", s.index().uuid().toString(), f.path());
        assertEquals(Files.size(file), f.sizeBytes(), f.path());
      }
      assertEquals(b.version, s.index().datasetVersion());
      assertTrue(s.index().createdAt().isPresent());
      assertFalse(s.index().baseId().isPresent());
    }
    Index flat = SegmentCodec.decode(b.flat).index();
    assertEquals(b.flatUuid, flat.uuid());
    assertEquals(List.of(1), flat.fields(), "field id of vec");
    assertEquals("vec_idx", flat.name());
    assertEquals(List.of(0, 1), flat.fragments().get());
    assertEquals(IndexType.VECTOR, flat.indexType());
    assertTrue(IndexTypes.typeUrl(flat.indexDetails().get()).endsWith("lance.index.pb.VectorIndexDetails"));
    Index pq = SegmentCodec.decode(b.pq).index();
    assertEquals(List.of(2), pq.fragments().get());
    assertEquals(IndexType.VECTOR, pq.indexType());
    Index btree = SegmentCodec.decode(b.btree).index();
    assertEquals(List.of(0), btree.fields(), "field id of id");
    assertEquals(List.of(2, 3), btree.fragments().get());
    assertEquals(IndexType.BTREE, btree.indexType());

    // The re-encoded bytes, and an Index encoded without its file list (what the SDK
    // alone can give), are committed by lance-c, which lists the same fields.
    Path flatOut = Files.write(dir.resolve("flat-java.seg"), SegmentCodec.encode(SegmentCodec.decode(b.flat)));
    Path btreeOut = Files.write(dir.resolve("btree-java.seg"), SegmentCodec.encode(btree));
    Tool.run("commit", b.uri, "--name", "vec_idx", "--column", "vec", flatOut.toString());
    Tool.run("commit", b.uri, "--name", "id_idx", "--column", "id", btreeOut.toString());
    String listing = Tool.run("list", b.uri, "--json").replace(" ", "");
    assertTrue(listing.contains("\"uuid\":\"" + b.flatUuid + "\""), listing);
    assertTrue(listing.contains("\"uuid\":\"" + btree.uuid() + "\""), listing);
    String flatCoverage = Tool.run("coverage", b.uri, "--name", "vec_idx", "--json").replace(" ", "");
    assertTrue(flatCoverage.contains("\"indexed_fragments\":[0,1]"), flatCoverage);
    String btreeCoverage = Tool.run("coverage", b.uri, "--name", "id_idx", "--json").replace(" ", "");
    assertTrue(btreeCoverage.contains("\"indexed_fragments\":[2,3]"), btreeCoverage);
  }

  /** Segments the SDK builds (uncommitted), encoded by Java, committed by lance-c: exact k-NN through lance-c. */
  @Test
  void sdkBuiltSegmentsEncodedByJavaCommittedByLanceC(@TempDir Path dir) throws Exception {
    Vectors v = data();
    String uri = dir.resolve("sdk.lance").toString();
    List<Path> files = new ArrayList<>();
    try (Dataset ds = v.write(allocator, uri, 1000, WriteParams.WriteMode.CREATE, false)) {
      IvfBuildParams train = new IvfBuildParams.Builder().setNumPartitions(4).setMaxIters(20).build();
      float[] centroids = VectorTrainer.trainIvfCentroids(ds, "vec", train, DistanceType.L2);
      VectorIndexParams params =
          new VectorIndexParams.Builder(new IvfBuildParams.Builder().setNumPartitions(4).setCentroids(centroids).build())
              .setDistanceType(DistanceType.L2)
              .build();
      IndexParams ip = IndexParams.builder().setVectorIndexParams(params).build();
      for (List<Integer> group : List.of(List.of(0, 1), List.of(2, 3))) {
        Index seg = ds.createIndex(IndexOptions.builder(List.of("vec"), IndexType.IVF_FLAT, ip)
            .withIndexName("vec_idx").withFragmentIds(group).build());
        assertEquals(group, seg.fragments().get());
        byte[] bytes = SegmentCodec.encode(seg);
        Index back = SegmentCodec.decode(bytes).index();
        assertEquals(seg.uuid(), back.uuid());
        assertEquals(seg.fields(), back.fields());
        assertEquals(seg.name(), back.name());
        assertEquals(seg.datasetVersion(), back.datasetVersion());
        assertEquals(seg.indexVersion(), back.indexVersion());
        assertEquals(seg.indexType(), back.indexType());
        assertArrayEquals(seg.indexDetails().get(), back.indexDetails().get());
        files.add(Files.write(dir.resolve("sdk-" + files.size() + ".seg"), bytes));
      }
    }
    // Segments built outside lance-c carry no model fingerprint: lance-c's commit
    // of two of them needs --allow-independent-models (docs/segment-metadata.md).
    Tool.run("commit", uri, "--name", "vec_idx", "--column", "vec", files.get(0).toString(), files.get(1).toString(),
        "--allow-independent-models");
    String coverage = Tool.run("coverage", uri, "--name", "vec_idx", "--json").replace(" ", "");
    assertTrue(coverage.contains("\"indexed_fragments\":[0,1,2,3]"), coverage);
    for (int q = 0; q < 6; q++) {
      float[] query = v.row(q * 613 + 5);
      assertArrayEquals(Vectors.bruteForce(List.of(v), query, 10), Tool.search(uri, query, 10, 4), "query " + q);
    }
  }

  /** Test 3: what the SDK cannot carry is refused with a message that says so. */
  @Test
  void refusals(@TempDir Path dir) throws Exception {
    Built b = build(dir);
    // covering_fields = [0] (field 11, packed): the SDK's Index has no place for it.
    SegmentMetadataException e = assertThrows(SegmentMetadataException.class,
        () -> SegmentCodec.decode(concat(b.btree, new byte[] {0x5a, 0x01, 0x00})));
    assertEquals("segment metadata has covering_fields [0] (IndexMetadata field 11): the Lance Java SDK 7.0.0's"
        + " Index cannot carry them, and a commit without them would lose the columns the index carries; commit"
        + " this segment with lance-c or an SDK of Lance 14.0.2 or newer", e.getMessage());
    // An empty covering_fields holds nothing: accepted.
    assertEquals(SegmentCodec.decode(b.btree).index(), SegmentCodec.decode(concat(b.btree, new byte[] {0x5a, 0x00})).index());
    // clustering_id (12) and a field number no version knows.
    e = assertThrows(SegmentMetadataException.class, () -> SegmentCodec.decode(concat(b.flat, new byte[] {0x60, 0x07})));
    assertEquals("segment metadata has clustering_id (IndexMetadata field 12): the Lance Java SDK 7.0.0's Index"
        + " cannot carry it; commit this segment with lance-c", e.getMessage());
    e = assertThrows(SegmentMetadataException.class, () -> SegmentCodec.decode(concat(b.flat, new byte[] {0x78, 0x01})));
    assertEquals("segment metadata has IndexMetadata field 15, which neither this codec nor the Lance Java SDK"
        + " 7.0.0 knows; refusing rather than dropping it", e.getMessage());
    // index_details of a type the SDK has no IndexType for.
    Wire.Writer any = new Wire.Writer();
    any.string(1, "/lance.index.pb.FMIndexDetails");
    Wire.Writer field = new Wire.Writer();
    field.bytes(SegmentCodec.INDEX_DETAILS, any.toByteArray());
    e = assertThrows(SegmentMetadataException.class, () -> SegmentCodec.decode(concat(b.btree, field.toByteArray())));
    assertEquals("segment metadata has index_details of type '/lance.index.pb.FMIndexDetails', which the Lance Java"
        + " SDK 7.0.0 has no IndexType for; commit this segment with lance-c", e.getMessage());
    // Malformed bytes.
    e = assertThrows(SegmentMetadataException.class,
        () -> SegmentCodec.decode(java.util.Arrays.copyOf(b.flat, b.flat.length - 3)));
    assertTrue(e.getMessage().startsWith("malformed segment metadata: "), e.getMessage());
    // An Index whose stated type contradicts its details.
    Index flat = SegmentCodec.decode(b.flat).index();
    Index wrong = Index.builder().uuid(flat.uuid()).fields(flat.fields()).name(flat.name())
        .datasetVersion(flat.datasetVersion()).fragments(flat.fragments().get()).indexDetails(flat.indexDetails().get())
        .indexVersion(flat.indexVersion()).indexType(IndexType.BTREE).build();
    e = assertThrows(SegmentMetadataException.class, () -> SegmentCodec.encode(wrong));
    assertEquals("the Index says indexType BTREE but its indexDetails describe VECTOR", e.getMessage());
  }
}
