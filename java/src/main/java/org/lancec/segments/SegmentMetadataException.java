package org.lancec.segments;

/**
 * Segment metadata that cannot pass between lance-c and the Lance Java SDK:
 * malformed bytes, or a field the SDK's {@code Index} cannot hold while it
 * holds data (it is refused, never dropped).
 */
public class SegmentMetadataException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public SegmentMetadataException(String message) {
    super(message);
  }
}
