package org.lancec.segments;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The wire format and the bitmap format alone (no lance-index needed: set-up runs these to fetch artifacts). */
class RoaringBitmapsTest {
  @Test
  void arrayAndBitmapContainersRoundTrip() {
    List<Integer> values = new ArrayList<>();
    for (int i = 0; i < 5000; i++) values.add(i * 3); // > 4096 in container 0: a bitmap container
    values.add(70000); // container 1: an array container
    values.add(Integer.MAX_VALUE);
    byte[] bytes = RoaringBitmaps.encode(values);
    assertEquals(values, RoaringBitmaps.decode(bytes));
    assertEquals(List.of(), RoaringBitmaps.decode(new byte[0]));
  }

  @Test
  void runContainersDecode() {
    // Cookie 12347 with one container (count - 1 = 0), run flag set: values 5..9.
    byte[] bytes = {0x3b, 0x30, 0x00, 0x00, 0x01, 0x00, 0x00, 0x04, 0x00, 0x01, 0x00, 0x05, 0x00, 0x04, 0x00};
    assertEquals(List.of(5, 6, 7, 8, 9), RoaringBitmaps.decode(bytes));
    // A run is what the core writes for consecutive fragments (it optimizes
    // before serializing), and so what the encoder writes.
    assertArrayEquals(bytes, RoaringBitmaps.encode(List.of(5, 6, 7, 8, 9)));
    // Not strictly smaller as a run (6 bytes either way): an array container.
    assertEquals(22, RoaringBitmaps.encode(List.of(1, 2, 3)).length);
  }

  @Test
  void malformedBitmapsAreRefused() {
    assertThrows(SegmentMetadataException.class, () -> RoaringBitmaps.decode(new byte[] {1, 2, 3, 4}));
    byte[] truncated = java.util.Arrays.copyOf(RoaringBitmaps.encode(List.of(1, 2, 3)), 14);
    assertThrows(SegmentMetadataException.class, () -> RoaringBitmaps.decode(truncated));
    assertThrows(SegmentMetadataException.class, () -> RoaringBitmaps.encode(List.of(-1)));
  }

  @Test
  void varintsAsProtobufWritesThem() {
    Wire.Writer w = new Wire.Writer();
    w.int32(7, -1); // a negative int32 takes ten bytes
    w.uint(4, 300);
    assertArrayEquals(new byte[] {0x38, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0x01, 0x20, (byte) 0xac, 0x02},
        w.toByteArray());
    Wire.Reader r = new Wire.Reader(w.toByteArray());
    assertEquals(-1, (int) r.next().varint);
    assertEquals(300, r.next().varint);
  }
}
