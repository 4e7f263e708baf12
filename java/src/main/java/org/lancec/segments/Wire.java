package org.lancec.segments;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The protobuf wire format, as far as segment metadata needs it: varints and
 * length-delimited fields (the Lance SDK jar carries no protobuf runtime).
 */
final class Wire {
  static final int VARINT = 0;
  static final int I64 = 1;
  static final int LEN = 2;
  static final int I32 = 5;

  private Wire() {}

  /** One field of a message: its number, wire type and value. */
  static final class Field {
    final int number;
    final int wireType;
    /** The value of a VARINT field. */
    final long varint;
    /** The payload of a LEN, I64 or I32 field. */
    final byte[] bytes;

    Field(int number, int wireType, long varint, byte[] bytes) {
      this.number = number;
      this.wireType = wireType;
      this.varint = varint;
      this.bytes = bytes;
    }
  }

  /** Reads the fields of one message in order. */
  static final class Reader {
    private final byte[] data;
    private int pos;

    Reader(byte[] data) {
      this.data = data;
    }

    boolean hasNext() {
      return pos < data.length;
    }

    long varint() {
      long value = 0;
      for (int shift = 0; ; shift += 7) {
        if (shift > 63) throw new SegmentMetadataException("malformed segment metadata: a varint is longer than 10 bytes");
        if (pos >= data.length) throw new SegmentMetadataException("malformed segment metadata: truncated varint");
        int b = data[pos++] & 0xff;
        value |= (long) (b & 0x7f) << shift;
        if ((b & 0x80) == 0) return value;
      }
    }

    private byte[] take(long size) {
      if (size < 0 || size > data.length - pos) {
        throw new SegmentMetadataException(
            "malformed segment metadata: a field of " + size + " bytes runs past the end of the message");
      }
      byte[] out = new byte[(int) size];
      System.arraycopy(data, pos, out, 0, out.length);
      pos += out.length;
      return out;
    }

    Field next() {
      long key = varint();
      int number = (int) (key >>> 3);
      int wire = (int) (key & 7);
      if (number <= 0) throw new SegmentMetadataException("malformed segment metadata: field number 0");
      switch (wire) {
        case VARINT:
          return new Field(number, wire, varint(), null);
        case LEN:
          return new Field(number, wire, 0, take(varint()));
        case I64:
          return new Field(number, wire, 0, take(8));
        case I32:
          return new Field(number, wire, 0, take(4));
        default:
          throw new SegmentMetadataException(
              "malformed segment metadata: field " + number + " has wire type " + wire + " (groups are not protobuf 3)");
      }
    }
  }

  /** Writes fields of one message. */
  static final class Writer {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();

    void rawVarint(long value) {
      while ((value & ~0x7fL) != 0) {
        out.write((int) (value & 0x7f) | 0x80);
        value >>>= 7;
      }
      out.write((int) value);
    }

    void key(int number, int wire) {
      rawVarint(((long) number << 3) | wire);
    }

    void uint(int number, long value) {
      key(number, VARINT);
      rawVarint(value);
    }

    /** An int32 varint: negative values take ten bytes, as protobuf encodes them. */
    void int32(int number, int value) {
      key(number, VARINT);
      rawVarint((long) value);
    }

    void bytes(int number, byte[] payload) {
      key(number, LEN);
      rawVarint(payload.length);
      out.write(payload, 0, payload.length);
    }

    void string(int number, String value) {
      bytes(number, value.getBytes(StandardCharsets.UTF_8));
    }

    byte[] toByteArray() {
      return out.toByteArray();
    }
  }
}
