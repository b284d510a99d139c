package dev.sas.core;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * How a parallel step stores the outputs of its branches: one JSON object, branch name to the
 * output of the branch's last step (a JSON string, or null when it recorded none), in branch order,
 * for example {@code {"stock":"reserved 7","payment":null}}. Readable in the console and the CLI;
 * later steps read one branch's output with {@code ctx.output(branchName)} or the typed ref of the
 * branch's last step. One class owns the format. Thread-safe (stateless).
 */
final class JoinedOutputs {

    private JoinedOutputs() {
    }

    static String encode(Map<String, String> outputs) {
        StringBuilder b = new StringBuilder("{");
        for (Map.Entry<String, String> e : outputs.entrySet()) {
            if (b.length() > 1) {
                b.append(',');
            }
            quote(b, e.getKey()).append(':');
            if (e.getValue() == null) {
                b.append("null");
            } else {
                quote(b, e.getValue());
            }
        }
        return b.append('}').toString();
    }

    /** The output of branch {@code branch} in {@code joined}, empty when it recorded none. */
    static Optional<String> branch(String joined, String branch) {
        return joined == null ? Optional.empty() : Optional.ofNullable(decode(joined).get(branch));
    }

    static Map<String, String> decode(String joined) {
        Map<String, String> out = new LinkedHashMap<>();
        int[] at = {skip(joined, 0)};
        expect(joined, at, '{');
        if (peek(joined, at) == '}') {
            return out;
        }
        while (true) {
            String key = string(joined, at);
            expect(joined, at, ':');
            String value;
            if (joined.startsWith("null", at[0])) {
                at[0] = skip(joined, at[0] + 4);
                value = null;
            } else {
                value = string(joined, at);
            }
            out.put(key, value);
            if (peek(joined, at) == ',') {
                at[0] = skip(joined, at[0] + 1);
                continue;
            }
            expect(joined, at, '}');
            return out;
        }
    }

    private static StringBuilder quote(StringBuilder b, String s) {
        b.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.append('"');
    }

    private static String string(String s, int[] at) {
        expect(s, at, '"');
        StringBuilder b = new StringBuilder();
        int i = at[0];
        while (true) {
            char c = s.charAt(i++);
            if (c == '"') {
                break;
            }
            if (c == '\\') {
                char e = s.charAt(i++);
                switch (e) {
                    case 'n' -> b.append('\n');
                    case 'r' -> b.append('\r');
                    case 't' -> b.append('\t');
                    case 'b' -> b.append('\b');
                    case 'f' -> b.append('\f');
                    case 'u' -> {
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                    }
                    default -> b.append(e);
                }
            } else {
                b.append(c);
            }
        }
        at[0] = skip(s, i);
        return b.toString();
    }

    private static char peek(String s, int[] at) {
        if (at[0] >= s.length()) {
            throw new IllegalArgumentException("joined outputs end early: " + s);
        }
        return s.charAt(at[0]);
    }

    private static void expect(String s, int[] at, char c) {
        if (peek(s, at) != c) {
            throw new IllegalArgumentException("joined outputs: expected '" + c + "' at " + at[0] + " in " + s);
        }
        at[0] = skip(s, at[0] + 1);
    }

    private static int skip(String s, int i) {
        while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
            i++;
        }
        return i;
    }
}
