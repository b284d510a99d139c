package dev.sas.core;

import dev.sas.core.internal.CompletionTokens;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The secret keys that sign the reply tokens of steps that await a reply
 * ({@link StepBuilder#awaitCompletion(CompletionRequest)}): every token carries an HMAC-SHA256 over its fields
 * (version, key id, step, lease, task id), so a token cannot be forged or altered without the key.
 * New tokens are signed with the {@linkplain Builder#currentKey current key}; tokens signed with a
 * {@linkplain Builder#previousKey previous key} are still accepted, which is how a key is rotated
 * without refusing replies to requests already sent.
 *
 * <p>Give the same keys to every runtime ({@link RuntimeBuilder#completionTokenKeys}) and every client
 * that completes steps ({@link SasClient.Builder#completionTokenKeys}): a token issued on one node is
 * checked on another.
 *
 * <pre>{@code
 * CompletionTokenKeys keys = CompletionTokenKeys.builder()
 *         .currentKey("2026-11", Base64.getDecoder().decode(System.getenv("SAS_REPLY_KEY_2026_11")))
 *         .previousKey("2026-05", Base64.getDecoder().decode(System.getenv("SAS_REPLY_KEY_2026_05")))
 *         .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe; holds copies of the keys, and {@link #toString()} never shows them.
 */
public final class CompletionTokenKeys {

    /** Shortest key accepted, in bytes (the HMAC-SHA256 output length). */
    public static final int MIN_KEY_BYTES = 32;
    /** Longest key id, in characters. */
    public static final int MAX_KEY_ID_LENGTH = 32;

    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_KEY_ID_LENGTH + "}");

    private final String currentKeyId;
    private final Map<String, byte[]> keys;
    private final boolean acceptUnsigned;

    private CompletionTokenKeys(String currentKeyId, Map<String, byte[]> keys, boolean acceptUnsigned) {
        this.currentKeyId = currentKeyId;
        this.keys = keys;
        this.acceptUnsigned = acceptUnsigned;
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** The id of the key that signs new tokens. */
    public String currentKeyId() {
        return currentKeyId;
    }

    /** The ids of every key whose tokens are accepted: the current one first, then the previous ones. */
    public Set<String> acceptedKeyIds() {
        return Collections.unmodifiableSet(keys.keySet());
    }

    /**
     * Whether the unsigned tokens issued before tokens were signed (format 1) are still accepted
     * ({@link Builder#acceptUnsignedTokens()}).
     */
    public boolean acceptsUnsignedTokens() {
        return acceptUnsigned;
    }

    /** The token codec of {@code keys}; {@link CompletionTokens#NONE} for null. */
    static CompletionTokens tokens(CompletionTokenKeys keys) {
        return keys == null ? CompletionTokens.NONE : new CompletionTokens(keys.currentKeyId, keys.keys, keys.acceptUnsigned);
    }

    @Override
    public String toString() {
        return "CompletionTokenKeys{current=" + currentKeyId + ", accepted=" + keys.keySet()
                + (acceptUnsigned ? ", acceptsUnsignedTokens" : "") + '}';
    }

    /**
     * Builds {@link CompletionTokenKeys}. Not thread-safe; {@link #build()} copies the keys, so changing a
     * key array or reusing the builder afterwards never changes keys already built.
     */
    public static final class Builder {
        private String currentKeyId;
        private byte[] currentKey;
        private final Map<String, byte[]> previous = new LinkedHashMap<>();
        private boolean acceptUnsigned;

        private Builder() {
        }

        /**
         * The key that signs new tokens, and is accepted. Required. Keep it secret, at least
         * {@value CompletionTokenKeys#MIN_KEY_BYTES} random bytes (e.g. {@code openssl rand -base64 32}),
         * the same on every node.
         *
         * @param id names the key inside each token (so a rotated key's tokens find their key): 1 to
         *     {@value CompletionTokenKeys#MAX_KEY_ID_LENGTH} letters, digits, '.', '_' or '-'; not secret
         * @param secret the key's bytes; copied
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the id is not of that form or the key is shorter than
         *     {@value CompletionTokenKeys#MIN_KEY_BYTES} bytes
         */
        public Builder currentKey(String id, byte[] secret) {
            this.currentKeyId = checkId(id, "currentKey");
            this.currentKey = checkKey(secret, "currentKey", id);
            return this;
        }

        /**
         * A key that signed tokens before a rotation: its tokens are still accepted (new ones are
         * signed with the current key). Remove it once every request signed with it is answered or
         * past its step's {@code completeWithin}; its tokens are refused from then on.
         *
         * @throws NullPointerException if an argument is null
         * @throws IllegalArgumentException if the id is not of the form {@link #currentKey} takes, is
         *     already given as a previous key, or the key is too short
         */
        public Builder previousKey(String id, byte[] secret) {
            checkId(id, "previousKey");
            if (previous.containsKey(id)) {
                throw new IllegalArgumentException("previousKey '" + id + "' is already given; each key id names"
                        + " one key");
            }
            previous.put(id, checkKey(secret, "previousKey", id));
            return this;
        }

        /**
         * Also accepts the unsigned tokens issued before tokens were signed (format 1), for the
         * upgrade only: requests sent before the upgrade can still be answered. Such a token can
         * be forged by anyone who can call the client and knows a task id; each one accepted is logged at WARN. Turn it off once
         * every step awaiting a reply from before the upgrade has been answered or timed out.
         */
        public Builder acceptUnsignedTokens() {
            this.acceptUnsigned = true;
            return this;
        }

        /**
         * The keys.
         *
         * @throws IllegalStateException if no current key was given, or a previous key has the
         *     current key's id
         */
        public CompletionTokenKeys build() {
            if (currentKeyId == null) {
                throw new IllegalStateException("a current key is required: call currentKey(id, secret) before"
                        + " build()");
            }
            if (previous.containsKey(currentKeyId)) {
                throw new IllegalStateException("previousKey '" + currentKeyId + "' has the id of currentKey; give"
                        + " the new key a new id when rotating");
            }
            Map<String, byte[]> all = new LinkedHashMap<>();
            all.put(currentKeyId, currentKey.clone());
            previous.forEach((id, key) -> all.put(id, key.clone()));
            return new CompletionTokenKeys(currentKeyId, Collections.unmodifiableMap(all), acceptUnsigned);
        }

        private static String checkId(String id, String setting) {
            Objects.requireNonNull(id, setting + " id must not be null");
            if (!KEY_ID.matcher(id).matches()) {
                throw new IllegalArgumentException(setting + " id must be 1 to " + MAX_KEY_ID_LENGTH
                        + " letters, digits, '.', '_' or '-', was '" + id + "'");
            }
            return id;
        }

        private static byte[] checkKey(byte[] secret, String setting, String id) {
            Objects.requireNonNull(secret, setting + " secret must not be null");
            if (secret.length < MIN_KEY_BYTES) {
                throw new IllegalArgumentException(setting + " '" + id + "' must be at least " + MIN_KEY_BYTES
                        + " bytes, was " + secret.length + "; use random bytes, e.g. openssl rand -base64 32");
            }
            byte[] copy = secret.clone();
            boolean allSame = true;
            for (byte b : copy) {
                allSame &= b == copy[0];
            }
            if (allSame) {
                throw new IllegalArgumentException(setting + " '" + id + "' is one byte repeated " + copy.length
                        + " times, which is no secret; use random bytes, e.g. openssl rand -base64 32");
            }
            return copy;
        }
    }
}
