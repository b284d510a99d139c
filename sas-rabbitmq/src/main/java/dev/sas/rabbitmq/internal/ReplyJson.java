package dev.sas.rabbitmq.internal;

import dev.sas.core.StatusUpdate;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A reply message as a flat JSON object, and back: {@code channel}, {@code deliveryId},
 * {@code taskId}, {@code businessKey}, {@code workflow}, {@code status}, {@code stepIndex},
 * {@code step}, {@code attempt}, {@code at} (ISO-8601) and {@code message}. Written by hand so the
 * module needs no JSON library. Stateless.
 */
public final class ReplyJson {

    private ReplyJson() {
    }

    /** The message as UTF-8 JSON. */
    public static byte[] write(StatusUpdate m) {
        TaskEvent e = m.event();
        StringBuilder sb = new StringBuilder(256).append('{');
        field(sb, "channel", m.channel()).append(',');
        sb.append("\"deliveryId\":").append(m.deliveryId()).append(',');
        field(sb, "taskId", e.taskId().value()).append(',');
        field(sb, "businessKey", e.businessKey()).append(',');
        field(sb, "workflow", e.workflow()).append(',');
        field(sb, "status", e.type().name()).append(',');
        sb.append("\"stepIndex\":").append(e.stepIndex()).append(',');
        field(sb, "step", e.stepName()).append(',');
        sb.append("\"attempt\":").append(e.attempt()).append(',');
        field(sb, "at", e.at().toString()).append(',');
        field(sb, "message", e.message());
        return sb.append('}').toString().getBytes(StandardCharsets.UTF_8);
    }

    private static StringBuilder field(StringBuilder sb, String name, String value) {
        sb.append('"').append(name).append("\":");
        if (value == null) {
            return sb.append("null");
        }
        sb.append('"');
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }

    /**
     * The message {@link #write} wrote.
     *
     * @throws IllegalArgumentException if {@code body} is not such a message
     */
    public static StatusUpdate read(byte[] body) {
        Map<String, Object> f = new Parser(new String(body, StandardCharsets.UTF_8)).object();
        try {
            TaskEvent e = new TaskEvent(TaskId.of((String) f.get("taskId")), (String) f.get("businessKey"),
                    (String) f.get("workflow"), type((String) f.get("status")),
                    ((Number) f.get("stepIndex")).intValue(), (String) f.get("step"),
                    ((Number) f.get("attempt")).intValue(), Instant.parse((String) f.get("at")),
                    (String) f.get("message"));
            return new StatusUpdate((String) f.get("channel"), ((Number) f.get("deliveryId")).longValue(), e);
        } catch (RuntimeException ex) {
            throw new IllegalArgumentException("not an SAS reply message: " + ex.getMessage(), ex);
        }
    }

    /**
     * The event type a message names; a message an older build published before the upgrade (still
     * in a queue) names REPLY_AWAITED or REPLY_RECEIVED, read as their 0.3 names.
     */
    private static TaskEvent.Type type(String name) {
        return switch (name) {
            case "REPLY_AWAITED" -> TaskEvent.Type.COMPLETION_AWAITED;
            case "REPLY_RECEIVED" -> TaskEvent.Type.COMPLETION_RECEIVED;
            default -> TaskEvent.Type.valueOf(name);
        };
    }

    /** Just enough JSON: one flat object of strings, integers and nulls. */
    private static final class Parser {
        private final String s;
        private int i;

        Parser(String s) {
            this.s = s;
        }

        Map<String, Object> object() {
            Map<String, Object> out = new LinkedHashMap<>();
            expect('{');
            skip();
            if (peek() == '}') {
                i++;
                return out;
            }
            while (true) {
                skip();
                String name = string();
                skip();
                expect(':');
                skip();
                out.put(name, value());
                skip();
                char c = next();
                if (c == '}') {
                    return out;
                }
                if (c != ',') {
                    throw new IllegalArgumentException("expected ',' or '}' at " + (i - 1));
                }
            }
        }

        private Object value() {
            char c = peek();
            if (c == '"') {
                return string();
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            int start = i;
            if (c == '-') {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            if (start == i) {
                throw new IllegalArgumentException("unexpected '" + c + "' at " + i);
            }
            return Long.parseLong(s.substring(start, i));
        }

        private String string() {
            expect('"');
            StringBuilder sb = new StringBuilder();
            while (true) {
                char c = next();
                if (c == '"') {
                    return sb.toString();
                }
                if (c != '\\') {
                    sb.append(c);
                    continue;
                }
                char esc = next();
                switch (esc) {
                    case 'n' -> sb.append('\n');
                    case 'r' -> sb.append('\r');
                    case 't' -> sb.append('\t');
                    case 'b' -> sb.append('\b');
                    case 'f' -> sb.append('\f');
                    case 'u' -> {
                        sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> sb.append(esc);
                }
            }
        }

        private void skip() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private char peek() {
            if (i >= s.length()) {
                throw new IllegalArgumentException("unexpected end of JSON");
            }
            return s.charAt(i);
        }

        private char next() {
            char c = peek();
            i++;
            return c;
        }

        private void expect(char c) {
            if (next() != c) {
                throw new IllegalArgumentException("expected '" + c + "' at " + (i - 1));
            }
        }
    }
}
