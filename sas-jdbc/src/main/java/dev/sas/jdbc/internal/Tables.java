package dev.sas.jdbc.internal;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The store's table names, all carrying one validated prefix. Immutable and thread-safe.
 *
 * @param prefix the validated, lower-cased prefix
 */
public record Tables(String prefix) {

    /** What a table prefix may look like; it is pasted into SQL, so nothing else is allowed. */
    public static final Pattern PREFIX = Pattern.compile("[a-z][a-z0-9_]{0,20}", Pattern.CASE_INSENSITIVE);

    /** @throws IllegalArgumentException if {@code prefix} does not match {@link #PREFIX} */
    public Tables {
        if (!PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("tablePrefix must match " + PREFIX.pattern()
                    + " (letters, digits, underscores; at most 21 characters), was '" + prefix + "'");
        }
        prefix = prefix.toLowerCase(Locale.ROOT);
    }

    /** The task table. */
    public String task() {
        return prefix + "task";
    }

    /** The step table. */
    public String step() {
        return prefix + "step";
    }

    /** The event table. */
    public String event() {
        return prefix + "event";
    }

    /** The supervisor lease table. */
    public String lease() {
        return prefix + "supervisor_lease";
    }

    /** The workflow versions live runtimes advertise. */
    public String runtimeWorkflow() {
        return prefix + "runtime_workflow";
    }

    /** The status channels' outbox: messages not yet delivered. */
    public String statusOutbox() {
        return prefix + "reply_outbox";
    }

    /** The registered status channels, their consumer's lease and their position. */
    public String replyChannel() {
        return prefix + "reply_channel";
    }

    /** The PostgreSQL NOTIFY channel of {@code topic} ({@code due}, {@code done}, {@code reply}). */
    public String notifyChannel(String topic) {
        return prefix + topic;
    }

    /** The shared flow-control state of agent endpoints (breaker, rate limiter, queue). */
    public String agentGate() {
        return prefix + "agent_gate";
    }

    /** The leased permits of calls in flight through the agent gates. */
    public String agentPermit() {
        return prefix + "agent_permit";
    }

    /** JdbcStatusOutbox to steps that await one, one per answered attempt. */
    public String stepReply() {
        return prefix + "step_reply";
    }

    /** The recurring schedules: definitions, paused state, last fire time. */
    public String schedule() {
        return prefix + "schedule";
    }

    /** The applied schema versions. */
    public String schemaVersion() {
        return prefix + "schema_version";
    }

    /** Replaces {@code ${prefix}} in a script or statement. */
    public String apply(String sql) {
        return sql.replace("${prefix}", prefix);
    }
}
