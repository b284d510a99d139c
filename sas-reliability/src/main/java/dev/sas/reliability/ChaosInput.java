package dev.sas.reliability;

import dev.sas.core.Codec;

/**
 * The chaos workflow's input codec: a task index, optionally wrapped in brackets ({@code [[17]]}),
 * decoded by a recursive parser. The harness's poison inputs break it: one nested so deeply that
 * decoding overflows the stack (a {@link StackOverflowError}), one that is not a number.
 */
final class ChaosInput {
    /** Nesting deep enough to overflow any thread stack a JVM gives by default. */
    static final int POISON_DEPTH = 200_000;

    static final Codec<String> CODEC = Codec.of(s -> s, ChaosInput::decode);

    private ChaosInput() {
    }

    /** The encoded input of task {@code index}: its index, or for a poison task one of the two poisons. */
    static String of(int index, Fault fault, boolean deep) {
        if (fault != Fault.POISON) {
            return String.valueOf(index);
        }
        if (deep) {
            return "[".repeat(POISON_DEPTH) + index + "]".repeat(POISON_DEPTH);
        }
        return "poison-" + index;
    }

    /**
     * The index in {@code text}.
     *
     * @throws NumberFormatException if the innermost text is not a number
     * @throws IllegalArgumentException if the brackets do not match
     * @throws StackOverflowError if the nesting is too deep
     */
    static String decode(String text) {
        return String.valueOf(parse(text, 0, text.length()));
    }

    private static int parse(String text, int from, int to) {
        if (from < to && text.charAt(from) == '[') {
            if (text.charAt(to - 1) != ']') {
                throw new IllegalArgumentException("unbalanced brackets at " + from);
            }
            return parse(text, from + 1, to - 1);
        }
        return Integer.parseInt(text.substring(from, to));
    }
}
