package dev.sas.core.internal;

/**
 * Delivers the ends of child tasks to the parent steps that await them; the supervisor calls it on
 * every pass it leads ({@link Supervisor#relayChildrenWith}). Not API.
 */
public interface ChildWatch {

    /**
     * Completes (or fails) every awaiting child task step whose child has ended.
     *
     * @return how many parent steps it completed or failed
     */
    int deliverEnded();
}
