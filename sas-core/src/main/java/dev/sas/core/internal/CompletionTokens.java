package dev.sas.core.internal;

import dev.sas.core.TaskId;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Issues and checks reply tokens. A token is {@code base64url(2:<keyId>:<step>:<lease>:<taskId>)},
 * a dot, and {@code base64url(HMAC-SHA256(key, those bytes))}: every field is signed, so a token
 * naming another task, step or attempt cannot be made without the key. Signatures are compared in
 * constant time. Unsigned version-1 tokens (issued before tokens were signed:
 * {@code base64url(1:<step>:<lease>:<taskId>)}) are accepted only when the keys say so, for an upgrade. Immutable and thread-safe. Not API.
 */
public final class CompletionTokens {

    /** No keys: issuing or checking a token fails with a message that says how to configure them. */
    public static final CompletionTokens NONE = new CompletionTokens(null, Map.of(), false);

    private static final String ALGORITHM = "HmacSHA256";
    private static final String VERSION = "2";
    private static final String UNSIGNED_VERSION = "1";
    /** Longer than any token this class issues (a 64-char task id and a 32-char key id give ~210). */
    private static final int MAX_LENGTH = 400;
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODER = Base64.getUrlDecoder();

    private final String currentKeyId;
    private final Map<String, byte[]> keys;
    private final boolean acceptUnsigned;

    /**
     * @param currentKeyId the key that signs new tokens, or null for {@link #NONE}
     * @param keys every accepted key by id (the current one included); not copied, never changed
     * @param acceptUnsigned whether version-1 unsigned tokens are accepted
     */
    public CompletionTokens(String currentKeyId, Map<String, byte[]> keys, boolean acceptUnsigned) {
        this.currentKeyId = currentKeyId;
        this.keys = Map.copyOf(keys);
        this.acceptUnsigned = acceptUnsigned;
    }

    /** Whether keys were configured. */
    public boolean configured() {
        return currentKeyId != null;
    }

    /**
     * The signed text of {@code token}.
     *
     * @throws IllegalStateException if no keys were configured
     */
    public String issue(CompletionToken token) {
        requireConfigured();
        byte[] body = (VERSION + ':' + currentKeyId + ':' + token.step() + ':' + token.lease() + ':'
                + token.taskId().value()).getBytes(StandardCharsets.UTF_8);
        return ENCODER.encodeToString(body) + '.' + ENCODER.encodeToString(mac(keys.get(currentKeyId), body));
    }

    /**
     * What {@code text} names, if it is a token these keys signed (or an unsigned one they accept).
     *
     * @throws IllegalStateException if no keys were configured
     */
    public Checked check(String text) {
        requireConfigured();
        if (text == null || text.length() > MAX_LENGTH) {
            return Checked.refused("malformed");
        }
        int dot = text.indexOf('.');
        if (dot < 0) {
            return unsigned(text);
        }
        byte[] body = decode(text.substring(0, dot));
        byte[] signature = decode(text.substring(dot + 1));
        if (body == null || signature == null) {
            return Checked.refused("malformed");
        }
        String[] parts = new String(body, StandardCharsets.UTF_8).split(":", 5);
        if (parts.length != 5 || !parts[0].equals(VERSION)) {
            return Checked.refused("malformed");
        }
        byte[] key = keys.get(parts[1]);
        if (key == null) {
            return Checked.refused("signed with a key id that is neither the current nor a previous key");
        }
        if (!MessageDigest.isEqual(mac(key, body), signature)) {
            return Checked.refused("bad signature (forged or altered)");
        }
        CompletionToken token = fields(parts[2], parts[3], parts[4]);
        return token == null ? Checked.refused("malformed") : new Checked(token, null, false);
    }

    private Checked unsigned(String text) {
        byte[] body = decode(text);
        String[] parts = body == null ? new String[0] : new String(body, StandardCharsets.UTF_8).split(":", 4);
        if (parts.length != 4 || !parts[0].equals(UNSIGNED_VERSION)) {
            return Checked.refused("malformed");
        }
        if (!acceptUnsigned) {
            return Checked.refused("unsigned (format 1, from before tokens were signed;"
                    + " CompletionTokenKeys.acceptUnsignedTokens() accepts them during an upgrade)");
        }
        CompletionToken token = fields(parts[1], parts[2], parts[3]);
        return token == null ? Checked.refused("malformed") : new Checked(token, null, true);
    }

    private static CompletionToken fields(String step, String lease, String taskId) {
        try {
            int s = Integer.parseInt(step);
            return s < 0 ? null : new CompletionToken(TaskId.of(taskId), s, Long.parseLong(lease));
        } catch (IllegalArgumentException e) { // a number, or a task id TaskId refuses
            return null;
        }
    }

    /**
     * The bytes of canonical unpadded base64url {@code text}, or null: another spelling of the same
     * bytes would let a signed token be altered unseen.
     */
    private static byte[] decode(String text) {
        try {
            byte[] bytes = DECODER.decode(text);
            return ENCODER.encodeToString(bytes).equals(text) && !text.isEmpty() ? bytes : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    private static byte[] mac(byte[] key, byte[] body) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(key, ALGORITHM));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM cannot compute " + ALGORITHM + ", which every Java SE"
                    + " platform provides", e);
        }
    }

    private void requireConfigured() {
        if (currentKeyId == null) {
            throw new IllegalStateException("no reply token keys are configured: steps that await a reply need"
                    + " signed tokens; set completionTokenKeys(CompletionTokenKeys.builder().currentKey(id, secret).build())"
                    + " on the runtime builder and on SasClient.builder(), the same keys on every node");
        }
    }

    @Override
    public String toString() {
        return configured() ? "CompletionTokens{current=" + currentKeyId + ", accepted=" + keys.keySet() + '}'
                : "CompletionTokens{none}";
    }

    /**
     * A checked token: {@code token} if accepted, else {@code refusal} says why (never the token).
     *
     * @param token what the token names, or null if refused
     * @param refusal why it was refused, or null
     * @param unsigned whether it was an accepted unsigned token of format 1
     */
    public record Checked(CompletionToken token, String refusal, boolean unsigned) {
        static Checked refused(String reason) {
            return new Checked(null, reason, false);
        }

        /** Whether the token was accepted. */
        public boolean accepted() {
            return token != null;
        }
    }
}
