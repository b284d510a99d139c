package dev.sas.core;

import java.util.Objects;

/**
 * A typed name for a step's output: the step's name and the {@link Codec} of what it returns.
 * Declare refs once, as constants, and use them both to define a step and to read its output, so a
 * typo or a type mismatch is a compile error (or a {@code build()} error) instead of a run-time
 * surprise:
 *
 * <pre>{@code
 * static final StepRef<Receipt> CHARGE = StepRef.of("charge", Receipt.CODEC);
 *
 * Workflow.builder("orders", Order.CODEC)
 *     .step(CHARGE, s -> s.call(payments, ctx -> new ChargeRequest(ctx.input().amount())))
 *     .step(SHIP, s -> s.reads(CHARGE).execute(ctx -> ship(ctx.input(), ctx.output(CHARGE))))
 *     .build();
 * }</pre>
 *
 * <p>Two refs are equal when their names are equal and their codecs are equal (for most codecs:
 * the same instance), so a workflow recognises only the ref its step was defined with. A stored
 * output is decoded with {@code ref.codec().decode(text)}. Immutable and thread-safe when its codec
 * is.
 *
 * @param name the step's name (see {@link Workflow#NAME_PATTERN})
 * @param codec encodes and decodes the step's output
 * @param <O> the step's output type
 */
public record StepRef<O>(String name, Codec<O> codec) {

    /**
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} does not match {@link Workflow#NAME_PATTERN}
     */
    public StepRef {
        Workflow.checkName("step name", name);
        Objects.requireNonNull(codec, "step '" + name + "': codec must not be null");
    }

    /**
     * A ref to a step named {@code name} whose output is encoded with {@code codec}.
     *
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if {@code name} does not match {@link Workflow#NAME_PATTERN}
     */
    public static <O> StepRef<O> of(String name, Codec<O> codec) {
        return new StepRef<>(name, codec);
    }

    /**
     * A ref to a step whose output is a plain string (or none).
     *
     * @throws NullPointerException if {@code name} is null
     * @throws IllegalArgumentException if {@code name} does not match {@link Workflow#NAME_PATTERN}
     */
    public static StepRef<String> of(String name) {
        return new StepRef<>(name, Codec.string());
    }

    /**
     * Decodes an output this step stored, for example from a task's status.
     *
     * @return the decoded output, or null if {@code text} is null
     * @throws RuntimeException whatever the codec throws for malformed text
     */
    public O decode(String text) {
        return text == null ? null : codec.decode(text);
    }

    @Override
    public String toString() {
        return "StepRef{" + name + ", codec=" + codec + '}';
    }
}
