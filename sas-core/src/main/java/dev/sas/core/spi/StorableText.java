package dev.sas.core.spi;

import dev.sas.core.TaskEvent;

/**
 * The one rule on text every store can hold, the same on every database: no NUL character (PostgreSQL
 * refuses it) and no unpaired UTF-16 surrogate (MariaDB and PostgreSQL would store it as '?').
 * The runtime keeps such text away from stores (error messages are {@linkplain #replaceUnstorable
 * cleaned}, a step output holding it fails its step), and stores refuse a {@link Transition} that
 * still holds some ({@link #problemIn}, reported as {@link WriteOutcome#refused}). Stateless and
 * thread-safe.
 */
public final class StorableText {

    /** What replaces each character a store cannot hold in {@link #replaceUnstorable}. */
    public static final char REPLACEMENT = '\uFFFD';

    private StorableText() {
    }

    /**
     * The index of the first character a store cannot hold, or -1 if there is none.
     *
     * @param text the text, or null (which holds none)
     */
    public static int unstorableAt(String text) {
        if (text == null) {
            return -1;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\0') {
                return i;
            }
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                    i++;
                } else {
                    return i;
                }
            }
        }
        return -1;
    }

    /**
     * Says what is wrong with {@code text}, or returns null when a store can hold it.
     *
     * @param what which value, e.g. "output of step 'charge'"
     * @param text the value, or null
     * @return e.g. "output of step 'charge' has a NUL character U+0000 at index 17", or null
     */
    public static String problem(String what, String text) {
        int i = unstorableAt(text);
        if (i < 0) {
            return null;
        }
        char c = text.charAt(i);
        return String.format("%s has %s U+%04X at index %d", what, c == '\0' ? "a NUL character"
                : "an unpaired surrogate", (int) c, i);
    }

    /**
     * Replaces every character a store cannot hold by {@link #REPLACEMENT} and says so at the end,
     * so that an error message is always recorded, recognisably altered.
     *
     * @param text the text, or null
     * @return {@code text} itself when it holds nothing to replace (or is null)
     */
    public static String replaceUnstorable(String text) {
        int first = unstorableAt(text);
        if (first < 0) {
            return text;
        }
        StringBuilder sb = new StringBuilder(text.length() + 64).append(text, 0, first);
        int replaced = 0;
        for (int i = first; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                sb.append(c).append(text.charAt(++i));
            } else if (c == '\0' || Character.isSurrogate(c)) {
                sb.append(REPLACEMENT);
                replaced++;
            } else {
                sb.append(c);
            }
        }
        return sb.append(" [").append(replaced).append(replaced == 1 ? " character" : " characters")
                .append(" a database cannot store replaced by U+FFFD]").toString();
    }

    /**
     * Says which text of {@code t} a store cannot hold (step output, step error, last error, a
     * step name or an event's message), or returns null when it holds none. Stores call it and
     * report such a transition as {@link WriteOutcome#refused} instead of writing it.
     *
     * @throws NullPointerException if {@code t} is null
     */
    public static String problemIn(Transition t) {
        String p = problem("last error of task " + t.taskId(), t.lastError());
        if (p == null) {
            p = problem("current step name of task " + t.taskId(), t.currentStepName());
        }
        StepUpdate u = t.step();
        if (p == null && u != null) {
            String step = "step " + u.index() + " of task " + t.taskId();
            p = problem("output of " + step, u.output());
            if (p == null) {
                p = problem("error of " + step, u.error());
            }
            if (p == null) {
                p = problem("name of " + step, u.name());
            }
        }
        for (int i = 0; p == null && i < t.events().size(); i++) {
            TaskEvent e = t.events().get(i);
            p = problem(e.type() + " event message of task " + t.taskId(), e.message());
            if (p == null) {
                p = problem(e.type() + " event step name of task " + t.taskId(), e.stepName());
            }
        }
        return p;
    }
}
