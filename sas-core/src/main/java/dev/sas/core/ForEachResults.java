package dev.sas.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * The output of a fan-out step ({@link Workflow.Builder#forEach}): every element's result, in the
 * order of the list the elements came from. Read it in a later step with
 * {@code ForEachResults.of(ctx.output("ship-parcels").orElseThrow())}. An element either succeeded
 * (its step's encoded output, possibly null) or, with {@link ForEachFailure#COLLECT_FAILURES}, failed
 * (the unit task's state and last error). Immutable and thread-safe.
 */
public final class ForEachResults {

    private static final String MAGIC = "sas-for-each:1;";

    /**
     * One element's result.
     *
     * @param index the element's position in the list
     * @param succeeded whether its step completed
     * @param output its step's encoded output when it succeeded (may be null)
     * @param error why it failed, or null when it succeeded
     */
    public record Element(int index, boolean succeeded, String output, String error) {

        /**
         * The output decoded with {@code codec}.
         *
         * @throws IllegalStateException if the element failed, naming its error
         * @throws NullPointerException if codec is null
         */
        public <O> O output(Codec<O> codec) {
            Objects.requireNonNull(codec, "codec must not be null");
            if (!succeeded) {
                throw new IllegalStateException("element " + index + " failed: " + error);
            }
            return output == null ? null : codec.decode(output);
        }
    }

    private final List<Element> elements;

    private ForEachResults(List<Element> elements) {
        this.elements = List.copyOf(elements);
    }

    /**
     * Reads a fan-out step's output.
     *
     * @throws NullPointerException if joined is null
     * @throws IllegalArgumentException if it is not a fan-out step's output
     */
    public static ForEachResults of(String joined) {
        Objects.requireNonNull(joined, "joined must not be null");
        if (!joined.startsWith(MAGIC)) {
            throw new IllegalArgumentException("not the output of a forEach step: "
                    + (joined.length() > 40 ? joined.substring(0, 40) + "…" : joined));
        }
        List<Element> list = new ArrayList<>();
        int i = MAGIC.length();
        try {
            while (i < joined.length()) {
                char kind = joined.charAt(i);
                int colon = joined.indexOf(':', i + 1);
                int length = Integer.parseInt(joined.substring(i + 1, colon));
                String text = length < 0 ? null : joined.substring(colon + 1, colon + 1 + length);
                i = colon + 1 + Math.max(0, length);
                list.add(kind == 'e' ? new Element(list.size(), false, null, text)
                        : new Element(list.size(), true, text, null));
            }
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("a forEach step's output is damaged at character " + i, e);
        }
        return new ForEachResults(list);
    }

    /** Encodes results: an output or an error per element, in list order (null output: {@code -1}). */
    static String encode(List<Element> elements) {
        StringBuilder sb = new StringBuilder(MAGIC);
        for (Element e : elements) {
            String text = e.succeeded() ? e.output() : e.error();
            sb.append(e.succeeded() ? 'o' : 'e').append(text == null ? -1 : text.length()).append(':');
            if (text != null) {
                sb.append(text);
            }
        }
        return sb.toString();
    }

    /** Every element's result, in list order. */
    public List<Element> elements() {
        return elements;
    }

    /** How many elements there were. */
    public int size() {
        return elements.size();
    }

    /** The elements that failed (only with {@link ForEachFailure#COLLECT_FAILURES}), in list order. */
    public List<Element> failures() {
        return elements.stream().filter(e -> !e.succeeded()).toList();
    }

    /**
     * Every element's output decoded with {@code codec}, in list order.
     *
     * @throws IllegalStateException if an element failed, naming the first
     * @throws NullPointerException if codec is null
     */
    public <O> List<O> outputs(Codec<O> codec) {
        List<O> out = new ArrayList<>();
        for (Element e : elements) {
            out.add(e.output(codec));
        }
        return Collections.unmodifiableList(out); // an element's output may be null
    }

    @Override
    public String toString() {
        return "ForEachResults[" + elements.size() + " elements, " + failures().size() + " failed]";
    }
}
