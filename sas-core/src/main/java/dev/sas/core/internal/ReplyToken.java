package dev.sas.core.internal;

import dev.sas.core.TaskId;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Optional;

/**
 * The token a step that awaits a reply hands to its request: which task, step and lease (the
 * attempt's fencing token) the reply answers. URL-safe base64 of {@code 1:<step>:<lease>:<taskId>},
 * opaque to users. Not signed: anyone who can call the client and guess a task id, step and lease
 * could answer a step; the fencing (lease, state, deadline) still holds. Immutable. Not API.
 *
 * @param taskId the task
 * @param step the awaiting step's index
 * @param lease the attempt's lease
 */
public record ReplyToken(TaskId taskId, int step, long lease) {

    private static final String VERSION = "1";

    /** The token's text. */
    public String encode() {
        String plain = VERSION + ':' + step + ':' + lease + ':' + taskId.value();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public String toString() {
        return encode();
    }

    /** The token {@code text} stands for, or empty if it is not one (malformed, another version). */
    public static Optional<ReplyToken> parse(String text) {
        if (text == null || text.length() > 200) {
            return Optional.empty();
        }
        try {
            String plain = new String(Base64.getUrlDecoder().decode(text.trim()), StandardCharsets.UTF_8);
            String[] parts = plain.split(":", 4);
            if (parts.length != 4 || !parts[0].equals(VERSION)) {
                return Optional.empty();
            }
            int step = Integer.parseInt(parts[1]);
            long lease = Long.parseLong(parts[2]);
            if (step < 0) {
                return Optional.empty();
            }
            return Optional.of(new ReplyToken(TaskId.of(parts[3]), step, lease));
        } catch (IllegalArgumentException e) { // bad base64, a number, or a task id TaskId refuses
            return Optional.empty();
        }
    }
}
