package dev.sas.core;

import java.util.Objects;
import java.util.function.Function;

/**
 * Turns a typed value into the text a state store keeps, and back. Implementations must be
 * thread-safe and must round-trip: {@code decode(encode(v))} equals {@code v}.
 *
 * @param <T> the value type
 */
public interface Codec<T> {

    /**
     * Encodes a value.
     *
     * @throws RuntimeException if the value cannot be encoded; a step whose output cannot be
     *     encoded fails without retry
     */
    String encode(T value);

    /**
     * Decodes text written by {@link #encode}.
     *
     * @throws RuntimeException if the text is malformed
     */
    T decode(String text);

    /** The identity codec for strings. */
    static Codec<String> string() {
        return StringCodec.INSTANCE;
    }

    /**
     * A codec from two functions.
     *
     * @throws NullPointerException if either function is null
     */
    static <T> Codec<T> of(Function<? super T, String> encoder, Function<String, ? extends T> decoder) {
        Objects.requireNonNull(encoder, "encoder must not be null");
        Objects.requireNonNull(decoder, "decoder must not be null");
        return new Codec<>() {
            @Override
            public String encode(T value) {
                return encoder.apply(value);
            }

            @Override
            public T decode(String text) {
                return decoder.apply(text);
            }
        };
    }
}

enum StringCodec implements Codec<String> {
    INSTANCE;

    @Override
    public String encode(String value) {
        return value;
    }

    @Override
    public String decode(String text) {
        return text;
    }
}
