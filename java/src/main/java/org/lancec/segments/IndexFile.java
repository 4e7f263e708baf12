package org.lancec.segments;

/**
 * One file of a segment ({@code IndexFile} of the manifest): its path
 * relative to the segment's directory and its size. The Lance Java SDK
 * 7.0.0's {@code Index} has no place for these; see {@link Segment}.
 */
public record IndexFile(String path, long sizeBytes) {}
