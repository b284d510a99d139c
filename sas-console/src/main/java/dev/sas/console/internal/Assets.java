package dev.sas.console.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.Map;

/** The page's static files, read once from the jar. Immutable and thread-safe. */
public final class Assets {

    /**
     * One file.
     *
     * @param contentType its media type
     * @param bytes its content
     */
    public record Asset(String contentType, byte[] bytes) {
    }

    private static final String ROOT = "/dev/sas/console/assets/";
    private final Map<String, Asset> files;

    /**
     * Reads the files.
     *
     * @throws IllegalStateException if one is missing from the jar
     */
    public Assets() {
        files = Map.of(
                "/", load("index.html", "text/html; charset=utf-8"),
                "/index.html", load("index.html", "text/html; charset=utf-8"),
                "/console.js", load("console.js", "text/javascript; charset=utf-8"),
                "/console.css", load("console.css", "text/css; charset=utf-8"),
                "/favicon.svg", load("favicon.svg", "image/svg+xml"));
    }

    /** The file served at {@code path}, or null. */
    public Asset get(String path) {
        return files.get(path);
    }

    private static Asset load(String name, String type) {
        try (InputStream in = Assets.class.getResourceAsStream(ROOT + name)) {
            if (in == null) {
                throw new IllegalStateException("console asset " + ROOT + name + " is missing from the jar");
            }
            return new Asset(type, in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read console asset " + name, e);
        }
    }
}
