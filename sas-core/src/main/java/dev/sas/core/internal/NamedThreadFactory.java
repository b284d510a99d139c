package dev.sas.core.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/** Daemon threads named {@code prefix-N}. */
public final class NamedThreadFactory implements ThreadFactory {
    private final String prefix;
    private final boolean numbered;
    private final AtomicInteger next = new AtomicInteger(1);

    /** Threads named {@code prefix-1}, {@code prefix-2}, ... */
    public NamedThreadFactory(String prefix) {
        this(prefix, true);
    }

    /** Threads named {@code prefix} (if not numbered) or {@code prefix-N}. */
    public NamedThreadFactory(String prefix, boolean numbered) {
        this.prefix = prefix;
        this.numbered = numbered;
    }

    @Override
    public Thread newThread(Runnable r) {
        Thread t = new Thread(r, numbered ? prefix + "-" + next.getAndIncrement() : prefix);
        t.setDaemon(true);
        return t;
    }
}
