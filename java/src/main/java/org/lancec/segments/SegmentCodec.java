package org.lancec.segments;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.lance.index.Index;
import org.lance.index.IndexType;

/**
 * Segment metadata bytes of lance-c (the manifest's {@code IndexMetadata}
 * message, protobuf-encoded; docs/segment-metadata.md) to and from the Lance
 * Java SDK's {@link Index}.
 *
 * <p>Written against the Lance Java SDK 7.0.0 coordinating workers on Lance
 * 14.0.2. {@code IndexMetadata} fields 1-10 are the same in both versions.
 * Fields the SDK's {@code Index} cannot hold are refused when they hold data
 * ({@code covering_fields} (11), {@code clustering_id} (12), {@code metadata}
 * (13), any field number this codec does not know), never dropped; the file
 * list (10) travels beside the {@code Index} in {@link Segment}.
 */
public final class SegmentCodec {
  // table.proto, message IndexMetadata
  static final int UUID_FIELD = 1;
  static final int FIELDS = 2;
  static final int NAME = 3;
  static final int DATASET_VERSION = 4;
  static final int FRAGMENT_BITMAP = 5;
  static final int INDEX_DETAILS = 6;
  static final int INDEX_VERSION = 7;
  static final int CREATED_AT = 8;
  static final int BASE_ID = 9;
  static final int FILES = 10;
  static final int COVERING_FIELDS = 11;
  static final int CLUSTERING_ID = 12;
  static final int METADATA = 13;

  private SegmentCodec() {}

  /**
   * Decodes lance-c's segment metadata bytes.
   *
   * @throws SegmentMetadataException when the bytes are malformed, hold a
   *     field the SDK cannot carry (non-empty covering fields, a clustering id,
   *     segment metadata, an unknown field number), or name an index type the
   *     SDK does not know
   */
  public static Segment decode(byte[] bytes) {
    UUID uuid = null;
    List<Integer> fields = new ArrayList<>();
    String name = "";
    long datasetVersion = 0;
    List<Integer> fragments = null;
    byte[] details = null;
    Integer indexVersion = null;
    Long createdAtMillis = null;
    Integer baseId = null;
    List<IndexFile> files = new ArrayList<>();
    Wire.Reader in = new Wire.Reader(bytes);
    while (in.hasNext()) {
      Wire.Field f = in.next();
      switch (f.number) {
        case UUID_FIELD:
          uuid = decodeUuid(expect(f, Wire.LEN, "uuid").bytes);
          break;
        case FIELDS:
          fields.addAll(int32s(f, "fields"));
          break;
        case NAME:
          name = new String(expect(f, Wire.LEN, "name").bytes, StandardCharsets.UTF_8);
          break;
        case DATASET_VERSION:
          datasetVersion = expect(f, Wire.VARINT, "dataset_version").varint;
          break;
        case FRAGMENT_BITMAP:
          fragments = RoaringBitmaps.decode(expect(f, Wire.LEN, "fragment_bitmap").bytes);
          break;
        case INDEX_DETAILS:
          details = expect(f, Wire.LEN, "index_details").bytes;
          break;
        case INDEX_VERSION:
          indexVersion = (int) expect(f, Wire.VARINT, "index_version").varint;
          break;
        case CREATED_AT:
          createdAtMillis = expect(f, Wire.VARINT, "created_at").varint;
          break;
        case BASE_ID:
          baseId = (int) expect(f, Wire.VARINT, "base_id").varint;
          break;
        case FILES:
          files.add(decodeFile(expect(f, Wire.LEN, "files").bytes));
          break;
        case COVERING_FIELDS:
          List<Integer> covering = int32s(f, "covering_fields");
          if (!covering.isEmpty()) {
            throw new SegmentMetadataException(
                "segment metadata has covering_fields " + covering
                    + " (IndexMetadata field 11): the Lance Java SDK 7.0.0's Index cannot carry them, and a"
                    + " commit without them would lose the columns the index carries; commit this segment"
                    + " with lance-c or an SDK of Lance 14.0.2 or newer");
          }
          break;
        case CLUSTERING_ID:
        case METADATA:
          if (f.wireType == Wire.LEN ? f.bytes.length > 0 : f.varint != 0) {
            throw new SegmentMetadataException(
                "segment metadata has " + (f.number == CLUSTERING_ID ? "clustering_id" : "metadata")
                    + " (IndexMetadata field " + f.number + "): the Lance Java SDK 7.0.0's Index cannot carry it;"
                    + " commit this segment with lance-c");
          }
          break;
        default:
          throw new SegmentMetadataException(
              "segment metadata has IndexMetadata field " + f.number
                  + ", which neither this codec nor the Lance Java SDK 7.0.0 knows; refusing rather than"
                  + " dropping it");
      }
    }
    if (uuid == null) throw new SegmentMetadataException("segment metadata has no uuid (IndexMetadata field 1)");
    if (details == null) {
      throw new SegmentMetadataException("segment metadata has no index_details (IndexMetadata field 6)");
    }
    Index.Builder b =
        Index.builder()
            .uuid(uuid)
            .fields(fields)
            .name(name)
            .datasetVersion(datasetVersion)
            .indexDetails(details)
            .indexType(IndexTypes.of(details));
    if (fragments != null) b.fragments(fragments);
    if (indexVersion != null) b.indexVersion(indexVersion);
    if (createdAtMillis != null) b.createdAt(Instant.ofEpochMilli(createdAtMillis));
    if (baseId != null) b.baseId(baseId);
    return new Segment(b.build(), files);
  }

  /**
   * Encodes an SDK {@link Index} (for example one from {@code Dataset.createIndex}
   * with {@code IndexOptions.withFragmentIds}) as segment metadata bytes that
   * lance-c's commit takes. No file list is written: lance-c's commit then
   * requires the segment's directory to hold files.
   */
  public static byte[] encode(Index index) {
    return encode(new Segment(index, List.of()));
  }

  /** Encodes a segment with its file list; decode then encode gives lance-c's bytes back. */
  public static byte[] encode(Segment segment) {
    Index index = segment.index();
    if (index.uuid() == null) throw new SegmentMetadataException("the Index has no uuid");
    byte[] details =
        index.indexDetails()
            .orElseThrow(() -> new SegmentMetadataException("the Index has no indexDetails: lance-c needs the index type's details"));
    IndexType derived = IndexTypes.of(details);
    if (index.indexType() != null && !IndexTypes.compatible(index.indexType(), derived)) {
      throw new SegmentMetadataException(
          "the Index says indexType " + index.indexType() + " but its indexDetails describe " + derived);
    }
    Wire.Writer out = new Wire.Writer();
    out.bytes(UUID_FIELD, encodeUuid(index.uuid()));
    List<Integer> fields = index.fields() == null ? List.of() : index.fields();
    if (!fields.isEmpty()) {
      Wire.Writer packed = new Wire.Writer();
      for (int id : fields) packed.rawVarint((long) id);
      out.bytes(FIELDS, packed.toByteArray());
    }
    if (index.name() != null && !index.name().isEmpty()) out.string(NAME, index.name());
    if (index.datasetVersion() != 0) out.uint(DATASET_VERSION, index.datasetVersion());
    if (index.fragments().isPresent()) out.bytes(FRAGMENT_BITMAP, RoaringBitmaps.encode(index.fragments().get()));
    out.bytes(INDEX_DETAILS, details);
    out.int32(INDEX_VERSION, index.indexVersion());
    Optional<Instant> created = index.createdAt();
    if (created.isPresent()) out.uint(CREATED_AT, created.get().toEpochMilli());
    if (index.baseId().isPresent()) out.uint(BASE_ID, index.baseId().get() & 0xffffffffL);
    for (IndexFile file : segment.files()) {
      Wire.Writer f = new Wire.Writer();
      f.string(1, file.path());
      if (file.sizeBytes() != 0) f.uint(2, file.sizeBytes());
      out.bytes(FILES, f.toByteArray());
    }
    return out.toByteArray();
  }

  private static Wire.Field expect(Wire.Field f, int wire, String what) {
    if (f.wireType != wire) {
      throw new SegmentMetadataException(
          "malformed segment metadata: " + what + " (field " + f.number + ") has wire type " + f.wireType
              + ", expected " + wire);
    }
    return f;
  }

  /** A repeated int32, packed or not. */
  private static List<Integer> int32s(Wire.Field f, String what) {
    List<Integer> out = new ArrayList<>();
    if (f.wireType == Wire.VARINT) {
      out.add((int) f.varint);
    } else {
      Wire.Reader r = new Wire.Reader(expect(f, Wire.LEN, what).bytes);
      while (r.hasNext()) out.add((int) r.varint());
    }
    return out;
  }

  private static UUID decodeUuid(byte[] message) {
    byte[] raw = null;
    Wire.Reader r = new Wire.Reader(message);
    while (r.hasNext()) {
      Wire.Field f = r.next();
      if (f.number == 1 && f.wireType == Wire.LEN) raw = f.bytes;
    }
    if (raw == null || raw.length != 16) {
      throw new SegmentMetadataException("malformed segment metadata: the uuid is not 16 bytes");
    }
    long hi = 0;
    long lo = 0;
    for (int i = 0; i < 8; i++) hi = (hi << 8) | (raw[i] & 0xff);
    for (int i = 8; i < 16; i++) lo = (lo << 8) | (raw[i] & 0xff);
    return new UUID(hi, lo);
  }

  private static byte[] encodeUuid(UUID uuid) {
    byte[] raw = new byte[16];
    long hi = uuid.getMostSignificantBits();
    long lo = uuid.getLeastSignificantBits();
    for (int i = 7; i >= 0; i--, hi >>>= 8) raw[i] = (byte) hi;
    for (int i = 15; i >= 8; i--, lo >>>= 8) raw[i] = (byte) lo;
    Wire.Writer w = new Wire.Writer();
    w.bytes(1, raw);
    return w.toByteArray();
  }

  private static IndexFile decodeFile(byte[] message) {
    String path = "";
    long size = 0;
    Wire.Reader r = new Wire.Reader(message);
    while (r.hasNext()) {
      Wire.Field f = r.next();
      if (f.number == 1 && f.wireType == Wire.LEN) path = new String(f.bytes, StandardCharsets.UTF_8);
      else if (f.number == 2 && f.wireType == Wire.VARINT) size = f.varint;
    }
    return new IndexFile(path, size);
  }
}
