package dev.sas.jdbc.internal;

import dev.sas.core.TaskId;
import dev.sas.core.spi.StoreSignals;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL's wake-up hints: one connection of the store's pool, held by the thread
 * {@code sas-pg-listen} from the first subscription until the store closes, {@code LISTEN}s to the
 * channels the schema's triggers {@code NOTIFY} ({@code <prefix>due}, {@code <prefix>done},
 * {@code <prefix>reply}) and hands each hint to the subscribers of its topic. When the connection
 * fails it reconnects with a backoff (0.5 s to 10 s) and then tells every subscriber that hints may
 * have been missed; it checks the connection every 30 s, so a half-open one is replaced. Thread-safe.
 */
final class PgSignals implements StoreSignals {
    private static final Logger log = LoggerFactory.getLogger(PgSignals.class);
    private static final int WAIT_MS = 500;
    private static final long CHECK_EVERY_NANOS = TimeUnit.SECONDS.toNanos(30);
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Jdbi jdbi;
    private final Tables t;
    private final StoreContext db;
    private final Map<String, Topic> topics;
    private final Map<Topic, List<Consumer<String>>> subscribers = new ConcurrentHashMap<>();
    private volatile boolean connected;
    private volatile boolean closed;
    private Thread thread;
    private long nextWarnNanos = System.nanoTime();

    PgSignals(StoreContext db) {
        this.db = db;
        this.jdbi = db.jdbi();
        this.t = db.t();
        this.topics = Map.of(t.notifyChannel("due"), Topic.TASKS_DUE, t.notifyChannel("done"), Topic.TASK_FINISHED,
                t.notifyChannel("reply"), Topic.STATUS_UPDATES);
        for (Topic topic : Topic.values()) {
            subscribers.put(topic, new CopyOnWriteArrayList<>());
        }
    }

    @Override
    public Subscription subscribe(Topic topic, Consumer<String> listener) {
        List<Consumer<String>> list = subscribers.get(topic);
        list.add(listener);
        startIfNeeded();
        return () -> list.remove(listener);
    }

    private synchronized void startIfNeeded() {
        if (thread != null || closed) {
            return;
        }
        thread = new Thread(this::run, "sas-pg-listen");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void watch(TaskId taskId) {
        db.run("asking for the end of", taskId, () -> jdbi.withHandle(h -> h.createUpdate("UPDATE " + t.task()
                + " SET awaited = TRUE WHERE task_id = ? AND awaited = FALSE").bind(0, taskId.value()).execute()));
    }

    @Override
    public boolean connected() {
        return connected;
    }

    /** Stops listening and gives the connection back. */
    void close() {
        Thread th;
        synchronized (this) {
            closed = true;
            th = thread;
        }
        if (th != null) {
            th.interrupt();
            try {
                th.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void run() {
        long backoffMs = 500;
        while (!closed) {
            try (Handle h = jdbi.open()) {
                Connection c = h.getConnection();
                try (Statement st = c.createStatement()) {
                    for (String channel : topics.keySet()) {
                        st.execute("LISTEN " + channel);
                    }
                }
                PGConnection pg = c.unwrap(PGConnection.class);
                connected = true;
                backoffMs = 500;
                log.debug("listening for wake-up hints on {}", topics.keySet());
                // hints sent while no connection listened are lost: every subscriber looks once
                subscribers.values().forEach(list -> list.forEach(l -> tell(l, null)));
                long checkAt = System.nanoTime() + CHECK_EVERY_NANOS;
                while (!closed) {
                    PGNotification[] hints = pg.getNotifications(WAIT_MS);
                    if (hints != null) {
                        for (PGNotification n : hints) {
                            Topic topic = topics.get(n.getName());
                            if (topic != null) {
                                String payload = n.getParameter() == null ? "" : n.getParameter();
                                subscribers.get(topic).forEach(l -> tell(l, payload));
                            }
                        }
                    }
                    if (System.nanoTime() - checkAt > 0) {
                        try (Statement st = c.createStatement()) {
                            st.execute("SELECT 1");
                        }
                        checkAt = System.nanoTime() + CHECK_EVERY_NANOS;
                    }
                }
            } catch (Throwable e) {
                // contained: hints are a help, the pollers go on without them
                connected = false;
                if (closed) {
                    break;
                }
                long now = System.nanoTime();
                if (now - nextWarnNanos >= 0) {
                    nextWarnNanos = now + WARN_EVERY_NANOS;
                    log.warn("not receiving wake-up hints from PostgreSQL ({}); nodes poll meanwhile, reconnecting",
                            StoreContext.rootMessage(e));
                }
                try {
                    Thread.sleep(backoffMs);
                } catch (InterruptedException ie) {
                    break;
                }
                backoffMs = Math.min(backoffMs * 2, 10_000);
            } finally {
                connected = false;
            }
        }
    }

    private static void tell(Consumer<String> listener, String payload) {
        try {
            listener.accept(payload);
        } catch (Throwable e) {
            log.error("a wake-up hint listener threw; hints go on", e);
        }
    }

    @Override
    public String toString() {
        return "PgSignals" + topics.keySet();
    }
}
