package dev.sas.core.internal;

import java.nio.charset.StandardCharsets;

/**
 * The one limit on encoded inputs and step outputs, checked in one place for the client (inputs)
 * and the attempt runner (outputs). Not API.
 *
 * @param maxBytes the largest encoded value, in UTF-8 bytes
 */
public record PayloadLimit(int maxBytes) {

    /** The size in UTF-8 bytes if {@code encoded} is over the limit, else -1 (cheap for short values). */
    public int excess(String encoded) {
        if (encoded == null || (long) encoded.length() * 3 <= maxBytes) {
            return -1;
        }
        int bytes = encoded.getBytes(StandardCharsets.UTF_8).length;
        return bytes > maxBytes ? bytes : -1;
    }

    /**
     * The message for a value over the limit.
     *
     * @param what which value, e.g. "input for workflow 'orders' business key 'o-1'"
     * @param bytes its size
     */
    public String message(String what, int bytes) {
        return what + " is " + bytes + " bytes, over the limit of " + maxBytes
                + " (maxPayloadBytes); store large data elsewhere and pass a reference";
    }
}
