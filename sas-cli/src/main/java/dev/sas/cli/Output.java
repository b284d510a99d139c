package dev.sas.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Human tables and JSON documents for the commands. Stateless. */
final class Output {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'")
            .withZone(ZoneOffset.UTC);

    private Output() {
    }

    static void json(PrintWriter out, Object value) {
        try {
            out.println(JSON.writeValueAsString(value));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Says why a command did nothing, as a line on the error stream or, with {@code --json}, as a
     * JSON document ({@code {"error": ..., "exitCode": 1}}) on the output, and returns
     * {@link SasCli#REFUSED}.
     */
    static int refuse(picocli.CommandLine cl, boolean json, String message) {
        return error(cl, json, message, SasCli.REFUSED);
    }

    /** As {@link #refuse}, with {@code exitCode}. */
    static int error(picocli.CommandLine cl, boolean json, String message, int exitCode) {
        if (json) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("error", message);
            doc.put("exitCode", exitCode);
            json(cl.getOut(), doc);
        } else {
            cl.getErr().println(message);
        }
        return exitCode;
    }

    static String time(Instant t) {
        return t == null ? "-" : TIME.format(t);
    }

    static String iso(Instant t) {
        return t == null ? null : t.toString();
    }

    /** {@code s} on one line, cut to {@code max} characters with an ellipsis. */
    static String cut(String s, int max) {
        if (s == null) {
            return "";
        }
        String line = s.replaceAll("\\s+", " ").strip();
        return line.length() <= max ? line : line.substring(0, max - 1) + "…";
    }

    /** Prints rows under a header, each column as wide as its widest cell. */
    static void table(PrintWriter out, List<String> header, List<List<String>> rows) {
        int[] width = new int[header.size()];
        for (int i = 0; i < header.size(); i++) {
            width[i] = header.get(i).length();
        }
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                width[i] = Math.max(width[i], row.get(i).length());
            }
        }
        line(out, header, width);
        for (List<String> row : rows) {
            line(out, row, width);
        }
    }

    private static void line(PrintWriter out, List<String> cells, int[] width) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < cells.size(); i++) {
            String c = cells.get(i);
            sb.append(c);
            if (i < cells.size() - 1) {
                sb.append(" ".repeat(width[i] - c.length() + 2));
            }
        }
        out.println(sb.toString().stripTrailing());
    }
}
