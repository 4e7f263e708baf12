package org.lancec.segments;

import java.nio.charset.StandardCharsets;
import org.lance.index.IndexType;

/**
 * The SDK's {@link IndexType} of a segment, read from its {@code index_details}
 * (a {@code google.protobuf.Any} whose type URL names the details message).
 */
final class IndexTypes {
  private IndexTypes() {}

  /** The type URL of an encoded {@code Any}. */
  static String typeUrl(byte[] any) {
    Wire.Reader r = new Wire.Reader(any);
    while (r.hasNext()) {
      Wire.Field f = r.next();
      if (f.number == 1 && f.wireType == Wire.LEN) return new String(f.bytes, StandardCharsets.UTF_8);
    }
    return "";
  }

  /** @throws SegmentMetadataException for details of a type the SDK has no IndexType for */
  static IndexType of(byte[] any) {
    String url = typeUrl(any);
    String message = url.substring(url.lastIndexOf('.') + 1);
    switch (message) {
      case "VectorIndexDetails":
        // As the SDK reports its own vector segments: the kind of vector index
        // (IVF_FLAT, IVF_PQ, ...) stays in the details.
        return IndexType.VECTOR;
      case "BTreeIndexDetails":
        return IndexType.BTREE;
      case "BitmapIndexDetails":
        return IndexType.BITMAP;
      case "LabelListIndexDetails":
        return IndexType.LABEL_LIST;
      case "InvertedIndexDetails":
        return IndexType.INVERTED;
      case "NGramIndexDetails":
        return IndexType.NGRAM;
      case "ZoneMapIndexDetails":
        return IndexType.ZONEMAP;
      case "BloomFilterIndexDetails":
        return IndexType.BLOOM_FILTER;
      default:
        throw new SegmentMetadataException(
            "segment metadata has index_details of type '" + url + "', which the Lance Java SDK 7.0.0 has no"
                + " IndexType for; commit this segment with lance-c");
    }
  }

  /** Whether an Index's stated type agrees with the one its details describe. */
  static boolean compatible(IndexType stated, IndexType derived) {
    if (stated == derived) return true;
    boolean vectorStated = stated == IndexType.VECTOR;
    boolean vectorDerived = derived.name().startsWith("IVF_") || derived == IndexType.VECTOR;
    return (vectorStated && vectorDerived) || (stated == IndexType.SCALAR && !vectorDerived);
  }
}
