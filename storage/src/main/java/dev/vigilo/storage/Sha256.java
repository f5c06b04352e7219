package dev.vigilo.storage;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A SHA-256 digest: exactly 32 bytes, immutable. Rendered as 64 lowercase hex characters in every durable format.
 */
public final class Sha256 implements Comparable<Sha256> {
    /** Digest length in bytes. */
    public static final int LENGTH = 32;

    private static final HexFormat HEX = HexFormat.of();

    private final byte[] bytes;

    private Sha256(byte[] bytes) {
        this.bytes = bytes;
    }

    /** Wraps a copy of {@code digest}, which must be 32 bytes. */
    public static Sha256 ofDigest(byte[] digest) {
        Objects.requireNonNull(digest, "digest");
        if (digest.length != LENGTH) {
            throw new IllegalArgumentException("a SHA-256 digest has 32 bytes, got " + digest.length);
        }
        return new Sha256(digest.clone());
    }

    /** Parses 64 hex characters (either case). */
    public static Sha256 parseHex(String hex) {
        Objects.requireNonNull(hex, "hex");
        if (hex.length() != 2 * LENGTH) {
            throw new IllegalArgumentException("a SHA-256 digest is 64 hex characters, got " + hex.length());
        }
        try {
            return new Sha256(HEX.parseHex(hex));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a hex SHA-256 digest: " + hex, e);
        }
    }

    /** The digest of {@code data}. */
    public static Sha256 of(byte[] data) {
        return of(data, 0, data.length);
    }

    /** The digest of {@code data[offset, offset+length)}. */
    public static Sha256 of(byte[] data, int offset, int length) {
        MessageDigest md = newDigest();
        md.update(data, offset, length);
        return new Sha256(md.digest());
    }

    /**
     * A fresh SHA-256 {@link MessageDigest}; the JDK always provides one. Cloned from a digest that is never updated
     * when the provider allows it: a provider lookup per digest costs more than hashing a short value.
     */
    public static MessageDigest newDigest() {
        if (PROTOTYPE != null) {
            try {
                return (MessageDigest) PROTOTYPE.clone();
            } catch (CloneNotSupportedException e) {
                // fall through to a lookup
            }
        }
        return lookUpDigest();
    }

    /** Never updated, only cloned; null when the provider's digest cannot be cloned. */
    private static final MessageDigest PROTOTYPE = cloneable(lookUpDigest());

    private static MessageDigest cloneable(MessageDigest digest) {
        try {
            digest.clone();
            return digest;
        } catch (CloneNotSupportedException e) {
            return null;
        }
    }

    private static MessageDigest lookUpDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /** A copy of the 32 digest bytes. */
    public byte[] toBytes() {
        return bytes.clone();
    }

    public String toHex() {
        return HEX.formatHex(bytes);
    }

    /** Base64 of the digest, as S3 expects in {@code x-amz-checksum-sha256}. */
    public String toBase64() {
        return Base64.getEncoder().encodeToString(bytes);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Sha256 other && MessageDigest.isEqual(bytes, other.bytes);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bytes);
    }

    @Override
    public int compareTo(Sha256 other) {
        return Arrays.compareUnsigned(bytes, other.bytes);
    }

    @Override
    public String toString() {
        return toHex();
    }
}
