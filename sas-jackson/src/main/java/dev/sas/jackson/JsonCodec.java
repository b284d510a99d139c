package dev.sas.jackson;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import dev.sas.core.Codec;
import java.util.List;
import java.util.Objects;

/**
 * A {@link Codec} that stores values as JSON with Jackson: workflow inputs, typed step outputs
 * and agent replies.
 *
 * <pre>{@code
 * Workflow<Order> orders = Workflow.builder("orders", JsonCodec.of(Order.class)) ...
 * Codec<List<Item>> items = JsonCodec.of(new TypeReference<List<Item>>() {});
 * }</pre>
 *
 * <p>The {@linkplain #defaultMapper() default mapper} handles records, {@code Optional} and
 * {@code java.time} types (written as ISO-8601 strings such as {@code "2024-05-01T10:15:30Z"}, not
 * numbers), and <b>ignores unknown properties</b> when decoding. That last choice is deliberate:
 * a task's input is stored when it is submitted and decoded when a step runs, possibly by a newer
 * version of the application. Tolerating unknown properties lets an older node, or a rolled-back
 * deployment, read inputs written by a version that added a field; a field added to a record
 * decodes as {@code null} (or {@code 0}, {@code false}, {@code Optional.empty()}) from inputs
 * written before it existed. Renaming or retyping a field is not compatible: bump the workflow
 * version instead (see {@code docs/json.md}).
 *
 * <p>Failures are reported as {@link IllegalArgumentException}s whose message names the codec's
 * type, what was wrong, and where (property path, line and column), but never the whole text:
 * payloads may hold personal data. Jackson's own detail is cut to
 * {@value #MAX_DETAIL_LENGTH} characters. The Jackson exception is kept as the cause for its
 * stack trace; its own message is Jackson's, which quotes at most one token or value of the text (256
 * characters by Jackson's default) and, unless a custom mapper turns
 * {@link StreamReadFeature#INCLUDE_SOURCE_IN_LOCATION} on, no source.
 *
 * <p>Thread-safe and immutable: one instance may be shared by every workflow and thread. It reads
 * and writes through an {@link ObjectReader} and {@link ObjectWriter} built once from the mapper,
 * so configure a mapper fully before passing it; later changes to that mapper are not seen.
 *
 * @param <T> the type of the values encoded
 */
public final class JsonCodec<T> implements Codec<T> {

    /** The longest Jackson detail message (or property path) an exception message repeats. */
    public static final int MAX_DETAIL_LENGTH = 200;

    private static final ObjectMapper DEFAULT_MAPPER = defaultMapper();

    private final String typeName;
    private final ObjectReader reader;
    private final ObjectWriter writer;

    private JsonCodec(JavaType type, ObjectMapper mapper) {
        this.typeName = type.toCanonical();
        this.reader = mapper.readerFor(type);
        this.writer = mapper.writerFor(type);
    }

    /**
     * A codec for a non-generic type (a record, a class, {@code String}, ...), with the
     * {@linkplain #defaultMapper() default mapper}.
     *
     * @param <T> the type of the values
     * @param type the type, such as {@code Order.class}
     * @return a codec for that type
     * @throws NullPointerException if {@code type} is null
     */
    public static <T> JsonCodec<T> of(Class<T> type) {
        return of(type, DEFAULT_MAPPER);
    }

    /**
     * A codec for a generic type such as {@code List<Item>} or {@code Map<String, Item>}, with the
     * {@linkplain #defaultMapper() default mapper}: {@code JsonCodec.of(new TypeReference<List<Item>>() {})}.
     *
     * @param <T> the type of the values
     * @param type the type, as an anonymous subclass that captures its type arguments
     * @return a codec for that type
     * @throws NullPointerException if {@code type} is null
     */
    public static <T> JsonCodec<T> of(TypeReference<T> type) {
        return of(type, DEFAULT_MAPPER);
    }

    /**
     * A codec for a non-generic type that reads and writes with {@code mapper}, whose
     * configuration (modules, naming strategy, unknown-property handling, ...) is used as it is.
     *
     * @param <T> the type of the values
     * @param type the type, such as {@code Order.class}
     * @param mapper the mapper to read and write with, fully configured
     * @return a codec for that type
     * @throws NullPointerException if an argument is null
     */
    public static <T> JsonCodec<T> of(Class<T> type, ObjectMapper mapper) {
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(mapper, "mapper must not be null");
        return new JsonCodec<>(mapper.constructType(type), mapper);
    }

    /**
     * A codec for a generic type that reads and writes with {@code mapper}, whose configuration is
     * used as it is.
     *
     * @param <T> the type of the values
     * @param type the type, as an anonymous subclass that captures its type arguments
     * @param mapper the mapper to read and write with, fully configured
     * @return a codec for that type
     * @throws NullPointerException if an argument is null
     */
    public static <T> JsonCodec<T> of(TypeReference<T> type, ObjectMapper mapper) {
        Objects.requireNonNull(type, "type must not be null");
        Objects.requireNonNull(mapper, "mapper must not be null");
        return new JsonCodec<>(mapper.constructType(type), mapper);
    }

    /**
     * A new mapper configured as the codecs made without one are: the {@code jdk8} and
     * {@code jsr310} modules, dates, times and durations as ISO-8601 strings, a
     * {@code ZonedDateTime}'s zone id and an {@code OffsetDateTime}'s offset kept (so values
     * round-trip unchanged), unknown properties ignored, and text after the JSON value rejected.
     * Start from it to add modules or settings of your own; each call returns a new mapper, so
     * changing it changes no other codec.
     *
     * @return a new mapper with the default configuration
     */
    public static ObjectMapper defaultMapper() {
        return JsonMapper.builder()
                .addModule(new Jdk8Module())
                .addModule(new JavaTimeModule())
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS)
                .enable(SerializationFeature.WRITE_DATES_WITH_ZONE_ID)
                .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
                // Jackson's default since 2.16, stated here because the source is the payload.
                .disable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
                .build();
    }

    /**
     * Writes {@code value} as JSON.
     *
     * @param value the value, not null
     * @return its JSON text
     *
     * @throws NullPointerException if {@code value} is null; SAS never asks a codec to encode null
     * @throws IllegalArgumentException if Jackson cannot serialize the value (for example a class
     *     with no properties, or a getter that throws); the message names the type and the property
     *     path
     */
    @Override
    public String encode(T value) {
        Objects.requireNonNull(value, () -> "value must not be null: JsonCodec for " + typeName
                + " does not encode null (a step returning null records no output)");
        try {
            return writer.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot encode " + typeName + " as JSON: " + describe(e), e);
        }
    }

    /**
     * Reads a value from JSON text written by {@link #encode} (or by an earlier version of the
     * type; see the class documentation on evolution).
     *
     * @param text the JSON text
     * @return the value, never null
     *
     * @throws NullPointerException if {@code text} is null
     * @throws IllegalArgumentException if the text is not JSON, is empty or the JSON literal
     *     {@code null}, has text after the value, or does not fit the type; the message names the
     *     type, what was wrong and where, but does not repeat the text
     */
    @Override
    public T decode(String text) {
        Objects.requireNonNull(text, () -> "text must not be null (JsonCodec for " + typeName + ")");
        T value;
        try {
            value = reader.readValue(text);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("cannot decode JSON as " + typeName + ": " + describe(e), e);
        }
        if (value == null) {
            throw new IllegalArgumentException("cannot decode JSON as " + typeName
                    + ": the text is the JSON literal null, which this codec never writes");
        }
        return value;
    }

    /**
     * Names the type, for logs and error messages: {@code JsonCodec[java.util.List<dev.x.Item>]}.
     *
     * @return the codec's description
     */
    @Override
    public String toString() {
        return "JsonCodec[" + typeName + "]";
    }

    /** Jackson's detail without its source excerpt, plus where it happened, each part bounded. */
    static String describe(JsonProcessingException e) {
        String detail = e.getOriginalMessage();
        StringBuilder text = new StringBuilder(
                detail == null || detail.isBlank() ? e.getClass().getSimpleName() : truncate(detail));
        String path = e instanceof JsonMappingException m ? path(m.getPath()) : "";
        JsonLocation location = e.getLocation();
        boolean hasLocation = location != null && location.getLineNr() > 0;
        if (!path.isEmpty() || hasLocation) {
            text.append(" at ");
        }
        if (!path.isEmpty()) {
            text.append(truncate(path));
        }
        if (hasLocation) {
            text.append(path.isEmpty() ? "" : ", ").append("line ").append(location.getLineNr());
            if (location.getColumnNr() > 0) {
                text.append(" column ").append(location.getColumnNr());
            }
        }
        return text.toString();
    }

    private static String path(List<JsonMappingException.Reference> references) {
        StringBuilder path = new StringBuilder();
        for (JsonMappingException.Reference r : references) {
            if (r.getFieldName() != null) {
                path.append(path.length() == 0 ? "" : ".").append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                path.append('[').append(r.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static String truncate(String s) {
        String oneLine = s.replaceAll("\\s+", " ").strip();
        if (oneLine.length() <= MAX_DETAIL_LENGTH) {
            return oneLine;
        }
        int end = Character.isHighSurrogate(oneLine.charAt(MAX_DETAIL_LENGTH - 1))
                ? MAX_DETAIL_LENGTH - 1 : MAX_DETAIL_LENGTH;
        return oneLine.substring(0, end) + "…";
    }
}
